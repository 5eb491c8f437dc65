package gateway

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"testing"

	"github.com/cqlpg/cqlpg/gateway/cqlwire"
	liblz4 "github.com/datastax/go-cassandra-native-protocol/compression/lz4"
	libsnappy "github.com/datastax/go-cassandra-native-protocol/compression/snappy"
	"github.com/datastax/go-cassandra-native-protocol/crc"
	"github.com/datastax/go-cassandra-native-protocol/frame"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
	"github.com/datastax/go-cassandra-native-protocol/segment"
)

// The protocol library's crc, segment and compression packages are the
// oracles of the hand-written framing here.

func TestCRCs(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 1000 {
		n := 3 + r.IntN(3)
		h := r.Uint64() & (1<<(8*n) - 1)
		if got, want := cqlwire.Crc24(h, n), crc.ChecksumKoopman(h, n)&0xffffff; got != want {
			t.Fatalf("crc24(%x, %d) = %x, want %x", h, n, got, want)
		}
		b := make([]byte, r.IntN(300))
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		if got, want := crc32Of(b), crc.ChecksumIEEE(b); got != want {
			t.Fatalf("crc32 of %d bytes = %x, want %x", len(b), got, want)
		}
	}
}

func crc32Of(b []byte) uint32 {
	var buf bytes.Buffer
	w := cqlwire.SegmentWriter{Bw: bufio.NewWriter(&buf)}
	w.WriteSegment(b, true)
	w.Bw.Flush()
	out := buf.Bytes()
	return uint32(out[len(out)-4]) | uint32(out[len(out)-3])<<8 | uint32(out[len(out)-2])<<16 | uint32(out[len(out)-1])<<24
}

// testFrames returns frames of the given body sizes. Their bodies are
// words in a random order, which LZ4 compresses a few times over: the
// library's LZ4 decoder, the oracle, gives up beyond eight.
func testFrames(sizes ...int) [][]byte {
	words := bytes.Fields([]byte("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa"))
	r := rand.New(rand.NewPCG(3, 4))
	var frames [][]byte
	for i, n := range sizes {
		f := cqlwire.AppendHeader(nil, 5, int16(i), cqlwire.OpResult)
		for len(f) < cqlwire.HeaderSize+n {
			f = append(append(f, words[r.IntN(len(words))]...), ' ')
		}
		f = f[:cqlwire.HeaderSize+n]
		cqlwire.FinishFrame(f)
		frames = append(frames, f)
	}
	return frames
}

