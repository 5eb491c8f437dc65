package cqlwire

import (
	"bufio"
	"encoding/binary"
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

// MaxSegmentPayload is the largest payload a segment carries: its length
// has 17 bits.
const MaxSegmentPayload = 1<<17 - 1

// Segment header lengths, CRC24 included.
const (
	segmentHeaderPlain = 3 + 3
	segmentHeaderLZ4   = 5 + 3
)

// Crc24 is the CRC24 of a segment header's n low bytes, taken least
// significant byte first: Koopman's polynomial 0x1974F0B from 0x875060.
func Crc24(data uint64, n int) uint32 {
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

// CrcError is a segment whose header or payload fails its CRC. The
// connection cannot continue: the client has no way to tell which of its
// requests the segment held.
type CrcError struct {
	Part           string // "header" or "body"
	read, computed uint32
}

func (e *CrcError) Error() string {
	return fmt.Sprintf("unrecoverable CRC mismatch detected in frame %s. Read %d, Computed %d", e.Part, e.read, e.computed)
}

// SegmentReader reads the client's segments. Its buffers are reused from
// one segment to the next, so that steady traffic reads without
// allocating; a payload is valid until the next call.
type SegmentReader struct {
	Br    *bufio.Reader
	Lz4   bool
	head  [segmentHeaderLZ4]byte
	raw   []byte
	plain []byte
}

// Next reads one segment and returns its payload, decompressed.
func (r *SegmentReader) Next() (payload []byte, selfContained bool, err error) {
	n := 3
	if r.Lz4 {
		n = 5
	}
	if _, err := io.ReadFull(r.Br, r.head[:n+3]); err != nil {
		return nil, false, err
	}
	var h uint64
	for i := n - 1; i >= 0; i-- {
		h = h<<8 | uint64(r.head[i])
	}
	read := uint32(r.head[n]) | uint32(r.head[n+1])<<8 | uint32(r.head[n+2])<<16
	if computed := Crc24(h, n); computed != read {
		return nil, false, &CrcError{Part: "header", read: read, computed: computed}
	}
	length := int(h & MaxSegmentPayload)
	uncompressed := 0
	if r.Lz4 {
		uncompressed = int(h >> 17 & MaxSegmentPayload)
		selfContained = h>>34&1 == 1
	} else {
		selfContained = h>>17&1 == 1
	}
	if cap(r.raw) < length+4 {
		r.raw = make([]byte, 0, max(length+4, 4096))
	}
	raw := r.raw[:length+4]
	if _, err := io.ReadFull(r.Br, raw); err != nil {
		return nil, false, err
	}
	raw, trailer := raw[:length], raw[length:]
	read = binary.LittleEndian.Uint32(trailer)
	if computed := crc32.Update(crc32Seed, crc32.IEEETable, raw); computed != read {
		return nil, false, &CrcError{Part: "body", read: read, computed: computed}
	}
	if uncompressed == 0 {
		return raw, selfContained, nil
	}
	if cap(r.plain) < uncompressed {
		r.plain = make([]byte, 0, MaxSegmentPayload)
	}
	plain := r.plain[:uncompressed]
	if got, err := lz4.UncompressBlock(raw, plain); err != nil || got != uncompressed {
		return nil, false, &ProtocolError{Msg: "Invalid segment: its payload does not decompress", Fatal: true, Version: 5}
	}
	return plain, selfContained, nil
}

// SegmentWriter packs response frames into segments: the frames queued
// together share self-contained segments, and a frame too large for one
// is cut across several. Frames are written straight from their buffers
// when uncompressed; with LZ4 they are gathered into plain and compressed
// into packed, both reused.
type SegmentWriter struct {
	Bw     *bufio.Writer
	Lz4    bool
	frames []*[]byte
	size   int
	plain  []byte
	packed []byte
	// scratch holds a header or a CRC on its way to bw; a local array
	// would escape through bw's writer and cost an allocation each time.
	scratch [segmentHeaderLZ4]byte
}

// Add queues a frame, writing segments when the frames queued fill one.
// It owns the frame from here on.
func (w *SegmentWriter) Add(frame *[]byte) error {
	n := len(*frame)
	if n > MaxSegmentPayload {
		if err := w.Flush(); err != nil {
			PutBuffer(frame)
			return err
		}
		err := w.writeLarge(*frame)
		PutBuffer(frame)
		return err
	}
	if w.size+n > MaxSegmentPayload {
		if err := w.Flush(); err != nil {
			PutBuffer(frame)
			return err
		}
	}
	w.frames = append(w.frames, frame)
	w.size += n
	return nil
}

// Flush writes the queued frames as one self-contained segment.
func (w *SegmentWriter) Flush() error {
	if len(w.frames) == 0 {
		return nil
	}
	var err error
	if w.Lz4 {
		w.plain = w.plain[:0]
		for _, f := range w.frames {
			w.plain = append(w.plain, *f...)
		}
		err = w.WriteSegment(w.plain, true)
	} else {
		crc := crc32Seed
		for _, f := range w.frames {
			crc = crc32.Update(crc, crc32.IEEETable, *f)
		}
		w.writePlainHeader(w.size, true)
		for _, f := range w.frames {
			w.Bw.Write(*f)
		}
		err = w.writeCRC32(crc)
	}
	for i, f := range w.frames {
		PutBuffer(f)
		w.frames[i] = nil
	}
	w.frames, w.size = w.frames[:0], 0
	return err
}

// writeLarge cuts one frame across segments that are not self-contained.
func (w *SegmentWriter) writeLarge(frame []byte) error {
	for len(frame) > 0 {
		part := frame[:min(len(frame), MaxSegmentPayload)]
		frame = frame[len(part):]
		if err := w.WriteSegment(part, false); err != nil {
			return err
		}
	}
	return nil
}

// WriteSegment writes one payload as a segment, compressed when LZ4 was
// negotiated and compression makes it smaller.
func (w *SegmentWriter) WriteSegment(payload []byte, self bool) error {
	if !w.Lz4 {
		w.writePlainHeader(len(payload), self)
		w.Bw.Write(payload)
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
	w.Bw.Write(body)
	return w.writeCRC32(crc32.Update(crc32Seed, crc32.IEEETable, body))
}

func (w *SegmentWriter) writePlainHeader(length int, self bool) {
	h := uint64(length)
	if self {
		h |= 1 << 17
	}
	w.writeHeader(h, 3)
}

// writeHeader writes a header's n bytes and their CRC24, little-endian.
func (w *SegmentWriter) writeHeader(h uint64, n int) {
	b := &w.scratch
	crc := Crc24(h, n)
	for i := range n {
		b[i] = byte(h >> (8 * i))
	}
	b[n], b[n+1], b[n+2] = byte(crc), byte(crc>>8), byte(crc>>16)
	w.Bw.Write(b[:n+3])
}

func (w *SegmentWriter) writeCRC32(crc uint32) error {
	binary.LittleEndian.PutUint32(w.scratch[:4], crc)
	_, err := w.Bw.Write(w.scratch[:4])
	return err
}
