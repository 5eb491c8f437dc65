package gateway

import (
	"bytes"
	"context"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/cqlpg/cqlpg/gateway/cqlwire"
	"github.com/cqlpg/cqlpg/translate"
)

// dispatch runs one request, appending its response body to resp, whose
// header says RESULT until a handler changes the opcode; at is its arrival.
// It returns the kind of statement the request ran, once known.
func (c *conn) dispatch(h cqlwire.Header, at time.Time, body []byte, resp *[]byte) (stmtKind, error) {
	ctx := newRequestContext(at, c.srv.cfg.RequestTimeout)
	err := c.route(ctx, h, body, resp)
	return ctx.kind, err
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
	switch h.Opcode {
	case cqlwire.OpOptions:
		return c.handleOptions(resp)
	case cqlwire.OpStartup:
		return c.handleStartup(&d, resp)
	case cqlwire.OpRegister:
		return c.handleRegister(&d, resp)
	case cqlwire.OpQuery:
		return c.handleQuery(ctx, &d, resp)
	case cqlwire.OpPrepare:
		return c.handlePrepare(&d, resp)
	case cqlwire.OpExecute:
		return c.handleExecute(ctx, &d, resp)
	case cqlwire.OpBatch:
		return c.handleBatch(ctx, &d, resp)
	case cqlwire.OpAuthResponse:
		if c.srv.auth != nil {
			return c.srv.auth.Respond(ctx, c, c.nc.RemoteAddr(), &d, resp)
		}
		return &cqlwire.ProtocolError{Msg: "Unexpected message AUTH_RESPONSE: authentication is not enabled"}
	}
	return &cqlwire.ProtocolError{Msg: fmt.Sprintf("Unknown opcode %d", h.Opcode)}
}

func (c *conn) handleQuery(ctx context.Context, d *cqlwire.Decoder, resp *[]byte) error {
	body, start := *d, len(*resp)
	st, err := c.runQuery(ctx, d, resp)
	if st != nil && c.srv.env.schemaChanged(ctx, st, err) {
		// Planned against a schema a change has since replaced: planned
		// again, against the schema now, and run once more.
		*resp = (*resp)[:start]
		_, err = c.runQuery(ctx, &body, resp)
	}
	return err
}

// runQuery runs a QUERY and returns its statement when it found one.
func (c *conn) runQuery(ctx context.Context, d *cqlwire.Decoder, resp *[]byte) (*statement, error) {
	query := d.LongString()
	// The execution holds the parameters, so that steady traffic decodes
	// without allocating.
	e := executionPool.Get().(*execution)
	q := &e.query
	d.QueryParams(q, c.version)
	err := cqlwire.DecodeError(d, "QUERY")
	var st *statement
	if err == nil {
		st, err = c.srv.env.prepare(c.keyspaceFor(q.Keyspace), query)
	}
	if err != nil {
		executionPool.Put(e)
		return nil, err
	}
	runs(ctx, st.kind)
	if err := c.srv.env.bind(e, c, arrival(ctx), st, q, fromQuery); err != nil {
		e.release()
		return nil, err
	}
	defer e.release()
	return st, e.run(ctx, st, resp)
}

// keyspaceFor returns the keyspace a request runs in: the one it names
// (v5), else the session's. Naming the session's own keyspace, as drivers
// do, costs no allocation.
func (c *conn) keyspaceFor(named []byte) string {
	ks := *c.keyspace.Load()
	if named == nil || string(named) == ks {
		return ks
	}
	return string(named)
}

// Flags of a v5 PREPARE.
const prepareWithKeyspace = 0x01

func (c *conn) handlePrepare(d *cqlwire.Decoder, resp *[]byte) error {
	query := d.LongString()
	var keyspace []byte
	if c.version >= 5 {
		if d.Int()&prepareWithKeyspace != 0 {
			keyspace = d.StringBytes()
		}
	}
	if err := cqlwire.DecodeError(d, "PREPARE"); err != nil {
		return err
	}
	st, err := c.srv.env.prepare(c.keyspaceFor(keyspace), query)
	if err != nil {
		return err
	}
	if !cacheable(st.plan) {
		// EXECUTE must find it even though it is planned afresh each time.
		c.srv.env.cache.put(st)
	}
	st.prepared.Store(true)
	*resp = cqlwire.AppendPrepared(*resp, c.version, st.id[:], st.resultID[:], st.plan.Meta())
	return nil
}

func (c *conn) handleExecute(ctx context.Context, d *cqlwire.Decoder, resp *[]byte) error {
	e, st, err := c.bindExecute(d, arrival(ctx))
	if st != nil {
		runs(ctx, st.kind)
	}
	if err != nil {
		return err
	}
	defer e.release()
	return e.runExecute(ctx, resp)
}

