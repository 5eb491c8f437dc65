package cqlwire

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/golang/snappy"
	"github.com/pierrec/lz4/v4"
)

// Compression is a frame compression algorithm STARTUP can negotiate. On
// v3 and v4 it compresses each frame's body; on v5 it compresses segments,
// and only LZ4 is allowed there.
type Compression uint32

const (
	CompressNone Compression = iota
	CompressLZ4
	CompressSnappy
)

// CompressionNames are the algorithms SUPPORTED offers, in Cassandra's
// order.
var CompressionNames = []string{"snappy", "lz4"}

// errCorruptBody is a compressed body or segment that does not decompress.
var errCorruptBody = errors.New("corrupt compressed data")

// AppendCompressedBody compresses a v3/v4 frame body onto dst. Cassandra's
// LZ4 body is the uncompressed length, a big-endian int, followed by the
// LZ4 block; Snappy's is a plain Snappy block, which holds its length.
func (k Compression) AppendCompressedBody(dst, src []byte) []byte {
	switch k {
	case CompressLZ4:
		dst = AppendInt(dst, int32(len(src)))
		return appendLZ4Block(dst, src)
	case CompressSnappy:
		start := len(dst)
		dst = grow(dst, snappy.MaxEncodedLen(len(src)))
		n := len(snappy.Encode(dst[start:cap(dst)], src))
		return dst[:start+n]
	}
	return append(dst, src...)
}

// appendLZ4Block compresses src as one LZ4 block onto dst. A destination
// of CompressBlockBound bytes always holds the block, incompressible
// data included.
func appendLZ4Block(dst, src []byte) []byte {
	start := len(dst)
	dst = grow(dst, lz4.CompressBlockBound(len(src)))
	n, err := lz4.CompressBlock(src, dst[start:cap(dst)], nil)
	if err != nil || n == 0 {
		// Cannot happen with a destination of CompressBlockBound bytes.
		panic(fmt.Sprintf("lz4 compression of %d bytes failed: %v", len(src), err))
	}
	return dst[:start+n]
}

// AppendDecompressedBody decompresses a v3/v4 frame body onto dst,
// refusing bodies that would decompress to more than limit bytes before
// allocating for them.
func (k Compression) AppendDecompressedBody(dst, src []byte, limit int64) ([]byte, error) {
	switch k {
	case CompressLZ4:
		if len(src) < 4 {
			return nil, errCorruptBody
		}
		n := int64(binary.BigEndian.Uint32(src))
		if n > limit {
			return nil, fmt.Errorf("decompressed length %d exceeds maximum allowed length %d", n, limit)
		}
		return appendLZ4Decoded(dst, src[4:], int(n))
	case CompressSnappy:
		n, err := snappy.DecodedLen(src)
		if err != nil {
			return nil, errCorruptBody
		}
		if int64(n) > limit {
			return nil, fmt.Errorf("decompressed length %d exceeds maximum allowed length %d", n, limit)
		}
		start := len(dst)
		dst = grow(dst, n)
		out, err := snappy.Decode(dst[start:start+n], src)
		if err != nil || len(out) != n {
			return nil, errCorruptBody
		}
		return dst[:start+n], nil
	}
	return append(dst, src...), nil
}

// appendLZ4Decoded decompresses an LZ4 block of n uncompressed bytes onto
// dst. An empty body is an empty block: Cassandra sends one zero byte.
func appendLZ4Decoded(dst, src []byte, n int) ([]byte, error) {
	if n == 0 {
		return dst, nil
	}
	start := len(dst)
	dst = grow(dst, n)
	got, err := lz4.UncompressBlock(src, dst[start:start+n])
	if err != nil || got != n {
		return nil, errCorruptBody
	}
	return dst[:start+n], nil
}

// grow makes room for n more bytes after len(b), keeping len(b).
func grow(b []byte, n int) []byte {
	if cap(b)-len(b) < n {
		nb := make([]byte, len(b), len(b)+n)
		copy(nb, b)
		return nb
	}
	return b
}

// CompressFrame replaces a complete v3/v4 response frame by its compressed
// form, with the compression flag set. Empty bodies stay as they are: the
// protocol lets a sender leave any frame uncompressed.
func (k Compression) CompressFrame(frame *[]byte) *[]byte {
	if len(*frame) <= HeaderSize {
		return frame
	}
	out := GetBuffer(0)
	*out = append((*out)[:0], (*frame)[:HeaderSize]...)
	*out = k.AppendCompressedBody(*out, (*frame)[HeaderSize:])
	(*out)[1] |= FlagCompression
	FinishFrame(*out)
	PutBuffer(frame)
	return out
}
