package pgschema

import (
	"encoding/binary"
	"encoding/hex"
	"math"
	"math/big"
	"testing"
)

// Builders of serialized CQL values for the tests of this package.

func mustType(t testing.TB, s string) *Type {
	t.Helper()
	typ, err := ParseType(s, func(name string) (*Type, error) {
		switch name {
		case "address":
			return NewUDT("ks", "address", []string{"street", "Zip", "tags"},
				[]*Type{Scalar(Text), Scalar(Int), NewSet(Scalar(Text), true)}, true), nil
		case "point":
			return NewUDT("ks", "point", []string{"x", "y"}, []*Type{Scalar(Double), Scalar(Double)}, true), nil
		}
		t.Fatalf("unknown type %s", name)
		return nil, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return typ
}

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func i32(v int32) []byte   { return binary.BigEndian.AppendUint32(nil, uint32(v)) }
func i64(v int64) []byte   { return binary.BigEndian.AppendUint64(nil, uint64(v)) }
func i16(v int16) []byte   { return binary.BigEndian.AppendUint16(nil, uint16(v)) }
func i8(v int8) []byte     { return []byte{byte(v)} }
func f32(v float32) []byte { return binary.BigEndian.AppendUint32(nil, math.Float32bits(v)) }
func f64(v float64) []byte { return binary.BigEndian.AppendUint64(nil, math.Float64bits(v)) }
func str(s string) []byte  { return []byte(s) }

// vint returns the varint of a decimal integer.
func vint(s string) []byte {
	n, ok := new(big.Int).SetString(s, 10)
	if !ok {
		panic(s)
	}
	return VarintBytes(n)
}

// dec returns the decimal unscaled × 10^-scale.
func dec(unscaled string, scale int32) []byte {
	n, ok := new(big.Int).SetString(unscaled, 10)
	if !ok {
		panic(unscaled)
	}
	return DecimalBytes(n, scale)
}

// cqlDate returns the date days after 1970-01-01.
func cqlDate(days int64) []byte {
	return binary.BigEndian.AppendUint32(nil, uint32(days+dateEpochShift))
}

// dur returns a serialized duration.
func dur(months, days, nanos int64) []byte { return DurationValue{months, days, nanos}.Append(nil) }

func uuidv(s string) []byte {
	u, ok := ParseUUID(s)
	if !ok {
		panic(s)
	}
	return u[:]
}

func list(elems ...[]byte) []byte { return SerializeCollection(elems) }

func mapv(kv ...[]byte) []byte {
	var k, v [][]byte
	for i := 0; i < len(kv); i += 2 {
		k, v = append(k, kv[i]), append(v, kv[i+1])
	}
	return SerializeMap(k, v)
}

func tuple(elems ...[]byte) []byte { return SerializeTuple(elems) }
