package gateway

import (
	"context"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/cqlpg/cqlpg/gateway/cqlwire"
	"github.com/cqlpg/cqlpg/gateway/exec"
)

// dispatch runs one request, appending its response body to resp, whose
// header says RESULT until a handler changes the opcode; at is its arrival.
// It returns the kind of statement the request ran, once known.
func (c *conn) dispatch(h cqlwire.Header, at time.Time, body []byte, resp *[]byte) (exec.Kind, error) {
	ctx := exec.NewRequestContext(at, c.srv.cfg.RequestTimeout)
	err := c.route(ctx, h, body, resp)
	return ctx.Kind, err
}

// route is dispatch's switch on the opcode.
func (c *conn) route(ctx context.Context, h cqlwire.Header, body []byte, resp *[]byte) error {
	d := cqlwire.Decoder{B: body}
	if h.Flags&cqlwire.FlagCustomPayload != 0 {
		d.SkipBytesMap() // custom payloads are tolerated and ignored
	}
	if !c.started.Load() && h.Opcode != cqlwire.OpStartup && h.Opcode != cqlwire.OpOptions {
		return &cqlwire.ProtocolError{Msg: fmt.Sprintf("Unexpected message %s, expecting STARTUP or OPTIONS", cqlwire.OpNames[h.Opcode])}
	}
	if err := c.srv.auth.Admit(c, h.Opcode); err != nil { // logged in? (package auth)
		return err
	}
	if c.srv.dual != nil && h.Opcode == cqlwire.OpStartup {
		if refused, err := c.startOrigin(ctx, resp); refused || err != nil {
			return err
		}
	}
	switch h.Opcode {
	case cqlwire.OpOptions:
		return c.handleOptions(resp)
	case cqlwire.OpStartup:
		return c.handleStartup(&d, resp)
	case cqlwire.OpRegister:
		return c.handleRegister(&d, resp)
	case cqlwire.OpQuery, cqlwire.OpPrepare, cqlwire.OpExecute, cqlwire.OpBatch:
		if c.srv.dual != nil {
			return c.dualRoute(ctx, h, d.B, resp) // and the origin (dual.go)
		}
		return c.local(ctx, h, d.B, resp)
	case cqlwire.OpAuthResponse:
		if c.srv.auth != nil {
			return c.srv.auth.Respond(ctx, c, c.nc.RemoteAddr(), &d, resp)
		}
		return &cqlwire.ProtocolError{Msg: "Unexpected message AUTH_RESPONSE: authentication is not enabled"}
	}
	return &cqlwire.ProtocolError{Msg: fmt.Sprintf("Unknown opcode %d", h.Opcode)}
}

// local runs a QUERY, PREPARE, EXECUTE or BATCH on the shards,
// appending its answer to resp: the executor's ways in (package exec).
func (c *conn) local(ctx context.Context, h cqlwire.Header, body []byte, resp *[]byte) error {
	d := cqlwire.Decoder{B: body}
	switch h.Opcode {
	case cqlwire.OpQuery:
		return c.srv.env.QueryMessage(ctx, c, &d, resp)
	case cqlwire.OpPrepare:
		return c.srv.env.PrepareMessage(c, &d, resp)
	case cqlwire.OpExecute:
		return c.srv.env.ExecuteMessage(ctx, c, &d, resp)
	}
	return c.srv.env.BatchMessage(ctx, c, &d, resp)
}

// runBound runs an EXECUTE the reader bound (job.e), then gives back its
// execution, which holds its parameters.
func (c *conn) runBound(e *exec.Execution, resp *[]byte) error {
	defer e.Release()
	return e.RunExecute(exec.NewRequestContext(e.Now, c.srv.cfg.RequestTimeout), resp)
}

// executeAsync starts an EXECUTE on the reader's goroutine if it is a
// request answered from the pools' goroutines, and reports whether it did
// (or answered it at once); it then owns the job's body. An EXECUTE it has
// bound but cannot start goes to the handler with its execution (j.e), so
// that nothing is decoded, looked up or bound twice.
func (c *conn) executeAsync(j *job) (done bool) {
	h, body := j.h, j.body
	if h.Opcode != cqlwire.OpExecute || c.srv.dual != nil || h.Flags&(cqlwire.FlagTracing|cqlwire.FlagCustomPayload) != 0 ||
		h.Flags&cqlwire.FlagCompression != 0 && c.version < 5 || !c.started.Load() || c.srv.auth.Admit(c, h.Opcode) != nil {
		return false
	}
	// This runs on the reader goroutine, which a panic must not end: it is
	// answered as a handler's would be, unless the request was started,
	// which its ops or the clock then answer.
	var e *exec.Execution
	defer func() {
		if r := recover(); r != nil {
			c.log.Error("request panicked", "opcode", "EXECUTE", "panic", r, "stack", string(debug.Stack()))
			done = true
			if e != nil && e.Started() {
				return
			}
			c.observe(h, exec.KindNone, j.at, nil, nil)
			c.answerError(h, body, fmt.Errorf("internal error: %v", r))
		}
	}()
	d := cqlwire.Decoder{B: *body}
	e, st, err := c.srv.env.BindExecute(c, &d, j.at)
	if err != nil {
		kind := exec.KindNone
		if st != nil {
			kind = st.Kind
		}
		c.observe(h, kind, j.at, st, *body)
		c.answerError(h, body, err)
		return true
	}
	if !e.Start(h.Stream, body) {
		j.e = e // the handler runs it as bound (runBound)
		return false
	}
	return true
}

// answerError answers with err a request the reader took and did not
// start, and ends it.
func (c *conn) answerError(h cqlwire.Header, body *[]byte, err error) {
	b := cqlwire.GetBuffer(0)
	c.appendError(b, c.version, h.Stream, err)
	cqlwire.PutBuffer(body)
	c.send(b)
	c.release()
	c.inflight.Done()
}
