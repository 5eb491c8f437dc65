package gateway

import (
	"encoding/binary"
	"errors"
)

// The native protocol's primitive types, written by append functions and
// read by a decoder over a frame body. Decoding never copies: byte values
// are sub-slices of the body, valid while the body is.

func appendShort(b []byte, v uint16) []byte { return binary.BigEndian.AppendUint16(b, v) }
func appendInt(b []byte, v int32) []byte    { return binary.BigEndian.AppendUint32(b, uint32(v)) }
func appendLong(b []byte, v int64) []byte   { return binary.BigEndian.AppendUint64(b, uint64(v)) }

// appendString writes a [string]: a short length and UTF-8 bytes.
func appendString(b []byte, s string) []byte {
	return append(appendShort(b, uint16(len(s))), s...)
}

// appendBytes writes [bytes]: an int length, -1 for null, and the bytes.
func appendBytes(b []byte, v []byte) []byte {
	if v == nil {
		return appendInt(b, -1)
	}
	return append(appendInt(b, int32(len(v))), v...)
}

// appendShortBytes writes [short bytes].
func appendShortBytes(b []byte, v []byte) []byte {
	return append(appendShort(b, uint16(len(v))), v...)
}

// errTruncated reports a body that ends before the value it announces.
var errTruncated = errors.New("not enough bytes to read the message")

// decoder reads primitives from a frame body. Its first error sticks: later
// reads return zero values, so callers check err once at the end.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(err error) {
	if d.err == nil {
		d.err = err
	}
	d.b = nil
}

func (d *decoder) byte() byte {
	if len(d.b) < 1 {
		d.fail(errTruncated)
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

func (d *decoder) short() uint16 {
	if len(d.b) < 2 {
		d.fail(errTruncated)
		return 0
	}
	v := binary.BigEndian.Uint16(d.b)
	d.b = d.b[2:]
	return v
}

func (d *decoder) int() int32 {
	if len(d.b) < 4 {
		d.fail(errTruncated)
		return 0
	}
	v := int32(binary.BigEndian.Uint32(d.b))
	d.b = d.b[4:]
	return v
}

func (d *decoder) long() int64 {
	if len(d.b) < 8 {
		d.fail(errTruncated)
		return 0
	}
	v := int64(binary.BigEndian.Uint64(d.b))
	d.b = d.b[8:]
	return v
}

func (d *decoder) take(n int) []byte {
	if n < 0 || len(d.b) < n {
		d.fail(errTruncated)
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v
}

// stringBytes reads a [string] without converting it.
func (d *decoder) stringBytes() []byte { return d.take(int(d.short())) }

// longString reads a [long string] without converting it.
func (d *decoder) longString() []byte {
	n := d.int()
	if n < 0 {
		d.fail(errors.New("negative string length"))
		return nil
	}
	return d.take(int(n))
}

// shortBytes reads [short bytes].
func (d *decoder) shortBytes() []byte { return d.take(int(d.short())) }

// valueUnset is the length the protocol (v4+) gives an unset value.
const valueUnset = -2

// value reads a [value]: bytes, null (-1) or, from v4, unset (-2).
func (d *decoder) value() (v []byte, unset bool) {
	n := d.int()
	switch {
	case n >= 0:
		return d.take(int(n)), false
	case n == -1:
		return nil, false
	case n == valueUnset:
		return nil, true
	}
	d.fail(errors.New("invalid value length"))
	return nil, false
}

// skipBytesMap skips a [bytes map], such as a custom payload.
func (d *decoder) skipBytesMap() {
	for n := d.short(); n > 0 && d.err == nil; n-- {
		d.stringBytes()
		d.value()
	}
}
