package translate

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
// (toCQLLiteral, used by casts to text), BigDecimal arithmetic and Java's
// narrowing conversions.

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

// bigDec is a java.math.BigDecimal: unscaled × 10^-scale.
type bigDec struct {
	unscaled *big.Int
	scale    int32
}

func decFromInt64(v int64) bigDec { return bigDec{big.NewInt(v), 0} }

// decodeDecimal reads a decimal's serialization: a 4-byte scale, then the
// unscaled value as a varint.
func decodeDecimal(b []byte) (bigDec, error) {
	if len(b) < 4 {
		return bigDec{}, fmt.Errorf("expected at least 4 bytes for a decimal, got %d", len(b))
	}
	return bigDec{varintValue(b[4:]), int32(binary.BigEndian.Uint32(b))}, nil
}

// bytes serializes the decimal as Cassandra's DecimalSerializer does.
func (d bigDec) bytes() []byte {
	out := binary.BigEndian.AppendUint32(nil, uint32(d.scale))
	return append(out, varintBytes(d.unscaled)...)
}

// varintValue reads a two's complement big-endian integer; an empty slice is
// zero, as BigInteger reads it.
func varintValue(b []byte) *big.Int {
	n := new(big.Int).SetBytes(b)
	if len(b) > 0 && b[0]&0x80 != 0 {
		n.Sub(n, new(big.Int).Lsh(big.NewInt(1), uint(len(b))*8))
	}
	return n
}

// parseJavaDecimal reads a number as new BigDecimal(String) does:
// [sign] digits [. digits] [E [sign] digits].
func parseJavaDecimal(s string) (bigDec, error) {
	mant, exp := s, int64(0)
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		var err error
		if exp, err = strconv.ParseInt(s[i+1:], 10, 32); err != nil {
			return bigDec{}, fmt.Errorf("invalid decimal %q", s)
		}
		mant = s[:i]
	}
	frac := 0
	if i := strings.IndexByte(mant, '.'); i >= 0 {
		frac = len(mant) - i - 1
		mant = mant[:i] + mant[i+1:]
	}
	n, ok := new(big.Int).SetString(mant, 10)
	if !ok || strings.HasPrefix(mant, "+-") {
		return bigDec{}, fmt.Errorf("invalid decimal %q", s)
	}
	scale := int64(frac) - exp
	if scale < math.MinInt32 || scale > math.MaxInt32 {
		return bigDec{}, fmt.Errorf("decimal scale out of range in %q", s)
	}
	return bigDec{n, int32(scale)}, nil
}

// decFromFloat is BigDecimal.valueOf(double), which goes through
// Double.toString, and new BigDecimal(Float.toString(f)) for bits 32. NaN
// and the infinities have no decimal (Java throws NumberFormatException).
func decFromFloat(f float64, bits int) (bigDec, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return bigDec{}, fmt.Errorf("java.lang.NumberFormatException: %s has no decimal value", pgschema.JavaFloat(f, bits))
	}
	return parseJavaDecimal(pgschema.JavaFloat(f, bits))
}

// pow10 returns 10^n.
func pow10(n int64) *big.Int { return new(big.Int).Exp(big.NewInt(10), big.NewInt(n), nil) }

// rescale returns d's unscaled value at scale s >= d.scale.
func (d bigDec) rescale(s int32) *big.Int {
	if s == d.scale {
		return d.unscaled
	}
	return new(big.Int).Mul(d.unscaled, pow10(int64(s)-int64(d.scale)))
}

// add is BigDecimal.add: the result has the larger scale.
func (d bigDec) add(o bigDec) bigDec {
	s := max(d.scale, o.scale)
	return bigDec{new(big.Int).Add(d.rescale(s), o.rescale(s)), s}
}

// sub is BigDecimal.subtract.
func (d bigDec) sub(o bigDec) bigDec {
	s := max(d.scale, o.scale)
	return bigDec{new(big.Int).Sub(d.rescale(s), o.rescale(s)), s}
}

// divHalfEven is BigDecimal.divide(BigDecimal.valueOf(n), HALF_EVEN): the
// quotient at d's scale, rounded half to even.
func (d bigDec) divHalfEven(n int64) bigDec {
	return bigDec{divRoundHalfEven(d.unscaled, big.NewInt(n)), d.scale}
}

