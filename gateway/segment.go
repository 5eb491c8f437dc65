package gateway

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/pierrec/lz4/v4"
)

// Protocol v5 wraps frames (the spec calls them envelopes) in segments
// once STARTUP is answered. A segment is a header with the payload's
// length and a self-contained bit, protected by a CRC24, then the payload
// and its CRC32. A self-contained segment holds whole frames, one or more;
// a frame too large for one segment is cut into consecutive segments that
// are not self-contained. With LZ4 negotiated, the header also carries the
// uncompressed length, 0 when the payload went uncompressed.

// maxSegmentPayload is the largest payload a segment carries: its length
// has 17 bits.
const maxSegmentPayload = 1<<17 - 1

// Segment header lengths, CRC24 included.
const (
	segmentHeaderPlain = 3 + 3
	segmentHeaderLZ4   = 5 + 3
)

// crc24 is the CRC24 of a segment header's n low bytes, taken least
// significant byte first: Koopman's polynomial 0x1974F0B from 0x875060.
func crc24(data uint64, n int) uint32 {
	crc := uint32(0x875060)
	for range n {
		crc ^= uint32(data&0xff) << 16
		data >>= 8
		for range 8 {
			crc <<= 1
			if crc&0x1000000 != 0 {
				crc ^= 0x1974F0B
			}
		}
	}
	return crc & 0xffffff
}

// crc32Seed is the state after the four bytes every payload CRC32 starts
// with, as Cassandra computes it.
var crc32Seed = crc32.Update(0, crc32.IEEETable, []byte{0xFA, 0x2D, 0x55, 0xCA})

// crcError is a segment whose header or payload fails its CRC. The
// connection cannot continue: the client has no way to tell which of its
// requests the segment held.
type crcError struct {
	part           string // "header" or "body"
	read, computed uint32
}

func (e *crcError) Error() string {
	return fmt.Sprintf("unrecoverable CRC mismatch detected in frame %s. Read %d, Computed %d", e.part, e.read, e.computed)
}

// segmentReader reads the client's segments. Its buffers are reused from
// one segment to the next, so that steady traffic reads without
// allocating; a payload is valid until the next call.
type segmentReader struct {
	br    *bufio.Reader
	lz4   bool
	head  [segmentHeaderLZ4]byte
	raw   []byte
	plain []byte
}

// next reads one segment and returns its payload, decompressed.
func (r *segmentReader) next() (payload []byte, selfContained bool, err error) {
	n := 3
	if r.lz4 {
		n = 5
	}
	if _, err := io.ReadFull(r.br, r.head[:n+3]); err != nil {
		return nil, false, err
	}
	var h uint64
	for i := n - 1; i >= 0; i-- {
		h = h<<8 | uint64(r.head[i])
	}
	read := uint32(r.head[n]) | uint32(r.head[n+1])<<8 | uint32(r.head[n+2])<<16
	if computed := crc24(h, n); computed != read {
		return nil, false, &crcError{part: "header", read: read, computed: computed}
	}
	length := int(h & maxSegmentPayload)
	uncompressed := 0
	if r.lz4 {
		uncompressed = int(h >> 17 & maxSegmentPayload)
		selfContained = h>>34&1 == 1
	} else {
		selfContained = h>>17&1 == 1
	}
	if cap(r.raw) < length+4 {
		r.raw = make([]byte, 0, max(length+4, 4096))
	}
	raw := r.raw[:length+4]
	if _, err := io.ReadFull(r.br, raw); err != nil {
		return nil, false, err
	}
	raw, trailer := raw[:length], raw[length:]
	read = binary.LittleEndian.Uint32(trailer)
	if computed := crc32.Update(crc32Seed, crc32.IEEETable, raw); computed != read {
		return nil, false, &crcError{part: "body", read: read, computed: computed}
	}
	if uncompressed == 0 {
		return raw, selfContained, nil
	}
	if cap(r.plain) < uncompressed {
		r.plain = make([]byte, 0, maxSegmentPayload)
	}
	plain := r.plain[:uncompressed]
	if got, err := lz4.UncompressBlock(raw, plain); err != nil || got != uncompressed {
		return nil, false, &protocolError{msg: "Invalid segment: its payload does not decompress", fatal: true, version: 5}
	}
	return plain, selfContained, nil
}

// readSegments reads frames out of the client's segments until the
// client leaves or the framing breaks. A frame spanning segments is
// gathered into one body before it runs.
func (c *conn) readSegments(br *bufio.Reader) error { return c.segments(br, c.run) }

