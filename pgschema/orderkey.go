package pgschema

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"strings"
)

// Postgres orders most stored values the way Cassandra does: integers,
// varint and decimal by value, text and ascii under collation "C", blobs,
// timestamps, dates, times and booleans. It does not for uuid and timeuuid
// (Cassandra orders them by version and embedded time), inet (Postgres puts
// IPv4 first, Cassandra compares bytes), float and double (Postgres holds
// -0.0 equal to 0.0) and the jsonb forms of maps, tuples, user types and
// nested collections; and an IN list of array values (frozen lists and
// sets of scalars) cannot be one parameter.
//
// A clustering column of such a type gets an order key beside its value:
// a bytea column (NeedsOrderKey, Column.OrderColumn) whose bytes compare,
// as Postgres compares bytea, exactly as Cassandra's comparator compares
// the values, and which are equal only for values Cassandra holds equal.
// The key index, ORDER BY and every restriction on the column use the order
// key, so Postgres itself returns rows in Cassandra's order, ASC and DESC.

// NeedsOrderKey reports whether a clustering column of type t needs an
// order key.
func NeedsOrderKey(t *Type) bool {
	switch t.Kind {
	case UUID, Timeuuid, Inet, Float, Double:
		return true
	case List, Set, Vector, Map, Tuple, UDT:
		return true
	}
	return false
}

// OrderKey returns the order key of a serialized value of type t: bytes
// that compare as Compare compares values. Sets and maps, at any depth,
// are keyed in Cassandra's order without repeats, whatever order a client
// sent them in.
func OrderKey(t *Type, v []byte) ([]byte, error) {
	v, err := Normalize(t, v)
	if err != nil {
		return nil, err
	}
	return appendOrderKey(nil, t, v)
}

// Markers inside order keys. A value is empty (no bytes; Cassandra sorts
// it first) or present. Composite values list their components, each
// null or present, then end; missing trailing components of a tuple count
// as nulls, as Cassandra's comparator counts them.
const (
	okEmpty   = 0x00
	okPresent = 0x01

	okEnd      = 0x00
	okNull     = 0x01
	okItem     = 0x02
	okEscape   = 0xff // after a 0x00 byte inside variable-length bytes
	okTerminal = 0x01 // after the 0x00 that ends variable-length bytes
)

func appendOrderKey(dst []byte, t *Type, v []byte) ([]byte, error) {
	if len(v) == 0 {
		return append(dst, okEmpty), nil
	}
	dst = append(dst, okPresent)
	switch t.Kind {
	case Int, Bigint, Smallint, Tinyint, Counter, Timestamp:
		if len(v) != fixedSize(t.Kind) {
			return nil, orderKeyError(t, v)
		}
		dst = append(dst, v[0]^0x80)
		return append(dst, v[1:]...), nil
	case Boolean:
		if v[0] != 0 {
			return append(dst, 1), nil
		}
		return append(dst, 0), nil
	case Float:
		if len(v) != 4 {
			return nil, orderKeyError(t, v)
		}
		bits := binary.BigEndian.Uint32(v)
		switch {
		case math.IsNaN(float64(math.Float32frombits(bits))):
			bits = math.MaxUint32 // every NaN sorts last, and equal
		case bits&(1<<31) != 0:
			bits = ^bits
		default:
			bits |= 1 << 31
		}
		return binary.BigEndian.AppendUint32(dst, bits), nil
	case Double:
		if len(v) != 8 {
			return nil, orderKeyError(t, v)
		}
		bits := binary.BigEndian.Uint64(v)
		switch {
		case math.IsNaN(math.Float64frombits(bits)):
			bits = math.MaxUint64
		case bits&(1<<63) != 0:
			bits = ^bits
		default:
			bits |= 1 << 63
		}
		return binary.BigEndian.AppendUint64(dst, bits), nil
	case Varint:
		return appendVarintKey(dst, VarintValue(v)), nil
	case Decimal:
		if len(v) < 4 {
			return nil, orderKeyError(t, v)
		}
		return appendDecimalKey(dst, VarintValue(v[4:]), int32(binary.BigEndian.Uint32(v))), nil
	case UUID:
		if len(v) != 16 {
			return nil, orderKeyError(t, v)
		}
		dst = append(dst, v[6]>>4)
		if v[6]>>4 == 1 {
			dst = binary.BigEndian.AppendUint64(dst, uuidTime(v))
		} else {
			dst = append(dst, v[:8]...)
		}
		return append(dst, v[8:]...), nil
	case Timeuuid:
		if len(v) != 16 {
			return nil, orderKeyError(t, v)
		}
		dst = binary.BigEndian.AppendUint64(dst, uuidTime(v))
		for _, b := range v[8:] {
			dst = append(dst, b^0x80) // compared as signed bytes
		}
		return dst, nil
	case List, Set, Map:
		return appendCollectionKey(dst, t, v)
	case Tuple, UDT:
		return appendTupleKey(dst, t, v)
	case Vector:
		elems, err := splitVector(t, v)
		if err != nil {
			return nil, err
		}
		for _, e := range elems {
			if dst, err = appendOrderKey(dst, t.Elem[0], e); err != nil {
				return nil, err
			}
		}
		return dst, nil
	}
	// ascii, text, blob, inet, date, time and duration compare their bytes.
	return appendBytesKey(dst, v), nil
}

