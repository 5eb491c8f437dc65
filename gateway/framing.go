package gateway

import (
	"bufio"
	"errors"

	"github.com/cqlpg/cqlpg/gateway/cqlwire"
)

// The connection's side of framing: reading v5 segments into frames and
// decompressing v3/v4 bodies, with the connection's settings and its
// error answers.

// readSegments reads frames out of the client's segments until the
// client leaves or the framing breaks. A frame spanning segments is
// gathered into one body before it runs.
func (c *conn) readSegments(br *bufio.Reader) error { return c.segments(br, c.run) }

// segments is readSegments with run starting each frame read, so that
// the framing can be tested without handlers behind it.
func (c *conn) segments(br *bufio.Reader, run func(cqlwire.Header, *[]byte)) error {
	r := cqlwire.SegmentReader{Br: br, Lz4: cqlwire.Compression(c.compression.Load()) == cqlwire.CompressLZ4}
	// large gathers a frame cut across segments: its header bytes in
	// head until all nine are there, then its body.
	var (
		head  []byte
		large *[]byte
		lh    cqlwire.Header
	)
	for {
		payload, self, err := r.Next()
		if err != nil {
			var ce *cqlwire.CrcError
			if errors.As(err, &ce) {
				perr := &cqlwire.ProtocolError{Msg: c.nc.RemoteAddr().String() + " invalid, " + ce.Error(), Fatal: true, Version: c.version}
				c.sendError(c.version, 0, perr)
				return perr
			}
			var perr *cqlwire.ProtocolError
			if errors.As(err, &perr) {
				c.sendError(c.version, 0, perr)
			}
			return err
		}
		if self {
			if head != nil || large != nil {
				return c.fatal(0, "Invalid segment: a self-contained segment arrived before the previous frame was complete")
			}
			for len(payload) > 0 {
				if len(payload) < cqlwire.HeaderSize {
					return c.fatal(0, "Invalid segment: a self-contained segment ends inside a frame")
				}
				h := cqlwire.ParseHeader(payload)
				if err := c.acceptHeader(payload[0], h); err != nil {
					return err
				}
				if int(h.Length) > len(payload)-cqlwire.HeaderSize {
					return c.fatal(h.Stream, "Invalid segment: a self-contained segment ends inside a frame")
				}
				body := cqlwire.GetBuffer(int(h.Length))
				copy(*body, payload[cqlwire.HeaderSize:cqlwire.HeaderSize+int(h.Length)])
				payload = payload[cqlwire.HeaderSize+int(h.Length):]
				run(h, body)
			}
			continue
		}
		// A part of a frame too large for one segment.
		if large == nil {
			need := min(cqlwire.HeaderSize-len(head), len(payload))
			head = append(head, payload[:need]...)
			payload = payload[need:]
			if len(head) < cqlwire.HeaderSize {
				continue
			}
			lh = cqlwire.ParseHeader(head)
			if err := c.acceptHeader(head[0], lh); err != nil {
				return err
			}
			head = nil
			// Grown by the parts as they arrive, not taken at the size
			// the header declares (cqlwire.ReadBody).
			large = cqlwire.GetBuffer(min(int(lh.Length), 2*cqlwire.MaxSegmentPayload))
			*large = (*large)[:0]
		}
		if len(payload) > int(lh.Length)-len(*large) {
			cqlwire.PutBuffer(large)
			return c.fatal(lh.Stream, "Invalid segment: a segment holds more than the rest of its frame")
		}
		*large = append(*large, payload...)
		if len(*large) == int(lh.Length) {
			run(lh, large)
			large = nil
		}
	}
}

// fatal answers a framing error on stream and reports it, which ends the
// connection.
func (c *conn) fatal(stream int16, msg string) error {
	perr := &cqlwire.ProtocolError{Msg: msg, Fatal: true, Version: c.version}
	c.sendError(c.version, stream, perr)
	return perr
}

// decompressBody replaces a compressed request body by its plain form.
func (c *conn) decompressBody(body *[]byte) (*[]byte, error) {
	k := cqlwire.Compression(c.compression.Load())
	if k == cqlwire.CompressNone {
		return nil, &cqlwire.ProtocolError{Msg: "Received a compressed frame, but no compression was negotiated"}
	}
	out := cqlwire.GetBuffer(0)
	b, err := k.AppendDecompressedBody((*out)[:0], *body, c.srv.cfg.MaxFrameSize)
	if err != nil {
		cqlwire.PutBuffer(out)
		return nil, &cqlwire.ProtocolError{Msg: "Invalid compressed frame: " + err.Error()}
	}
	*out = b
	cqlwire.PutBuffer(body)
	return out, nil
}
