package cqlfunc

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/cqlpg/cqlpg/pgschema"
)

// This file holds what the function library needs of Java's number and
// date formatting: the text forms Cassandra's serializers give values
// (toCQLLiteral, used by casts to text), and Java's Number and narrowing
// conversions.

// cqlLiteralText returns a value's text form as Cassandra's
// TypeSerializer.toCQLLiteral gives it for the types that can be cast to
// text: "null" for an empty value, otherwise the serializer's toString.
func cqlLiteralText(t *pgschema.Type, b []byte) (string, error) {
	if len(b) == 0 {
		return "null", nil
	}
	switch t.Kind {
	case pgschema.Tinyint, pgschema.Smallint, pgschema.Int, pgschema.Bigint, pgschema.Counter,
		pgschema.Float, pgschema.Double, pgschema.Decimal, pgschema.Varint:
		n, err := decodeNumber(t.Kind, b)
		if err != nil {
			return "", err
		}
		return n.String(), nil
	case pgschema.Boolean:
		if len(b) != 1 {
			return "", fmt.Errorf("expected 1 byte for a boolean, got %d", len(b))
		}
		return strconv.FormatBool(b[0] != 0), nil
	case pgschema.Inet:
		return inetString(b)
	case pgschema.UUID, pgschema.Timeuuid:
		if len(b) != 16 {
			return "", fmt.Errorf("expected 16 bytes for a uuid, got %d", len(b))
		}
		return pgschema.UUIDText(b), nil
	case pgschema.Timestamp:
		if len(b) != 8 {
			return "", fmt.Errorf("expected 8 bytes for a timestamp, got %d", len(b))
		}
		return pgschema.FormatTimestamp(int64(binary.BigEndian.Uint64(b)), 'T'), nil
	case pgschema.Date:
		if len(b) != 4 {
			return "", fmt.Errorf("expected 4 bytes for a date, got %d", len(b))
		}
		return pgschema.FormatDate(binary.BigEndian.Uint32(b)), nil
	case pgschema.Time:
		if len(b) != 8 {
			return "", fmt.Errorf("expected 8 bytes for a time, got %d", len(b))
		}
		return pgschema.FormatTime(int64(binary.BigEndian.Uint64(b))), nil
	case pgschema.Ascii, pgschema.Text:
		return string(b), nil
	}
	return "", fmt.Errorf("no text form for type %s", t)
}

// inetString is InetAddress.getHostAddress: dotted quads for IPv4 and for
// IPv4-mapped IPv6 addresses (which Java turns into Inet4Address), else
// eight uncompressed hex groups.
func inetString(b []byte) (string, error) {
	switch len(b) {
	case 4:
		return fmt.Sprintf("%d.%d.%d.%d", b[0], b[1], b[2], b[3]), nil
	case 16:
		mapped := b[10] == 0xff && b[11] == 0xff
		for i := 0; i < 10; i++ {
			mapped = mapped && b[i] == 0
		}
		if mapped {
			return inetString(b[12:])
		}
		parts := make([]string, 8)
		for i := range parts {
			parts[i] = strconv.FormatUint(uint64(binary.BigEndian.Uint16(b[2*i:])), 16)
		}
		return strings.Join(parts, ":"), nil
	}
	return "", fmt.Errorf("expected 4 or 16 bytes for an inet, got %d", len(b))
}

// javaNumber is a decoded numeric value with Java's Number conversions.
type javaNumber struct {
	kind pgschema.Kind
	i    int64               // tinyint, smallint, int, bigint, counter
	f    float64             // float (exactly a float32), double
	v    *big.Int            // varint
	d    pgschema.BigDecimal // decimal
}

