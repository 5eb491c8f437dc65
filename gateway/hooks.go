package gateway

import "sync/atomic"

// Points of the request path where a test may make a request panic
// (Server.hooks.panicAt), to check that the panic is recovered there.
const (
	// panicHandler is a handler goroutine, before the request is
	// dispatched; the text is the request's body.
	panicHandler = "handler"
	// panicReader is the reader goroutine binding an EXECUTE it may answer
	// asynchronously; the text is the prepared statement's.
	panicReader = "reader"
	// panicCompletion is a shard pool's goroutine completing an op of an
	// asynchronous EXECUTE; the text is the prepared statement's.
	panicCompletion = "completion"
)

// maybePanic panics when a test's hook asks for a panic at point for a
// request of the given text. Without a hook it costs one atomic load.
func maybePanic[T string | []byte](h *hooks, point string, text T) {
	if f := h.panicAt.Load(); f != nil && (*f)(point, string(text)) {
		panic("test hook: panic at " + point)
	}
}

// hooks let tests interrupt the gateway where a crash would.
type hooks struct {
	// dropBatchPart, when it returns true for a shard, leaves that
	// shard's part of a logged batch unsent and the batch log record in
	// place, as a gateway that dies halfway through the batch does.
	dropBatchPart atomic.Pointer[func(shard int) bool]
	// panicAt, when it returns true for a point of the request path and
	// the request's text, makes the request panic there (hooks.go).
	panicAt atomic.Pointer[func(point, text string) bool]
}
