package exec

import (
	"context"
	"encoding/binary"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/sharding"
)

// Materialized views: a trigger on each base table logs, in every shard's
// cqlpg.view_log and in the transaction of the change, the view updates
// of each base row a write changes (pgschema/views.go). The gateway
// drains the logs: a pass on a shard locks a few entries at a time (SKIP
// LOCKED, so that gateways share the work), applies each to the replicas
// of its view partition, hinting those that are down, and deletes what
// applied, in one transaction; an entry that did not apply stays for the
// next pass. A write to a table with views requests a pass on its
// replicas and waits for it (up to the write timeout), so that a read of
// the view after the write's answer sees it; every second each shard gets
// a pass too, which carries the updates that repairs, hints, streaming and
// plain SQL writes log.

// viewInterval is how often every shard's view log is drained, and the
// builds moved on.
const viewInterval = time.Second

// viewBatch is how many log entries one pass's transaction takes.
const viewBatch = 256

// views is the gateway's view log drainers, one per shard, and the state
// of view builds.
type views struct {
	mu     sync.Mutex
	drains map[*pgxpool.Pool]*viewDrain
	stmts  sync.Map // apply SQL → *sharding.Statement
	// ctx is the gateway's background context, which drainers run under
	// (RunViews sets it).
	ctx    context.Context
	build  chan struct{}
	status []viewBuildStatus
}

// viewsCtx returns the context the view drainers run under.
func (v *Env) viewsCtx() context.Context {
	v.views.mu.Lock()
	defer v.views.mu.Unlock()
	if v.views.ctx == nil {
		return context.Background()
	}
	return v.views.ctx
}

// viewDrain runs the passes of one shard. next is the pass that will run
// after the one running, which later requests join.
type viewDrain struct {
	wake chan struct{}
	next *viewPass
}

// viewPass is one drain of a shard's log; done closes when it ends.
type viewPass struct{ done chan struct{} }

var (
	stmtViewPending = `SELECT id, keyspace_name, view_name, token, base_row::text, shadow
FROM cqlpg.view_log ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED`
)

// requestPass asks for a pass on the shard with host id host, served by
// pool, and returns it: a pass that starts after this call.
func (v *Env) requestPass(ctx context.Context, host [16]byte, pool *pgxpool.Pool) *viewPass {
	v.views.mu.Lock()
	defer v.views.mu.Unlock()
	if v.views.drains == nil {
		v.views.drains = map[*pgxpool.Pool]*viewDrain{}
	}
	d := v.views.drains[pool]
	if d == nil {
		d = &viewDrain{wake: make(chan struct{}, 1)}
		v.views.drains[pool] = d
		go v.runDrain(ctx, host, pool, d)
	}
	if d.next == nil {
		d.next = &viewPass{done: make(chan struct{})}
	}
	select {
	case d.wake <- struct{}{}:
	default:
	}
	return d.next
}

// runDrain runs the passes requested of one shard until ctx ends.
func (v *Env) runDrain(ctx context.Context, host [16]byte, pool *pgxpool.Pool, d *viewDrain) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-d.wake:
		}
		v.views.mu.Lock()
		p := d.next
		d.next = nil
		v.views.mu.Unlock()
		if p == nil {
			continue
		}
		if err := v.drainShard(ctx, pool); err != nil && ctx.Err() == nil {
			v.Log.Warn("cannot apply the view log of a shard", "host_id", pgschema.UUIDText(host[:]), "err", err)
		}
		close(p.done)
	}
}

// shards returns the shards the writes went to, each once.
func (w *replicaWrites) shards() []int {
	var out []int
	for i := range w.parts {
		for _, r := range w.parts[i].replicas {
			if !slices.Contains(out, r) {
				out = append(out, r)
			}
		}
	}
	return out
}

// awaitViews waits, up to the write timeout, for a pass of the view logs
// of the shards a write to a base table of views reached.
func (e *Execution) awaitViews(ctx context.Context, shards []int) {
	topo, control := e.env.Cluster.Snapshot()
	timer := time.NewTimer(e.env.Config.WriteTimeout)
	defer timer.Stop()
	var passes []*viewPass
	for _, s := range shards {
		if s < len(control) && topo.Shards[s].Pool.Alive() {
			passes = append(passes, e.env.requestPass(e.env.viewsCtx(), topo.Shards[s].Info.HostID, control[s]))
		}
	}
	for _, p := range passes {
		select {
		case <-p.done:
		case <-timer.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// viewEntry is one row of a view log.
type viewEntry struct {
	id             int64
	keyspace, view string
	token          int64
	row            []byte
	shadow         *int64
}

// drainShard applies a shard's view log, viewBatch entries per
// transaction, until none is left that another gateway is not applying.
func (v *Env) drainShard(ctx context.Context, pool *pgxpool.Pool) error {
	for {
		n, err := v.drainBatch(ctx, pool)
		if err != nil || n < viewBatch {
			return err
		}
	}
}

// drainBatch applies one transaction's worth of a shard's log and
// returns how many entries it locked.
func (v *Env) drainBatch(ctx context.Context, pool *pgxpool.Pool) (int, error) {
	n := 0
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		rows, _ := tx.Query(ctx, stmtViewPending, viewBatch)
		entries, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (viewEntry, error) {
			var e viewEntry
			var text string
			err := row.Scan(&e.id, &e.keyspace, &e.view, &e.token, &text, &e.shadow)
			e.row = []byte(text)
			return e, err
		})
		if err != nil {
			return err
		}
		n = len(entries)
		if n == 0 {
			return nil
		}
		done := v.applyViewEntries(ctx, entries)
		if len(done) == 0 {
			return nil
		}
		_, err = tx.Exec(ctx, pgschema.ViewLogDeleteSQL, done)
		return err
	})
	return n, err
}

