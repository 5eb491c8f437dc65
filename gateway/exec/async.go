package exec

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync"

	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqlpg/cqlpg/gateway/cqlwire"
	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/sharding"
	"github.com/cqlpg/cqlpg/translate"
)

// Point requests answered from the shard pools' goroutines.
//
// A request normally runs in a handler goroutine of its own, which blocks
// while its statements run on the shards. For the commonest requests that
// costs two goroutine switches on top of the pool's own: the reader hands
// the request to a handler, and the pool hands the outcome back to it.
// The EXECUTEs of a read of one partition from one replica, and of a
// plain write of one row, skip both: the reader binds them itself and
// submits their ops with the execution as their completion, and the pool
// goroutine that finishes the op the answer waits for also encodes the
// answer and queues it for the writer. A request not answered in time is
// answered with its timeout by the shared clock (deadline.go).
//
// Whatever the reader cannot start this way (another kind of request, a
// level needing several replicas, a paging state) goes to a handler, with
// the execution the reader bound when it got that far. An EXECUTE that
// fails before it is bound (a malformed body, an unknown statement, bad
// values) is answered by the reader, with the errors the handler would
// give (BindExecute); a second look-up would find a reshaped statement
// replanned.

// asyncState is the part of an execution that runs a request
// asynchronously. mu orders the completions, the clock's expiry and the
// recycling of the execution.
type asyncState struct {
	mu sync.Mutex
	// gen counts the requests the execution has run, so that the clock,
	// which names a request by its execution and gen, leaves alone an
	// execution recycled since.
	gen uint64
	// live is set while the execution runs a request asynchronously;
	// answered once the request has been answered, and finished once the
	// request has also given its execution back.
	live, answered, finished bool
	kind                     asyncKind
	stream                   int16
	body                     *[]byte
	resp                     *[]byte
	// A read's: its ops pending, the next replica of e.scratch.order to
	// ask should one fail, and its rows' writer.
	pending int
	next    int
	rows    *rowWriter
}

type asyncKind uint8

const (
	asyncRead asyncKind = iota + 1
	asyncWrite
)

// reset readies the state for the execution's next request, giving back
// the buffers the last one held.
func (a *asyncState) reset() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.live {
		return
	}
	cqlwire.PutBuffer(a.body)
	if a.resp != nil {
		cqlwire.PutBuffer(a.resp)
	}
	a.gen++
	a.live, a.answered, a.finished, a.body, a.resp, a.rows = false, false, false, nil, nil, nil
}

// Start starts a bound EXECUTE on the reader's goroutine if it is a
// request answered from the pools' goroutines (StartRead, StartWrite),
// and reports whether it did; the request's frame then answers on stream,
// and its body is the execution's. What the attempt keyed, the handler's
// run takes as it is.
func (e *Execution) Start(stream int16, body *[]byte) bool {
	st := e.St
	MaybePanic(&e.env.Hooks, PanicReader, st.Query)
	started := false
	var keyed []translate.Restriction
	switch p := st.Plan.(type) {
	case *translate.Select:
		started, keyed = !e.ResultChanged && e.StartRead(st, p, stream, body), p.Keys
	case *translate.Write:
		started, keyed = e.StartWrite(st, p, stream, body), p.Keys
	}
	if !started && e.KeyTaken {
		e.HandedOver = keyed
	}
	return started
}

// Started reports whether the execution runs a request asynchronously.
func (e *Execution) Started() bool {
	e.async.mu.Lock()
	defer e.async.mu.Unlock()
	return e.async.live
}

// newAnswer returns a buffer holding the head of a RESULT frame.
func (e *Execution) newAnswer(stream int16) *[]byte {
	resp := cqlwire.GetBuffer(0)
	*resp = cqlwire.AppendHeader((*resp)[:0], e.version, stream, cqlwire.OpResult)
	return resp
}

// begin records the request the execution now runs asynchronously, whose
// answer is built in resp, and returns its generation.
func (e *Execution) begin(kind asyncKind, stream int16, body, resp *[]byte) uint64 {
	a := &e.async
	a.mu.Lock()
	defer a.mu.Unlock()
	a.live, a.kind, a.stream, a.body, a.resp = true, kind, stream, body, resp
	return a.gen
}

