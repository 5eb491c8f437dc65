package exec

import (
	"context"
	"errors"
	"hash/maphash"
	"slices"
	"sync"
	"time"

	"github.com/cqlpg/cqlpg/gateway/cqlwire"
	"github.com/cqlpg/cqlpg/gateway/repair"
	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/sharding"
	"github.com/cqlpg/cqlpg/translate"
)

// A read asks as many replicas as its consistency level needs. With one,
// it reads the first replica that is up, and moves to the next if that one
// fails before sending a row. With more, one replica sends the data and
// every one a digest of the same rows; when the digests differ, the
// replicas are repaired (their cells reconciled by write time, Cassandra's
// rules) and the data is read again, so the answer is the reconciled one
// and the replicas asked agree afterwards, as Cassandra's blocking read
// repair does.

// digestSeed makes the digests of one gateway comparable with each other.
var digestSeed = maphash.MakeSeed()

// digestSink hashes the rows a replica sends, passing them on to inner
// when it is set.
type digestSink struct {
	inner sharding.RowSink
	h     maphash.Hash
	rows  int
}

// replicaAsks is what a read asking several replicas keeps in its
// scratch, one of each per replica it may ask: reused by the next read
// only once every op sent has been received, as an op given up on keeps
// the execution from being reused.
type replicaAsks struct {
	sinks  []digestSink
	ops    []sharding.Op
	ok     []bool
	notify chan *sharding.Op
	// data holds the rows of each replica asked for them, nil for the
	// others.
	data []*rowBuffer
}

// ready readies room for n replicas: the notify channel has room for an
// answer from each, so a pool never blocks on a read that stopped
// listening.
func (a *replicaAsks) ready(n int) *replicaAsks {
	if cap(a.ops) < n {
		a.sinks, a.ops, a.ok, a.data = make([]digestSink, n), make([]sharding.Op, n), make([]bool, n), make([]*rowBuffer, n)
	}
	if cap(a.notify) < n {
		a.notify = make(chan *sharding.Op, n)
	}
	a.sinks, a.ops, a.ok, a.data = a.sinks[:n], a.ops[:n], a.ok[:n], a.data[:n]
	clear(a.ok)
	clear(a.data)
	return a
}

// reset readies d to hash rows anew, passing them on to inner.
func (d *digestSink) reset(inner sharding.RowSink) {
	*d = digestSink{inner: inner}
	d.h.SetSeed(digestSeed)
}

// same reports whether d and o hashed the same rows.
func (d *digestSink) same(o *digestSink) bool { return d.rows == o.rows && d.h.Sum64() == o.h.Sum64() }

// Row implements sharding.RowSink.
func (d *digestSink) Row(values [][]byte) error {
	var n [4]byte
	for _, v := range values {
		l := uint32(len(v))
		if v == nil {
			l = 1<<32 - 1
		}
		n[0], n[1], n[2], n[3] = byte(l>>24), byte(l>>16), byte(l>>8), byte(l)
		d.h.Write(n[:])
		d.h.Write(v)
	}
	d.rows++
	if d.inner != nil {
		return d.inner.Row(values)
	}
	return nil
}

// guardSink passes rows on to inner, counting them, until closed: a read
// abandoned at its timeout still runs to its end on the shard, and its
// late rows must not reach a response already sent.
type guardSink struct {
	mu     sync.Mutex
	inner  sharding.RowSink
	rows   int
	closed bool
}

func (g *guardSink) Row(values [][]byte) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return errAbandoned
	}
	g.rows++
	return g.inner.Row(values)
}

// close stops rows from reaching inner, and returns how many did.
func (g *guardSink) close() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.closed = true
	return g.rows
}

var errAbandoned = errors.New("read abandoned at its timeout")

// readPlan is which replicas one read asks.
type readPlan struct {
	// order lists the replicas that are up, those that count for the
	// level first.
	order []int
	// ask is how many of order the read asks at first.
	ask int
}

// planRead picks the replicas of a read, or refuses it as Unavailable,
// listing them in order's room.
func (e *Execution) planRead(replicas []int, order []int) (readPlan, error) {
	topo := e.topo
	local := e.env.Config.Datacenter
	level := sharding.Consistency(e.params.Consistency)
	p := readPlan{order: order}
	acks := topo.Require(level, replicas, local)
	if err := topo.Available(&acks, replicas); err != nil {
		return p, err
	}
	localFirst := level == sharding.LocalOne || level == sharding.LocalQuorum || level == sharding.LocalSerial
	for _, r := range replicas {
		if topo.Shards[r].Pool.Alive() && (!localFirst || topo.Shards[r].Info.DC == local) {
			p.order = append(p.order, r)
		}
	}
	for _, r := range replicas {
		if localFirst && topo.Shards[r].Pool.Alive() && topo.Shards[r].Info.DC != local {
			p.order = append(p.order, r)
		}
	}
	// Ask as many replicas, in order, as the level needs acknowledgements of.
	for p.ask < len(p.order) && !acks.Met() {
		acks.Ack(topo.Shards[p.order[p.ask]].Info.DC)
		p.ask++
	}
	p.ask = max(p.ask, 1)
	return p, nil
}

