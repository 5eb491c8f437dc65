package gateway

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cqlpg/cqlpg/gateway/cqlwire"
	"github.com/cqlpg/cqlpg/gateway/exec"
)

// conn is one client connection. Its reader goroutine decodes frame
// headers and keeps bodies as bytes; every request runs in a goroutine of
// its own, so many are in flight at once and each is answered by stream id;
// one writer goroutine coalesces the responses into as few writes as it
// can.
type conn struct {
	srv *Server
	nc  net.Conn
	log *slog.Logger

	// version is fixed by the connection's first frame. The reader sets it
	// before starting any request, and requests only read it.
	version byte
	// started is set once STARTUP has been answered.
	started atomic.Bool
	// compression is the compression STARTUP negotiated. It applies from
	// the frame after STARTUP's answer: to each frame body on v3 and v4,
	// to the segments on v5.
	compression atomic.Uint32
	// negotiated is the compression STARTUP asked for, until its answer
	// is queued; framed is set on v5 once it is, as from then on traffic
	// is in segments. STARTUP runs on the reader goroutine, which alone
	// reads them.
	negotiated cqlwire.Compression
	framed     bool
	// arrived is when the reader's last read from the socket returned:
	// the arrival of every request it brought, read off the clock once
	// per read, not once per request. Only the reader touches it.
	arrived time.Time
	// keyspace is the session's current keyspace, set by USE.
	keyspace atomic.Pointer[string]
	// events is the set of event types the client registered for.
	events atomic.Uint32
	// options are STARTUP's, and requests counts the requests read, for
	// system_views.clients.
	options  atomic.Pointer[map[string]string]
	requests atomic.Int64

	out chan *[]byte
	// work hands requests to handlers waiting for one (handleLoop); idle
	// counts those waiting.
	work chan job
	idle atomic.Int32
	// pending counts the requests holding a place in the limits
	// (limits.go), from admission until their answer is queued: for the
	// writer, the answers that may be about to queue.
	pending  atomic.Int32
	inflight sync.WaitGroup
	closed   chan struct{}
	closeOne sync.Once

	// origin is the link to the origin when the gateway has one (dual.go).
	origin originConn
}

// Event types a connection can register for, as bits of conn.events.
const (
	eventTopology uint32 = 1 << iota
	eventStatus
	eventSchema
)

func newConn(srv *Server, nc net.Conn) *conn {
	c := &conn{srv: srv, nc: nc, out: make(chan *[]byte, 256), work: make(chan job), closed: make(chan struct{}),
		log: srv.log.With("client", nc.RemoteAddr().String()), arrived: time.Now()}
	empty := ""
	c.keyspace.Store(&empty)
	return c
}

// serve reads frames until the client leaves or the framing breaks.
func (c *conn) serve() {
	writerDone := make(chan struct{})
	go func() {
		c.writeLoop()
		close(writerDone)
	}()
	err := c.readLoop()
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
		c.log.Debug("connection ends", "err", err)
	}
	c.inflight.Wait()
	c.close()
	<-writerDone
	c.nc.Close()
	if c.srv.dual != nil {
		c.closeOrigin()
	}
}

func (c *conn) close() { c.closeOne.Do(func() { close(c.closed) }) }

func (c *conn) readLoop() error {
	br := bufio.NewReaderSize(stampedReader{c}, 64<<10)
	var hdr [cqlwire.HeaderSize]byte
	for !c.framed {
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			return err
		}
		h := cqlwire.ParseHeader(hdr[:])
		if err := c.acceptHeader(hdr[0], h); err != nil {
			return err
		}
		body, err := cqlwire.ReadBody(br, int(h.Length))
		if err != nil {
			return err
		}
		c.run(h, body)
	}
	return c.readSegments(br)
}

// stampedReader reads the connection's socket, recording when each read
// returned (conn.arrived).
type stampedReader struct{ c *conn }

