package exec

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"slices"
	"strconv"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/primitive"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/cqlpg/cqlpg/gateway/cqlwire"
	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/sharding"
	"github.com/cqlpg/cqlpg/translate"
)

// batch runs a BATCH statement without conditions: its writes share the
// statement's values and one timestamp.
func (e *Execution) batch(ctx context.Context, st *Statement, p *translate.Batch, resp *[]byte) error {
	if len(p.Writes) == 0 {
		*resp = cqlwire.AppendInt(*resp, cqlwire.ResultVoid)
		return nil
	}
	ts, err := e.timestamp(p.Timestamp, nil)
	if err != nil {
		return err
	}
	items := make([]batchWrite, len(p.Writes))
	for i, w := range p.Writes {
		items[i] = batchWrite{e: e, stmt: st.batch[i], w: w}
	}
	return e.env.applyBatch(ctx, p.Kind, items, ts, resp)
}

// mutations collects the writes of a batch, grouped by the shard that
// applies them, instead of sending them one by one.
type mutations struct {
	topo    *sharding.Topology
	byShard [][]mutation
	// first is the first partition written; spread is set once a second
	// one is.
	first  mutation
	spread bool
	// gcGrace is the smallest gc_grace_seconds of the tables written.
	gcGrace int64
	// replicaSets are the replicas of each partition written, by keyspace
	// and token: what the consistency level counts.
	replicaSets map[partitionID]writeSet
}

// partitionID names a partition's replicas: one keyspace, one token.
type partitionID struct {
	keyspace string
	token    int64
}

// mutation is one write of one row, range or partition on one shard.
type mutation struct {
	table *pgschema.Table
	token int64
	key   [][]byte
	step  sharding.Step
	// lock, when set, runs before the writes of the shard's part (lockFor).
	lock *sharding.Statement
}

// defaultGCGrace is Cassandra's default gc_grace_seconds, ten days.
const defaultGCGrace = 864000

// add records a write of the row r names, with its arguments, on each of
// its replicas.
func (m *mutations) add(p *translate.Write, stmt *sharding.Statement, args [][]byte, r *rowArgs, replicas []int, pending int) {
	mu := mutation{table: p.Table, token: r.token, key: r.key,
		step: sharding.Step{Stmt: stmt, Args: args, Formats: binaryParams}, lock: lockFor(p)}
	if m.first.table == nil {
		m.first = mu
		m.gcGrace = defaultGCGrace
	} else if !m.spread {
		m.spread = !samePartition(&m.first, &mu)
	}
	if g, err := strconv.ParseInt(p.Table.Options[pgschema.OptGCGraceSeconds], 10, 64); err == nil {
		m.gcGrace = min(m.gcGrace, g)
	}
	for _, shard := range replicas {
		m.byShard[shard] = append(m.byShard[shard], mu)
	}
	if m.replicaSets == nil {
		m.replicaSets = map[partitionID]writeSet{}
	}
	m.replicaSets[partitionID{p.Table.Keyspace, r.token}] = writeSet{replicas, pending}
}

// writeSet is the shards a partition's writes go to, the last pending of
// them pending (Placement.WriteReplicas).
type writeSet struct {
	replicas []int
	pending  int
}

// require returns what level needs of each partition's replicas, or an
// UnavailableError when too few of some partition's are up.
func (m *mutations) require(level sharding.Consistency, localDC string) ([]sharding.Acks, [][]int, error) {
	acks := make([]sharding.Acks, 0, len(m.replicaSets))
	sets := make([][]int, 0, len(m.replicaSets))
	for _, ws := range m.replicaSets {
		a := m.topo.RequireWrite(level, ws.replicas, ws.pending, localDC)
		if err := m.topo.Available(&a, ws.replicas); err != nil {
			return nil, nil, err
		}
		acks, sets = append(acks, a), append(sets, ws.replicas)
	}
	return acks, sets, nil
}

// samePartition reports whether two writes fall in one partition: one
// keyspace and one partition key, whichever tables they write, as
// Cassandra groups a batch's mutations.
func samePartition(a, b *mutation) bool {
	if a.table.Keyspace != b.table.Keyspace || a.token != b.token {
		return false
	}
	na, nb := len(a.table.PartitionKey), len(b.table.PartitionKey)
	return na == nb && slices.EqualFunc(a.key[:na], b.key[:nb], bytes.Equal)
}

