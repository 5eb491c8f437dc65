package exec

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqlpg/cqlpg/sharding"
)

// A write goes to every replica of its partition that is up, in parallel,
// and is answered once the consistency level's count of replicas has
// acknowledged it. Before anything is sent, a level that too few live
// replicas could meet is refused as Unavailable. A replica that is down,
// fails, or has not answered when the client is answered gets a hint: the
// write is kept on a shard that is up and replayed to the replica when it
// is back (hints.go). A level that is not met in time is answered with a
// write timeout, as Cassandra's coordinator does; the write may still
// apply, and its hints still finish it.

// replicaWrites is one request's writes on their way to the replicas.
type replicaWrites struct {
	e       *Execution
	level   sharding.Consistency
	counter bool
	// every makes the write wait for every replica it was sent to, not
	// only for the level: see newReplicaWrites.
	every bool
	// deadline is when the writes' ops are cancelled (opDeadline).
	deadline time.Time
	// parts are the partitions written, each with its acknowledgements.
	parts []partitionWrite
	// sends are the ops sent, indexed by their tags, and ops the ops
	// themselves, the first len(ops) of them in place.
	sends   []replicaSend
	ops     []sharding.Op
	notify  chan *sharding.Op
	pending int
	// then, when set, is handed each op once it has run, in place of
	// notify, and the ops wait in later to be submitted once the lock of
	// the asynchronous request is released (async.go).
	then  sharding.Completer
	later []laterOp
	taken int
	// order, when set, lets the writes share their pipelines'
	// transactions (sharding.Op.Order).
	order uint64
	// overloaded is set once a replica's pool refused a write for its
	// full queue (sharding.ErrQueueFull).
	overloaded bool
}

// laterOp is an op to submit once a lock is released.
type laterOp struct {
	pool *sharding.Pool
	op   *sharding.Op
}

// takeLater returns the ops waiting to be submitted, leaving none. What
// it returns stays valid while more are added.
func (w *replicaWrites) takeLater() []laterOp {
	l := w.later[w.taken:]
	w.taken = len(w.later)
	return l
}

// clear readies the replica writes of an execution for the next one,
// keeping their buffers. It is called only once every op sent has been
// received, so that none can still send on notify or read its op. The
// buffers only ever grow by append up to clear, so what lies past their
// length was cleared before.
func (w *replicaWrites) clear() {
	if w.e == nil {
		return // not used since the last clear
	}
	clear(w.parts)
	clear(w.sends)
	clear(w.ops)
	clear(w.later)
	*w = replicaWrites{parts: w.parts[:0], sends: w.sends[:0], ops: w.ops[:0], notify: w.notify, later: w.later[:0]}
}

// partitionWrite is the writes to one partition's replicas.
type partitionWrite struct {
	acks     sharding.Acks
	replicas []int
	gcGrace  int64
}

// replicaSend is one op sent: a write to a replica, or the hint standing
// in for one.
type replicaSend struct {
	part  int
	shard int
	step  sharding.Step
	// lock, when set, runs before step in its transaction (lockFor).
	lock *sharding.Statement
	// hintFor is the replica a hint write stands in for, -1 for a write.
	hintFor int
}

// newReplicaWrites prepares the writes of one request at the request's
// consistency level. A write whose outcome depends on the order in which
// a replica applies it (a counter update, an in-place collection change)
// also waits for every replica it was sent to, up to its timeout, before
// it is answered: a client's next change then reaches every replica after
// this one, and replicas stay equal. Cassandra needs no such wait, since
// it keeps a timestamp per collection element; cqlpg keeps one per list
// and user type (sets and maps keep one per element, and need none).
func (e *Execution) newReplicaWrites(counter, inPlace bool) *replicaWrites {
	w := &e.writes
	w.clear()
	w.e, w.level, w.counter, w.every = e, sharding.Consistency(e.params.Consistency), counter, counter || inPlace
	timeout := e.env.Config.WriteTimeout
	if counter {
		timeout = e.env.Config.CounterWriteTimeout
	}
	w.deadline = opDeadline(e.Now, timeout)
	return w
}

// add records a write of one partition to replicas, the last pending of
// them pending (Placement.WriteReplicas), refusing it when too few are up
// for the level. lock, when set, runs before step (lockFor).
func (w *replicaWrites) add(replicas []int, pending int, step sharding.Step, lock *sharding.Statement, gcGrace int64) error {
	topo := w.e.topo
	acks := topo.RequireWrite(w.level, replicas, pending, w.e.env.Config.Datacenter)
	if err := topo.Available(&acks, replicas); err != nil {
		return err
	}
	part := len(w.parts)
	w.parts = append(w.parts, partitionWrite{acks: acks, replicas: replicas, gcGrace: gcGrace})
	for _, shard := range replicas {
		w.sends = append(w.sends, replicaSend{part: part, shard: shard, step: step, lock: lock, hintFor: -1})
	}
	return nil
}

