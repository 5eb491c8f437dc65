package gateway

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cqlpg/cqlpg/gateway/cqlwire"
	"github.com/cqlpg/cqlpg/gateway/exec"
	"github.com/cqlpg/cqlpg/gateway/origin"
	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/translate"
)

// Dual writes: a gateway given an origin (Config.Origin) stands in front
// of two clusters while an application moves from the origin onto cqlpg.
// Every write (INSERT, UPDATE, DELETE, BATCH, LWT, counters, DDL, USE)
// goes to both, with one timestamp, the client's or one the gateway gives
// it, so that both clusters hold the same write times; reads go to the
// read side only; queries of the system keyspaces are answered by the
// gateway itself, so that drivers see its topology. The client gets the
// primary side's answer, the read side's; a failure on the other side is
// counted and logged with its table, for migrate diff --fix to close,
// unless StrictWrites fails the client too.

// OriginConfig turns on dual writes to an origin cluster.
type OriginConfig struct {
	origin.Config
	// ReadFrom is the side reads go to, whose answers clients get.
	ReadFrom ReadFrom
	// StrictWrites answers a client with the other side's error when only
	// that side failed its write, rather than counting and logging it.
	StrictWrites bool
	// MaxPrepared bounds the statements prepared on both sides the gateway
	// keeps (DefaultMaxPrepared when 0).
	MaxPrepared int
}

// DefaultMaxPrepared is OriginConfig.MaxPrepared's default.
const DefaultMaxPrepared = 65536

// ReadFrom is where reads go while dual writes run.
type ReadFrom uint8

const (
	// ReadFromOrigin reads from the origin, which is primary: its answers
	// are the clients'.
	ReadFromOrigin ReadFrom = iota
	// ReadFromTarget reads from cqlpg, which is primary.
	ReadFromTarget
	// ReadFromBoth answers from the origin, and reads cqlpg too, after
	// the answer, to count the answers that differ.
	ReadFromBoth
)

var readFromNames = []string{"origin", "target", "both"}

func (r ReadFrom) String() string { return readFromNames[r] }

// ParseReadFrom reads origin, target or both.
func ParseReadFrom(s string) (ReadFrom, error) {
	for i, n := range readFromNames {
		if s == n {
			return ReadFrom(i), nil
		}
	}
	return 0, fmt.Errorf("%q is not a side to read from: want origin, target or both", s)
}

// The two sides of a dual write.
type side uint8

const (
	sideOrigin side = iota
	sideTarget
)

var sideNames = [...]string{"origin", "target"}

// route is where a statement goes.
type route uint8

const (
	// routeLocal is answered by the gateway alone: the system keyspaces,
	// DESCRIBE, the LISTs of roles and permissions.
	routeLocal route = iota
	routeRead
	routeWrite
)

// maxMirroredReads bounds the reads of cqlpg that ReadFromBoth runs
// after their answers at once; past it, reads are not mirrored.
const maxMirroredReads = 64

// dual is a server's dual-write state.
type dual struct {
	cfg     OriginConfig
	primary side
	log     *slog.Logger
	// prepared holds each statement clients prepared, by the id they
	// execute it by: the primary side's.
	prepared  sync.Map // string → *dualStmt
	preparedN atomic.Int64
	// byOrigin holds them by the origin's id, to prepare again one the
	// origin answers UNPREPARED for.
	byOrigin sync.Map // string → *dualStmt
	mirrors  chan struct{}

	failures *prometheus.CounterVec // by side
	reads    *prometheus.CounterVec // mirrored reads, by outcome
}