// parts returns each shard's writes in one order that every batch
// shares, so that two batches writing the same rows on one shard lock
// them in the same order; writes of one row keep the batch's order. The
// table locks of deletions (lockFor) come first, in the same order, before
// any write has locked a table less strongly.
func (m *mutations) parts() []shardPart {
	var parts []shardPart
	for shard, ms := range m.byShard {
		if len(ms) == 0 {
			continue
		}
		slices.SortStableFunc(ms, func(a, b mutation) int {
			return cmp.Or(cmp.Compare(a.table.Keyspace, b.table.Keyspace), cmp.Compare(a.table.Name, b.table.Name),
				cmp.Compare(a.token, b.token), compareKeys(a.key, b.key))
		})
		steps := make([]sharding.Step, 0, len(ms))
		for i := range ms {
			if l := ms[i].lock; l != nil && (len(steps) == 0 || steps[len(steps)-1].Stmt != l) {
				steps = append(steps, sharding.Step{Stmt: l})
			}
		}
		for i := range ms {
			steps = append(steps, ms[i].step)
		}
		parts = append(parts, shardPart{shard: shard, steps: steps})
	}
	return parts
}

// compareKeys orders keys by their columns' bytes; a prefix comes first.
func compareKeys(a, b [][]byte) int {
	for i := range min(len(a), len(b)) {
		if c := bytes.Compare(a[i], b[i]); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(a), len(b))
}

// shardPart is the writes of a batch that one shard applies, in one
// transaction.
type shardPart struct {
	shard int
	steps []sharding.Step
}

// applyBatch applies the writes of a batch without conditions, at
// timestamp ts unless a write sets its own. Every write is bound and
// checked before any is sent. Each shard applies its part of the batch in
// one transaction, which makes the writes to each partition atomic and
// isolated. A LOGGED batch that writes more than one partition, on more
// than one shard, is first written to the batch log, so that it applies in
// full even if this gateway dies halfway.
func (v *Env) applyBatch(ctx context.Context, kind translate.BatchKind, items []batchWrite, ts int64, resp *[]byte) error {
	if kind == translate.CounterBatch {
		done, err := items[0].e.holdGate(ctx, primitive.WriteTypeCounter)
		if err != nil {
			return err
		}
		defer done()
	}
	m := &mutations{topo: items[0].e.topo}
	m.byShard = make([][]mutation, len(m.topo.Shards))
	for _, it := range items {
		it.e.topo, it.e.mutations = m.topo, m
		err := it.e.write(ctx, it.stmt, it.w, &ts, nil)
		it.e.mutations = nil
		if err != nil {
			return err
		}
	}
	level := sharding.Consistency(items[0].e.params.Consistency)
	acks, sets, err := m.require(level, v.Config.Datacenter)
	if err != nil {
		return err
	}
	parts := m.parts()
	logged := kind == translate.LoggedBatch && m.spread && len(parts) > 1
	writeType := primitive.WriteTypeUnloggedBatch
	if kind == translate.CounterBatch {
		writeType = primitive.WriteTypeCounter
	}
	var entry *logEntry
	if logged {
		writeType = primitive.WriteTypeBatch
		if entry, err = v.logBatch(ctx, m.topo, parts, m.gcGrace, level); err != nil {
			return err
		}
	}
	var skip func(int) bool
	if h := v.Hooks.DropBatchPart.Load(); h != nil && logged {
		skip = *h
	}
	wctx, cancel := context.WithTimeout(ctx, v.Config.WriteTimeout)
	errs := applyParts(wctx, m.topo, parts, skip)
	cancel()
	if errs == nil {
		if logged {
			v.forgetBatch(m.topo, entry)
		}
		awaitBatchViews(ctx, items, parts)
		*resp = cqlwire.AppendInt(*resp, cqlwire.ResultVoid)
		return nil
	}
	applied := map[int]bool{}
	for i, err := range errs {
		if err == nil {
			applied[parts[i].shard] = true
		} else if permanent(err) {
			return err
		}
	}
	if logged {
		// The batch log holds the batch: replaying it will finish the
		// parts that did not apply.
		v.Log.Warn("logged batch applied on some shards only; the batch log will replay it",
			"batch", pgschema.UUIDText(entry.id[:]), "applied", len(applied), "shards", len(parts), "err", sharding.FirstError(errs))
	} else {
		v.hintParts(m, parts, errs, kind == translate.CounterBatch)
	}
	for i, replicas := range sets {
		for _, r := range replicas {
			if applied[r] {
				acks[i].Ack(m.topo.Shards[r].Info.DC)
			}
		}
		if !acks[i].Met() {
			if slices.ContainsFunc(errs, queueFull) {
				return errReplicaOverloaded
			}
			return &WriteTimeoutError{WriteType: writeType, Consistency: level, Received: acks[i].Got(), BlockFor: acks[i].Need(),
				err: sharding.FirstError(errs)}
		}
	}
	awaitBatchViews(ctx, items, parts)
	*resp = cqlwire.AppendInt(*resp, cqlwire.ResultVoid)
	return nil
}