// bindExecute decodes an EXECUTE's body, finds its prepared statement and
// binds its values, on an execution of its own that holds its parameters;
// at is the request's arrival. It returns the statement when it found it,
// even when binding failed.
func (c *conn) bindExecute(d *cqlwire.Decoder, at time.Time) (*execution, *statement, error) {
	id := d.ShortBytes()
	var resultID []byte
	if c.version >= 5 {
		resultID = d.ShortBytes()
	}
	e := executionPool.Get().(*execution)
	q := &e.query
	d.QueryParams(q, c.version)
	if err := cqlwire.DecodeError(d, "EXECUTE"); err != nil {
		executionPool.Put(e)
		return nil, nil, err
	}
	st, err := c.srv.lookup(id)
	if err != nil && resultID != nil {
		// A v5 client says which result metadata it holds: the id of a
		// statement whose result a schema change reshaped goes on serving
		// once the statement has been prepared again (its new shape has
		// another id), with the new metadata below, as in Cassandra.
		if old := c.srv.env.cache.find(id); old != nil {
			if fresh, ferr := c.srv.env.latest(old); ferr == nil && fresh.prepared.Load() && sameVariables(old, fresh) {
				st, err = fresh, nil
			}
		}
	}
	if err != nil {
		executionPool.Put(e)
		return nil, nil, err
	}
	// On v5 the client says which result metadata it holds. When the
	// statement's has changed since (a column added to the table of a
	// SELECT *), the rows come with the new metadata and its id, whether
	// or not the client asked to skip it. Conditional writes always send
	// their metadata and are left alone, as in Cassandra.
	changed := false
	if resultID != nil {
		if _, ok := st.plan.(*translate.Select); ok && !bytes.Equal(resultID, st.resultID[:]) {
			changed = true
			q.Flags &^= cqlwire.QfSkipMetadata
		}
	}
	if err := c.srv.env.bind(e, c, at, st, q, fromExecute); err != nil {
		e.release()
		return nil, st, err
	}
	e.resultChanged = changed
	return e, st, nil
}

// runExecute runs an EXECUTE's bound statement and appends its result,
// telling a v5 client of result metadata that changed since it prepared.
func (e *execution) runExecute(ctx context.Context, resp *[]byte) error {
	start := len(*resp)
	if err := e.run(ctx, e.st, resp); err != nil {
		return e.env.staleExecute(ctx, e.st, err)
	}
	if e.resultChanged {
		cqlwire.MarkMetadataChanged(resp, start, e.st.resultID[:])
	}
	return nil
}

// runBound runs an EXECUTE the reader bound (job.e), then gives back its
// execution, which holds its parameters.
func (c *conn) runBound(e *execution, resp *[]byte) error {
	defer e.release()
	return e.runExecute(newRequestContext(e.now, c.srv.cfg.RequestTimeout), resp)
}

// lookup finds a prepared statement by id, planned for the current schema.
func (s *Server) lookup(id []byte) (*statement, error) {
	st := s.env.cache.find(id)
	if st == nil {
		return nil, &unpreparedError{id: id}
	}
	return s.env.replan(st)
}

// executeAsync starts an EXECUTE on the reader's goroutine if it is a
// request answered from the pools' goroutines, and reports whether it did
// (or answered it at once); it then owns the job's body. An EXECUTE it has
// bound but cannot start goes to the handler with its execution (j.e), so
// that nothing is decoded, looked up or bound twice.
func (c *conn) executeAsync(j *job) (done bool) {
	h, body := j.h, j.body
	if h.Opcode != cqlwire.OpExecute || h.Flags&(cqlwire.FlagTracing|cqlwire.FlagCustomPayload) != 0 ||
		h.Flags&cqlwire.FlagCompression != 0 && c.version < 5 || !c.started.Load() || c.srv.auth.Admit(c, h.Opcode) != nil {
		return false
	}
	// This runs on the reader goroutine, which a panic must not end: it is
	// answered as a handler's would be, unless the request was started,
	// which its ops or the clock then answer.
	var e *execution
	defer func() {
		if r := recover(); r != nil {
			c.log.Error("request panicked", "opcode", "EXECUTE", "panic", r, "stack", string(debug.Stack()))
			done = true
			if e != nil && e.started() {
				return
			}
			c.observe(h, kindNone, j.at, nil, nil)
			c.answerError(h, body, fmt.Errorf("internal error: %v", r))
		}
	}()
	d := cqlwire.Decoder{B: *body}
	e, st, err := c.bindExecute(&d, j.at)
	if err != nil {
		kind := kindNone
		if st != nil {
			kind = st.kind
		}
		c.observe(h, kind, j.at, st, *body)
		c.answerError(h, body, err)
		return true
	}
	maybePanic(&c.srv.env.hooks, panicReader, st.query)
	started := false
	var keyed []translate.Restriction
	switch p := st.plan.(type) {
	case *translate.Select:
		started, keyed = !e.resultChanged && e.startRead(st, p, h.Stream, body), p.Keys
	case *translate.Write:
		started, keyed = e.startWrite(st, p, h.Stream, body), p.Keys
	}
	if !started {
		// What the attempt keyed, the handler's run takes as it is.
		if e.keyTaken {
			e.handedOver = keyed
		}
		j.e = e
	}
	return started
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
