package sharding

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"time"
)

// Statement is an SQL statement that shards prepare once per connection.
type Statement struct {
	// Name is the server-side prepared statement name, derived from SQL,
	// so the same text always has the same name on every connection.
	Name      string
	SQL       string
	ParamOIDs []uint32
}

// NewStatement returns the statement for an SQL text and the types of its
// parameters. Its name digests both: the same text sent with other types
// (a table dropped and made again with other column types) is another
// statement, never one prepared for the old types.
func NewStatement(sql string, paramOIDs []uint32) *Statement {
	b := []byte(sql)
	for _, oid := range paramOIDs {
		b = binary.BigEndian.AppendUint32(b, oid)
	}
	sum := sha256.Sum256(b)
	return &Statement{Name: "cqlpg_" + hex.EncodeToString(sum[:12]), SQL: sql, ParamOIDs: paramOIDs}
}

// RowSink receives the rows of a statement, in the pool's goroutine, as
// Postgres binary values that stay valid only until Row returns.
type RowSink interface {
	Row(values [][]byte) error
}

// Op is one execution of a statement on one shard, or of several in one
// transaction. Its Args stay owned by the caller and must not change until
// Wait returns.
type Op struct {
	Stmt *Statement
	Args [][]byte
	// Formats gives each argument's format (1 = binary); nil means text.
	Formats []int16
	// After are statements run after Stmt in the same transaction: the op
	// applies all of them, or none when one fails.
	After []Step
	// Rows receives the result rows of every statement; nil discards them.
	Rows RowSink
	// Sinks, when set, receive the rows of each statement apart: those
	// of Stmt go to Sinks[0], of After[i] to Sinks[i+1] (nil or missing
	// discards them), in place of Rows.
	Sinks []RowSink
	// Tag is the caller's, for telling ops apart on a Notify channel.
	Tag int
	// Deadline, when set, is when the op's outcome stops being awaited: a
	// statement of the op still running on the shard then is cancelled,
	// so that it no longer holds a connection, locks or a worker. Reset
	// and its kin clear it.
	Deadline time.Time
	// Order, when not zero, lets an op of one statement share one
	// transaction with the other such ops of its pipeline: one commit
	// and one answer from Postgres for them all. Reads (ops with Rows)
	// run first, then writes sorted by Order, so that writes given an
	// order by the rows they change take their row locks in the same
	// order on every connection. A shared read is finished once its rows
	// are in, and has seen no write of its transaction; a shared write
	// once the transaction commits. Should another op of it, or the
	// commit, fail, the writes it rolled back and the ops it skipped run
	// again on their own.
	Order uint64

	done chan error
	// notify, when set, receives the op once it has run, in place of
	// done; Err then tells its outcome.
	notify chan<- *Op
	// then, when set, is called with the op once it has run, in place of
	// done and notify.
	then Completer
	err  error
	// alone is set on an op to run again after the transaction it shared
	// failed: it then runs in a transaction of its own.
	alone bool
	// replans counts the times the op met a statement prepared before a
	// schema change (stalePlan) and was run again, and cancels those it
	// was cancelled in place of another (strayCancel).
	replans int
	cancels int
	// passed counts the rows the op handed to Rows.
	passed int
}

// Completer is told of ops that have run (NewThenOp). OpDone runs in the
// pool's goroutine, or in Submit's when the op fails before it is sent:
// it must not block, and must not call Submit while holding a lock that
// another OpDone takes.
type Completer interface {
	OpDone(op *Op)
}

// Step is one statement of an op that runs several in one transaction.
type Step struct {
	Stmt    *Statement
	Args    [][]byte
	Formats []int16
}

// NewOp returns an Op ready to be submitted.
func NewOp(stmt *Statement, args [][]byte, formats []int16, rows RowSink) *Op {
	return &Op{Stmt: stmt, Args: args, Formats: formats, Rows: rows, done: make(chan error, 1)}
}