// readRepair names what a read covers, for repairing it: a partition's
// token, or a scan's token range (start, end].
type readRepair struct {
	table      *pgschema.Table
	start, end int64
	scan       bool
}

// run reconciles what the read covers on replicas.
func (r readRepair) run(ctx context.Context, topo *sharding.Topology, replicas []int) error {
	if r.scan {
		_, err := repair.RangeOn(ctx, topo, r.table, r.start, r.end, replicas)
		return err
	}
	return repair.PartitionOn(ctx, topo, r.table, r.start, replicas)
}

// readReplicas runs a read on the replicas its level needs and sends the
// reconciled rows to sink. The data of a read that asks several replicas
// is buffered for w; repair reconciles what the read covers. rs is the
// read's scratch, nil for a new one; args may live in it.
func (e *Execution) readReplicas(ctx context.Context, stmt *sharding.Statement, args [][]byte, replicas []int,
	sink sharding.RowSink, w *rowWriter, timeout time.Duration, fix readRepair, rs *readScratch) error {
	level := sharding.Consistency(e.params.Consistency)
	started := e.Now // the request's arrival: the clock is read once per request
	expire := deadlines.after(started, timeout)
	if rs == nil {
		rs = new(readScratch)
	}
	rs.deadline = opDeadline(started, timeout)
	if e.pinned != nil {
		return e.readOne(ctx, expire, stmt, args, e.pinned, sink, level, rs)
	}
	p, err := e.planRead(replicas, rs.order[:0])
	if err != nil {
		return err
	}
	rs.order = p.order
	if p.ask == 1 {
		return e.readOne(ctx, expire, stmt, args, p.order, sink, level, rs)
	}
	fresh := func() *rowBuffer { return &rowBuffer{w: w} }
	// Each replica asked sends a digest; the first also its data. A
	// replica that fails is replaced by the next one up, which takes over
	// the data when the failed one had it.
	var data *rowBuffer
	ra := rs.asks.ready(len(p.order))
	sinks, ok, notify, submitted := ra.sinks, ra.ok, ra.notify, 0
	dataOp := 0
	submit := func(i int) {
		var inner sharding.RowSink
		if i == dataOp {
			data = fresh()
			inner, ra.data[i] = data, data
		}
		sinks[i].reset(inner)
		op := &ra.ops[i]
		op.ResetNotify(stmt, args, binaryParams, &sinks[i], notify, i)
		op.Order = rs.opOrder()
		op.Deadline = rs.deadline
		submitted++
		e.topo.Shards[p.order[i]].Pool.Submit(op)
	}
	for i := range p.ask {
		submit(i)
	}
	// Speculative retry: a replica that has not answered within the
	// table's speculative_retry (99p of the replica's latency by default)
	// gets company: the next replica up is asked too, and sends the data
	// if the one asked for it is the one waited for.
	var speculate <-chan struct{}
	if len(p.order) > p.ask {
		speculate = e.speculation(fix, p.order[dataOp])
	}
	pending, received, dataPresent, overloaded := p.ask, 0, false, false
	// An op still running when the read gives up may touch args, and the
	// scratch's ops and sinks, later: the execution is not reused.
	defer func() {
		if pending > 0 {
			e.abandon()
		}
	}()
	for pending > 0 && received < p.ask {
		select {
		case op := <-notify:
			pending--
			err := op.Err()
			switch {
			case err == nil:
				received++
				ok[op.Tag] = true
				dataPresent = dataPresent || op.Tag == dataOp
				continue
			case permanent(err):
				return err
			}
			overloaded = overloaded || queueFull(err)
			if next := submitted; next < len(p.order) {
				if op.Tag == dataOp {
					dataOp = next
				}
				submit(next)
				pending++
			}
		case <-speculate:
			speculate = nil
			if next := submitted; next < len(p.order) {
				if !ok[dataOp] {
					dataOp = next
				}
				submit(next)
				pending++
				e.env.Metrics.SpeculativeReads.Inc()
			}
		case <-expire:
			return &ReadTimeoutError{Consistency: level, Received: received, BlockFor: p.ask, DataPresent: dataPresent}
		case <-ctx.Done():
			return &ReadTimeoutError{Consistency: level, Received: received, BlockFor: p.ask, DataPresent: dataPresent}
		}
	}
	if received < p.ask {
		if overloaded {
			// Every replica left was asked; one of them refused for
			// its full queue.
			return errReplicaOverloaded
		}
		return &ReadTimeoutError{Consistency: level, Received: received, BlockFor: p.ask, DataPresent: dataPresent}
	}
	// answered lists the replicas that answered, the data one first.
	answered := func() []int {
		shards := []int{p.order[dataOp]}
		for i := range submitted {
			if ok[i] && i != dataOp {
				shards = append(shards, p.order[i])
			}
		}
		return shards
	}
	reread := false
	if !ok[dataOp] {
		// The replica asked for the data last has not answered, the
		// others have. One asked for it before (speculation moved the
		// data on) sent it with its digest; else every one that answered
		// is read again, the data from the first: they may have changed
		// since, even to a state no replica held whole (a replica back
		// from a fault that got a commit before the ones it missed).
		dataOp, reread = slices.Index(ok[:submitted], true), true
		for i := range submitted {
			if ok[i] && ra.data[i] != nil {
				dataOp, data, reread = i, ra.data[i], false
				break
			}
		}
	}
	var asked []int
	agree := true
	if reread {
		asked = answered()
		var err error
		if data, agree, err = e.readAgain(ctx, expire, stmt, args, asked, fresh(), rs); err != nil {
			return err
		}
	} else {
		for i := range submitted {
			agree = agree && (!ok[i] || sinks[i].same(&sinks[dataOp]))
		}
	}
	if !agree {
		// The replicas that answered, the data one first, are repaired
		// and read again, until they agree: a replica repaired can be
		// torn again at once by writes landing on it and not on another
		// (a later commit, the one before it lost with a hint pending),
		// and only what the replicas agree on holds every write a quorum
		// acknowledged, as the merge Cassandra answers with does.
		if asked == nil {
			asked = answered()
		}
		rctx, cancel := context.WithDeadline(ctx, started.Add(timeout))
		defer cancel()
		for attempt := 1; !agree; attempt++ {
			if attempt > maxReadRepairs {
				e.c.Logger().Warn("read repair: replicas still disagree", "attempts", maxReadRepairs)
				return repairTimeout(level, p.ask)
			}
			e.env.Metrics.ReadRepairs.Inc()
			err := fix.run(rctx, e.env.Cluster.Topology(), asked)
			if errors.Is(err, repair.ErrCounter) {
				// Counter replicas hold totals, which cannot be
				// reconciled: the data replica's stands.
				return deliver(data, sink)
			}
			if err != nil {
				if rctx.Err() != nil || !permanent(err) {
					// A replica the repair writes to failed or went down.
					e.c.Logger().Warn("read repair failed", "err", err)
					return repairTimeout(level, p.ask)
				}
				return err
			}
			if f := e.env.Hooks.ReadRepaired.Load(); f != nil {
				(*f)()
			}
			if data, agree, err = e.readAgain(ctx, expire, stmt, args, asked, fresh(), rs); err != nil {
				var timeout *ReadTimeoutError
				if errors.As(err, &timeout) {
					// Reading the repaired data back is part of the repair.
					return repairTimeout(level, p.ask)
				}
				return err
			}
		}
	}
	return deliver(data, sink)
}