// decodeNumber reads a numeric value of kind k; an empty value has no
// number (Java composes it to null, which casts and sums fail on).
func decodeNumber(k pgschema.Kind, b []byte) (javaNumber, error) {
	n := javaNumber{kind: k}
	width := map[pgschema.Kind]int{pgschema.Tinyint: 1, pgschema.Smallint: 2, pgschema.Int: 4,
		pgschema.Bigint: 8, pgschema.Counter: 8, pgschema.Float: 4, pgschema.Double: 8}[k]
	if width != 0 && len(b) != width {
		return n, fmt.Errorf("expected %d bytes for a %s, got %d", width, scalar(k), len(b))
	}
	switch k {
	case pgschema.Tinyint:
		n.i = int64(int8(b[0]))
	case pgschema.Smallint:
		n.i = int64(int16(binary.BigEndian.Uint16(b)))
	case pgschema.Int:
		n.i = int64(int32(binary.BigEndian.Uint32(b)))
	case pgschema.Bigint, pgschema.Counter:
		n.i = int64(binary.BigEndian.Uint64(b))
	case pgschema.Float:
		n.f = float64(math.Float32frombits(binary.BigEndian.Uint32(b)))
	case pgschema.Double:
		n.f = math.Float64frombits(binary.BigEndian.Uint64(b))
	case pgschema.Varint:
		if len(b) == 0 {
			return n, fmt.Errorf("empty varint value")
		}
		n.v = pgschema.VarintValue(b)
	case pgschema.Decimal:
		if err := decimalLength(b); err != nil {
			return n, err
		}
		n.d, _ = pgschema.DecodeBigDecimal(b) // four bytes or more are a decimal
	default:
		return n, fmt.Errorf("type %s is not numeric", scalar(k))
	}
	return n, nil
}

// decimalLength refuses a serialized decimal too short to hold its scale.
func decimalLength(b []byte) error {
	if len(b) < 4 {
		return fmt.Errorf("expected at least 4 bytes for a decimal, got %d", len(b))
	}
	return nil
}

// longValue is Number.longValue.
func (n javaNumber) longValue() int64 {
	switch n.kind {
	case pgschema.Float, pgschema.Double:
		return pgschema.JavaDoubleToLong(n.f)
	case pgschema.Varint:
		return pgschema.LowInt64(n.v)
	case pgschema.Decimal:
		return n.d.LongValue()
	}
	return n.i
}

// intValue is Number.intValue; byteValue and shortValue narrow it further.
func (n javaNumber) intValue() int32 {
	if n.kind == pgschema.Float || n.kind == pgschema.Double {
		return pgschema.JavaDoubleToInt(n.f)
	}
	return int32(n.longValue())
}

// doubleValue is Number.doubleValue, rounded to nearest.
func (n javaNumber) doubleValue() float64 {
	switch n.kind {
	case pgschema.Float, pgschema.Double:
		return n.f
	case pgschema.Varint:
		f, _ := new(big.Float).SetInt(n.v).Float64()
		return f
	case pgschema.Decimal:
		return n.d.Float(64)
	}
	return float64(n.i)
}

// floatValue is Number.floatValue, rounded to nearest.
func (n javaNumber) floatValue() float32 {
	switch n.kind {
	case pgschema.Float, pgschema.Double:
		return float32(n.f)
	case pgschema.Varint:
		f, _ := new(big.Float).SetInt(n.v).Float32()
		return f
	case pgschema.Decimal:
		return float32(n.d.Float(32))
	}
	return float32(n.i)
}

// String is the number's toString, the serializers' text form.
func (n javaNumber) String() string {
	switch n.kind {
	case pgschema.Float:
		return pgschema.JavaFloat(n.f, 32)
	case pgschema.Double:
		return pgschema.JavaFloat(n.f, 64)
	case pgschema.Varint:
		return n.v.String()
	case pgschema.Decimal:
		return n.d.PlainString()
	}
	return strconv.FormatInt(n.i, 10)
}

// validUTF8 reports whether b is text Cassandra's UTF8Serializer accepts.
func validUTF8(b []byte) bool { return utf8.Valid(b) }