// StartRead starts a SELECT of one partition that one replica answers.
func (e *Execution) StartRead(st *Statement, p *translate.Select, stream int16, body *[]byte) bool {
	level := sharding.Consistency(e.params.Consistency)
	if p.Table.Virtual || p.Route != translate.RoutePartitions || p.Aggregate || len(p.SortSlots) > 0 || p.ANN != nil || isSerial(level) ||
		e.params.PageSize > 0 && e.params.PagingState != nil {
		return false
	}
	q, err := e.selectQuery(st, p)
	if err != nil {
		return false
	}
	keys, ok, err := e.SingleKey(p.Keys)
	if !ok || err != nil {
		return false
	}
	placement, err := e.placement(p.Table.Keyspace)
	if err != nil {
		return false
	}
	token := sharding.KeyToken(keys[0])
	e.env.Hot.note(p.Table, int64(token))
	replicas := placement.Replicas(token)
	rs := &e.scratch
	plan, err := e.planRead(replicas, rs.order[:0])
	if len(replicas) == 0 || err != nil || plan.ask != 1 {
		return false
	}
	rs.order = plan.order
	resp := e.newAnswer(stream)
	w := e.startRows(st, p, resp, q)
	read, params := w.partitionRead(false)
	ra := rowArgs{key: keys[0], token: int64(token), limit: w.sqlLimit(true)}
	if err := rs.args.build(e, params, &ra); err != nil {
		cqlwire.PutBuffer(resp)
		return false
	}
	gen := e.begin(asyncRead, stream, body, resp)
	a := &e.async
	a.pending, a.next, a.rows = 1, 1, w
	rs.count = rowCounter{w: w}
	deadlines.expireAt(e, e.env.Config.ReadTimeout, gen)
	rs.deadline = opDeadline(e.Now, e.env.Config.ReadTimeout)
	e.submitRead(0, read)
	return true
}

// submitRead asks replica i of the read's order, its rows counted on their
// way to the row writer.
func (e *Execution) submitRead(i int, stmt *sharding.Statement) {
	rs := &e.scratch
	rs.op.ResetThen(stmt, rs.args.args, binaryParams, &rs.count, e, 0)
	rs.op.Order = readOrder
	rs.op.Deadline = rs.deadline
	e.topo.Shards[rs.order[i]].Pool.Submit(&rs.op)
}

// readDone takes the outcome of a read's op: the answer, or another
// replica asked when this one failed before sending a row.
func (e *Execution) readDone(op *sharding.Op) {
	a, rs := &e.async, &e.scratch
	err := op.Err()
	rows := rs.count.rows
	a.mu.Lock()
	a.pending--
	if a.answered { // expired: the answer has gone
		a.finished = true
		a.mu.Unlock()
		e.Release()
		return
	}
	if err != nil && !permanent(err) && rows == 0 && a.next < len(rs.order) {
		i := a.next
		a.next++
		a.pending++
		rs.count.rows = 0
		a.mu.Unlock()
		e.submitRead(i, op.Stmt)
		return
	}
	a.answered, a.finished = true, true
	a.mu.Unlock()
	switch {
	case queueFull(err):
		err = errReplicaOverloaded
	case shardFailed(err):
		err = &ReadTimeoutError{Consistency: sharding.Consistency(e.params.Consistency), BlockFor: 1}
	}
	if err == nil {
		err = a.rows.end()
	}
	e.answer(err)
	e.Release()
}

// StartWrite starts a write of one row without conditions to its
// replicas, answered once the level's acknowledgements are in. It builds
// the write as a waiting one does (prepareWrite); what it cannot start
// goes to the handler, which gives the errors.
func (e *Execution) StartWrite(st *Statement, p *translate.Write, stream int16, body *[]byte) bool {
	if p.Conditions != nil || p.Counter || p.InPlace || p.Views || e.mutations != nil {
		return false
	}
	r, err := e.writeTimes(p, nil)
	if err != nil {
		return false
	}
	keys, ok, err := e.SingleKey(p.Keys)
	if !ok || err != nil || e.checkWriteConsistency(p.Table.Name, false) != nil {
		return false
	}
	placement, err := e.placement(p.Table.Keyspace)
	if err != nil {
		return false
	}
	w, err := e.prepareWrite(st.write, p, r, keys, placement)
	if err != nil {
		return false
	}
	gen := e.begin(asyncWrite, stream, body, e.newAnswer(stream))
	*e.async.resp = cqlwire.AppendInt(*e.async.resp, cqlwire.ResultVoid)
	w.then = e
	e.async.mu.Lock()
	w.send() // the ops wait in w.later, each counted as pending
	later := w.takeLater()
	e.async.mu.Unlock()
	deadlines.expireAt(e, e.env.Config.WriteTimeout, gen)
	// The ops may all finish, and the request be answered and its
	// execution recycled, before the last is submitted: hold it.
	e.hold()
	submitOps(later)
	e.writeSettle(nil)
	e.Release()
	return true
}

// writeDone takes the outcome of one of a write's ops.
func (e *Execution) writeDone(op *sharding.Op) { e.writeSettle(op) }

// writeSettle counts op, when given, and answers the write once its level
// is met, a replica returned an error every replica would, or no op is
// left to wait for; the execution goes back once the answer has gone and
// every op has finished. Hints for replicas that failed are submitted
// here too, once the lock is released.
func (e *Execution) writeSettle(op *sharding.Op) {
	a, w := &e.async, &e.writes
	a.mu.Lock()
	var err error
	if op != nil {
		err = w.receive(op)
	}
	answer := false
	if !a.answered && (err != nil || w.met() || w.pending == 0) {
		answer, a.answered = true, true
		if err == nil {
			err = w.timeout(primitive.WriteTypeSimple)
		}
	}
	// Ops taken to submit count as pending: none is finished meanwhile.
	finish := a.answered && !a.finished && w.pending == 0
	a.finished = a.finished || finish
	later := w.takeLater()
	// Once the lock is released the ops left may finish, and the execution
	// go back, while ops are still being submitted (one may fail in
	// Submit itself) or the answer sent: hold it until done.
	e.hold()
	a.mu.Unlock()
	submitOps(later)
	if answer {
		e.answer(err)
	}
	if finish {
		e.Release()
	}
	e.Release()
}