// NewNotifyOp returns an Op that is sent to notify once it has run. The
// channel must have room for every op sent to it, so that the pool never
// blocks on a caller that stopped listening.
func NewNotifyOp(stmt *Statement, args [][]byte, formats []int16, rows RowSink, notify chan<- *Op, tag int) *Op {
	return &Op{Stmt: stmt, Args: args, Formats: formats, Rows: rows, Tag: tag, notify: notify}
}

// NewNotifyTx is NewTx for an op sent to notify once it has run.
func NewNotifyTx(steps []Step, notify chan<- *Op, tag int) *Op {
	op := NewNotifyOp(steps[0].Stmt, steps[0].Args, steps[0].Formats, nil, notify, tag)
	op.After = steps[1:]
	return op
}

// Reset readies op to run stmt, keeping its done channel: an op is
// recycled this way only once its outcome has been received (Wait or
// WaitUntil returned it), when no pool holds it any more.
func (op *Op) Reset(stmt *Statement, args [][]byte, formats []int16, rows RowSink) {
	done := op.done
	if done == nil {
		done = make(chan error, 1)
	}
	*op = Op{Stmt: stmt, Args: args, Formats: formats, Rows: rows, done: done}
}

// ResetNotify is Reset for an op sent to notify once it has run, which
// may be recycled once received from notify.
func (op *Op) ResetNotify(stmt *Statement, args [][]byte, formats []int16, rows RowSink, notify chan<- *Op, tag int) {
	*op = Op{Stmt: stmt, Args: args, Formats: formats, Rows: rows, Tag: tag, notify: notify}
}

// NewThenOp returns an Op that is handed to then once it has run.
func NewThenOp(stmt *Statement, args [][]byte, formats []int16, rows RowSink, then Completer, tag int) *Op {
	return &Op{Stmt: stmt, Args: args, Formats: formats, Rows: rows, Tag: tag, then: then}
}

// ResetThen is Reset for an op handed to then once it has run, which may
// be recycled once then has been called.
func (op *Op) ResetThen(stmt *Statement, args [][]byte, formats []int16, rows RowSink, then Completer, tag int) {
	*op = Op{Stmt: stmt, Args: args, Formats: formats, Rows: rows, Tag: tag, then: then, done: op.done}
}

// Err returns the outcome of an op received from its Notify channel or
// handed to its Completer.
func (op *Op) Err() error { return op.err }

// finish hands the op its outcome.
func (op *Op) finish(err error) {
	if op.then != nil {
		op.err = err
		op.then.OpDone(op)
		return
	}
	if op.notify != nil {
		op.err = err
		op.notify <- op
		return
	}
	op.done <- err
}

// NewTx returns an Op that runs steps, at least one, in order in one
// transaction.
func NewTx(steps []Step, rows RowSink) *Op {
	op := NewOp(steps[0].Stmt, steps[0].Args, steps[0].Formats, rows)
	op.After = steps[1:]
	return op
}

// step returns the op's statement j: Stmt, then those of Then.
func (op *Op) step(j int) (*Statement, [][]byte, []int16) {
	if j == 0 {
		return op.Stmt, op.Args, op.Formats
	}
	s := &op.After[j-1]
	return s.Stmt, s.Args, s.Formats
}

// Wait blocks until the op has run and returns its error, or returns
// ctx's error first. An op abandoned this way still runs to completion.
func (op *Op) Wait(ctx context.Context) error {
	select {
	case err := <-op.done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// WaitUntil is Wait that also gives up when expire is closed. finished
// tells whether the op's outcome was received, after which the op may be
// recycled; an op given up on still runs to completion.
func (op *Op) WaitUntil(ctx context.Context, expire <-chan struct{}) (finished bool, err error) {
	select {
	case err := <-op.done:
		return true, err
	case <-expire:
		return false, context.DeadlineExceeded
	case <-ctx.Done():
		return false, ctx.Err()
	}
}
