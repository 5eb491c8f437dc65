// Package origin is the gateway's link to the origin of a live
// migration: another CQL cluster (Cassandra, or another cqlpg), which
// the gateway forwards requests to while it runs in front of both
// (cqlpg serve --origin). A Link is one native-protocol connection,
// spoken at its client's protocol version and logged in with the
// origin's own credentials; requests are multiplexed over it by stream
// id, and its frames are passed through as they are.
package origin

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"time"

	"github.com/cqlpg/cqlpg/gateway/cqlwire"
)

// Config locates the origin and logs in to it.
type Config struct {
	// Addr is HOST:PORT of one of the origin's nodes.
	Addr string
	// Username and Password log in when the origin asks for it
	// (PasswordAuthenticator).
	Username, Password string
	// Timeout bounds the dial and the handshake.
	Timeout time.Duration
	// TLSCA, when set, makes the link speak TLS and verify the origin's
	// certificate against these authorities (a PEM file); TLSCert and
	// TLSKey present a client certificate to an origin that requires one.
	// The files are read at each dial, so renewed certificates apply to
	// the links dialed after them.
	TLSCA, TLSCert, TLSKey string
}

// tlsConfig reads the link's TLS settings from their files.
func (cfg *Config) tlsConfig() (*tls.Config, error) {
	pem, err := os.ReadFile(cfg.TLSCA)
	if err != nil {
		return nil, fmt.Errorf("the origin's certificate authorities: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("the origin's certificate authorities: no PEM certificate in %s", cfg.TLSCA)
	}
	host, _, err := net.SplitHostPort(cfg.Addr)
	if err != nil {
		return nil, err
	}
	tc := &tls.Config{RootCAs: pool, ServerName: host, MinVersion: tls.VersionTLS12}
	if cfg.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(cfg.TLSCert, cfg.TLSKey)
		if err != nil {
			return nil, fmt.Errorf("the client certificate for the origin: %w", err)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	return tc, nil
}

// maxStreams is how many requests a link has in flight at once; one more
// is refused as overloaded, as the gateway refuses its own clients past
// their limit.
const maxStreams = 2048

// Link is one connection to the origin.
type Link struct {
	nc      net.Conn
	addr    string
	version byte

	// wmu serializes writes: frames go out whole, one after the other.
	wmu  sync.Mutex
	bw   *bufio.Writer
	segs *cqlwire.SegmentWriter // v5, once the handshake is done

	mu   sync.Mutex
	free []int16
	// slots hold each stream's waiter; abandoned marks the streams whose
	// waiter gave up, whose answer the reader throws away when it comes.
	slots     [maxStreams]chan result
	abandoned [maxStreams]bool
	err       error // set once the link is dead
	done      chan struct{}
}

type result struct {
	frame *[]byte
	err   error
}

// Refusal is the origin's ERROR answer to the handshake: a protocol
// version it does not speak, or credentials it does not take. Body is
// the frame's body, to pass on to the client as the origin gave it.
type Refusal struct {
	Code int32
	Msg  string
	Body []byte
}

func (r *Refusal) Error() string { return fmt.Sprintf("the origin refused the connection: %s", r.Msg) }

// ErrOverloaded is a request past a link's maxStreams.
var ErrOverloaded = errors.New("too many requests in flight to the origin")

// Dial connects to the origin at protocol version v and logs in. A
// refusal by the origin is a *Refusal.
func Dial(ctx context.Context, cfg Config, v byte) (*Link, error) {
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	var tc *tls.Config
	if cfg.TLSCA != "" {
		var err error
		if tc, err = cfg.tlsConfig(); err != nil {
			return nil, err
		}
	}
	d := net.Dialer{Timeout: timeout}
	nc, err := d.DialContext(ctx, "tcp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("cannot reach the origin %s: %w", cfg.Addr, err)
	}
	if tc != nil {
		hctx, cancel := context.WithTimeout(ctx, timeout)
		tlsConn := tls.Client(nc, tc)
		err := tlsConn.HandshakeContext(hctx)
		cancel()
		if err != nil {
			nc.Close()
			return nil, fmt.Errorf("TLS with the origin %s: %w", cfg.Addr, err)
		}
		nc = tlsConn
	}
	l := &Link{nc: nc, addr: cfg.Addr, version: v, bw: bufio.NewWriterSize(nc, 64<<10), done: make(chan struct{})}
	nc.SetDeadline(time.Now().Add(timeout))
	br := bufio.NewReaderSize(nc, 64<<10)
	if err := l.handshake(br, cfg); err != nil {
		nc.Close()
		return nil, err
	}
	nc.SetDeadline(time.Time{})
	for i := maxStreams - 1; i >= 0; i-- {
		l.free = append(l.free, int16(i))
		l.slots[i] = make(chan result, 1)
	}
	go l.readLoop(br)
	return l, nil
}

// handshake sends STARTUP and, when asked, logs in with PLAIN SASL, as
// drivers do for PasswordAuthenticator. On v5, framing switches to
// segments once STARTUP is answered.
func (l *Link) handshake(br *bufio.Reader, cfg Config) error {
	startup := cqlwire.AppendShort(nil, 1)
	startup = cqlwire.AppendString(cqlwire.AppendString(startup, "CQL_VERSION"), "3.0.0")
	if err := l.write(0, cqlwire.OpStartup, startup); err != nil {
		return err
	}
	op, body, err := l.readOne(br, false)
	if err != nil {
		return err
	}
	if l.version >= 5 && (op == cqlwire.OpReady || op == cqlwire.OpAuthenticate) {
		l.segs = &cqlwire.SegmentWriter{Bw: l.bw}
	}
	switch op {
	case cqlwire.OpReady:
		return nil
	case cqlwire.OpAuthenticate:
	default:
		return refusal(op, body)
	}
	if cfg.Username == "" {
		return &Refusal{Code: 0x0100, Msg: fmt.Sprintf("%s asks for a login: give the origin's credentials (--origin-auth USER:PASSWORD)", cfg.Addr)}
	}
	token := append(append(append([]byte{0}, cfg.Username...), 0), cfg.Password...)
	if err := l.write(0, cqlwire.OpAuthResponse, cqlwire.AppendBytes(nil, token)); err != nil {
		return err
	}
	op, body, err = l.readOne(br, l.segs != nil)
	if err != nil {
		return err
	}
	if op != cqlwire.OpAuthSuccess {
		return refusal(op, body)
	}
	return nil
}

// refusal reads an ERROR answer to the handshake.
func refusal(op byte, body []byte) error {
	if op != cqlwire.OpError {
		return fmt.Errorf("the origin answered the handshake with %s", cqlwire.OpNames[op])
	}
	d := cqlwire.Decoder{B: body}
	code := d.Int()
	msg := string(d.StringBytes())
	return &Refusal{Code: code, Msg: msg, Body: body}
}

// readOne reads one frame during the handshake.
func (l *Link) readOne(br *bufio.Reader, segmented bool) (op byte, body []byte, err error) {
	next := func() (*[]byte, error) { return readFrame(br) }
	if segmented {
		next = (&frameReader{r: cqlwire.SegmentReader{Br: br}}).next
	}
	fp, err := next()
	if err != nil {
		return 0, nil, fmt.Errorf("the origin's handshake: %w", err)
	}
	frame := *fp
	h := cqlwire.ParseHeader(frame)
	if h.Flags&cqlwire.FlagCompression != 0 {
		return 0, nil, errors.New("the origin compressed a frame though none was negotiated")
	}
	return h.Opcode, skipResponseExtras(h, frame[cqlwire.HeaderSize:]), nil
}

// skipResponseExtras skips what the header's flags put before a
// response's message: a tracing id, warnings and a custom payload.
func skipResponseExtras(h cqlwire.Header, body []byte) []byte {
	d := cqlwire.Decoder{B: body}
	if h.Flags&cqlwire.FlagTracing != 0 {
		d.Long()
		d.Long()
	}
	if h.Flags&cqlwire.FlagWarning != 0 {
		for n := d.Short(); n > 0 && d.Err == nil; n-- {
			d.StringBytes()
		}
	}
	if h.Flags&cqlwire.FlagCustomPayload != 0 {
		d.SkipBytesMap()
	}
	return d.B
}

// write sends one request frame.
func (l *Link) write(stream int16, op byte, body []byte) error {
	return l.writeFrame(stream, 0, op, body)
}

func (l *Link) writeFrame(stream int16, flags, op byte, body []byte) error {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	var h [cqlwire.HeaderSize]byte
	h[0], h[1], h[4] = l.version, flags, op
	binary.BigEndian.PutUint16(h[2:4], uint16(stream))
	binary.BigEndian.PutUint32(h[5:9], uint32(len(body)))
	if l.segs != nil {
		f := cqlwire.GetBuffer(0)
		*f = append(append(*f, h[:]...), body...)
		if err := l.segs.Add(f); err != nil {
			return err
		}
		if err := l.segs.Flush(); err != nil {
			return err
		}
	} else {
		l.bw.Write(h[:])
		l.bw.Write(body)
	}
	return l.bw.Flush()
}

// Do sends a request and waits for its answer: the whole response frame,
// header included, in a pooled buffer the caller gives back with
// cqlwire.PutBuffer. flags are the request's header flags (tracing,
// custom payload); compression never applies on a link.
func (l *Link) Do(ctx context.Context, flags, op byte, body []byte) (*[]byte, error) {
	l.mu.Lock()
	if l.err != nil {
		l.mu.Unlock()
		return nil, l.err
	}
	if len(l.free) == 0 {
		l.mu.Unlock()
		return nil, ErrOverloaded
	}
	stream := l.free[len(l.free)-1]
	l.free = l.free[:len(l.free)-1]
	ch := l.slots[stream]
	l.mu.Unlock()
	if err := l.writeFrame(stream, flags&^cqlwire.FlagCompression, op, body); err != nil {
		l.fail(fmt.Errorf("the connection to the origin %s failed: %w", l.addr, err))
	}
	select {
	case r := <-ch:
		l.release(stream)
		return r.frame, r.err
	case <-ctx.Done():
		l.mu.Lock()
		select {
		case r := <-ch:
			l.free = append(l.free, stream)
			l.mu.Unlock()
			return r.frame, r.err
		default:
			l.abandoned[stream] = true
			l.mu.Unlock()
			return nil, ctx.Err()
		}
	}
}

func (l *Link) release(stream int16) {
	l.mu.Lock()
	l.free = append(l.free, stream)
	l.mu.Unlock()
}

// Version is the protocol version the link speaks.
func (l *Link) Version() byte { return l.version }

// Err is why the link died, nil while it lives.
func (l *Link) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// Close ends the link; requests in flight fail.
func (l *Link) Close() {
	l.fail(fmt.Errorf("the connection to the origin %s was closed", l.addr))
}

// fail marks the link dead with err, closes it and fails every request
// waiting on it.
func (l *Link) fail(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return
	}
	l.err = err
	l.nc.Close()
	close(l.done)
	idle := make([]bool, maxStreams)
	for _, s := range l.free {
		idle[s] = true
	}
	for s := range maxStreams {
		if !idle[s] && !l.abandoned[s] {
			select { // a waiter not yet woken may have its answer already
			case l.slots[s] <- result{err: err}:
			default:
			}
		}
	}
	l.free = l.free[:0]
}

// readLoop hands each response to the request waiting on its stream,
// until the connection ends.
func (l *Link) readLoop(br *bufio.Reader) {
	next := func() (*[]byte, error) { return readFrame(br) }
	if l.segs != nil {
		next = (&frameReader{r: cqlwire.SegmentReader{Br: br}}).next
	}
	for {
		frame, err := next()
		if err != nil {
			l.fail(fmt.Errorf("the connection to the origin %s failed: %w", l.addr, err))
			return
		}
		h := cqlwire.ParseHeader(*frame)
		if h.Stream < 0 || int(h.Stream) >= maxStreams {
			cqlwire.PutBuffer(frame) // an event, or nothing the link asked for
			continue
		}
		l.mu.Lock()
		switch {
		case l.err != nil:
			cqlwire.PutBuffer(frame)
		case l.abandoned[h.Stream]:
			l.abandoned[h.Stream] = false
			l.free = append(l.free, h.Stream)
			cqlwire.PutBuffer(frame)
		default:
			l.slots[h.Stream] <- result{frame: frame}
		}
		l.mu.Unlock()
	}
}

// readFrame reads one frame of v3 or v4.
func readFrame(br *bufio.Reader) (*[]byte, error) {
	var head [cqlwire.HeaderSize]byte
	if _, err := io.ReadFull(br, head[:]); err != nil {
		return nil, err
	}
	h := cqlwire.ParseHeader(head[:])
	body, err := cqlwire.ReadBody(br, int(h.Length))
	if err != nil {
		return nil, err
	}
	frame := cqlwire.GetBuffer(0)
	*frame = append(append(*frame, head[:]...), *body...)
	cqlwire.PutBuffer(body)
	return frame, nil
}

// frameReader reads the frames of v5 segments: it gathers payloads until
// a frame is whole, whether segments hold several frames or a frame
// spans several segments.
type frameReader struct {
	r   cqlwire.SegmentReader
	buf []byte
}

func (f *frameReader) next() (*[]byte, error) {
	for {
		if len(f.buf) >= cqlwire.HeaderSize {
			n := cqlwire.HeaderSize + int(cqlwire.ParseHeader(f.buf).Length)
			if len(f.buf) >= n {
				frame := cqlwire.GetBuffer(0)
				*frame = append(*frame, f.buf[:n]...)
				f.buf = append(f.buf[:0], f.buf[n:]...)
				return frame, nil
			}
		}
		payload, _, err := f.r.Next()
		if err != nil {
			return nil, err
		}
		f.buf = append(f.buf, payload...)
	}
}

// Message is a response frame's message: its body past the tracing id,
// warnings and custom payload its flags announce.
func Message(frame []byte) []byte {
	return skipResponseExtras(cqlwire.ParseHeader(frame), frame[cqlwire.HeaderSize:])
}
