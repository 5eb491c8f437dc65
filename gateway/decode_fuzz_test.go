package gateway

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"log/slog"
	"net"
	rtmetrics "runtime/metrics"
	"sync"
	"testing"

	"github.com/cqlpg/cqlpg/gateway/auth"
	"github.com/cqlpg/cqlpg/gateway/cqlwire"
)

// The fuzz targets here feed the reader's framing and the request
// decoders whatever bytes a client could send. Their seed corpora, in
// testdata/fuzz, hold frames of every request opcode in every protocol
// version, written by the protocol library.

// fuzzMaxFrame is the frame size limit of the fuzzed connections: small
// enough that a refused length shows quickly, large enough for the seeds.
const fuzzMaxFrame = 1 << 20

// fuzzConn returns a connection with no socket, no handlers and no
// writer: what it answers is dropped.
func fuzzConn() *conn {
	c := &conn{srv: fuzzServer(), nc: fuzzNetConn{}, log: slog.New(slog.DiscardHandler), out: make(chan *[]byte),
		closed: make(chan struct{})}
	c.close()
	return c
}

// fuzzServer is the server of the fuzzed connections: its configuration
// and metrics, nothing else.
var fuzzServer = sync.OnceValue(func() *Server {
	srv := &Server{cfg: Config{MaxFrameSize: fuzzMaxFrame}}
	srv.metrics = newMetrics(srv)
	return srv
})

// fuzzNetConn stands for a client's socket where only its address is
// asked for.
type fuzzNetConn struct{ net.Conn }

func (fuzzNetConn) RemoteAddr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9042} }

// decodeRequest decodes a request body as the handlers do before they
// run anything, and returns the error they would answer.
func decodeRequest(version, flags, opcode byte, body []byte) error {
	d := cqlwire.Decoder{B: body}
	if flags&cqlwire.FlagCustomPayload != 0 {
		d.SkipBytesMap()
	}
	switch opcode {
	case cqlwire.OpOptions:
		return nil
	case cqlwire.OpStartup:
		opts := startupOptions(&d)
		if err := cqlwire.DecodeError(&d, "STARTUP"); err != nil {
			return err
		}
		c := conn{version: version}
		return c.negotiateCompression(opts["COMPRESSION"])
	case cqlwire.OpRegister:
		_, err := registerMask(&d)
		return err
	case cqlwire.OpQuery:
		d.LongString()
		var q cqlwire.QueryParams
		d.QueryParams(&q, version)
		if err := cqlwire.DecodeError(&d, "QUERY"); err != nil {
			return err
		}
		return checkParams(&q, body)
	case cqlwire.OpPrepare: // as exec.Env.PrepareMessage
		d.LongString()
		if version >= 5 && d.Int()&0x01 != 0 /* with keyspace */ {
			d.StringBytes()
		}
		return cqlwire.DecodeError(&d, "PREPARE")
	case cqlwire.OpExecute: // as exec.Env.BindExecute
		d.ShortBytes()
		if version >= 5 {
			d.ShortBytes()
		}
		var q cqlwire.QueryParams
		d.QueryParams(&q, version)
		if err := cqlwire.DecodeError(&d, "EXECUTE"); err != nil {
			return err
		}
		return checkParams(&q, body)
	case cqlwire.OpBatch:
		var b cqlwire.BatchParams
		d.Batch(&b, version)
		if err := cqlwire.DecodeError(&d, "BATCH"); err != nil {
			return err
		}
		for _, it := range b.Items {
			if len(it.Unset) > len(it.Values) {
				return errors.New("more unset marks than values")
			}
		}
		return nil
	case cqlwire.OpAuthResponse: // as auth.Authenticator.Respond
		token, _ := d.Value()
		if err := cqlwire.DecodeError(&d, "AUTH_RESPONSE"); err != nil {
			return err
		}
		_, _, err := auth.SASLPlain(token)
		return err
	}
	return &cqlwire.ProtocolError{Msg: "unknown opcode"}
}

// heapAllocated returns the bytes allocated on the heap so far. The
// runtime counts large allocations at once, small ones in batches: a
// decoder that allocates a length it was told rather than one it checked
// shows at once.
func heapAllocated() uint64 {
	s := []rtmetrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	rtmetrics.Read(s)
	return s[0].Value.Uint64()
}

// decodeChecked is decodeRequest failing t when decoding allocates far
// more than the body's size or answers other than with a protocol error.
func decodeChecked(t *testing.T, version, flags, opcode byte, body []byte) {
	t.Helper()
	before := heapAllocated()
	err := decodeRequest(version, flags, opcode, body)
	if n := heapAllocated() - before; n > 1<<20+64*uint64(len(body)) {
		t.Fatalf("decoding a body of %d bytes (opcode %d) allocated %d bytes", len(body), opcode, n)
	}
	wantProtocolError(t, err)
}