func TestSegmentWriter(t *testing.T) {
	for _, compressed := range []bool{false, true} {
		var buf bytes.Buffer
		w := cqlwire.SegmentWriter{Bw: bufio.NewWriter(&buf), Lz4: compressed}
		frames := testFrames(10, 0, 70_000, 70_000, 300_000, 5)
		for _, f := range frames {
			b := cqlwire.GetBuffer(0)
			*b = append(*b, f...)
			if err := w.Add(b); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		w.Bw.Flush()
		codec := segment.NewCodec()
		if compressed {
			codec = segment.NewCodecWithCompression(liblz4.Compressor{})
		}
		// Segments: the first three frames, then the second 70 000-byte
		// one (it does not fit beside the first), then the large one cut
		// in three, then the last.
		var got []byte
		var selfContained []bool
		for buf.Len() > 0 {
			sg, err := codec.DecodeSegment(&buf)
			if err != nil {
				t.Fatalf("compressed %v: %v", compressed, err)
			}
			got = append(got, sg.Payload.UncompressedData...)
			selfContained = append(selfContained, sg.Header.IsSelfContained)
		}
		if !bytes.Equal(got, bytes.Join(frames, nil)) {
			t.Errorf("compressed %v: payloads differ from the frames", compressed)
		}
		want := []bool{true, true, false, false, false, true}
		if !equalBools(selfContained, want) {
			t.Errorf("compressed %v: self-contained %v, want %v", compressed, selfContained, want)
		}
	}
}

func equalBools(a, b []bool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestSegmentReader(t *testing.T) {
	for _, compressed := range []bool{false, true} {
		codec := segment.NewCodec()
		if compressed {
			codec = segment.NewCodecWithCompression(liblz4.Compressor{})
		}
		var buf bytes.Buffer
		payloads := testFrames(0, 100, 131_000)
		for _, p := range payloads {
			if err := codec.EncodeSegment(&segment.Segment{Header: &segment.Header{IsSelfContained: true},
				Payload: &segment.Payload{UncompressedData: p}}, &buf); err != nil {
				t.Fatal(err)
			}
		}
		r := cqlwire.SegmentReader{Br: bufio.NewReader(&buf), Lz4: compressed}
		for i, want := range payloads {
			got, self, err := r.Next()
			if err != nil || !self || !bytes.Equal(got, want) {
				t.Fatalf("compressed %v, segment %d: %d bytes, self-contained %v, %v", compressed, i, len(got), self, err)
			}
		}
		if _, _, err := r.Next(); err != io.EOF {
			t.Errorf("after the last segment: %v", err)
		}
	}
	// A flipped bit fails the header's or the payload's CRC.
	var seg bytes.Buffer
	segment.NewCodec().EncodeSegment(&segment.Segment{Header: &segment.Header{IsSelfContained: true},
		Payload: &segment.Payload{UncompressedData: []byte("payload")}}, &seg)
	for at, part := range map[int]string{0: "header", 4: "header", 8: "body", seg.Len() - 1: "body"} {
		b := bytes.Clone(seg.Bytes())
		b[at] ^= 0x10
		r := cqlwire.SegmentReader{Br: bufio.NewReader(bytes.NewReader(b))}
		_, _, err := r.Next()
		var ce *cqlwire.CrcError
		if !errors.As(err, &ce) || ce.Part != part {
			t.Errorf("bit flipped at %d: %v, want a %s CRC error", at, err, part)
		}
	}
}

// TestFramingAllocations checks that steady v5 and compressed traffic
// costs no allocation in the framing.
func TestFramingAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes pooled buffers allocate")
	}
	frames := testFrames(200, 3000)
	for _, compressed := range []bool{false, true} {
		w := cqlwire.SegmentWriter{Bw: bufio.NewWriter(io.Discard), Lz4: compressed}
		n := testing.AllocsPerRun(200, func() {
			for _, f := range frames {
				b := cqlwire.GetBuffer(0)
				*b = append(*b, f...)
				w.Add(b)
			}
			w.Flush()
		})
		if n > 0 {
			t.Errorf("segment writer (lz4 %v): %.1f allocations per segment", compressed, n)
		}
	}
	var seg bytes.Buffer
	segment.NewCodec().EncodeSegment(&segment.Segment{Header: &segment.Header{IsSelfContained: true},
		Payload: &segment.Payload{UncompressedData: frames[1]}}, &seg)
	src := bytes.NewReader(nil)
	r := cqlwire.SegmentReader{Br: bufio.NewReader(src)}
	if n := testing.AllocsPerRun(200, func() {
		src.Reset(seg.Bytes())
		r.Br.Reset(src)
		r.Next()
	}); n > 0 {
		t.Errorf("segment reader: %.1f allocations per segment", n)
	}
	for _, k := range []cqlwire.Compression{cqlwire.CompressLZ4, cqlwire.CompressSnappy} {
		if n := testing.AllocsPerRun(200, func() {
			b := cqlwire.GetBuffer(0)
			*b = append(*b, frames[1]...)
			cqlwire.PutBuffer(k.CompressFrame(b))
		}); n > 0 {
			t.Errorf("compressing a frame with %d: %.1f allocations", k, n)
		}
	}
}

// TestCompressedBodies checks frame body compression against the
// library's LZ4 and Snappy codecs, both ways.
func TestCompressedBodies(t *testing.T) {
	bodies := [][]byte{{}, []byte("x"), testFrames(15_000)[0], testFrames(70_000)[0]}
	for _, tc := range []struct {
		k   cqlwire.Compression
		lib interface {
			CompressWithLength(io.Reader, io.Writer) error
			DecompressWithLength(io.Reader, io.Writer) error
		}
	}{{cqlwire.CompressLZ4, liblz4.Compressor{}}, {cqlwire.CompressSnappy, libsnappy.Compressor{}}} {
		for _, body := range bodies {
			var plain bytes.Buffer
			if err := tc.lib.DecompressWithLength(bytes.NewReader(tc.k.AppendCompressedBody(nil, body)), &plain); err != nil ||
				!bytes.Equal(plain.Bytes(), body) {
				t.Errorf("%d: library reads back %d of %d bytes: %v", tc.k, plain.Len(), len(body), err)
			}
			var packed bytes.Buffer
			if err := tc.lib.CompressWithLength(bytes.NewBuffer(bytes.Clone(body)), &packed); err != nil {
				t.Fatal(err)
			}
			got, err := tc.k.AppendDecompressedBody(nil, packed.Bytes(), 1<<20)
			if err != nil || !bytes.Equal(got, body) {
				t.Errorf("%d: gateway reads back %d of %d bytes: %v", tc.k, len(got), len(body), err)
			}
		}
		// A body announcing more than the frame size limit is refused
		// before anything is allocated for it.
		big := tc.k.AppendCompressedBody(nil, make([]byte, 5000))
		if _, err := tc.k.AppendDecompressedBody(nil, big, 4999); err == nil {
			t.Errorf("%d: body beyond the limit accepted", tc.k)
		}
	}
}