// applyViewEntries applies log entries to the replicas of their view
// partitions, all at once, and returns the ids of those that applied on
// every replica or were hinted for it. An entry of a view this gateway
// does not know yet stays for a later pass; one of a view gone is done.
func (v *Env) applyViewEntries(ctx context.Context, entries []viewEntry) []int64 {
	topo := v.Cluster.Topology()
	schema := v.Cluster.Schema()
	type sent struct {
		entry int
		op    *sharding.Op
	}
	var ops []sent
	var done []int64
	failed := make([]bool, len(entries))
	wctx, cancel := context.WithTimeout(ctx, v.Config.WriteTimeout)
	defer cancel()
	for i := range entries {
		en := &entries[i]
		k := schema.Keyspace(en.keyspace)
		var view, base *pgschema.Table
		if k != nil {
			view = k.Tables[en.view]
		}
		if view == nil || view.View == nil {
			if k == nil || schema.UnloadableObject("table", en.keyspace, en.view) == nil {
				failed[i] = true // a view this gateway's schema does not have yet
			}
			continue
		}
		base = k.Tables[view.View.Base]
		step, err := v.viewStep(view, base, en)
		if err != nil {
			v.Log.Error("cannot apply a view update; dropped", "view", view.QualifiedName(), "err", err)
			continue
		}
		placement := topo.Placement(k.Replication)
		if k.ReplicationFrom != nil {
			placement = topo.ChangingPlacement(*k.ReplicationFrom, k.Replication)
		}
		replicas, _ := placement.WriteReplicas(sharding.Token(en.token))
		for _, r := range replicas {
			if !topo.Shards[r].Pool.Alive() {
				holder := hintHolder(topo, r, replicas)
				if holder < 0 {
					failed[i] = true
					continue
				}
				h := hintStep(topo.Shards[r].Info.HostID, []sharding.Step{step}, tableGCGrace(view))
				op := sharding.NewOp(h.Stmt, h.Args, h.Formats, nil)
				topo.Shards[holder].Pool.Submit(op)
				ops = append(ops, sent{i, op})
				v.Metrics.HintsWritten.Inc()
				continue
			}
			op := sharding.NewOp(step.Stmt, step.Args, step.Formats, nil)
			topo.Shards[r].Pool.Submit(op)
			ops = append(ops, sent{i, op})
		}
	}
	for _, s := range ops {
		if err := s.op.Wait(wctx); err != nil {
			failed[s.entry] = true
			if permanent(err) {
				v.Log.Error("a view update failed on a shard", "view", entries[s.entry].keyspace+"."+entries[s.entry].view, "err", err)
			}
		}
	}
	for i := range entries {
		if !failed[i] {
			done = append(done, entries[i].id)
		}
	}
	v.Metrics.ViewUpdates.Add(float64(len(done)))
	return done
}

// viewStep returns the statement applying one log entry to a replica of
// view: the entry's base row, its shadow time, and the view's filters.
func (v *Env) viewStep(view, base *pgschema.Table, en *viewEntry) (sharding.Step, error) {
	filters, oids, err := view.ViewFilterArgs(base)
	if err != nil {
		return sharding.Step{}, err
	}
	sql := view.ViewApplySQL(base)
	st, ok := v.views.stmts.Load(sql)
	if !ok {
		st, _ = v.views.stmts.LoadOrStore(sql, sharding.NewStatement(sql, append([]uint32{pgschema.OIDJSON, pgschema.OIDInt8}, oids...)))
	}
	var shadow []byte
	if en.shadow != nil {
		shadow = binary.BigEndian.AppendUint64(nil, uint64(*en.shadow))
	}
	args := append([][]byte{en.row, shadow}, filters...)
	formats := make([]int16, len(args))
	for i := range formats {
		formats[i] = 1
	}
	return sharding.Step{Stmt: st.(*sharding.Statement), Args: args, Formats: formats}, nil
}
