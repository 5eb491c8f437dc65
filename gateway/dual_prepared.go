package gateway

import (
	"context"
	"fmt"
	"sync"

	"github.com/cqlpg/cqlpg/gateway/cqlwire"
	"github.com/cqlpg/cqlpg/gateway/exec"
	"github.com/cqlpg/cqlpg/gateway/origin"
)

// Prepared statements under dual writes: a statement is prepared on both
// sides, each of which gives it an id of its own. Clients execute the
// primary's; each EXECUTE and BATCH is rewritten with the other side's
// before it goes there, and a side that lost a statement (an origin
// restarted) has it prepared again from its text.

// dualStmt is a statement prepared on both sides.
type dualStmt struct {
	query    string
	keyspace string
	route    route
	table    string // for the log of a failed write
	mu       sync.Mutex
	ids      [2][]byte // per side; nil until prepared there
	metaIDs  [2][]byte // v5 result_metadata_id, per side
}

func (s *dualStmt) id(sd side) (id, meta []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ids[sd], s.metaIDs[sd]
}

func (s *dualStmt) setID(sd side, id, meta []byte) {
	s.mu.Lock()
	s.ids[sd], s.metaIDs[sd] = id, meta
	s.mu.Unlock()
}

// remember keeps a statement under the id clients execute it by. Past
// MaxPrepared statements, the gateway forgets them all and starts again:
// a client executing one forgotten gets UNPREPARED and prepares it again,
// as with a Cassandra node's evicted statements.
func (x *dual) remember(id []byte, st *dualStmt) {
	if _, loaded := x.prepared.Swap(string(id), st); loaded {
		return
	}
	if x.preparedN.Add(1) > int64(x.cfg.MaxPrepared) {
		x.prepared.Clear()
		x.byOrigin.Clear()
		x.preparedN.Store(1)
		x.prepared.Store(string(id), st)
		if oid, _ := st.id(sideOrigin); oid != nil {
			x.byOrigin.Store(string(oid), st)
		}
	}
}

// record sets a statement's id on one side.
func (x *dual) record(st *dualStmt, sd side, id, meta []byte) {
	st.setID(sd, id, meta)
	if sd == sideOrigin {
		x.byOrigin.Store(string(id), st)
	}
}

// prepareOn prepares a statement again on one side, for an EXECUTE.
func (c *conn) prepareOn(ctx context.Context, sd side, st *dualStmt) error {
	body := appendLongString(nil, st.query)
	if c.version >= 5 {
		if st.keyspace != "" {
			body = cqlwire.AppendString(cqlwire.AppendInt(body, 1), st.keyspace)
		} else {
			body = cqlwire.AppendInt(body, 0)
		}
	} else if st.keyspace != c.Keyspace() {
		return fmt.Errorf("%s lost a statement prepared in keyspace %q, and this session uses %q", sideNames[sd], st.keyspace, c.Keyspace())
	}
	h := cqlwire.Header{Version: c.version, Opcode: cqlwire.OpPrepare}
	var a answer
	if sd == sideOrigin {
		a = c.onOrigin(ctx, h, body, nil)
	} else {
		a = c.onLocal(ctx, h, body)
	}
	defer a.release()
	if a.failed() {
		return fmt.Errorf("cannot prepare %q on the %s again: %s", st.query, sideNames[sd], a.text())
	}
	id, meta, ok := preparedIDs(*a.frame, c.version)
	if !ok {
		return fmt.Errorf("the %s answered PREPARE without an id", sideNames[sd])
	}
	c.srv.dual.record(st, sd, id, meta)
	return nil
}

