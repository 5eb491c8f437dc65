package pgschema

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"
)

// FromString parses the text of a value of scalar, tuple or user type t
// as Cassandra's AbstractType.fromString does, returning the value's
// serialization and Cassandra's MarshalException texts. It reads CQL constants (a timestamp
// from '2023-10-27 10:05:00+0000', a duration from 1h30m or P1DT2H, an
// inet from '::1'), the numbers of INTEGER and FLOAT constants, and
// the strings that fromJson() accepts for every scalar type. An empty
// string gives an empty value for the types Cassandra allows it for.
func FromString(t *Type, s string) ([]byte, error) {
	switch t.Kind {
	case Tuple, UDT:
		// A user type is read as a tuple of its fields: Cassandra's
		// UserType inherits TupleType.fromString.
		return tupleFromString(t, s)
	case Ascii:
		for i, r := range s {
			if r >= 0x80 || (r == utf8.RuneError && !utf8.ValidString(s[i:i+1])) {
				n := 1
				if r > 0xffff {
					n = 2 // a surrogate pair in Java
				}
				return nil, fmt.Errorf("Invalid ASCII character in string literal: "+
					"java.nio.charset.UnmappableCharacterException: Input length = %d", n)
			}
		}
		return []byte(s), nil
	case Text:
		if !utf8.ValidString(s) {
			return nil, fmt.Errorf("String didn't validate.")
		}
		return []byte(s), nil
	case Blob:
		b, ok := parseHexBytes(s)
		if !ok {
			return nil, fmt.Errorf("cannot parse '%s' as hex bytes", s)
		}
		return b, nil
	case Boolean:
		switch {
		case s == "" || equalFoldASCII(s, "false"):
			return []byte{0}, nil
		case equalFoldASCII(s, "true"):
			return []byte{1}, nil
		}
		return nil, fmt.Errorf("Unable to make boolean from '%s'", s)
	case Date:
		d, err := parseDateString(s)
		if err != nil {
			return nil, err
		}
		return binary.BigEndian.AppendUint32(nil, d), nil
	case Time:
		n, err := parseTimeString(s)
		if err != nil {
			return nil, err
		}
		return binary.BigEndian.AppendUint64(nil, uint64(n)), nil
	}
	if s == "" {
		switch t.Kind {
		case Int, Bigint, Counter, Smallint, Tinyint, Varint, Decimal, Float, Double, UUID, Timeuuid,
			Timestamp, Inet, Duration:
			return []byte{}, nil
		}
	}
	switch t.Kind {
	case Int, Bigint, Counter, Smallint, Tinyint:
		bits := map[Kind]int{Int: 32, Smallint: 16, Tinyint: 8, Bigint: 64, Counter: 64}[t.Kind]
		n, err := strconv.ParseInt(s, 10, bits)
		if err != nil {
			name := map[int]string{32: "int", 16: "short", 8: "byte", 64: "long"}[bits]
			return nil, fmt.Errorf("Unable to make %s from '%s'", name, s)
		}
		out := make([]byte, bits/8)
		for i := len(out) - 1; i >= 0; i-- {
			out[i] = byte(n)
			n >>= 8
		}
		return out, nil
	case Varint:
		n, ok := new(big.Int).SetString(s, 10)
		if !ok {
			return nil, fmt.Errorf("unable to make int from '%s'", s)
		}
		return VarintBytes(n), nil
	case Decimal:
		d, ok := ParseBigDecimal(s)
		if !ok {
			return nil, fmt.Errorf("unable to make BigDecimal from '%s'", s)
		}
		return d.Bytes(), nil
	case Float, Double:
		bits, name := 64, "double"
		if t.Kind == Float {
			bits, name = 32, "float"
		}
		f, ok := parseJavaFloat(s, bits)
		if !ok {
			return nil, fmt.Errorf("Unable to make %s from '%s'", name, s)
		}
		return floatBytes(f, bits), nil
	case UUID:
		u, ok := ParseUUID(s)
		if !ok {
			return nil, fmt.Errorf("Unable to make UUID from '%s'", s)
		}
		return u[:], nil
	case Timeuuid:
		u, ok := ParseUUID(s)
		if !ok {
			return nil, fmt.Errorf("Unknown timeuuid representation: %s", s)
		}
		if u[6]>>4 != 1 {
			return nil, fmt.Errorf("TimeUUID supports only version 1 UUIDs")
		}
		return u[:], nil
	case Timestamp:
		ms, err := parseTimestampString(s)
		if err != nil {
			return nil, err
		}
		return binary.BigEndian.AppendUint64(nil, uint64(ms)), nil
	case Inet:
		b, ok := parseInetString(s, false)
		if !ok {
			return nil, fmt.Errorf("Unable to make inet address from '%s'", s)
		}
		return b, nil
	case Duration:
		d, err := parseDuration(s)
		if err != nil {
			return nil, err
		}
		return d.Append(nil), nil
	}
	return nil, fmt.Errorf("values of type %s have no text form", t)
}

// javaNaN32 and javaNaN64 are the NaNs Java's serializers write.
const (
	javaNaN32 = 0x7fc00000
	javaNaN64 = 0x7ff8000000000000
)

// floatBytes serializes f as a float (bits 32) or double, writing Java's
// canonical NaN.
func floatBytes(f float64, bits int) []byte {
	if bits == 32 {
		u := math.Float32bits(float32(f))
		if f != f {
			u = javaNaN32
		}
		return binary.BigEndian.AppendUint32(nil, u)
	}
	u := math.Float64bits(f)
	if f != f {
		u = javaNaN64
	}
	return binary.BigEndian.AppendUint64(nil, u)
}

func equalFoldASCII(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// tupleFieldUnescape turns a tuple field's "\:" and "\@" into the
// characters themselves.
var tupleFieldUnescape = strings.NewReplacer(`\:`, ":", `\@`, "@")

// tupleFromString reads a tuple as Cassandra's TupleType.fromString does:
// fields split on the colons no backslash escapes, "@" for a null field,
// "\:" and "\@" for the characters themselves, each field read by its
// type's fromString; fewer fields than the type has leave the rest out.
func tupleFromString(t *Type, s string) ([]byte, error) {
	var fields []string
	start := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++ // the escaped character is the field's
		case ':':
			fields = append(fields, s[start:i])
			start = i + 1
		}
	}
	fields = append(fields, s[start:])
	if len(fields) > len(t.Elem) {
		return nil, fmt.Errorf("Invalid tuple literal: too many elements. Type %s expects %d but got %d", t, len(t.Elem), len(fields))
	}
	elems := make([][]byte, len(fields))
	for i, f := range fields {
		if f == "@" {
			continue
		}
		f = tupleFieldUnescape.Replace(f)
		v, err := FromString(t.Elem[i], f)
		if err != nil {
			return nil, fmt.Errorf("Failed to parse value string \"%s\" for tuple field %d: %v", f, i, err)
		}
		elems[i] = v
	}
	return SerializeTuple(elems), nil
}