// checkParams checks what decoding promises of query parameters: one
// unset mark at most per value, one name per value when named, and byte
// values that are pieces of the body.
func checkParams(q *cqlwire.QueryParams, body []byte) error {
	if len(q.Unset) > len(q.Values) {
		return errors.New("more unset marks than values")
	}
	if q.Flags&cqlwire.QfNamedValues != 0 && len(q.Names) != len(q.Values) {
		return errors.New("names and values differ in number")
	}
	for _, v := range q.Values {
		if len(v) > len(body) {
			return errors.New("a value longer than the body")
		}
	}
	return nil
}

// wantProtocolError fails unless err is nil or an error the gateway
// answers as a protocol error (or, for AUTH_RESPONSE, an authentication
// error).
func wantProtocolError(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	var perr *cqlwire.ProtocolError
	var aerr *auth.Error
	if !errors.As(err, &perr) && !errors.As(err, &aerr) {
		t.Fatalf("%T %v is not a protocol error", err, err)
	}
}

// FuzzRequest decodes a request body of any opcode, protocol version and
// header flags: decoding ends in a request or a protocol error, never in
// a panic.
func FuzzRequest(f *testing.F) {
	f.Add(cqlwire.OpStartup, byte(4), byte(0), []byte{0, 1, 0, 11, 'C', 'Q', 'L', '_', 'V', 'E', 'R', 'S', 'I', 'O', 'N', 0, 5, '3', '.', '0', '.', '0'})
	f.Add(cqlwire.OpQuery, byte(5), byte(0), []byte{0, 0, 0, 1, 'x', 0, 1, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, opcode, version, flags byte, body []byte) {
		if version < cqlwire.MinVersion || version > cqlwire.MaxVersion {
			return // the header check refuses the frame first
		}
		decodeChecked(t, version, flags, opcode, body)
	})
}

// FuzzFrames reads a stream of v3/v4 frames as the connection's reader
// does before segments (readLoop): each header is checked, each body
// read (cqlwire.ReadBody), decompressed when flagged, and decoded. compressed picks the
// compression STARTUP negotiated: 0 none, 1 LZ4, 2 Snappy.
func FuzzFrames(f *testing.F) {
	f.Add([]byte{4, 0, 0, 1, cqlwire.OpOptions, 0, 0, 0, 0}, byte(0))
	f.Fuzz(func(t *testing.T, data []byte, compressed byte) {
		c := fuzzConn()
		c.compression.Store(uint32(compressed % 3))
		r := bytes.NewReader(data)
		var hdr [cqlwire.HeaderSize]byte
		for {
			if _, err := io.ReadFull(r, hdr[:]); err != nil {
				return
			}
			h := cqlwire.ParseHeader(hdr[:])
			if err := c.acceptHeader(hdr[0], h); err != nil {
				wantProtocolError(t, err)
				return
			}
			if h.Length < 0 || h.Length > fuzzMaxFrame {
				t.Fatalf("accepted a body length of %d", h.Length)
			}
			// The reader's buffer grows with the bytes that arrive: a
			// declared length the stream does not hold takes no memory.
			before := heapAllocated()
			b, err := cqlwire.ReadBody(r, int(h.Length))
			if n := heapAllocated() - before; n > 1<<20+4*uint64(len(data)) {
				t.Fatalf("reading a body declared %d bytes long from %d allocated %d bytes", h.Length, len(data), n)
			}
			if err != nil {
				return // the stream ends inside the body: the reader would wait
			}
			body := *b
			if h.Flags&cqlwire.FlagCompression != 0 && c.version < 5 {
				plain, err := c.decompressBody(&body)
				if err != nil {
					wantProtocolError(t, err)
					continue
				}
				body = *plain
			}
			decodeChecked(t, h.Version, h.Flags, h.Opcode, body)
		}
	})
}

// FuzzSegments reads v5 segments as the connection's reader does once
// STARTUP is answered, gathering frames, whole or cut across segments,
// and decoding each request. cqlwire.Lz4 says whether LZ4 was negotiated.
func FuzzSegments(f *testing.F) {
	f.Add([]byte{}, false)
	f.Fuzz(func(t *testing.T, data []byte, lz4 bool) {
		c := fuzzConn()
		c.version = 5
		if lz4 {
			c.compression.Store(uint32(cqlwire.CompressLZ4))
		}
		c.framed = true
		err := c.segments(bufio.NewReader(bytes.NewReader(data)), func(h cqlwire.Header, body *[]byte) {
			if len(*body) != int(h.Length) {
				t.Fatalf("a frame of length %d ran with a body of %d bytes", h.Length, len(*body))
			}
			decodeChecked(t, h.Version, h.Flags, h.Opcode, *body)
		})
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return
		}
		wantProtocolError(t, err)
	})
}
