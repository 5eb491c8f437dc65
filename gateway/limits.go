package gateway

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"sync/atomic"
	"time"

	"github.com/cqlpg/cqlpg/gateway/cqlwire"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
)

// Limits on what clients may hold at once. Past one, the gateway answers
// Overloaded at once, which drivers take as a reason to try the request
// on another host, rather than queueing: what a gateway holds for its
// clients stays bounded by the limits, whatever they send.
//
// A request holds its place from the moment its frame is read until its
// answer is in the connection's writer queue (conn.out), so that a client
// that stops reading cannot make answers pile up behind the queue beyond
// MaxRequestsPerConn.
const (
	// DefaultMaxConnections is Cassandra's order of magnitude for one node
	// serving a fleet of application instances, each with a few
	// connections (gocql and the Java driver open one to three per host).
	DefaultMaxConnections = 1024
	// DefaultMaxRequestsPerConn is the Java and Python drivers' default of
	// requests in flight per connection on protocol v3 and later. Drivers
	// may use up to 32768 streams, but one that does on a single
	// connection is queueing, which the gateway will not do for it.
	DefaultMaxRequestsPerConn = 1024
	// DefaultMaxRequests bounds the requests in flight in all: at a few
	// KiB of request and answer each, 16384 hold tens of MiB; the shards'
	// pools (4 connections of pipelines of 16 each) serve far fewer at
	// once, so more would only wait longer.
	DefaultMaxRequests = 16384
)

// overloadedError is a request refused because a limit is reached.
type overloadedError struct{ msg string }

func (e *overloadedError) Error() string { return e.msg }

var (
	// errOverloaded is Cassandra's text for a request refused past its
	// limits of requests in flight.
	errOverloaded = &overloadedError{"Server is in overloaded state. Cannot accept more requests at this point"}
	// errTooManyConnections answers the first request of a connection
	// past MaxConnections.
	errTooManyConnections = &overloadedError{"Server is in overloaded state. Cannot accept more connections at this point"}
)

// admit takes a place for a request in the connection's and the
// gateway's limits, and reports whether there was one; release gives it
// back.
func (c *conn) admit() bool {
	n := c.pending.Add(1)
	t := c.srv.requests.Add(1)
	if n > int32(c.srv.cfg.MaxRequestsPerConn) || t > int64(c.srv.cfg.MaxRequests) {
		c.release()
		return false
	}
	return true
}

func (c *conn) release() {
	c.pending.Add(-1)
	c.srv.requests.Add(-1)
}

// overloaded answers a request admit refused. It runs on the reader, and
// waits for room in the writer's queue: a client flooding a connection is
// thus no longer read from until it reads its answers.
//
// A flood is answered mostly this way, so the answer is made once per
// protocol version (by appendError, as every error is) and copied with
// the request's stream, into a buffer of its size rather than a pooled
// one of 4 KiB: the answers waiting in the writers' queues then hold
// tens of bytes each.
func (c *conn) overloaded(h cqlwire.Header, body *[]byte) {
	cqlwire.PutBuffer(body)
	cached := &overloadedFrames[c.version]
	f := cached.Load()
	if f == nil {
		b := cqlwire.GetBuffer(0)
		c.appendError(b, c.version, h.Stream, errOverloaded)
		one := append([]byte(nil), *b...)
		cached.Store(&one)
		c.send(b)
		return
	}
	c.srv.metrics.errors.WithLabelValues(overloadedCode).Inc()
	frame := append([]byte(nil), *f...)
	b := &frame
	binary.BigEndian.PutUint16((*b)[2:], uint16(h.Stream))
	c.send(b)
}

// overloadedFrames holds the Overloaded answer to a request refused past
// a limit, by protocol version (v3 and later: stream at bytes 2 and 3).
var overloadedFrames [cqlwire.MaxVersion + 1]atomic.Pointer[[]byte]

// overloadedCode labels Overloaded answers in the errors metric.
var overloadedCode = errorLabel(primitive.ErrorCodeOverloaded)

// refuseWait bounds how long a connection past MaxConnections may take to
// send its STARTUP, and refuseMax how many such connections wait at once;
// past it they are closed unanswered.
const (
	refuseWait = 5 * time.Second
	refuseMax  = 64
	// refuseFrames bounds the frames read before STARTUP: a driver steps
	// down through versions, and asks OPTIONS, a few times at most.
	refuseFrames = 8
)

// refuse answers a connection past MaxConnections, then closes it: OPTIONS
// with SUPPORTED, as drivers send it before STARTUP to learn what the
// server speaks, and the first other request (STARTUP) with Overloaded.
// Drivers take an error answer to STARTUP as a failed connection, to try
// again later or on another host, and show its message (gocql hides the
// message of an error answered to OPTIONS); a connection closed at once
// would show only as reset.
func (s *Server) refuse(nc net.Conn) {
	if s.refused.Add(1) > refuseMax {
		s.refused.Add(-1)
		nc.Close()
		return
	}
	go func() {
		defer s.refused.Add(-1)
		defer nc.Close()
		nc.SetDeadline(time.Now().Add(refuseWait))
		c := &conn{srv: s, nc: nc, log: s.log}
		var hdr [cqlwire.HeaderSize]byte
		for range refuseFrames {
			if _, err := io.ReadFull(nc, hdr[:]); err != nil {
				return
			}
			h := cqlwire.ParseHeader(hdr[:])
			if hdr[0]&cqlwire.ResponseBit != 0 || h.Length < 0 || h.Length > 1<<16 {
				return
			}
			if _, err := io.CopyN(io.Discard, nc, int64(h.Length)); err != nil {
				return
			}
			b := cqlwire.GetBuffer(0)
			switch {
			case h.Version < cqlwire.MinVersion || h.Version > cqlwire.MaxVersion:
				// Answered as on any connection, so that the driver steps
				// down and tries again.
				perr := cqlwire.UnsupportedVersion(h.Version)
				c.appendError(b, perr.Version, h.Stream, perr)
			case h.Opcode == cqlwire.OpOptions:
				c.version = h.Version
				*b = cqlwire.AppendHeader((*b)[:0], h.Version, h.Stream, cqlwire.OpResult)
				c.handleOptions(b)
				cqlwire.FinishFrame(*b)
			default:
				c.appendError(b, h.Version, h.Stream, errTooManyConnections)
				nc.Write(*b)
				cqlwire.PutBuffer(b)
				// Let the answer reach the client before the close does.
				if tc, ok := nc.(*net.TCPConn); ok {
					tc.CloseWrite()
					io.Copy(io.Discard, io.LimitReader(nc, 1<<16))
				}
				return
			}
			if _, err := nc.Write(*b); err != nil {
				cqlwire.PutBuffer(b)
				return
			}
			cqlwire.PutBuffer(b)
		}
	}()
}

// isTimeout reports whether err is a read's deadline passing.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