// Read reads the socket. With an idle timeout, a read that waits longer
// than it since the last request ends the connection, unless requests
// are still in flight: a client waiting for a slow answer is not idle.
func (r stampedReader) Read(p []byte) (int, error) {
	idle := r.c.srv.cfg.IdleTimeout
	for {
		if idle > 0 {
			r.c.nc.SetReadDeadline(r.c.arrived.Add(idle))
		}
		n, err := r.c.nc.Read(p)
		if n > 0 {
			r.c.arrived = time.Now()
		}
		if n == 0 && idle > 0 && isTimeout(err) && r.c.pending.Load() > 0 {
			r.c.arrived = time.Now()
			continue
		}
		return n, err
	}
}

// run starts a request in a goroutine of its own: an idle handler of the
// connection when one is waiting, else a new one. STARTUP runs on the
// reader instead: its answer decides how the next frame is framed and
// compressed, so it must be done before that frame is read, and only the
// reader touches what it negotiates.
func (c *conn) run(h cqlwire.Header, body *[]byte) {
	c.srv.metrics.request(h.Opcode)
	c.requests.Add(1)
	if !c.admit() {
		c.overloaded(h, body)
		return
	}
	c.inflight.Add(1)
	j := job{h: h, body: body, at: c.arrived}
	if h.Opcode == cqlwire.OpStartup {
		c.handle(j)
		return
	}
	if c.executeAsync(&j) {
		return
	}
	select {
	case c.work <- j:
	default:
		go c.handleLoop(j)
	}
}

// maxIdleHandlers bounds the handler goroutines a connection keeps
// waiting for its next request.
const maxIdleHandlers = 64

// job is a request handed to a handler: its header and body, and, for an
// EXECUTE the reader has bound already but cannot answer from the pools'
// goroutines (exec/async.go), its execution, which the handler runs as it is.
type job struct {
	h    cqlwire.Header
	body *[]byte
	at   time.Time // arrival
	e    *exec.Execution
}

// handleLoop handles a request, then waits for the connection's next one
// rather than ending. A new goroutine starts on a small stack and a
// request grows it several times over, copying it each time; in a
// profile of point reads that growth cost as much as the rest of the
// request's own work. A handler kept waiting keeps its grown stack. Past
// maxIdleHandlers waiting, a handler ends, so a burst of concurrent
// requests leaves no more than that behind.
func (c *conn) handleLoop(j job) {
	for {
		c.handle(j)
		if c.idle.Add(1) > maxIdleHandlers {
			c.idle.Add(-1)
			return
		}
		select {
		case j = <-c.work:
			c.idle.Add(-1)
		case <-c.closed:
			return
		}
	}
}

// acceptHeader validates a request header against the connection. A
// header it refuses is answered, and ends the connection: the framing
// cannot be trusted any more.
func (c *conn) acceptHeader(first byte, h cqlwire.Header) error {
	perr := c.checkHeader(first, h)
	if perr == nil && (h.Length < 0 || int64(h.Length) > c.srv.cfg.MaxFrameSize) {
		perr = &cqlwire.ProtocolError{Msg: fmt.Sprintf("Request is too big: length %d exceeds maximum allowed length %d.",
			h.Length, c.srv.cfg.MaxFrameSize), Fatal: true, Version: c.version}
	}
	if perr != nil {
		c.sendError(perr.Version, h.Stream, perr)
		return perr
	}
	return nil
}

// checkHeader validates a request header against the connection.
func (c *conn) checkHeader(first byte, h cqlwire.Header) *cqlwire.ProtocolError {
	if first&cqlwire.ResponseBit != 0 {
		return &cqlwire.ProtocolError{Msg: "Invalid frame: a response was sent to the server", Fatal: true, Version: cqlwire.MaxVersion}
	}
	if h.Version < cqlwire.MinVersion || h.Version > cqlwire.MaxVersion {
		return cqlwire.UnsupportedVersion(h.Version)
	}
	if c.version == 0 {
		c.version = h.Version
	} else if h.Version != c.version {
		return &cqlwire.ProtocolError{Msg: fmt.Sprintf("Invalid message version. Got %d but previous messages on this connection had version %d",
			h.Version, c.version), Fatal: true, Version: c.version}
	}
	// v5 compresses segments, not frames, and ignores the frame flag.
	if h.Flags&cqlwire.FlagCompression != 0 && c.version < 5 && c.compression.Load() == uint32(cqlwire.CompressNone) {
		return &cqlwire.ProtocolError{Msg: "Received a compressed frame, but no compression was negotiated", Fatal: true, Version: c.version}
	}
	return nil
}

