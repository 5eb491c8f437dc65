package cqlwire

import (
	"encoding/binary"
	"errors"
)

// The native protocol's primitive types, written by append functions and
// read by a decoder over a frame body. Decoding never copies: byte values
// are sub-slices of the body, valid while the body is.

func AppendShort(b []byte, v uint16) []byte { return binary.BigEndian.AppendUint16(b, v) }
func AppendInt(b []byte, v int32) []byte    { return binary.BigEndian.AppendUint32(b, uint32(v)) }
func appendLong(b []byte, v int64) []byte   { return binary.BigEndian.AppendUint64(b, uint64(v)) }

// AppendString writes a [string]: a short length and UTF-8 bytes.
func AppendString(b []byte, s string) []byte {
	return append(AppendShort(b, uint16(len(s))), s...)
}

// AppendBytes writes [bytes]: an int length, -1 for null, and the bytes.
func AppendBytes(b []byte, v []byte) []byte {
	if v == nil {
		return AppendInt(b, -1)
	}
	return append(AppendInt(b, int32(len(v))), v...)
}

// AppendShortBytes writes [short bytes].
func AppendShortBytes(b []byte, v []byte) []byte {
	return append(AppendShort(b, uint16(len(v))), v...)
}

// ErrTruncated reports a body that ends before the value it announces.
var ErrTruncated = errors.New("not enough bytes to read the message")

// Decoder reads primitives from a frame body. Its first error sticks: later
// reads return zero values, so callers check err once at the end.
type Decoder struct {
	B   []byte
	Err error
}

func (d *Decoder) Fail(err error) {
	if d.Err == nil {
		d.Err = err
	}
	d.B = nil
}

func (d *Decoder) Byte() byte {
	if len(d.B) < 1 {
		d.Fail(ErrTruncated)
		return 0
	}
	v := d.B[0]
	d.B = d.B[1:]
	return v
}

func (d *Decoder) Short() uint16 {
	if len(d.B) < 2 {
		d.Fail(ErrTruncated)
		return 0
	}
	v := binary.BigEndian.Uint16(d.B)
	d.B = d.B[2:]
	return v
}

func (d *Decoder) Int() int32 {
	if len(d.B) < 4 {
		d.Fail(ErrTruncated)
		return 0
	}
	v := int32(binary.BigEndian.Uint32(d.B))
	d.B = d.B[4:]
	return v
}

func (d *Decoder) Long() int64 {
	if len(d.B) < 8 {
		d.Fail(ErrTruncated)
		return 0
	}
	v := int64(binary.BigEndian.Uint64(d.B))
	d.B = d.B[8:]
	return v
}

func (d *Decoder) take(n int) []byte {
	if n < 0 || len(d.B) < n {
		d.Fail(ErrTruncated)
		return nil
	}
	v := d.B[:n:n]
	d.B = d.B[n:]
	return v
}

// StringBytes reads a [string] without converting it.
func (d *Decoder) StringBytes() []byte { return d.take(int(d.Short())) }

// LongString reads a [long string] without converting it.
func (d *Decoder) LongString() []byte {
	n := d.Int()
	if n < 0 {
		d.Fail(errors.New("negative string length"))
		return nil
	}
	return d.take(int(n))
}

// ShortBytes reads [short bytes].
func (d *Decoder) ShortBytes() []byte { return d.take(int(d.Short())) }

// valueUnset is the length the protocol (v4+) gives an unset value.
const valueUnset = -2

// Value reads a [value]: bytes, null (-1) or, from v4, unset (-2).
func (d *Decoder) Value() (v []byte, unset bool) {
	n := d.Int()
	switch {
	case n >= 0:
		return d.take(int(n)), false
	case n == -1:
		return nil, false
	case n == valueUnset:
		return nil, true
	}
	d.Fail(errors.New("invalid value length"))
	return nil, false
}

// SkipBytesMap skips a [bytes map], such as a custom payload.
func (d *Decoder) SkipBytesMap() {
	for n := d.Short(); n > 0 && d.Err == nil; n-- {
		d.StringBytes()
		d.Value()
	}
}
