package exec

import (
	"testing"
)

// TestExecutionRelease checks when an execution returns to the pool:
// once its last holder lets go, and never after an op was abandoned.
func TestExecutionRelease(t *testing.T) {
	e := new(Execution)
	e.refs.Store(1)
	e.hold()
	e.Release()
	if e.refs.Load() != 1 {
		t.Fatalf("refs %d after a holder let go, want 1", e.refs.Load())
	}
	e.abandon()
	e.Release()
	if e.refs.Load() != 1 {
		t.Fatalf("refs %d after the request let go of an abandoned execution, want 1 (never 0)", e.refs.Load())
	}
}
