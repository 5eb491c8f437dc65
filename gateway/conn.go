package gateway

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"runtime/debug"
	"sync"
	"sync/atomic"
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
	// keyspace is the session's current keyspace, set by USE.
	keyspace atomic.Pointer[string]
	// events is the set of event types the client registered for.
	events atomic.Uint32

	out      chan *[]byte
	inflight sync.WaitGroup
	closed   chan struct{}
	closeOne sync.Once
}

// Event types a connection can register for, as bits of conn.events.
const (
	eventTopology uint32 = 1 << iota
	eventStatus
	eventSchema
)

func newConn(srv *Server, nc net.Conn) *conn {
	c := &conn{srv: srv, nc: nc, out: make(chan *[]byte, 256), closed: make(chan struct{}),
		log: srv.log.With("client", nc.RemoteAddr().String())}
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
}

func (c *conn) close() { c.closeOne.Do(func() { close(c.closed) }) }

func (c *conn) readLoop() error {
	br := bufio.NewReaderSize(c.nc, 64<<10)
	var hdr [headerSize]byte
	for {
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			return err
		}
		h := parseHeader(hdr[:])
		if perr := c.checkHeader(hdr[0], h); perr != nil {
			c.sendError(perr.version, h.stream, perr)
			if perr.fatal {
				return perr
			}
		}
		if h.length < 0 || int64(h.length) > c.srv.cfg.MaxFrameSize {
			perr := &protocolError{msg: fmt.Sprintf("Request is too big: length %d exceeds maximum allowed length %d.",
				h.length, c.srv.cfg.MaxFrameSize), fatal: true, version: c.version}
			c.sendError(c.version, h.stream, perr)
			return perr
		}
		body := getBuffer(int(h.length))
		if _, err := io.ReadFull(br, *body); err != nil {
			putBuffer(body)
			return err
		}
		c.inflight.Add(1)
		go c.handle(h, body)
	}
}

// checkHeader validates a request header against the connection.
func (c *conn) checkHeader(first byte, h header) *protocolError {
	if first&responseBit != 0 {
		return &protocolError{msg: "Invalid frame: a response was sent to the server", fatal: true, version: maxVersion}
	}
	if h.version < minVersion || h.version > maxVersion {
		return unsupportedVersion(h.version)
	}
	if c.version == 0 {
		c.version = h.version
	} else if h.version != c.version {
		return &protocolError{msg: fmt.Sprintf("Invalid message version. Got %d but previous messages on this connection had version %d",
			h.version, c.version), fatal: true, version: c.version}
	}
	if h.flags&flagCompression != 0 {
		return &protocolError{msg: "Received a compressed frame, but no compression was negotiated", fatal: true, version: c.version}
	}
	return nil
}

// handle runs one request and queues its response. A panic is recovered,
// logged with its stack and answered as a server error: it never takes
// the process or the connection's other requests down.
func (c *conn) handle(h header, body *[]byte) {
	defer c.inflight.Done()
	resp := getBuffer(0)
	defer func() {
		if r := recover(); r != nil {
			c.log.Error("request panicked", "opcode", opNames[h.opcode], "panic", r, "stack", string(debug.Stack()))
			*resp = (*resp)[:0]
			c.appendError(resp, c.version, h.stream, fmt.Errorf("internal error: %v", r))
			c.send(resp)
		}
		putBuffer(body)
	}()
	c.srv.metrics.requests.WithLabelValues(opNames[h.opcode]).Inc()
	*resp = appendHeader((*resp)[:0], c.version, h.stream, opResult)
	err := c.dispatch(h, *body, resp)
	if err != nil {
		*resp = (*resp)[:0]
		c.appendError(resp, c.version, h.stream, err)
	} else {
		finishFrame(*resp)
	}
	c.send(resp)
}

// send queues a complete response frame for the writer.
func (c *conn) send(frame *[]byte) {
	select {
	case c.out <- frame:
	case <-c.closed:
		putBuffer(frame)
	}
}

// sendError queues an error answer to a frame the reader refused.
func (c *conn) sendError(version byte, stream int16, err error) {
	b := getBuffer(0)
	c.appendError(b, version, stream, err)
	c.send(b)
}

// writeLoop writes queued responses, flushing only when none is waiting,
// so responses that finish together share one write.
func (c *conn) writeLoop() {
	bw := bufio.NewWriterSize(c.nc, 64<<10)
	for {
		var frame *[]byte
		select {
		case frame = <-c.out:
		case <-c.closed:
			// Requests have all finished: write what they queued and stop.
			for {
				select {
				case frame = <-c.out:
					bw.Write(*frame)
					putBuffer(frame)
				default:
					bw.Flush()
					return
				}
			}
		}
		if _, err := bw.Write(*frame); err != nil {
			putBuffer(frame)
			c.nc.Close()
			continue
		}
		putBuffer(frame)
		if len(c.out) == 0 {
			if err := bw.Flush(); err != nil {
				c.nc.Close()
			}
		}
	}
}

// bufferPool recycles request bodies and response frames.
var bufferPool = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// getBuffer returns a pooled buffer of length n.
func getBuffer(n int) *[]byte {
	b := bufferPool.Get().(*[]byte)
	if cap(*b) < n {
		*b = make([]byte, n)
	}
	*b = (*b)[:n]
	return b
}

// putBuffer returns a buffer to the pool; very large ones are dropped so
// that one big result does not pin its memory.
func putBuffer(b *[]byte) {
	if cap(*b) > 1<<20 {
		return
	}
	bufferPool.Put(b)
}