// send submits every write: to the replicas that are up, and as hints for
// those that are down.
func (w *replicaWrites) send() {
	n := len(w.sends)
	// Room for every write and one hint each, so that no pool ever
	// blocks on this request once it has been answered. A channel kept
	// from an execution before is empty: clear runs only once every op
	// sent to it has been received.
	if cap(w.notify) < 2*n {
		w.notify = make(chan *sharding.Op, 2*n)
	}
	// The ops of the writes live in w.ops, which does not grow while they
	// run; those of hints are allocated.
	if cap(w.ops) < n {
		w.ops = make([]sharding.Op, n)
	}
	w.ops = w.ops[:n]
	for i := range n {
		s := &w.sends[i]
		if !w.e.topo.Shards[s.shard].Pool.Alive() {
			w.hint(i)
			continue
		}
		w.submit(i)
	}
}

// submit sends w.sends[i].
func (w *replicaWrites) submit(i int) {
	s := &w.sends[i]
	st := &s.step
	if s.lock != nil {
		st = &sharding.Step{Stmt: s.lock}
	}
	var op *sharding.Op
	switch {
	case i < len(w.ops) && w.then != nil:
		op = &w.ops[i]
		op.ResetThen(st.Stmt, st.Args, st.Formats, nil, w.then, i)
	case i < len(w.ops):
		op = &w.ops[i]
		op.ResetNotify(st.Stmt, st.Args, st.Formats, nil, w.notify, i)
	case w.then != nil:
		op = sharding.NewThenOp(st.Stmt, st.Args, st.Formats, nil, w.then, i)
	default:
		op = sharding.NewNotifyOp(st.Stmt, st.Args, st.Formats, nil, w.notify, i)
	}
	op.Order = w.order
	if s.lock != nil {
		op.After = []sharding.Step{s.step}
	}
	if s.hintFor < 0 {
		// A write past its time is cancelled, and hinted as a replica
		// that failed; a hint is left to finish.
		op.Deadline = w.deadline
	}
	w.pending++
	pool := w.e.topo.Shards[s.shard].Pool
	if w.then != nil {
		w.later = append(w.later, laterOp{pool: pool, op: op})
		return
	}
	pool.Submit(op)
}

// hint sends a hint for the replica of w.sends[i], on another replica of
// the partition that is up, else on any shard that is up; with no shard
// up, the write is left to repair.
func (w *replicaWrites) hint(i int) {
	s := w.sends[i]
	topo := w.e.topo
	holder := hintHolder(topo, s.shard, w.parts[s.part].replicas)
	if holder < 0 {
		return
	}
	steps := []sharding.Step{s.step}
	if s.lock != nil {
		steps = []sharding.Step{{Stmt: s.lock}, s.step}
	}
	step := hintStep(topo.Shards[s.shard].Info.HostID, steps, w.parts[s.part].gcGrace)
	w.sends = append(w.sends, replicaSend{part: s.part, shard: holder, step: step, hintFor: s.shard})
	w.submit(len(w.sends) - 1)
	w.e.env.Metrics.HintsWritten.Inc()
}

// met reports whether every partition has the acknowledgements it needs.
func (w *replicaWrites) met() bool {
	for i := range w.parts {
		if !w.parts[i].acks.Met() {
			return false
		}
	}
	return true
}

// wait collects acknowledgements until the level is met, and answers a
// write timeout of writeType when it is not met within timeout. Ops still
// running when it returns are followed by a goroutine that hints the
// replicas they fail on.
func (w *replicaWrites) wait(ctx context.Context, timeout time.Duration, writeType primitive.WriteType) error {
	// Timeouts count from the request's arrival, whose time the
	// execution already holds: the clock is read once per request.
	expire := deadlines.after(w.e.Now, timeout)
	var err error
collect:
	for w.pending > 0 && (w.every || !w.met()) {
		select {
		case op := <-w.notify:
			if err = w.receive(op); err != nil {
				break collect
			}
		case <-expire:
			// Met or not, the time is up; a late replica is left to the
			// goroutine below, which hints it if it fails.
			break collect
		case <-ctx.Done():
			break collect
		}
	}
	if err == nil {
		err = w.timeout(writeType)
	}
	// Ops that have already finished are counted now, which spares the
	// drain goroutine when every replica has answered.
	for w.pending > 0 && len(w.notify) > 0 {
		w.receive(<-w.notify)
	}
	if w.pending > 0 {
		w.e.hold()
		go w.drain()
	}
	return err
}