// handle runs one request and queues its response. A panic is recovered,
// logged with its stack and answered as a server error: it never takes
// the process or the connection's other requests down.
func (c *conn) handle(j job) {
	h, body := j.h, j.body
	defer c.inflight.Done()
	// Run last, once the answer is queued, whichever way it went.
	defer c.release()
	resp := cqlwire.GetBuffer(0)
	defer func() {
		if r := recover(); r != nil {
			c.log.Error("request panicked", "opcode", cqlwire.OpNames[h.Opcode], "panic", r, "stack", string(debug.Stack()))
			*resp = (*resp)[:0]
			c.appendError(resp, c.version, h.Stream, fmt.Errorf("internal error: %v", r))
			c.observe(h, exec.KindNone, j.at, nil, nil)
			c.send(resp)
		}
		cqlwire.PutBuffer(body)
	}()
	exec.MaybePanic(&c.srv.env.Hooks, exec.PanicHandler, *body)
	if h.Flags&cqlwire.FlagCompression != 0 && c.version < 5 {
		plain, err := c.decompressBody(body)
		if err != nil {
			c.appendError(resp, c.version, h.Stream, err)
			c.observe(h, exec.KindNone, j.at, nil, nil)
			c.send(resp)
			return
		}
		body = plain
	}
	*resp = cqlwire.AppendHeader((*resp)[:0], c.version, h.Stream, cqlwire.OpResult)
	var tr *exec.TraceSession
	if h.Flags&cqlwire.FlagTracing != 0 && traceable(h.Opcode) {
		tr = c.beginTrace(h, *body)
		(*resp)[1] |= cqlwire.FlagTracing
		*resp = append(*resp, tr.Id[:]...)
	}
	var (
		err  error
		kind exec.Kind
		st   *exec.Statement // when known before the request runs
	)
	if j.e != nil {
		st = j.e.St
		kind = st.Kind
		err = c.runBound(j.e, resp)
	} else {
		kind, err = c.dispatch(h, j.at, *body, resp)
	}
	if err != nil {
		*resp = (*resp)[:0]
		c.appendError(resp, c.version, h.Stream, err)
	} else {
		cqlwire.FinishFrame(*resp)
	}
	if tr != nil {
		c.endTrace(tr, err)
	}
	c.observe(h, kind, j.at, st, *body)
	answer := (*resp)[4]
	c.send(resp)
	if h.Opcode == cqlwire.OpStartup && (answer == cqlwire.OpReady || answer == cqlwire.OpAuthenticate) {
		c.startFraming()
	}
}

// startFraming applies what STARTUP negotiated once its answer is queued,
// which itself goes out plain: compression and, on v5, segments.
func (c *conn) startFraming() {
	c.compression.Store(uint32(c.negotiated))
	if c.version >= 5 && !c.framed {
		c.framed = true
		c.queue(startSegments)
	}
}

// startSegments is queued after STARTUP's answer on v5: the writer frames
// everything after it in segments.
var startSegments = new([]byte)

// send queues a complete response frame for the writer, compressing its
// body when the connection negotiated compression (v3/v4).
func (c *conn) send(frame *[]byte) {
	c.queue(c.compressed(frame))
}

// compressed returns frame, compressed when the connection negotiated
// compression of frames (v3/v4).
func (c *conn) compressed(frame *[]byte) *[]byte {
	if k := cqlwire.Compression(c.compression.Load()); k != cqlwire.CompressNone && c.version < 5 {
		return k.CompressFrame(frame)
	}
	return frame
}

// queue hands a frame to the writer.
func (c *conn) queue(frame *[]byte) {
	select {
	case c.out <- frame:
	case <-c.closed:
		cqlwire.PutBuffer(frame)
	}
}