func newDual(cfg OriginConfig, log *slog.Logger, r *prometheus.Registry) *dual {
	x := &dual{cfg: cfg, log: log.With("origin", cfg.Addr), mirrors: make(chan struct{}, maxMirroredReads),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cqlpg_dual_write_failures_total",
			Help: "Writes one side of a dual write failed, by side (origin or target): migrate diff --fix closes them."},
			[]string{"side"}),
		reads: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cqlpg_dual_reads_total",
			Help: "Reads of cqlpg mirrored after the origin answered (--read-from both), by outcome: match, mismatch, failed or skipped."},
			[]string{"outcome"}),
	}
	if cfg.ReadFrom == ReadFromTarget {
		x.primary = sideTarget
	}
	if x.cfg.MaxPrepared <= 0 {
		x.cfg.MaxPrepared = DefaultMaxPrepared
	}
	r.MustRegister(x.failures, x.reads, prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "cqlpg_dual_prepared_statements",
		Help: "Statements prepared on both sides that the gateway keeps, up to MaxPrepared."},
		func() float64 { return float64(x.preparedN.Load()) }))
	for _, s := range sideNames {
		x.failures.WithLabelValues(s)
	}
	for _, o := range []string{"match", "mismatch", "failed", "skipped"} {
		x.reads.WithLabelValues(o)
	}
	return x
}

// probeOrigin connects to the origin once, before the gateway serves
// anyone: an origin it cannot reach or log in to is refused at start,
// before any write, rather than met by the first client.
func probeOrigin(ctx context.Context, cfg origin.Config) error {
	l, err := origin.Dial(ctx, cfg, 4)
	var r *origin.Refusal
	if errors.As(err, &r) && r.Code == codeProtocolError {
		l, err = origin.Dial(ctx, cfg, 3)
	}
	if err != nil {
		return fmt.Errorf("origin %s: %w; check --origin and --origin-auth", cfg.Addr, err)
	}
	l.Close()
	return nil
}

// originAddr is the origin's address, "" without dual writes.
func (s *Server) originAddr() string {
	if s.dual == nil {
		return ""
	}
	return s.dual.cfg.Addr
}

// originError is a request the origin could not take: unreachable, or
// silent past the request's time. Clients get it as a server error when
// the origin is primary.
type originError struct{ err error }

func (e *originError) Error() string { return e.err.Error() }
func (e *originError) Unwrap() error { return e.err }

// originConn is a client connection's link to the origin, dialed at the
// client's STARTUP and again, at most once a second, after it dies.
type originConn struct {
	mu      sync.Mutex
	link    *origin.Link
	lastErr error
	tried   time.Time
	dialing bool
}

// redialEvery spaces a connection's attempts to reach a lost origin.
const redialEvery = time.Second

// originLink returns the connection's live link to the origin, dialing
// it again when it died, at most once a second; the new link is given the
// session's keyspace. While the origin is not the read side, a request
// waits dialWait at most for a dial, which goes on in the background; until
// it succeeds the writes the origin misses are counted and logged, so that
// an origin that accepts connections and never answers holds up no client
// for long.
func (c *conn) originLink(ctx context.Context) (*origin.Link, error) {
	return c.originLinkWaiting(ctx, c.srv.dual.primary == sideOrigin)
}

// originLinkWaiting is originLink; with wait, the request waits for the
// dial it starts.
func (c *conn) originLinkWaiting(ctx context.Context, wait bool) (*origin.Link, error) {
	o := &c.origin
	o.mu.Lock()
	if o.link != nil {
		if err := o.link.Err(); err == nil {
			l := o.link
			o.mu.Unlock()
			return l, nil
		} else {
			o.link, o.lastErr = nil, err
		}
	}
	if o.dialing || o.lastErr != nil && time.Since(o.tried) < redialEvery {
		err := o.lastErr
		o.mu.Unlock()
		if err == nil {
			err = fmt.Errorf("the connection to the origin %s is being made", c.srv.dual.cfg.Addr)
		}
		return nil, &originError{err}
	}
	o.tried, o.dialing = time.Now(), true
	o.mu.Unlock()
	if wait {
		return c.dialOrigin(ctx)
	}
	type dialed struct {
		l   *origin.Link
		err error
	}
	done := make(chan dialed, 1)
	go func() {
		l, err := c.dialOrigin(context.Background())
		done <- dialed{l, err}
	}()
	select {
	case d := <-done:
		return d.l, d.err
	case <-time.After(dialWait):
		return nil, &originError{fmt.Errorf("the connection to the origin %s is being made again", c.srv.dual.cfg.Addr)}
	}
}