// TestV5FailureBodies checks that READ_FAILURE and WRITE_FAILURE, encoded
// by the library for the connection's version, carry v5's reason map.
func TestV5FailureBodies(t *testing.T) {
	reasons := []*primitive.FailureReason{{Endpoint: net.IPv4(10, 0, 0, 1), Code: primitive.FailureCodeUnknown}}
	for _, msg := range []message.Message{
		&message.ReadFailure{ErrorMessage: "read failed", Consistency: primitive.ConsistencyLevelOne, BlockFor: 1, FailureReasons: reasons},
		&message.WriteFailure{ErrorMessage: "write failed", Consistency: primitive.ConsistencyLevelOne, BlockFor: 1, FailureReasons: reasons,
			WriteType: primitive.WriteTypeSimple},
	} {
		var b []byte
		appendMessage(&b, 5, 1, msg)
		f, err := frame.NewCodec().DecodeFrame(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		var got []*primitive.FailureReason
		switch m := f.Body.Message.(type) {
		case *message.ReadFailure:
			got = m.FailureReasons
		case *message.WriteFailure:
			got = m.FailureReasons
		}
		if len(got) != 1 || !got[0].Endpoint.Equal(reasons[0].Endpoint) {
			t.Errorf("%T: reasons %v", msg, got)
		}
	}
}

func FuzzSegmentReader(f *testing.F) {
	var seg bytes.Buffer
	segment.NewCodec().EncodeSegment(&segment.Segment{Header: &segment.Header{IsSelfContained: true},
		Payload: &segment.Payload{UncompressedData: testFrames(20)[0]}}, &seg)
	f.Add(seg.Bytes(), false)
	seg.Reset()
	segment.NewCodecWithCompression(liblz4.Compressor{}).EncodeSegment(&segment.Segment{Header: &segment.Header{IsSelfContained: true},
		Payload: &segment.Payload{UncompressedData: bytes.Repeat([]byte("frame"), 40)}}, &seg)
	f.Add(seg.Bytes(), true)
	f.Fuzz(func(t *testing.T, data []byte, lz4 bool) {
		r := cqlwire.SegmentReader{Br: bufio.NewReader(bytes.NewReader(data)), Lz4: lz4}
		for {
			if _, _, err := r.Next(); err != nil {
				return
			}
		}
	})
}

func FuzzDecompressBody(f *testing.F) {
	f.Add(cqlwire.CompressLZ4.AppendCompressedBody(nil, []byte("a body, a body")), true)
	f.Add(cqlwire.CompressSnappy.AppendCompressedBody(nil, []byte("a body, a body")), false)
	f.Fuzz(func(t *testing.T, data []byte, lz4 bool) {
		k := cqlwire.CompressSnappy
		if lz4 {
			k = cqlwire.CompressLZ4
		}
		k.AppendDecompressedBody(nil, data, 1<<20)
	})
}

// BenchmarkFraming measures what the framing adds to a typical response
// frame (a one-row Rows result, about 60 bytes): wrapping it in a v5
// segment, plain or LZ4, and compressing it as a v3/v4 body.
func BenchmarkFraming(b *testing.B) {
	f := testFrames(50)[0]
	for _, compressed := range []bool{false, true} {
		name := "segment"
		if compressed {
			name += "-lz4"
		}
		b.Run(name, func(b *testing.B) {
			w := cqlwire.SegmentWriter{Bw: bufio.NewWriter(io.Discard), Lz4: compressed}
			b.ReportAllocs()
			for b.Loop() {
				buf := cqlwire.GetBuffer(0)
				*buf = append(*buf, f...)
				w.Add(buf)
				w.Flush()
			}
		})
	}
	for _, k := range []cqlwire.Compression{cqlwire.CompressLZ4, cqlwire.CompressSnappy} {
		b.Run([]string{cqlwire.CompressLZ4: "frame-lz4", cqlwire.CompressSnappy: "frame-snappy"}[k], func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				buf := cqlwire.GetBuffer(0)
				*buf = append(*buf, f...)
				cqlwire.PutBuffer(k.CompressFrame(buf))
			}
		})
	}
}