// receive counts one finished op. A statement error, which every replica
// would return alike, is the request's error; a replica that failed gets
// a hint, unless the write is a counter update that may have applied,
// which is not safe to apply twice.
func (w *replicaWrites) receive(op *sharding.Op) error {
	w.pending--
	s := &w.sends[op.Tag]
	err := op.Err()
	switch {
	case err == nil:
		if s.hintFor < 0 || w.level == sharding.Any {
			w.parts[s.part].acks.Ack(w.e.topo.Shards[s.shard].Info.DC)
		}
		return nil
	case permanent(err):
		return err
	case s.hintFor >= 0:
		w.e.env.Log.Warn("cannot store a hint", "shard", w.e.topo.Shards[s.shard].Info.Name, "err", err)
		return nil
	case queueFull(err):
		w.overloaded = true
	case w.counter && !sharding.Unsent(err):
		// The update may have applied: replaying it could count twice.
		return nil
	}
	w.hint(op.Tag)
	return nil
}

// drain waits for the ops still running after the client was answered,
// hinting replicas they fail on. Each op finishes: the pools bound every
// round trip.
func (w *replicaWrites) drain() {
	for w.pending > 0 {
		w.receive(<-w.notify)
	}
	w.e.Release()
}

// timeout returns the write timeout of the first partition short of its
// acknowledgements, or Overloaded when a replica's pool refused the write
// for its full queue.
func (w *replicaWrites) timeout(writeType primitive.WriteType) error {
	for i := range w.parts {
		if a := &w.parts[i].acks; !a.Met() {
			if w.overloaded {
				return errReplicaOverloaded
			}
			return &WriteTimeoutError{WriteType: writeType, Consistency: w.level, Received: a.Got(), BlockFor: a.Need()}
		}
	}
	return nil
}

// WriteTimeoutError reports a write whose consistency level was not met
// in time (CQL WriteTimeout). For a LOGGED batch, BATCH means the batch
// log holds the batch, and a replay will finish it; BATCH_LOG that no
// copy of the log record is known to be durable, and the batch may or may
// not apply.
type WriteTimeoutError struct {
	WriteType          primitive.WriteType
	Consistency        sharding.Consistency
	Received, BlockFor int
	// Contentions counts the Paxos rounds a CAS write lost to others.
	Contentions int
	err         error
}

func (e *WriteTimeoutError) Error() string {
	return fmt.Sprintf("Operation timed out - received only %d responses.", e.Received)
}

func (e *WriteTimeoutError) Unwrap() error { return e.err }

// ReadTimeoutError reports a read whose consistency level was not met in
// time (CQL ReadTimeout); dataPresent tells whether the replica asked for
// the data answered.
type ReadTimeoutError struct {
	Consistency        sharding.Consistency
	Received, BlockFor int
	DataPresent        bool
}

func (e *ReadTimeoutError) Error() string {
	return fmt.Sprintf("Operation timed out - received only %d responses.", e.Received)
}

// OverloadedError reports a request refused because the queue of
// statements of a replica it needed was full (CQL Overloaded): the
// gateway is further behind that shard than it lets requests wait for,
// and the client had better try another coordinator or slow down.
type OverloadedError struct{ msg string }

func (e *OverloadedError) Error() string { return e.msg }

// errReplicaOverloaded is the one OverloadedError: Cassandra's text for a
// coordinator past its limits, and what the replica's queue is.
var errReplicaOverloaded = &OverloadedError{"Server is in overloaded state. Cannot accept more requests at this point " +
	"(too many statements queued for a replica)"}

// queueFull reports whether err is a pool's refusal of an op for its full
// queue.
func queueFull(err error) bool { return err != nil && errors.Is(err, sharding.ErrQueueFull) }

// checkWriteConsistency refuses levels Cassandra does not take for a
// write that has no conditions.
func (e *Execution) checkWriteConsistency(table string, counter bool) error {
	c := sharding.Consistency(e.params.Consistency)
	switch {
	case counter && c == sharding.Any:
		return invalidf("Consistency level ANY is not yet supported for counter table %s", table)
	case counter && isSerial(c):
		return invalidf("Counter operations are inherently non-serializable")
	case isSerial(c):
		return invalidf("You must use conditional updates for serializable writes")
	}
	return nil
}

// checkReadConsistency refuses the level Cassandra does not take for a
// read.
func (e *Execution) checkReadConsistency() error {
	if sharding.Consistency(e.params.Consistency) == sharding.Any {
		return invalidf("ANY ConsistencyLevel is only supported for writes")
	}
	return nil
}
