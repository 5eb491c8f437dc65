package gateway

import (
	"context"
	"fmt"
	"sync"
)

// dispatch runs one request, appending its response body to resp, whose
// header says RESULT until a handler changes the opcode.
func (c *conn) dispatch(h header, body []byte, resp *[]byte) error {
	d := decoder{b: body}
	if h.flags&flagCustomPayload != 0 {
		d.skipBytesMap() // custom payloads are tolerated and ignored
	}
	if !c.started.Load() && h.opcode != opStartup && h.opcode != opOptions {
		return &protocolError{msg: fmt.Sprintf("Unexpected message %s, expecting STARTUP or OPTIONS", opNames[h.opcode])}
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.srv.cfg.RequestTimeout)
	defer cancel()
	switch h.opcode {
	case opOptions:
		return c.handleOptions(resp)
	case opStartup:
		return c.handleStartup(&d, resp)
	case opRegister:
		return c.handleRegister(&d, resp)
	case opQuery:
		return c.handleQuery(ctx, &d, resp)
	case opPrepare:
		return c.handlePrepare(&d, resp)
	case opExecute:
		return c.handleExecute(ctx, &d, resp)
	case opBatch:
		return c.handleBatch(ctx, &d, resp)
	case opAuthResponse:
		return &protocolError{msg: "Unexpected message AUTH_RESPONSE: authentication is not enabled"}
	}
	return &protocolError{msg: fmt.Sprintf("Unknown opcode %d", h.opcode)}
}

// decodeError turns a malformed body into a protocol error.
func decodeError(d *decoder, what string) error {
	if d.err == nil {
		return nil
	}
	return &protocolError{msg: fmt.Sprintf("Invalid %s message: %v", what, d.err)}
}

// paramsPool recycles decoded query parameters, so that steady traffic
// decodes without allocating.
var paramsPool = sync.Pool{New: func() any { return new(queryParams) }}

func (c *conn) handleQuery(ctx context.Context, d *decoder, resp *[]byte) error {
	query := d.longString()
	q := paramsPool.Get().(*queryParams)
	defer paramsPool.Put(q)
	d.queryParams(q)
	if err := decodeError(d, "QUERY"); err != nil {
		return err
	}
	st, err := c.srv.prepare(*c.keyspace.Load(), query)
	if err != nil {
		return err
	}
	e, err := c.newExecution(st, q, fromQuery)
	if err != nil {
		return err
	}
	return e.run(ctx, st, resp)
}

func (c *conn) handlePrepare(d *decoder, resp *[]byte) error {
	query := d.longString()
	if err := decodeError(d, "PREPARE"); err != nil {
		return err
	}
	st, err := c.srv.prepare(*c.keyspace.Load(), query)
	if err != nil {
		return err
	}
	if !cacheable(st.plan) {
		// EXECUTE must find it even though it is planned afresh each time.
		c.srv.cache.put(st)
	}
	*resp = appendPrepared(*resp, c.version, st.id[:], st.plan.Meta())
	return nil
}

func (c *conn) handleExecute(ctx context.Context, d *decoder, resp *[]byte) error {
	id := d.shortBytes()
	q := paramsPool.Get().(*queryParams)
	defer paramsPool.Put(q)
	d.queryParams(q)
	if err := decodeError(d, "EXECUTE"); err != nil {
		return err
	}
	st, err := c.srv.lookup(id)
	if err != nil {
		return err
	}
	e, err := c.newExecution(st, q, fromExecute)
	if err != nil {
		return err
	}
	return e.run(ctx, st, resp)
}

// lookup finds a prepared statement by id, planned for the current schema.
func (s *Server) lookup(id []byte) (*statement, error) {
	var key [16]byte
	if len(id) != len(key) {
		return nil, &unpreparedError{id: id}
	}
	copy(key[:], id)
	st := s.cache.get(key)
	if st == nil {
		return nil, &unpreparedError{id: id}
	}
	return s.replan(st)
}
