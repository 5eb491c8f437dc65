package exec

import "sync/atomic"

// Points of the request path where a test may make a request panic
// (Env.Hooks.panicAt), to check that the panic is recovered there.
const (
	// PanicHandler is a handler goroutine, before the request is
	// dispatched; the text is the request's body.
	PanicHandler = "handler"
	// PanicReader is the reader goroutine binding an EXECUTE it may answer
	// asynchronously; the text is the prepared statement's.
	PanicReader = "reader"
	// panicCompletion is a shard pool's goroutine completing an op of an
	// asynchronous EXECUTE; the text is the prepared statement's.
	panicCompletion = "completion"
)

// MaybePanic panics when a test's hook asks for a panic at point for a
// request of the given text. Without a hook it costs one atomic load.
func MaybePanic[T string | []byte](h *Hooks, point string, text T) {
	if f := h.PanicAt.Load(); f != nil && (*f)(point, string(text)) {
		panic("test hook: panic at " + point)
	}
}

// Hooks let tests interrupt the gateway where a crash would.
type Hooks struct {
	// DropBatchPart, when it returns true for a shard, leaves that
	// shard's part of a logged batch unsent and the batch log record in
	// place, as a gateway that dies halfway through the batch does.
	DropBatchPart atomic.Pointer[func(shard int) bool]
	// PanicAt, when it returns true for a point of the request path and
	// the request's text, makes the request panic there (hooks.go).
	PanicAt atomic.Pointer[func(point, text string) bool]
	// PaxosDrop, when it returns true for a Paxos phase ("prepare",
	// "propose" or "commit") and a shard, drops that phase's message to
	// the shard unsent, as a network partition or a gateway dying
	// halfway does: the round waits for the answer until its deadline.
	PaxosDrop atomic.Pointer[func(phase string, shard int) bool]
	// ClockSkew, in nanoseconds, is added to the request's arrival time
	// when the gateway gives a write its timestamp (ServerTimestamp), as
	// if the gateway's clock ran that far ahead, or behind when negative.
	ClockSkew atomic.Int64
	// ReadRepaired, when set, runs after a read's repair and before the
	// read takes its data again, as a write landing in that moment would.
	ReadRepaired atomic.Pointer[func()]
}