// maxReadRepairs is how many times a read repairs its replicas before it
// gives up on their agreeing: each time, writes landed on some of them
// and not on others between the repair and the reads after it.
const maxReadRepairs = 4

// readAgain reads from each of shards, the data into data from the first
// and a digest from every one, and reports whether they agree. A replica
// that fails or does not answer by expire makes it a read timeout.
func (e *Execution) readAgain(ctx context.Context, expire <-chan struct{}, stmt *sharding.Statement, args [][]byte,
	shards []int, data *rowBuffer, rs *readScratch) (*rowBuffer, bool, error) {
	sinks := make([]digestSink, len(shards))
	ops := make([]sharding.Op, len(shards))
	notify := make(chan *sharding.Op, len(shards))
	for i, shard := range shards {
		var inner sharding.RowSink
		if i == 0 {
			inner = data
		}
		sinks[i].reset(inner)
		ops[i].ResetNotify(stmt, args, binaryParams, &sinks[i], notify, i)
		ops[i].Order = rs.opOrder()
		ops[i].Deadline = rs.deadline
		e.topo.Shards[shard].Pool.Submit(&ops[i])
	}
	timeout := &ReadTimeoutError{Consistency: sharding.Consistency(e.params.Consistency), BlockFor: len(shards)}
	for pending := len(shards); pending > 0; pending-- {
		select {
		case op := <-notify:
			if err := op.Err(); err != nil {
				if pending > 1 {
					e.abandon() // the ops still running hold args
				}
				if permanent(err) {
					return nil, false, err
				}
				return nil, false, timeout
			}
			timeout.Received++
		case <-expire:
			e.abandon()
			return nil, false, timeout
		case <-ctx.Done():
			e.abandon()
			return nil, false, timeout
		}
	}
	for i := range sinks[1:] {
		if !sinks[1+i].same(&sinks[0]) {
			return data, false, nil
		}
	}
	return data, true, nil
}

