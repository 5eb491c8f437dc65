package sharding

import (
	"errors"
	"log/slog"
)

// NewFuncPool returns a pool that reaches no server: Submit runs each op
// with run, in the submitting goroutine, and finishes it with run's error.
// run may feed op.Rows and read op.Args as a connection would; it is how
// the layers above measure and test their own work without a shard.
func NewFuncPool(name string, run func(op *Op) error) *Pool {
	return &Pool{name: name, stop: make(chan struct{}), log: slog.Default().With("shard", name), run: run}
}

// ErrDeferred, returned by the run of a NewFuncPool, leaves the op
// unfinished: run handed it on, and its holder calls Finish later, as a
// slow shard would answer.
var ErrDeferred = errors.New("op deferred")

// Finish finishes an op that the run of a NewFuncPool deferred.
func (op *Op) Finish(err error) { op.finish(err) }