// sendAsync is send for the pools' goroutines, which must never wait on
// a client slow to read: when the writer's queue is full, the frame waits
// for room in a goroutine of its own. It releases the request's place
// (admit) once the frame is queued, not before: a request counts against
// the limits until its answer is in the writer's queue, so the goroutines
// waiting here are bounded by MaxRequestsPerConn per connection, however
// long the client leaves its answers unread.
func (c *conn) sendAsync(frame *[]byte) {
	frame = c.compressed(frame)
	select {
	case c.out <- frame:
		c.release()
	default:
		go func() {
			c.queue(frame)
			c.release()
		}()
	}
}

// sendEvent queues an event unless the writer's queue is full, when the
// event is dropped: events are pushed under the server's lock, which a
// client that stopped reading must not hold up for the others (accepting
// connections takes that lock too).
func (c *conn) sendEvent(frame *[]byte) {
	frame = c.compressed(frame)
	select {
	case c.out <- frame:
	default:
		cqlwire.PutBuffer(frame)
		c.log.Debug("event dropped: the client is not reading its answers")
	}
}

// sendError queues an error answer to a frame the reader refused.
func (c *conn) sendError(version byte, stream int16, err error) {
	b := cqlwire.GetBuffer(0)
	c.appendError(b, version, stream, err)
	c.send(b)
}

// writeLoop writes queued responses, flushing only when none is waiting,
// so responses that finish together share one write (and, on v5, one
// segment).
func (c *conn) writeLoop() {
	bw := bufio.NewWriterSize(c.nc, 64<<10)
	var seg *cqlwire.SegmentWriter
	write := func(frame *[]byte) error {
		switch {
		case frame == startSegments:
			seg = &cqlwire.SegmentWriter{Bw: bw, Lz4: cqlwire.Compression(c.compression.Load()) == cqlwire.CompressLZ4}
			return nil
		case seg != nil:
			return seg.Add(frame)
		}
		_, err := bw.Write(*frame)
		cqlwire.PutBuffer(frame)
		return err
	}
	flush := func() error {
		if seg != nil {
			if err := seg.Flush(); err != nil {
				return err
			}
		}
		return bw.Flush()
	}
	for {
		var frame *[]byte
		select {
		case frame = <-c.out:
		case <-c.closed:
			// Requests have all finished: write what they queued and stop.
			for {
				select {
				case frame = <-c.out:
					write(frame)
				default:
					flush()
					return
				}
			}
		}
		if err := write(frame); err != nil {
			c.nc.Close()
			continue
		}
		if len(c.out) > 0 {
			continue
		}
		// Responses to requests answered by the same pipeline become
		// ready one after another, each a goroutine switch away. While
		// other requests are in flight, let those that can run queue
		// their answers before flushing: one write then carries them all,
		// where flushing at once would cost a write system call each.
		// Requests still waiting on a shard are not waited for.
		if c.pending.Load() > 0 {
			runtime.Gosched()
			if len(c.out) > 0 {
				continue
			}
		}
		if err := flush(); err != nil {
			c.nc.Close()
		}
	}
}

// The session an execution sees (package exec).

func (c *conn) ProtocolVersion() byte       { return c.version }
func (c *conn) Keyspace() string            { return *c.keyspace.Load() }
func (c *conn) SetKeyspace(keyspace string) { c.keyspace.Store(&keyspace) }
func (c *conn) LocalAddr() net.Addr         { return c.nc.LocalAddr() }
func (c *conn) Logger() *slog.Logger        { return c.log }

// Answer sends the answer of a request started on the reader, its RESULT
// frame resp or err, and ends the request.
func (c *conn) Answer(stream int16, resp *[]byte, err error, st *exec.Statement, at time.Time) {
	if err != nil {
		resp = cqlwire.GetBuffer(0)
		c.appendError(resp, c.version, stream, err)
	}
	c.observe(cqlwire.Header{Opcode: cqlwire.OpExecute}, st.Kind, at, st, nil)
	c.sendAsync(resp) // and releases the request's place (limits.go)
	c.inflight.Done()
}