// OpDone implements sharding.Completer for the ops of an asynchronous
// request. It runs in a pool's goroutine: a panic is answered as a server
// error there, as a handler's would be, and never takes the pool down.
func (e *Execution) OpDone(op *sharding.Op) {
	defer func() {
		if r := recover(); r != nil {
			e.c.Logger().Error("request panicked", "opcode", "EXECUTE", "panic", r, "stack", string(debug.Stack()))
			e.expireWith(e.async.gen, fmt.Errorf("internal error: %v", r))
		}
	}()
	MaybePanic(&e.env.Hooks, panicCompletion, e.St.Query)
	switch e.async.kind {
	case asyncRead:
		e.readDone(op)
	case asyncWrite:
		e.writeDone(op)
	}
}

// expire answers the request of generation gen with its timeout, unless it
// has been answered or the execution has moved on.
func (e *Execution) expire(gen uint64) { e.expireWith(gen, nil) }

// expireWith is expire answering err, or the request's timeout when err
// is nil.
func (e *Execution) expireWith(gen uint64, err error) {
	a := &e.async
	a.mu.Lock()
	if a.gen != gen || !a.live || a.answered {
		a.mu.Unlock()
		return
	}
	a.answered = true
	pending := a.pending
	if a.kind == asyncWrite {
		pending = e.writes.pending
		if err == nil {
			err = e.writes.timeout(primitive.WriteTypeSimple)
		}
	}
	if err == nil {
		err = &ReadTimeoutError{Consistency: sharding.Consistency(e.params.Consistency), BlockFor: 1}
	}
	finish := pending == 0 && !a.finished
	a.finished = a.finished || finish
	// The op still running may finish as soon as the lock is released,
	// and let the execution go back while the answer is being sent.
	e.hold()
	a.mu.Unlock()
	e.answer(err)
	if finish {
		e.Release()
	}
	e.Release()
}

// answer sends the request's answer: its result, or err. Only the one
// that set answered calls it.
//
// An error goes out in a buffer of its own: a read's op may still be
// writing rows into the result's (after an expiry), which stays the
// execution's until it is recycled.
func (e *Execution) answer(err error) {
	deadlines.cancel(e)
	if staleSQL(err) {
		// Telling a stale plan from a failure may wait on a schema
		// reload, which a pool's goroutine must not.
		e.hold()
		go func() {
			defer e.Release()
			e.send(e.env.staleExecute(context.Background(), e.St, err))
		}()
		return
	}
	e.send(err)
}

// send sends the request's answer, its result or err.
func (e *Execution) send(err error) {
	a := &e.async
	var resp *[]byte
	if err == nil {
		resp, a.resp = a.resp, nil
		cqlwire.FinishFrame(*resp)
	}
	e.c.Answer(a.stream, resp, err, e.St, e.Now)
}

// readOrder is the order of point reads among the ops sharing a
// transaction (sharding.Op.Order): they take no locks, so any order does,
// and before the writes.
const readOrder = 1

// rowOrder is the order of a write of one row among the ops sharing a
// transaction: a hash of its table and primary key, the same on every
// gateway, so that transactions on every connection lock rows in one
// order. It is never readOrder or zero.
func rowOrder(t *pgschema.Table, key [][]byte) uint64 {
	h := fnvAdd(fnvAdd(fnvOffset, t.Keyspace), t.Name)
	for _, k := range key {
		h = fnvAdd(h, k)
	}
	return max(h, readOrder+1)
}

// FNV-1a, 64 bits.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// fnvAdd hashes s into h, then a separator, so that consecutive values
// hash apart from their concatenation.
func fnvAdd[S string | []byte](h uint64, s S) uint64 {
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * fnvPrime
	}
	return (h ^ 0xff) * fnvPrime
}

// rowCounter passes an asynchronous read's rows on to its row writer,
// counting them. The read's one op at a time feeds it, in the pool's
// goroutine, and the completion reads it after the op: it needs no lock,
// unlike the guard of a read that waits (guardSink), as an expired read
// answers in a buffer of its own and leaves the rows' to its op.
type rowCounter struct {
	w    *rowWriter
	rows int
}

func (r *rowCounter) Row(values [][]byte) error {
	r.rows++
	return r.w.Row(values)
}

// submitOps submits ops that were held back while a lock was held.
func submitOps(ops []laterOp) {
	for _, l := range ops {
		l.pool.Submit(l.op)
	}
}