// speculation returns the channel closed when a read of what fix covers,
// whose data replica is shard, asks one more replica (readReplicas), nil
// for never. Range scans do not speculate, as in Cassandra: a scan of a
// large range is slow on every replica alike, and asking one more would
// double its load for nothing.
func (e *Execution) speculation(fix readRepair, shard int) <-chan struct{} {
	if fix.scan {
		return nil
	}
	wait, ok := fix.table.SpeculativeRetry().Wait(e.topo.Shards[shard].Pool.LatencyQuantile)
	if !ok {
		return nil
	}
	// Counted from the request's arrival, whose time the execution
	// holds: the clock is read once per request.
	return deadlines.after(e.Now, wait)
}

// repairTimeout is the timeout of a read whose replicas answered but whose
// read repair did not finish in time, as Cassandra words it: one response
// short of the level, with the data present.
func repairTimeout(level sharding.Consistency, blockFor int) *ReadTimeoutError {
	return &ReadTimeoutError{Consistency: level, Received: blockFor - 1, BlockFor: blockFor, DataPresent: true}
}

// readOne reads from the first replica of order that answers, moving on
// when one fails before sending any row, until expire. Its op and guard
// are rs's: each is reused only once the op before has been received, and
// an op given up on keeps the execution from being reused.
func (e *Execution) readOne(ctx context.Context, expire <-chan struct{}, stmt *sharding.Statement, args [][]byte,
	order []int, sink sharding.RowSink, level sharding.Consistency, rs *readScratch) error {
	var err error
	timedOut := false
	for _, r := range order {
		guard, op := &rs.guard, &rs.op
		guard.inner, guard.rows, guard.closed = sink, 0, false
		op.Reset(stmt, args, binaryParams, guard)
		op.Order = rs.opOrder()
		op.Deadline = rs.deadline
		e.topo.Shards[r].Pool.Submit(op)
		var finished bool
		finished, err = op.WaitUntil(ctx, expire)
		if !finished {
			e.abandon()
			timedOut = true
		}
		if rows := guard.close(); err == nil || permanent(err) || rows > 0 || timedOut {
			break
		}
	}
	switch {
	case timedOut:
		return &ReadTimeoutError{Consistency: level, Received: 0, BlockFor: 1}
	case queueFull(err):
		return errReplicaOverloaded
	case shardFailed(err):
		return &ReadTimeoutError{Consistency: level, Received: 0, BlockFor: 1}
	}
	return err
}

// opOrder is the order of the read's ops among those sharing a
// transaction, zero when they do not.
func (rs *readScratch) opOrder() uint64 {
	if rs.share {
		return readOrder
	}
	return 0
}

// deliver hands the rows of a read that asked several replicas to the
// sink the caller gave.
func deliver(data *rowBuffer, sink sharding.RowSink) error {
	switch s := sink.(type) {
	case *rowBuffer:
		*s = *data
		return nil
	case *rowWriter:
		return s.replay([]*rowBuffer{data})
	}
	panic("deliver: unexpected sink")
}

// shardFailed reports whether err is a shard's failure, not the
// statement's; it costs nothing when err is nil.
func shardFailed(err error) bool {
	if err == nil {
		return false
	}
	var se *sharding.ShardError
	return errors.As(err, &se)
}

// ReadReplica runs cql, a read of one partition whose key values are key,
// on replica shard alone, for session s, planned and authorized as a
// client's read would be, and returns its rows' values. The web view
// reads each replica of a partition this way.
func (v *Env) ReadReplica(ctx context.Context, s Session, cql string, key [][]byte, shard int) ([][][]byte, error) {
	st, err := v.Prepare("", []byte(cql))
	if err != nil {
		return nil, err
	}
	if _, ok := st.Plan.(*translate.Select); !ok {
		return nil, invalidf("not a read: %s", cql)
	}
	q := &cqlwire.QueryParams{Consistency: uint16(sharding.One), Values: key}
	e, err := v.newExecution(s, time.Now(), st, q, fromQuery)
	if err != nil {
		return nil, err
	}
	defer e.Release()
	var rows [][][]byte
	var resp []byte
	e.pinned, e.collected = []int{shard}, &rows
	if err := e.run(ctx, st, &resp); err != nil {
		return nil, err
	}
	return rows, nil
}