// segments is readSegments with run starting each frame read, so that
// the framing can be tested without handlers behind it.
func (c *conn) segments(br *bufio.Reader, run func(header, *[]byte)) error {
	r := segmentReader{br: br, lz4: compression(c.compression.Load()) == compressLZ4}
	// large gathers a frame cut across segments: its header bytes in
	// head until all nine are there, then its body.
	var (
		head  []byte
		large *[]byte
		lh    header
	)
	for {
		payload, self, err := r.next()
		if err != nil {
			var ce *crcError
			if errors.As(err, &ce) {
				perr := &protocolError{msg: c.nc.RemoteAddr().String() + " invalid, " + ce.Error(), fatal: true, version: c.version}
				c.sendError(c.version, 0, perr)
				return perr
			}
			var perr *protocolError
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
				if len(payload) < headerSize {
					return c.fatal(0, "Invalid segment: a self-contained segment ends inside a frame")
				}
				h := parseHeader(payload)
				if err := c.acceptHeader(payload[0], h); err != nil {
					return err
				}
				if int(h.length) > len(payload)-headerSize {
					return c.fatal(h.stream, "Invalid segment: a self-contained segment ends inside a frame")
				}
				body := getBuffer(int(h.length))
				copy(*body, payload[headerSize:headerSize+int(h.length)])
				payload = payload[headerSize+int(h.length):]
				run(h, body)
			}
			continue
		}
		// A part of a frame too large for one segment.
		if large == nil {
			need := min(headerSize-len(head), len(payload))
			head = append(head, payload[:need]...)
			payload = payload[need:]
			if len(head) < headerSize {
				continue
			}
			lh = parseHeader(head)
			if err := c.acceptHeader(head[0], lh); err != nil {
				return err
			}
			head = nil
			// Grown by the parts as they arrive, not taken at the size
			// the header declares (readBody).
			large = getBuffer(min(int(lh.length), 2*maxSegmentPayload))
			*large = (*large)[:0]
		}
		if len(payload) > int(lh.length)-len(*large) {
			putBuffer(large)
			return c.fatal(lh.stream, "Invalid segment: a segment holds more than the rest of its frame")
		}
		*large = append(*large, payload...)
		if len(*large) == int(lh.length) {
			run(lh, large)
			large = nil
		}
	}
}

// fatal answers a framing error on stream and reports it, which ends the
// connection.
func (c *conn) fatal(stream int16, msg string) error {
	perr := &protocolError{msg: msg, fatal: true, version: c.version}
	c.sendError(c.version, stream, perr)
	return perr
}

// segmentWriter packs response frames into segments: the frames queued
// together share self-contained segments, and a frame too large for one
// is cut across several. Frames are written straight from their buffers
// when uncompressed; with LZ4 they are gathered into plain and compressed
// into packed, both reused.
type segmentWriter struct {
	bw     *bufio.Writer
	lz4    bool
	frames []*[]byte
	size   int
	plain  []byte
	packed []byte
	// scratch holds a header or a CRC on its way to bw; a local array
	// would escape through bw's writer and cost an allocation each time.
	scratch [segmentHeaderLZ4]byte
}

// add queues a frame, writing segments when the frames queued fill one.
// It owns the frame from here on.
func (w *segmentWriter) add(frame *[]byte) error {
	n := len(*frame)
	if n > maxSegmentPayload {
		if err := w.flush(); err != nil {
			putBuffer(frame)
			return err
		}
		err := w.writeLarge(*frame)
		putBuffer(frame)
		return err
	}
	if w.size+n > maxSegmentPayload {
		if err := w.flush(); err != nil {
			putBuffer(frame)
			return err
		}
	}
	w.frames = append(w.frames, frame)
	w.size += n
	return nil
}

// flush writes the queued frames as one self-contained segment.
func (w *segmentWriter) flush() error {
	if len(w.frames) == 0 {
		return nil
	}
	var err error
	if w.lz4 {
		w.plain = w.plain[:0]
		for _, f := range w.frames {
			w.plain = append(w.plain, *f...)
		}
		err = w.writeSegment(w.plain, true)
	} else {
		crc := crc32Seed
		for _, f := range w.frames {
			crc = crc32.Update(crc, crc32.IEEETable, *f)
		}
		w.writePlainHeader(w.size, true)
		for _, f := range w.frames {
			w.bw.Write(*f)
		}
		err = w.writeCRC32(crc)
	}
	for i, f := range w.frames {
		putBuffer(f)
		w.frames[i] = nil
	}
	w.frames, w.size = w.frames[:0], 0
	return err
}

// writeLarge cuts one frame across segments that are not self-contained.
func (w *segmentWriter) writeLarge(frame []byte) error {
	for len(frame) > 0 {
		part := frame[:min(len(frame), maxSegmentPayload)]
		frame = frame[len(part):]
		if err := w.writeSegment(part, false); err != nil {
			return err
		}
	}
	return nil
}

// writeSegment writes one payload as a segment, compressed when LZ4 was
// negotiated and compression makes it smaller.
func (w *segmentWriter) writeSegment(payload []byte, self bool) error {
	if !w.lz4 {
		w.writePlainHeader(len(payload), self)
		w.bw.Write(payload)
		return w.writeCRC32(crc32.Update(crc32Seed, crc32.IEEETable, payload))
	}
	w.packed = appendLZ4Block(w.packed[:0], payload)
	body, uncompressed := w.packed, len(payload)
	if len(body) >= len(payload) {
		body, uncompressed = payload, 0
	}
	h := uint64(len(body)) | uint64(uncompressed)<<17
	if self {
		h |= 1 << 34
	}
	w.writeHeader(h, 5)
	w.bw.Write(body)
	return w.writeCRC32(crc32.Update(crc32Seed, crc32.IEEETable, body))
}

func (w *segmentWriter) writePlainHeader(length int, self bool) {
	h := uint64(length)
	if self {
		h |= 1 << 17
	}
	w.writeHeader(h, 3)
}

// writeHeader writes a header's n bytes and their CRC24, little-endian.
func (w *segmentWriter) writeHeader(h uint64, n int) {
	b := &w.scratch
	crc := crc24(h, n)
	for i := range n {
		b[i] = byte(h >> (8 * i))
	}
	b[n], b[n+1], b[n+2] = byte(crc), byte(crc>>8), byte(crc>>16)
	w.bw.Write(b[:n+3])
}

func (w *segmentWriter) writeCRC32(crc uint32) error {
	binary.LittleEndian.PutUint32(w.scratch[:4], crc)
	_, err := w.bw.Write(w.scratch[:4])
	return err
}
