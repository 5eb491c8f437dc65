package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/sharding"
)

// The last step of a movement holds the requests that must not run on two
// rings at once. A replica holds a counter's total only, which cannot be
// merged with increments a new replica got meanwhile, so counter updates
// never go to pending replicas and their ranges are copied at the end;
// and a lightweight transaction runs Paxos on the partition's replicas,
// whose state the gaining shards must hold first. Once the rest has
// streamed, the members record the same ring with those requests held
// (pgschema.HoldWrites);
// once every live gateway serves it, with none of them left in flight on
// an older ring, each moving range of each counter table is copied whole
// from the replica that gives it up (or one that holds it and is up) over
// what the gaining shards hold, and the partitions' Paxos state goes to
// them. The ring after the movement then releases the requests held,
// which run on it within their timeouts.

// CounterTables returns the counter tables of keyspace, or of every
// keyspace if it is empty.
func (c *Cluster) CounterTables(keyspace string) []*pgschema.Table {
	var out []*pgschema.Table
	for _, ks := range c.Schema().Keyspaces() {
		if ks.Virtual || pgschema.IsSystemKeyspace(ks.Name) || (keyspace != "" && ks.Name != keyspace) {
			continue
		}
		for _, t := range ks.SortedTables() {
			if t.IsCounter() && !t.Virtual {
				out = append(out, t)
			}
		}
	}
	return out
}

// holdWrites records ring version with counter updates and lightweight
// transactions held, on every member but lost, and waits until every
// live gateway serves it.
func (c *Cluster) holdWrites(ctx context.Context, version int64, lost int, o OpOptions) error {
	err := c.onMembers(ctx, func(i int) bool { return i == lost }, func(tx pgx.Tx) error { return pgschema.HoldWrites(ctx, tx, version) })
	if err != nil {
		return fmt.Errorf("hold counter updates and lightweight transactions: %w", err)
	}
	return c.switchRing(ctx, version, o)
}

// copyCounters copies the counters of the ranges topo's movement moves to
// the shards that gain them, and returns the rows copied.
func (c *Cluster) copyCounters(ctx context.Context, topo *sharding.Topology, tables []*pgschema.Table, lost int) (int64, error) {
	return c.CopyCounters(ctx, topo, tables, lost, func(ks *pgschema.Keyspace) []sharding.Movement {
		return topo.Movements(ks.Replication)
	})
}

// CopyCounters copies the counters of tables in the ranges movements
// gives for their keyspace, each from the replica that gives it up, or
// one that holds it and is not lost, over what the replicas that gain it
// hold, and returns the rows copied. Counter updates must be held
// meanwhile (WhileHeld).
func (c *Cluster) CopyCounters(ctx context.Context, topo *sharding.Topology, tables []*pgschema.Table, lost int,
	movements func(ks *pgschema.Keyspace) []sharding.Movement) (int64, error) {
	control := c.Control()
	var rows int64
	for _, t := range tables {
		rels := t.Relations()
		for _, m := range movements(c.Schema().Keyspace(t.Keyspace)) {
			src := m.Losing
			if src < 0 || src == lost {
				src = -1
				for _, r := range m.From {
					if r != lost {
						src = r
						break
					}
				}
			}
			if src < 0 {
				return rows, fmt.Errorf("%s.%s (%d, %d]: no replica holds it but one that is down", t.Keyspace, t.Name, m.Range.Start, m.Range.End)
			}
			for _, lohi := range m.Range.Inclusive() {
				for _, rel := range rels {
					n, err := copyRelation(ctx, control[src], m.To, control, rel, lohi[0], lohi[1])
					if err != nil {
						return rows, fmt.Errorf("%s.%s (%d, %d]: %w", t.Keyspace, t.Name, m.Range.Start, m.Range.End, err)
					}
					if rel == t.Ident() {
						rows += n
					}
				}
			}
		}
	}
	return rows, nil
}

// copyRelation replaces, on each of targets, the rows of rel whose token
// lies in [lo, hi] with those src holds, and returns how many there are.
func copyRelation(ctx context.Context, src *pgxpool.Pool, targets []int, control []*pgxpool.Pool, rel string, lo, hi int64) (int64, error) {
	conn, err := src.Acquire(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Release()
	var cols string
	err = conn.QueryRow(ctx, `SELECT string_agg(quote_ident(attname), ', ' ORDER BY attnum) FROM pg_attribute
		WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped`, rel).Scan(&cols)
	if err != nil {
		return 0, err
	}
	where := fmt.Sprintf("%s BETWEEN %d AND %d", pgschema.Quote(pgschema.TokenColumn), lo, hi)
	var data bytes.Buffer
	tag, err := conn.Conn().PgConn().CopyTo(ctx, &data, "COPY (SELECT "+cols+" FROM "+rel+" WHERE "+where+") TO STDOUT")
	if err != nil {
		return 0, err
	}
	for _, target := range targets {
		err := pgx.BeginFunc(ctx, control[target], func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, "DELETE FROM "+rel+" WHERE "+where); err != nil {
				return err
			}
			_, err := tx.Conn().PgConn().CopyFrom(ctx, strings.NewReader(data.String()), "COPY "+rel+" ("+cols+") FROM STDIN")
			return err
		})
		if err != nil {
			return 0, err
		}
	}
	return tag.RowsAffected(), nil
}

// WhileHeld records the ring the gateways serve again, at the next
// version, with counter updates and lightweight transactions held, runs
// f once every live gateway serves it with none of them in flight on the
// version before, and releases them at the version after, whatever f
// returns. It refuses while a topology operation is in progress. A
// keyspace's replication change copies its counters this way.
func (c *Cluster) WhileHeld(ctx context.Context, o OpOptions, f func(topo *sharding.Topology) error) error {
	members, version, err := c.currentMembers(ctx)
	if err != nil {
		return err
	}
	if op := Operation(members); op != "" {
		return fmt.Errorf("a topology operation is in progress: %s", op)
	}
	err = c.holdWrites(ctx, version+1, -1, o)
	if err == nil {
		err = f(c.Topology())
	}
	// Released whatever happened: the members record the ring as it was.
	if rerr := c.saveMembers(context.WithoutCancel(ctx), members, version+2, -1); rerr != nil {
		return errors.Join(err, rerr)
	}
	return errors.Join(err, c.switchRing(ctx, version+2, o))
}