// dialWait is how long a request waits for a dial to an origin that is
// not the read side before going on without it.
const dialWait = 200 * time.Millisecond

// dialOrigin dials the connection's link to the origin and records the
// outcome.
func (c *conn) dialOrigin(ctx context.Context) (*origin.Link, error) {
	o := &c.origin
	l, err := origin.Dial(ctx, c.srv.dual.cfg.Config, c.version)
	if err == nil {
		if ks := c.Keyspace(); ks != "" {
			use := append(appendLongString(nil, "USE "+pgschema.QuoteIdentifier(ks)), queryParamsOne(c.version)...)
			f, uerr := l.Do(ctx, 0, cqlwire.OpQuery, use)
			if uerr == nil && (*f)[4] == cqlwire.OpError {
				uerr = fmt.Errorf("the origin refused USE %s: %s", ks, errorText(*f))
			}
			if f != nil {
				cqlwire.PutBuffer(f)
			}
			if uerr != nil {
				l.Close()
				l, err = nil, uerr
			}
		}
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.dialing = false
	select {
	case <-c.closed: // the client left meanwhile
		if l != nil {
			l.Close()
		}
		return nil, &originError{errors.New("the client's connection closed")}
	default:
	}
	if err != nil {
		o.lastErr = err
		return nil, &originError{err}
	}
	o.link, o.lastErr = l, nil
	return l, nil
}

// closeOrigin ends the connection's link, with the connection.
func (c *conn) closeOrigin() {
	c.origin.mu.Lock()
	if c.origin.link != nil {
		c.origin.link.Close()
	}
	c.origin.mu.Unlock()
}

// startOrigin dials the origin at a client's STARTUP, at the client's
// protocol version. A refusal (a version the origin does not speak,
// credentials it does not take) is the client's answer, as the origin
// gave it, and so is an unreachable origin when the origin is primary;
// otherwise the link is dialed again when a write needs it.
func (c *conn) startOrigin(ctx context.Context, resp *[]byte) (refused bool, err error) {
	_, err = c.originLinkWaiting(ctx, true)
	var r *origin.Refusal
	switch {
	case err == nil:
		return false, nil
	case errors.As(err, &r):
		(*resp)[4] = cqlwire.OpError
		*resp = append(*resp, r.Body...)
		c.log.Warn("the origin refused a client's connection", "err", r.Msg)
		return true, nil
	case c.srv.dual.primary == sideOrigin:
		return false, err
	}
	c.log.Warn("the origin is unreachable; its writes are logged as missed until it is back", "err", err)
	return false, nil
}

// dualRoute runs a QUERY, PREPARE, EXECUTE or BATCH on the sides it goes
// to, leaving the client's answer in resp: a whole frame when it is the
// origin's. body is the request's message, past any custom payload.
func (c *conn) dualRoute(ctx context.Context, h cqlwire.Header, body []byte, resp *[]byte) error {
	x := c.srv.dual
	var st *dualStmt
	r := routeWrite
	switch h.Opcode {
	case cqlwire.OpPrepare:
		return c.dualPrepare(ctx, h, body, resp)
	case cqlwire.OpQuery:
		d := cqlwire.Decoder{B: body}
		query := d.LongString()
		var q cqlwire.QueryParams
		d.QueryParams(&q, c.version)
		if d.Err != nil {
			return c.local(ctx, h, body, resp)
		}
		keyspace := exec.KeyspaceFor(c, q.Keyspace)
		var planned *exec.Statement
		r, planned = c.classify(keyspace, query)
		if err := c.authorizeDual(r, planned, keyspace, query); err != nil {
			return err
		}
	case cqlwire.OpExecute:
		d := cqlwire.Decoder{B: body}
		id := d.ShortBytes()
		if d.Err != nil {
			return c.local(ctx, h, body, resp)
		}
		v, ok := x.prepared.Load(string(id))
		if !ok {
			return &exec.UnpreparedError{Id: append([]byte(nil), id...)}
		}
		st = v.(*dualStmt)
		r = st.route
		if err := c.authorizeDual(r, nil, st.keyspace, []byte(st.query)); err != nil {
			return err
		}
	case cqlwire.OpBatch:
		if err := c.authorizeBatch(body); err != nil {
			return err
		}
	}
	switch r {
	case routeLocal:
		return c.local(ctx, h, body, resp)
	case routeRead:
		return c.dualRead(ctx, h, body, st, resp)
	}
	return c.dualWrite(ctx, h, body, st, resp)
}

// classify routes a statement by its plan on cqlpg, or by its parse when
// cqlpg cannot plan it (a table the target lacks): a SELECT reads.
func (c *conn) classify(keyspace string, query []byte) (route, *exec.Statement) {
	st, err := c.srv.env.Prepare(keyspace, query)
	if err != nil {
		if p, perr := translate.Parse(string(query)); perr == nil {
			if _, ok := p.Statement.(*translate.SelectStmt); ok {
				return routeRead, nil
			}
		}
		return routeWrite, nil
	}
	switch p := st.Plan.(type) {
	case *translate.Select:
		if p.Table.Virtual || pgschema.IsSystemKeyspace(p.Table.Keyspace) {
			return routeLocal, st
		}
		return routeRead, st
	case *translate.Describe, *translate.Auth:
		// Roles and permissions are cqlpg's: clients log in to it, and
		// the gateway to the origin with credentials of its own.
		return routeLocal, st
	}
	return routeWrite, st
}

// authorizeDual checks, when authentication is on, that the session's
// role may run a statement before it goes to the origin, which the
// gateway reaches with credentials of its own: a statement cqlpg cannot
// plan cannot be checked, and is refused with the reason.
func (c *conn) authorizeDual(r route, planned *exec.Statement, keyspace string, query []byte) error {
	if c.srv.auth == nil || r == routeLocal {
		return nil // answered locally, which checks for itself
	}
	if planned == nil {
		var err error
		if planned, err = c.srv.env.Prepare(keyspace, query); err != nil {
			return err
		}
	}
	return c.srv.auth.Authorize(c, planned.Plan, time.Now())
}

// authorizeBatch checks each statement of a BATCH as authorizeDual does.
func (c *conn) authorizeBatch(body []byte) error {
	if c.srv.auth == nil {
		return nil
	}
	var b cqlwire.BatchParams
	d := cqlwire.Decoder{B: body}
	d.Batch(&b, c.version)
	keyspace := exec.KeyspaceFor(c, b.Keyspace)
	for _, it := range b.Items {
		var err error
		if it.Id == nil {
			err = c.authorizeDual(routeWrite, nil, keyspace, it.Query)
		} else if v, ok := c.srv.dual.prepared.Load(string(it.Id)); ok {
			st := v.(*dualStmt)
			err = c.authorizeDual(routeWrite, nil, st.keyspace, []byte(st.query))
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// tableOf names the table a statement writes, for the log of a write
// one side missed.
func tableOf(st *exec.Statement) string {
	if st == nil {
		return ""
	}
	switch p := st.Plan.(type) {
	case *translate.Write:
		return p.Table.Keyspace + "." + p.Table.Name
	case *translate.Batch:
		names := make([]string, 0, len(p.Writes))
		for _, w := range p.Writes {
			if n := w.Table.Keyspace + "." + w.Table.Name; !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
		return strings.Join(names, ",")
	}
	return ""
}

// answer is one side's answer: a frame, or the error it failed with
// before answering (unreachable, timed out).
type answer struct {
	frame *[]byte
	err   error
}

// failed reports whether the side failed the request.
func (a answer) failed() bool { return a.err != nil || (*a.frame)[4] == cqlwire.OpError }

// text says why the side failed.
func (a answer) text() string {
	if a.err != nil {
		return a.err.Error()
	}
	return errorText(*a.frame)
}

func (a answer) release() {
	if a.frame != nil {
		cqlwire.PutBuffer(a.frame)
	}
}

// onLocal runs a request on cqlpg as a side of a dual request: its
// answer, as a whole frame for the client's stream.
func (c *conn) onLocal(ctx context.Context, h cqlwire.Header, body []byte) answer {
	f := cqlwire.GetBuffer(0)
	*f = cqlwire.AppendHeader((*f)[:0], c.version, h.Stream, cqlwire.OpResult)
	if err := c.local(ctx, h, body, f); err != nil {
		*f = (*f)[:0]
		c.appendError(f, c.version, h.Stream, err)
	} else {
		cqlwire.FinishFrame(*f)
	}
	return answer{frame: f}
}

// onOrigin sends a request to the origin, with the origin's ids. A
// prepared statement the origin no longer knows (it restarted, or evicted
// it), executed or in a batch, is prepared there again and the request
// sent once more.
func (c *conn) onOrigin(ctx context.Context, h cqlwire.Header, clientBody []byte, st *dualStmt) answer {
	x := c.srv.dual
	l, err := c.originLink(ctx)
	if err != nil {
		return answer{err: err}
	}
	flags := h.Flags & cqlwire.FlagTracing
	if x.primary != sideOrigin {
		flags = 0
	}
	for retried := false; ; retried = true {
		body, err := c.bodyFor(ctx, sideOrigin, h, clientBody, st)
		if err != nil {
			return answer{err: err}
		}
		f, err := l.Do(ctx, flags, h.Opcode, body)
		if err != nil {
			return answer{err: &originError{fmt.Errorf("the origin %s did not answer: %w", x.cfg.Addr, err)}}
		}
		if retried || (*f)[4] != cqlwire.OpError || errorCode(*f) != codeUnprepared {
			return answer{frame: f}
		}
		lost, ok := x.byOrigin.Load(string(unpreparedID(*f)))
		if !ok {
			return answer{frame: f}
		}
		cqlwire.PutBuffer(f)
		if err := c.prepareOn(ctx, sideOrigin, lost.(*dualStmt)); err != nil {
			return answer{err: err}
		}
	}
}

// relay makes a side's answer the client's.
func relay(h cqlwire.Header, a answer, resp *[]byte) error {
	if a.err != nil {
		return a.err
	}
	*resp = append((*resp)[:0], *a.frame...)
	(*resp)[2], (*resp)[3] = byte(uint16(h.Stream)>>8), byte(h.Stream)
	return nil
}

// dualRead runs a read on the primary side; with ReadFromBoth, it then
// reads cqlpg too and compares the rows.
func (c *conn) dualRead(ctx context.Context, h cqlwire.Header, body []byte, st *dualStmt, resp *[]byte) error {
	x := c.srv.dual
	if x.primary == sideTarget {
		local, err := c.bodyFor(ctx, sideTarget, h, body, st)
		if err != nil {
			return err
		}
		return c.local(ctx, h, local, resp)
	}
	a := c.onOrigin(ctx, h, body, st)
	defer a.release()
	if err := relay(h, a, resp); err != nil {
		return err
	}
	if x.cfg.ReadFrom == ReadFromBoth {
		local, err := c.bodyFor(ctx, sideTarget, h, body, st)
		c.mirrorRead(h, local, err, *a.frame)
	}
	return nil
}

// mirrorRead reads cqlpg as the origin was read, in the background, and
// counts whether the rows are the same. Pages after the first are not
// mirrored: their paging state is the origin's.
func (c *conn) mirrorRead(h cqlwire.Header, body []byte, err error, originFrame []byte) {
	x := c.srv.dual
	if err != nil || hasPagingState(h.Opcode, c.version, body) {
		x.reads.WithLabelValues("skipped").Inc()
		return
	}
	select {
	case x.mirrors <- struct{}{}:
	default:
		x.reads.WithLabelValues("skipped").Inc()
		return
	}
	want, ok := rowsOf(originFrame, c.version)
	if !ok {
		<-x.mirrors
		x.reads.WithLabelValues("skipped").Inc()
		return
	}
	want = append([]byte(nil), want...)
	body = append([]byte(nil), body...)
	go func() {
		defer func() { <-x.mirrors }()
		a := c.onLocal(exec.NewRequestContext(time.Now(), c.srv.cfg.RequestTimeout), h, body)
		defer a.release()
		got, ok := rowsOf(*a.frame, c.version)
		switch {
		case !ok:
			x.reads.WithLabelValues("failed").Inc()
			x.log.Debug("a mirrored read failed on cqlpg", "err", a.text())
		case string(got) != string(want):
			x.reads.WithLabelValues("mismatch").Inc()
			x.log.Info("a mirrored read differs between the origin and cqlpg", "keyspace", c.Keyspace())
		default:
			x.reads.WithLabelValues("match").Inc()
		}
	}()
}

// dualWrite runs a write on both sides at once and answers with the
// primary's answer; a failure of the other side alone is counted and
// logged, or, with StrictWrites, answered.
func (c *conn) dualWrite(ctx context.Context, h cqlwire.Header, body []byte, st *dualStmt, resp *[]byte) error {
	x := c.srv.dual
	if b, ok := cqlwire.WithTimestamp(h.Opcode, c.version, body, exec.ServerTimestamp(time.Now())); ok {
		body = b
	}
	var answers [2]answer
	oc := make(chan answer, 1)
	go func() { oc <- c.onOrigin(ctx, h, body, st) }()
	if local, err := c.bodyFor(ctx, sideTarget, h, body, st); err != nil {
		answers[sideTarget] = answer{err: err}
	} else {
		answers[sideTarget] = c.onLocal(ctx, h, local)
	}
	answers[sideOrigin] = <-oc
	defer answers[sideOrigin].release()
	defer answers[sideTarget].release()
	p, o := x.primary, 1-x.primary
	if answers[o].failed() || answers[p].failed() {
		c.writeFailed(h, body, st, answers)
	}
	if answers[o].failed() && !answers[p].failed() && x.cfg.StrictWrites {
		return relay(h, answers[o], resp)
	}
	return relay(h, answers[p], resp)
}

// writeFailed counts and logs the sides that failed a write, with what
// migrate diff --fix needs to close the gap: the table and the statement.
func (c *conn) writeFailed(h cqlwire.Header, body []byte, st *dualStmt, answers [2]answer) {
	x := c.srv.dual
	var query, table string
	switch {
	case st != nil:
		query, table = st.query, st.table
	case h.Opcode == cqlwire.OpQuery:
		d := cqlwire.Decoder{B: body}
		query = string(d.LongString())
		_, planned := c.classify(c.Keyspace(), []byte(query))
		table = tableOf(planned)
	default:
		query, table = "BATCH", c.batchTables(body)
	}
	for sd, a := range answers {
		if !a.failed() {
			continue
		}
		x.failures.WithLabelValues(sideNames[sd]).Inc()
		msg := "a write failed on the target"
		if side(sd) == sideOrigin {
			msg = "the origin missed a write: run cqlpg migrate diff --fix on its table"
		}
		x.log.Warn(msg, "table", table, "statement", query, "err", a.text())
	}
}

// batchTables names the tables a BATCH writes, for the log.
func (c *conn) batchTables(body []byte) string {
	var names []string
	add := func(n string) {
		if n != "" && !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	d := cqlwire.Decoder{B: body}
	d.Byte()
	for n := d.Short(); n > 0 && d.Err == nil; n-- {
		if d.Byte() == 0 {
			_, st := c.classify(c.Keyspace(), d.LongString())
			add(tableOf(st))
		} else if v, ok := c.srv.dual.prepared.Load(string(d.ShortBytes())); ok {
			add(v.(*dualStmt).table)
		}
		for nv := d.Short(); nv > 0 && d.Err == nil; nv-- {
			d.Value()
		}
	}
	return strings.Join(names, ",")
}
