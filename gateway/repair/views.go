package repair

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cqlpg/cqlpg/gateway/cluster"
	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/sharding"
)

// A repair of a materialized view, once its replicas and its base's
// agree, compares the view with its base both ways:
//
//   - every base row is logged again in its shard's view log (as a build
//     logs it), which the gateways' drains apply: a view row missing or
//     older than its base row's cells comes back as the base defines it;
//   - every live view row is looked up in its base partition, on one of
//     its replicas: a row no live base row defines (its base row gone, or
//     its key column holding another value) is deleted from every view
//     replica at its newest write time.

// viewPage is how many rows or partitions one statement of a view check
// reads.
const viewPage = 500

// viewLogWait bounds the wait for the gateways to apply the view updates
// a check logged.
const viewLogWait = 2 * time.Minute

// ViewCheck sums up the comparisons of views with their bases.
type ViewCheck struct {
	// Relogged counts the base rows logged again, Undefined the view rows
	// deleted because their base does not define them.
	Relogged, Undefined int64
}

// checkView compares view with its base, as the comment above says.
func checkView(ctx context.Context, c *cluster.Cluster, view, base *pgschema.Table) (ViewCheck, error) {
	var res ViewCheck
	topo, control := c.Snapshot()
	for i, pool := range control {
		if !topo.Shards[i].Pool.Alive() {
			return res, fmt.Errorf("shard %s is down", topo.Shards[i].Info.Name)
		}
		next := int64(-1 << 63)
		for {
			var last *int64
			var n int64
			if err := pool.QueryRow(ctx, view.ViewRelogSQL(base), next, viewPage, view.Keyspace, view.Name).Scan(&last, &n); err != nil {
				return res, fmt.Errorf("log the rows of %s again on shard %s: %w", base.QualifiedName(), topo.Shards[i].Info.Name, err)
			}
			res.Relogged += n
			if last == nil {
				break
			}
			next = *last
		}
	}
	if err := awaitViewLog(ctx, control, view); err != nil {
		return res, err
	}
	if err := view.CheckViewRepair(base); err != nil {
		return res, fmt.Errorf("view %s: rows its base does not define are not looked for: %w", view.QualifiedName(), err)
	}
	for i, pool := range control {
		n, err := undefinedRows(ctx, c, pool, view, base)
		res.Undefined += n
		if err != nil {
			return res, fmt.Errorf("view %s on shard %s: %w", view.QualifiedName(), topo.Shards[i].Info.Name, err)
		}
	}
	return res, nil
}

