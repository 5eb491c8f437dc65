package pgschema

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// CQL serializes a varint as a big-endian two's complement integer in as
// few bytes as hold it, and a decimal as a four-byte scale followed by the
// varint of its unscaled value: value = unscaled × 10^-scale.
//
// Postgres's numeric travels as ndigits, weight, sign and dscale (int16
// each) then ndigits base-10000 digits, most significant first: value =
// Σ digit[i] × 10000^(weight-i), shown with dscale decimals. Postgres keeps
// dscale, so 1.50 stays 1.50 and a decimal's scale survives the trip; it
// cannot be negative, so a decimal with a negative scale (1E+3, unscaled 1
// and scale -3) is stored by value and reads back as 1000 with scale 0.

// Postgres's numeric limits: dscale is 14 bits and weight an int16, so a
// numeric holds up to 16383 decimals and 131072 integer digits.
const (
	pgNumericMaxScale  = 0x3fff
	pgNumericMaxWeight = 32767
	pgNumericPos       = 0x0000
	pgNumericNeg       = 0x4000
	pgNumericNaN       = 0xc000
	pgNumericPinf      = 0xd000
	pgNumericNinf      = 0xf000
)

// VarintValue decodes CQL's varint serialization, a two's complement
// big-endian integer; an empty slice is zero, as BigInteger reads it.
func VarintValue(b []byte) *big.Int {
	n := new(big.Int).SetBytes(b)
	if len(b) > 0 && b[0]&0x80 != 0 {
		n.Sub(n, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	return n
}

// varintInt64 decodes a varint of at most eight bytes.
func varintInt64(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 8 {
		return 0, false
	}
	v := int64(int8(b[0]))
	for _, c := range b[1:] {
		v = v<<8 | int64(c)
	}
	return v, true
}

// appendVarint appends n in the varint serialization: two's complement,
// big-endian, in the fewest bytes that hold it (0 is one zero byte).
func appendVarint(dst []byte, n *big.Int) []byte {
	if n.IsInt64() {
		return appendVarintInt64(dst, n.Int64())
	}
	if n.Sign() >= 0 {
		b := n.Bytes()
		if b[0]&0x80 != 0 {
			dst = append(dst, 0)
		}
		return append(dst, b...)
	}
	// -n-1 holds the complement bits of n.
	b := new(big.Int).Not(n).Bytes()
	if len(b) == 0 || b[0]&0x80 != 0 {
		dst = append(dst, 0xff)
	}
	for _, c := range b {
		dst = append(dst, ^c)
	}
	return dst
}

// appendVarintInt64 appends v as a minimal varint.
func appendVarintInt64(dst []byte, v int64) []byte {
	n := 8
	for n > 1 {
		// The top byte is redundant when it only repeats the sign of the
		// next one.
		top := byte(v >> (8 * (n - 1)))
		next := byte(v >> (8 * (n - 2)))
		if (top == 0 && next&0x80 == 0) || (top == 0xff && next&0x80 != 0) {
			n--
			continue
		}
		break
	}
	for i := n - 1; i >= 0; i-- {
		dst = append(dst, byte(v>>(8*i)))
	}
	return dst
}

// LowInt64 returns the low 64 bits of n in two's complement, as
// BigInteger.longValue does.
func LowInt64(n *big.Int) int64 {
	m := new(big.Int).And(n, new(big.Int).SetUint64(math.MaxUint64))
	return int64(m.Uint64())
}

// VarintBytes returns n in CQL's varint serialization.
func VarintBytes(n *big.Int) []byte { return appendVarint(nil, n) }

// DecimalBytes returns the CQL decimal serialization of unscaled × 10^-scale.
func DecimalBytes(unscaled *big.Int, scale int32) []byte {
	dst := binary.BigEndian.AppendUint32(nil, uint32(scale))
	return appendVarint(dst, unscaled)
}

// decimalParts splits a serialized decimal into its scale and unscaled
// value.
func decimalParts(b []byte) (int32, []byte, error) {
	if len(b) < 4 {
		return 0, nil, fmt.Errorf("Expected 0 or at least 4 bytes (%d)", len(b))
	}
	return int32(binary.BigEndian.Uint32(b)), b[4:], nil
}

// varintDigits returns the absolute value of a varint in decimal and
// whether it is negative. An empty varint is zero.
func varintDigits(b []byte) (string, bool) {
	if v, ok := varintInt64(b); ok {
		if v < 0 {
			if v == -1<<63 {
				return "9223372036854775808", true
			}
			return strconv.FormatInt(-v, 10), true
		}
		return strconv.FormatInt(v, 10), false
	}
	if len(b) == 0 {
		return "0", false
	}
	n := VarintValue(b)
	neg := n.Sign() < 0
	return new(big.Int).Abs(n).Text(10), neg
}

// errNumericRange reports a decimal or varint too large for Postgres.
var errNumericRange = errors.New("value out of range: PostgreSQL's numeric holds at most 131072 digits before the decimal point")

// appendPGNumeric appends the Postgres numeric binary form of the decimal
// whose absolute value's digits are digits, scaled by 10^-scale.
func appendPGNumeric(dst []byte, digits string, neg bool, scale int) ([]byte, error) {
	if scale < 0 {
		// Postgres has no negative display scale: keep the value, lose the
		// exponent.
		if digits != "0" {
			if len(digits)-scale > 4*(pgNumericMaxWeight+1) {
				return dst, errNumericRange
			}
			digits += strings.Repeat("0", -scale)
		}
		scale = 0
	}
	if scale > pgNumericMaxScale {
		return dst, fmt.Errorf("decimal scale %d out of range: PostgreSQL's numeric holds at most %d digits after the decimal point", scale, pgNumericMaxScale)
	}
	// Align the digits on base-10000 groups around the decimal point:
	// pad the fraction on the right and the integer part on the left.
	fracPad := (4 - scale%4) % 4
	intLen := len(digits) - scale
	leftPad := 0
	if intLen < 0 {
		leftPad = -intLen
		intLen = 0
	}
	leftPad += (4 - intLen%4) % 4
	intLen += (4 - intLen%4) % 4
	total := leftPad + len(digits) + fracPad
	ngroups := total / 4
	weight := intLen/4 - 1
	group := func(i int) int { // the i-th group of the padded digit string
		v := 0
		for j := 4 * i; j < 4*i+4; j++ {
			d := 0
			if k := j - leftPad; k >= 0 && k < len(digits) {
				d = int(digits[k] - '0')
			}
			v = v*10 + d
		}
		return v
	}
	first, last := 0, ngroups
	for first < last && group(first) == 0 {
		first++
		weight--
	}
	for last > first && group(last-1) == 0 {
		last--
	}
	sign := pgNumericPos
	if first == last {
		weight = 0
	} else if neg {
		sign = pgNumericNeg
	}
	if weight > pgNumericMaxWeight {
		return dst, errNumericRange
	}
	dst = binary.BigEndian.AppendUint16(dst, uint16(last-first))
	dst = binary.BigEndian.AppendUint16(dst, uint16(int16(weight)))
	dst = binary.BigEndian.AppendUint16(dst, uint16(sign))
	dst = binary.BigEndian.AppendUint16(dst, uint16(scale))
	for i := first; i < last; i++ {
		dst = binary.BigEndian.AppendUint16(dst, uint16(group(i)))
	}
	return dst, nil
}

// pgNumeric is a decoded Postgres numeric.
type pgNumeric struct {
	weight, sign, dscale int
	digits               []byte // the base-10000 digits, two bytes each
}

func parsePGNumeric(src []byte) (pgNumeric, error) {
	if len(src) < 8 {
		return pgNumeric{}, fmt.Errorf("expected at least 8 bytes for a numeric, got %d", len(src))
	}
	n := int(binary.BigEndian.Uint16(src))
	v := pgNumeric{
		weight: int(int16(binary.BigEndian.Uint16(src[2:]))),
		sign:   int(binary.BigEndian.Uint16(src[4:])),
		dscale: int(binary.BigEndian.Uint16(src[6:])),
		digits: src[8:],
	}
	if len(v.digits) != 2*n {
		return v, fmt.Errorf("numeric has %d bytes of digits, want %d", len(v.digits), 2*n)
	}
	switch v.sign {
	case pgNumericPos, pgNumericNeg:
	case pgNumericNaN:
		return v, errors.New("NaN cannot be represented as a CQL decimal or varint")
	case pgNumericPinf, pgNumericNinf:
		return v, errors.New("Infinity cannot be represented as a CQL decimal or varint")
	default:
		return v, fmt.Errorf("invalid numeric sign 0x%04x", v.sign)
	}
	return v, nil
}

// decimalDigits returns the numeric's value times 10^scale as decimal
// digits (no sign, leading zeros trimmed), failing if that drops nonzero
// digits.
func (v pgNumeric) decimalDigits(scale int) (string, error) {
	n := len(v.digits) / 2
	var b strings.Builder
	b.Grow(4*n + 8)
	for i := 0; i < n; i++ {
		d := binary.BigEndian.Uint16(v.digits[2*i:])
		if d >= 10000 {
			return "", fmt.Errorf("invalid numeric digit %d", d)
		}
		s := strconv.Itoa(int(d))
		b.WriteString("0000"[len(s):])
		b.WriteString(s)
	}
	digits := b.String()
	// The digits stand for digits × 10^exp.
	exp := 4*(v.weight-n+1) + scale
	if exp >= 0 {
		if n > 0 {
			digits += strings.Repeat("0", exp)
		}
	} else {
		cut := len(digits) + exp
		if cut < 0 {
			cut = 0
		}
		if strings.Trim(digits[cut:], "0") != "" {
			return "", errors.New("numeric value has more decimals than its type holds")
		}
		digits = digits[:cut]
	}
	digits = strings.TrimLeft(digits, "0")
	if digits == "" {
		digits = "0"
	}
	return digits, nil
}

// appendDigitsVarint appends the varint of the decimal digits with a sign.
func appendDigitsVarint(dst []byte, digits string, neg bool) []byte {
	if len(digits) <= 18 {
		v, _ := strconv.ParseInt(digits, 10, 64)
		if neg {
			v = -v
		}
		return appendVarintInt64(dst, v)
	}
	n, _ := new(big.Int).SetString(digits, 10)
	if neg {
		n.Neg(n)
	}
	return appendVarint(dst, n)
}

func decimalToPG(dst, src []byte) ([]byte, error) {
	scale, unscaled, err := decimalParts(src)
	if err != nil {
		return dst, err
	}
	digits, neg := varintDigits(unscaled)
	return appendPGNumeric(dst, digits, neg, int(scale))
}

func decimalFromPG(dst, src []byte) ([]byte, error) {
	if out, ok := fromExact(dst, src); ok {
		return out, nil
	}
	v, err := parsePGNumeric(src)
	if err != nil {
		return dst, err
	}
	digits, err := v.decimalDigits(v.dscale)
	if err != nil {
		return dst, err
	}
	dst = binary.BigEndian.AppendUint32(dst, uint32(v.dscale))
	return appendDigitsVarint(dst, digits, v.sign == pgNumericNeg && digits != "0"), nil
}

func varintToPG(dst, src []byte) ([]byte, error) {
	if len(src) == 0 {
		return dst, errEmpty(Scalar(Varint))
	}
	digits, neg := varintDigits(src)
	return appendPGNumeric(dst, digits, neg, 0)
}

func varintFromPG(dst, src []byte) ([]byte, error) {
	v, err := parsePGNumeric(src)
	if err != nil {
		return dst, err
	}
	digits, err := v.decimalDigits(0)
	if err != nil {
		return dst, errors.New("numeric value is not an integer, as a varint must be")
	}
	return appendDigitsVarint(dst, digits, v.sign == pgNumericNeg && digits != "0"), nil
}