// fixedSize is the serialized size of the fixed-size integer kinds.
func fixedSize(k Kind) int {
	switch k {
	case Int:
		return 4
	case Smallint:
		return 2
	case Tinyint:
		return 1
	}
	return 8
}

func orderKeyError(t *Type, v []byte) error {
	return fmt.Errorf("invalid %s value of %d bytes", t, len(v))
}

// appendBytesKey appends bytes so that a value that is a prefix of another
// sorts first: each 0x00 becomes 0x00 0xff, and 0x00 0x01 ends the value.
func appendBytesKey(dst, v []byte) []byte {
	for _, b := range v {
		dst = append(dst, b)
		if b == 0 {
			dst = append(dst, okEscape)
		}
	}
	return append(dst, 0, okTerminal)
}

// appendVarintKey appends an integer of any size: its sign class, then its
// magnitude's length and bytes, both inverted for negative numbers so that
// larger magnitudes sort first.
func appendVarintKey(dst []byte, n *big.Int) []byte {
	switch n.Sign() {
	case 0:
		return append(dst, 1)
	case 1:
		mag := n.Bytes()
		dst = append(dst, 2)
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(mag)))
		return append(dst, mag...)
	}
	mag := new(big.Int).Neg(n).Bytes()
	dst = append(dst, 0)
	dst = binary.BigEndian.AppendUint32(dst, ^uint32(len(mag)))
	for _, b := range mag {
		dst = append(dst, ^b)
	}
	return dst
}

// appendDecimalKey appends unscaled × 10^-scale by value, so that 1.0 and
// 1.00 have one key: the sign class, then the value written 0.d1d2… ×
// 10^exp with no trailing zero digit, as the exponent and then the digits
// (inverted for negative numbers).
func appendDecimalKey(dst []byte, unscaled *big.Int, scale int32) []byte {
	sign := unscaled.Sign()
	if sign == 0 {
		return append(dst, 1)
	}
	digits := strings.TrimLeft(new(big.Int).Abs(unscaled).Text(10), "0")
	trimmed := strings.TrimRight(digits, "0")
	exp := int64(len(digits)) - int64(scale)
	var e [8]byte
	binary.BigEndian.PutUint64(e[:], uint64(exp)^1<<63)
	if sign > 0 {
		dst = append(dst, 2)
		dst = append(dst, e[:]...)
		dst = append(dst, trimmed...)
		return append(dst, 0) // below every digit: a shorter number sorts first
	}
	dst = append(dst, 0)
	for _, b := range e {
		dst = append(dst, ^b)
	}
	for i := 0; i < len(trimmed); i++ {
		dst = append(dst, ^trimmed[i])
	}
	return append(dst, 0xff)
}

// appendCollectionKey appends a frozen list, set or map: its elements (a
// map's keys and values alternately) in order, then the end.
func appendCollectionKey(dst []byte, t *Type, v []byte) ([]byte, error) {
	elems, err := Elements(t, v)
	if err != nil {
		return nil, err
	}
	for i, e := range elems {
		elem := t.Elem[0]
		if t.Kind == Map {
			elem = t.Elem[i%2]
			if i%2 == 1 {
				if dst, err = appendOrderKey(dst, elem, e); err != nil {
					return nil, err
				}
				continue
			}
		}
		dst = append(dst, okItem)
		if dst, err = appendOrderKey(dst, elem, e); err != nil {
			return nil, err
		}
	}
	return append(dst, okEnd), nil
}

// appendTupleKey appends a tuple or user type: its components, nulls
// first, without the trailing nulls, then the end.
func appendTupleKey(dst []byte, t *Type, v []byte) ([]byte, error) {
	comps, err := Elements(t, v)
	if err != nil {
		return nil, err
	}
	for len(comps) > 0 && comps[len(comps)-1] == nil {
		comps = comps[:len(comps)-1]
	}
	for i, c := range comps {
		if c == nil {
			dst = append(dst, okNull)
			continue
		}
		dst = append(dst, okItem)
		if dst, err = appendOrderKey(dst, t.Elem[i], c); err != nil {
			return nil, err
		}
	}
	return append(dst, okEnd), nil
}