// divRoundHalfEven divides, rounding to the nearest integer and ties to the
// even one.
func divRoundHalfEven(a, b *big.Int) *big.Int {
	q, r := new(big.Int).QuoRem(a, b, new(big.Int))
	if r.Sign() == 0 {
		return q
	}
	twice := new(big.Int).Abs(r)
	twice.Lsh(twice, 1)
	c := twice.Cmp(new(big.Int).Abs(b))
	if c > 0 || (c == 0 && q.Bit(0) == 1) {
		if (a.Sign() < 0) != (b.Sign() < 0) {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	return q
}

// cmp compares by value, ignoring scale (BigDecimal.compareTo).
func (d bigDec) cmp(o bigDec) int {
	s := max(d.scale, o.scale)
	return d.rescale(s).Cmp(o.rescale(s))
}

// truncInt is the integer part, rounded toward zero (toBigInteger).
func (d bigDec) truncInt() *big.Int {
	switch {
	case d.scale == 0:
		return d.unscaled
	case d.scale < 0:
		return new(big.Int).Mul(d.unscaled, pow10(-int64(d.scale)))
	}
	return new(big.Int).Quo(d.unscaled, pow10(int64(d.scale)))
}

// lowBits returns the low 64 bits of the integer part, as
// BigDecimal.longValue does; intValue keeps the low 32 of those. A scale
// far from zero makes the integer part 0, or a multiple of 2^64.
func (d bigDec) lowBits() int64 {
	digits := int64(len(d.unscaled.String()))
	if int64(d.scale) >= digits || int64(d.scale) <= -64 {
		return 0
	}
	return lowInt64(d.truncInt())
}

// lowInt64 returns the low 64 bits of n in two's complement (longValue).
func lowInt64(n *big.Int) int64 {
	m := new(big.Int).And(n, new(big.Int).SetUint64(math.MaxUint64))
	return int64(m.Uint64())
}

// float returns the nearest float64 (bits 64) or float32 (bits 32) to d, as
// BigDecimal.doubleValue and floatValue do.
func (d bigDec) float(bits int) float64 {
	if d.unscaled.Sign() == 0 {
		return 0
	}
	// Magnitudes that far out of range need no exact arithmetic.
	mag := int64(len(d.unscaled.String())) - int64(d.scale)
	if mag > 400 {
		return math.Inf(d.unscaled.Sign())
	}
	if mag < -400 {
		return math.Copysign(0, float64(d.unscaled.Sign()))
	}
	r := new(big.Rat).SetInt(d.unscaled)
	if d.scale > 0 {
		r.Quo(r, new(big.Rat).SetInt(pow10(int64(d.scale))))
	} else if d.scale < 0 {
		r.Mul(r, new(big.Rat).SetInt(pow10(-int64(d.scale))))
	}
	if bits == 32 {
		f, _ := r.Float32()
		return float64(f)
	}
	f, _ := r.Float64()
	return f
}

// plainString is BigDecimal.toPlainString, the decimal serializer's text.
func (d bigDec) plainString() string {
	if d.scale == 0 {
		return d.unscaled.String()
	}
	if d.scale < 0 {
		if d.unscaled.Sign() == 0 {
			return "0"
		}
		return d.unscaled.String() + strings.Repeat("0", int(-d.scale))
	}
	sign := ""
	if d.unscaled.Sign() < 0 {
		sign = "-"
	}
	digits := new(big.Int).Abs(d.unscaled).String()
	point := len(digits) - int(d.scale)
	switch {
	case point > 0:
		return sign + digits[:point] + "." + digits[point:]
	case point == 0:
		return sign + "0." + digits
	}
	return sign + "0." + strings.Repeat("0", -point) + digits
}

// javaF2I is Java's (int) of a floating point value: NaN is 0, values out of
// range saturate, others truncate toward zero.
func javaF2I(f float64) int32 {
	switch {
	case math.IsNaN(f):
		return 0
	case f >= math.MaxInt32:
		return math.MaxInt32
	case f <= math.MinInt32:
		return math.MinInt32
	}
	return int32(f)
}

// javaF2L is Java's (long) of a floating point value.
func javaF2L(f float64) int64 {
	switch {
	case math.IsNaN(f):
		return 0
	case f >= math.MaxInt64:
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return int64(f)
}

// javaNumber is a decoded numeric value with Java's Number conversions.
type javaNumber struct {
	kind pgschema.Kind
	i    int64    // tinyint, smallint, int, bigint, counter
	f    float64  // float (exactly a float32), double
	v    *big.Int // varint
	d    bigDec   // decimal
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
		n.v = varintValue(b)
	case pgschema.Decimal:
		d, err := decodeDecimal(b)
		if err != nil {
			return n, err
		}
		n.d = d
	default:
		return n, fmt.Errorf("type %s is not numeric", scalar(k))
	}
	return n, nil
}

// longValue is Number.longValue.
func (n javaNumber) longValue() int64 {
	switch n.kind {
	case pgschema.Float, pgschema.Double:
		return javaF2L(n.f)
	case pgschema.Varint:
		return lowInt64(n.v)
	case pgschema.Decimal:
		return n.d.lowBits()
	}
	return n.i
}

// intValue is Number.intValue; byteValue and shortValue narrow it further.
func (n javaNumber) intValue() int32 {
	if n.kind == pgschema.Float || n.kind == pgschema.Double {
		return javaF2I(n.f)
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
		return n.d.float(64)
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
		return float32(n.d.float(32))
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
		return n.d.plainString()
	}
	return strconv.FormatInt(n.i, 10)
}

// validUTF8 reports whether b is text Cassandra's UTF8Serializer accepts.
func validUTF8(b []byte) bool { return utf8.Valid(b) }