// awaitViewLog waits until no shard's view log holds an update of view.
func awaitViewLog(ctx context.Context, control []*pgxpool.Pool, view *pgschema.Table) error {
	deadline := time.Now().Add(viewLogWait)
	for {
		pending := int64(0)
		for _, pool := range control {
			var n int64
			if err := pool.QueryRow(ctx, `SELECT count(*) FROM cqlpg.view_log WHERE keyspace_name = $1 AND view_name = $2`,
				view.Keyspace, view.Name).Scan(&n); err != nil {
				return err
			}
			pending += n
		}
		if pending == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d updates of view %s still wait in the view logs after %v: a running gateway applies them",
				pending, view.QualifiedName(), viewLogWait)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// viewRow is a live view row read by a check.
type viewRow struct {
	row       json.RawMessage
	token     int64
	baseToken int64
	newest    int64
}

// undefinedRows looks up the live view rows a shard holds in their base
// partitions, a page at a time, and deletes those no base row defines. It
// returns how many it deleted.
func undefinedRows(ctx context.Context, c *cluster.Cluster, pool *pgxpool.Pool, view, base *pgschema.Table) (int64, error) {
	schema := c.Schema()
	k := schema.Keyspace(view.Keyspace)
	if k == nil {
		return 0, nil
	}
	filters, oids, err := view.ViewFilterArgs(base)
	if err != nil {
		return 0, err
	}
	undefined := sharding.NewStatement(view.ViewUndefinedSQL(base), append([]uint32{pgschema.OIDJSON, pgschema.OIDInt4}, oids...))
	apply := sharding.NewStatement(view.ViewApplySQL(base), append([]uint32{pgschema.OIDJSON, pgschema.OIDInt8}, oids...))
	after := "(0,0)"
	var removed int64
	for {
		now := int32(time.Now().Unix())
		var page []viewRow
		rows, _ := pool.Query(ctx, view.ViewRowsSQL(base), after, viewPage, now)
		for rows.Next() {
			var r viewRow
			var text string
			if err := rows.Scan(&after, &text, &r.token, &r.baseToken, &r.newest); err != nil {
				rows.Close()
				return removed, err
			}
			r.row = json.RawMessage(text)
			page = append(page, r)
		}
		if err := rows.Err(); err != nil {
			return removed, err
		}
		if len(page) == 0 {
			return removed, nil
		}
		topo := c.Topology()
		placement := topo.Placement(k.Replication)
		// The rows of the page by the base replica asked about them.
		byShard := map[int][]int{}
		for i, r := range page {
			replicas := placement.Replicas(sharding.Token(r.baseToken))
			asked := -1
			for _, s := range replicas {
				if topo.Shards[s].Pool.Alive() {
					asked = s
					break
				}
			}
			if asked < 0 {
				return removed, fmt.Errorf("no replica of a base partition is up")
			}
			byShard[asked] = append(byShard[asked], i)
		}
		for shard, idx := range byShard {
			arr := make([]json.RawMessage, len(idx))
			for j, i := range idx {
				arr[j] = page[i].row
			}
			body, _ := json.Marshal(arr)
			args := append([][]byte{body, binary.BigEndian.AppendUint32(nil, uint32(now))}, filters...)
			sink := &ordinals{}
			op := sharding.NewOp(undefined, args, binaryFormats(len(args)), sink)
			topo.Shards[shard].Pool.Submit(op)
			if err := op.Wait(ctx); err != nil {
				return removed, err
			}
			for _, o := range sink.got {
				r := page[idx[o-1]]
				if err := deleteViewRow(ctx, topo, placement, view, apply, filters, r); err != nil {
					return removed, err
				}
				removed++
			}
		}
		if len(page) < viewPage {
			return removed, nil
		}
	}
}

// deleteViewRow deletes a view row on every replica of its partition, at
// its newest write time: a shadow for a view keyed by a base regular
// column, a row deletion for the others.
func deleteViewRow(ctx context.Context, topo *sharding.Topology, placement *sharding.Placement, view *pgschema.Table,
	apply *sharding.Statement, filters [][]byte, r viewRow) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(r.row, &fields); err != nil {
		return err
	}
	key := map[string]json.RawMessage{}
	for name, v := range fields {
		if isViewKeyColumn(view, name) {
			key[name] = v
		}
	}
	newest := binary.BigEndian.AppendUint64(nil, uint64(r.newest))
	var shadow []byte
	if view.StrictLiveness() {
		shadow = newest
	} else {
		key[pgschema.DeletedColumn] = json.RawMessage(fmt.Sprint(r.newest))
	}
	body, _ := json.Marshal(key)
	args := append([][]byte{body, shadow}, filters...)
	replicas, _ := placement.WriteReplicas(sharding.Token(r.token))
	var ops []*sharding.Op
	for _, s := range replicas {
		op := sharding.NewOp(apply, args, binaryFormats(len(args)), nil)
		topo.Shards[s].Pool.Submit(op)
		ops = append(ops, op)
	}
	for _, op := range ops {
		if err := op.Wait(ctx); err != nil {
			return err
		}
	}
	return nil
}

// isViewKeyColumn reports whether the Postgres column name holds part of
// a view row's key: its token, a key column, or its order or exact key.
func isViewKeyColumn(view *pgschema.Table, name string) bool {
	if name == pgschema.TokenColumn {
		return true
	}
	for _, c := range view.KeyColumns() {
		if name == c.PGName || name == c.OrderColumn() || name == c.ExactColumn() {
			return true
		}
	}
	return false
}

// ordinals collects the positions ViewUndefinedSQL returns.
type ordinals struct{ got []int64 }

func (o *ordinals) Row(values [][]byte) error {
	if len(values) != 1 || len(values[0]) != 8 {
		return fmt.Errorf("unexpected row from the view check")
	}
	o.got = append(o.got, int64(binary.BigEndian.Uint64(values[0])))
	return nil
}

// binaryFormats returns n binary parameter formats.
func binaryFormats(n int) []int16 {
	f := make([]int16, n)
	for i := range f {
		f[i] = 1
	}
	return f
}