// awaitBatchViews waits for the view updates of a batch that wrote to a
// base table of views, as a single write does.
func awaitBatchViews(ctx context.Context, items []batchWrite, parts []shardPart) {
	if !slices.ContainsFunc(items, func(it batchWrite) bool { return it.w.Views }) {
		return
	}
	shards := make([]int, len(parts))
	for i, p := range parts {
		shards[i] = p.shard
	}
	items[0].e.awaitViews(ctx, shards)
}

// hintParts stores hints for the parts of an unlogged batch that did not
// apply, each on another shard that is up. It does not wait for them. A
// counter batch's part is hinted only if it certainly did not apply:
// counter updates are not safe to apply twice.
func (v *Env) hintParts(m *mutations, parts []shardPart, errs []error, counter bool) {
	for i, err := range errs {
		if err == nil || counter && !sharding.Unsent(err) {
			continue
		}
		target := parts[i].shard
		holder := hintHolder(m.topo, target, nil)
		if holder < 0 {
			continue
		}
		step := hintStep(m.topo.Shards[target].Info.HostID, parts[i].steps, m.gcGrace)
		m.topo.Shards[holder].Pool.Submit(sharding.NewOp(step.Stmt, step.Args, step.Formats, nil))
		v.Metrics.HintsWritten.Inc()
	}
}

// maxTxAttempts bounds how many times a shard's part of a batch runs when
// Postgres aborts it for a deadlock or a serialization failure.
const maxTxAttempts = 3

// applyParts applies each part of a batch in one transaction on its
// shard, all in parallel. It returns nil when every part applied, else
// each part's error. skip, when set, names parts to leave unapplied (a
// test standing in for a gateway that dies).
func applyParts(ctx context.Context, topo *sharding.Topology, parts []shardPart, skip func(shard int) bool) []error {
	errs := make([]error, len(parts))
	ops := make([]*sharding.Op, len(parts))
	failed := false
	// A part still running once the batch has been answered with its
	// timeout is cancelled on its shard, as single writes are.
	var deadline time.Time
	if d, ok := ctx.Deadline(); ok {
		deadline = d.Add(cancelGrace)
	}
	submit := func(p shardPart) *sharding.Op {
		op := sharding.NewTx(p.steps, nil)
		op.Deadline = deadline
		topo.Shards[p.shard].Pool.Submit(op)
		return op
	}
	for i, p := range parts {
		if skip != nil && skip(p.shard) {
			errs[i], failed = errBatchPartSkipped, true
			continue
		}
		ops[i] = submit(p)
	}
	for i, op := range ops {
		if op == nil {
			continue
		}
		err := op.Wait(ctx)
		// Writes are idempotent, so a transaction Postgres aborted can
		// simply run again.
		for attempt := 1; aborted(err) && attempt < maxTxAttempts; attempt++ {
			op = submit(parts[i])
			err = op.Wait(ctx)
		}
		errs[i] = err
		failed = failed || err != nil
	}
	if !failed {
		return nil
	}
	return errs
}

var errBatchPartSkipped = errors.New("batch part skipped")

// aborted reports whether Postgres rolled a transaction back for a
// deadlock or a serialization failure (SQLSTATE class 40).
func aborted(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && len(pgErr.Code) == 5 && pgErr.Code[:2] == "40"
}

// permanent reports whether an error is one that running the same
// statement again would repeat: a statement error, as opposed to a shard
// that could not be reached, ran out of resources, was shut down, or
// aborted the transaction.
func permanent(err error) bool {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || len(pgErr.Code) != 5 {
		return false
	}
	switch pgErr.Code[:2] {
	case "08", "40", "53", "57", "58":
		return false
	}
	return true
}