// dualPrepare prepares a statement on the sides its route takes and
// answers with the primary's PREPARED, recording the other's id.
func (c *conn) dualPrepare(ctx context.Context, h cqlwire.Header, body []byte, resp *[]byte) error {
	x := c.srv.dual
	d := cqlwire.Decoder{B: body}
	query := d.LongString()
	var named []byte
	if c.version >= 5 && d.Int()&1 != 0 {
		named = d.StringBytes()
	}
	if d.Err != nil {
		return c.local(ctx, h, body, resp)
	}
	keyspace := exec.KeyspaceFor(c, named)
	r, planned := c.classify(keyspace, query)
	if r == routeLocal {
		a := c.onLocal(ctx, h, body)
		defer a.release()
		if id, meta, ok := preparedIDs(*a.frame, c.version); ok {
			st := &dualStmt{query: string(query), keyspace: keyspace, route: r}
			x.record(st, sideTarget, id, meta)
			x.remember(id, st)
		}
		return relay(h, a, resp)
	}
	oc := make(chan answer, 1)
	go func() { oc <- c.onOrigin(ctx, h, body, nil) }()
	local := c.onLocal(ctx, h, body)
	remote := <-oc
	defer local.release()
	defer remote.release()
	st := &dualStmt{query: string(query), keyspace: keyspace, route: r, table: tableOf(planned)}
	answers := [2]answer{sideOrigin: remote, sideTarget: local}
	for sd, a := range answers {
		if !a.failed() {
			if id, meta, ok := preparedIDs(*a.frame, c.version); ok {
				x.record(st, side(sd), id, meta)
			}
		}
	}
	p := answers[x.primary]
	if !p.failed() {
		if id, _ := st.id(x.primary); id != nil {
			x.remember(id, st)
		}
	}
	if other := answers[1-x.primary]; other.failed() && !p.failed() {
		c.log.Warn("a statement could not be prepared on the "+sideNames[1-x.primary]+"; its writes will fail there",
			"statement", st.query, "err", other.text())
	}
	return relay(h, p, resp)
}

// preparedIDs reads the statement id and (v5) result metadata id of a
// PREPARED frame.
func preparedIDs(frame []byte, v byte) (id, meta []byte, ok bool) {
	if frame[4] != cqlwire.OpResult {
		return nil, nil, false
	}
	d := cqlwire.Decoder{B: origin.Message(frame)}
	if d.Int() != cqlwire.ResultPrepared {
		return nil, nil, false
	}
	id = append([]byte(nil), d.ShortBytes()...)
	if v >= 5 {
		meta = append([]byte(nil), d.ShortBytes()...)
	}
	return id, meta, d.Err == nil
}

// executeBody is an EXECUTE's body for one side: with that side's ids.
func (c *conn) executeBody(body []byte, st *dualStmt, sd side) []byte {
	id, meta := st.id(sd)
	d := cqlwire.Decoder{B: body}
	d.ShortBytes()
	if c.version >= 5 {
		d.ShortBytes()
	}
	out := cqlwire.AppendShortBytes(make([]byte, 0, len(body)+32), id)
	if c.version >= 5 {
		out = cqlwire.AppendShortBytes(out, meta)
	}
	return append(out, d.B...)
}

// batchBody is a BATCH's body for one side: each prepared statement's id
// that side's, prepared there first when it has none yet. A statement
// neither side knows is the client's to prepare again: UNPREPARED.
func (c *conn) batchBody(ctx context.Context, body []byte, sd side) ([]byte, error) {
	x := c.srv.dual
	d := cqlwire.Decoder{B: body}
	out := append(make([]byte, 0, len(body)+32), d.Byte())
	n := d.Short()
	out = cqlwire.AppendShort(out, n)
	for ; n > 0 && d.Err == nil; n-- {
		start := len(body) - len(d.B)
		if d.Byte() == 0 {
			d.LongString()
			out = append(out, body[start:len(body)-len(d.B)]...)
		} else {
			id := d.ShortBytes()
			v, found := x.prepared.Load(string(id))
			if !found {
				return nil, &exec.UnpreparedError{Id: append([]byte(nil), id...)}
			}
			st := v.(*dualStmt)
			own, _ := st.id(sd)
			if own == nil {
				if err := c.prepareOn(ctx, sd, st); err != nil {
					return nil, err
				}
				own, _ = st.id(sd)
			}
			out = cqlwire.AppendShortBytes(append(out, 1), own)
		}
		start = len(body) - len(d.B)
		for nv := d.Short(); nv > 0 && d.Err == nil; nv-- {
			d.Value()
		}
		out = append(out, body[start:len(body)-len(d.B)]...)
	}
	if d.Err != nil {
		return body, nil // it fails on each side as it is
	}
	return append(out, d.B...), nil
}

// bodyFor is a request's body for one side: an EXECUTE or a BATCH with
// that side's ids, its statements prepared there first when they have
// none yet.
func (c *conn) bodyFor(ctx context.Context, sd side, h cqlwire.Header, body []byte, st *dualStmt) ([]byte, error) {
	switch h.Opcode {
	case cqlwire.OpExecute:
		if id, _ := st.id(sd); id == nil {
			if err := c.prepareOn(ctx, sd, st); err != nil {
				return nil, err
			}
		}
		return c.executeBody(body, st, sd), nil
	case cqlwire.OpBatch:
		return c.batchBody(ctx, body, sd)
	}
	return body, nil
}
