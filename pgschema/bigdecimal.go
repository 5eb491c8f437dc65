package pgschema

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// BigDecimal is a java.math.BigDecimal: Unscaled × 10^-Scale. Its methods
// compute as BigDecimal's do, for the functions and aggregates that take
// decimals; Compare orders serialized decimals by value.
type BigDecimal struct {
	Unscaled *big.Int
	Scale    int32
}

// DecodeBigDecimal reads a serialized decimal: a 4-byte scale, then the
// unscaled value as a varint.
func DecodeBigDecimal(b []byte) (BigDecimal, error) {
	scale, unscaled, err := decimalParts(b)
	if err != nil {
		return BigDecimal{}, err
	}
	return BigDecimal{VarintValue(unscaled), scale}, nil
}

// Bytes serializes the decimal as Cassandra's DecimalSerializer does.
func (d BigDecimal) Bytes() []byte { return DecimalBytes(d.Unscaled, d.Scale) }

// BigDecimalOfFloat is BigDecimal.valueOf(double), which goes through
// Double.toString, and new BigDecimal(Float.toString(f)) for bits 32. NaN
// and the infinities have no decimal (Java throws NumberFormatException).
func BigDecimalOfFloat(f float64, bits int) (BigDecimal, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return BigDecimal{}, fmt.Errorf("java.lang.NumberFormatException: %s has no decimal value", JavaFloat(f, bits))
	}
	d, _ := ParseBigDecimal(JavaFloat(f, bits)) // a finite float's text is a decimal
	return d, nil
}

// pow10 returns 10^n.
func pow10(n int64) *big.Int { return new(big.Int).Exp(big.NewInt(10), big.NewInt(n), nil) }

// rescale returns d's unscaled value at scale s >= d.Scale.
func (d BigDecimal) rescale(s int32) *big.Int {
	if s == d.Scale {
		return d.Unscaled
	}
	return new(big.Int).Mul(d.Unscaled, pow10(int64(s)-int64(d.Scale)))
}

// Add is BigDecimal.add: the result has the larger scale.
func (d BigDecimal) Add(o BigDecimal) BigDecimal {
	s := max(d.Scale, o.Scale)
	return BigDecimal{new(big.Int).Add(d.rescale(s), o.rescale(s)), s}
}

// Sub is BigDecimal.subtract.
func (d BigDecimal) Sub(o BigDecimal) BigDecimal {
	s := max(d.Scale, o.Scale)
	return BigDecimal{new(big.Int).Sub(d.rescale(s), o.rescale(s)), s}
}

// DivHalfEven is BigDecimal.divide(BigDecimal.valueOf(n), HALF_EVEN): the
// quotient at d's scale, rounded half to even.
func (d BigDecimal) DivHalfEven(n int64) BigDecimal {
	return BigDecimal{divRoundHalfEven(d.Unscaled, big.NewInt(n)), d.Scale}
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

// truncInt is the integer part, rounded toward zero (toBigInteger).
func (d BigDecimal) truncInt() *big.Int {
	switch {
	case d.Scale == 0:
		return d.Unscaled
	case d.Scale < 0:
		return new(big.Int).Mul(d.Unscaled, pow10(-int64(d.Scale)))
	}
	return new(big.Int).Quo(d.Unscaled, pow10(int64(d.Scale)))
}

// LongValue returns the low 64 bits of the integer part, as
// BigDecimal.longValue does; intValue keeps the low 32 of those. A scale
// far from zero makes the integer part 0, or a multiple of 2^64.
func (d BigDecimal) LongValue() int64 {
	digits := int64(len(d.Unscaled.String()))
	if int64(d.Scale) >= digits || int64(d.Scale) <= -64 {
		return 0
	}
	return LowInt64(d.truncInt())
}

// Float returns the nearest float64 (bits 64) or float32 (bits 32) to d,
// as BigDecimal.doubleValue and floatValue do.
func (d BigDecimal) Float(bits int) float64 {
	if d.Unscaled.Sign() == 0 {
		return 0
	}
	// Magnitudes that far out of range need no exact arithmetic.
	mag := int64(len(d.Unscaled.String())) - int64(d.Scale)
	if mag > 400 {
		return math.Inf(d.Unscaled.Sign())
	}
	if mag < -400 {
		return math.Copysign(0, float64(d.Unscaled.Sign()))
	}
	r := new(big.Rat).SetInt(d.Unscaled)
	if d.Scale > 0 {
		r.Quo(r, new(big.Rat).SetInt(pow10(int64(d.Scale))))
	} else if d.Scale < 0 {
		r.Mul(r, new(big.Rat).SetInt(pow10(-int64(d.Scale))))
	}
	if bits == 32 {
		f, _ := r.Float32()
		return float64(f)
	}
	f, _ := r.Float64()
	return f
}

// PlainString is BigDecimal.toPlainString, the decimal serializer's text:
// no exponent, and trailing zeros for a negative scale.
func (d BigDecimal) PlainString() string {
	if d.Scale < 0 {
		if d.Unscaled.Sign() == 0 {
			return "0"
		}
		return d.Unscaled.String() + strings.Repeat("0", int(-d.Scale))
	}
	return bigDecimalPlain(new(big.Int).Abs(d.Unscaled).String(), d.Unscaled.Sign() < 0, int64(d.Scale))
}

// ParseBigDecimal reads a number as Java's new BigDecimal(String): an
// optional sign, digits with an optional point (at least one digit), and
// an optional exponent; the scale must fit an int.
func ParseBigDecimal(s string) (BigDecimal, bool) {
	n, scale, ok := parseDecimalExp(s, 32)
	return BigDecimal{n, scale}, ok
}

// parseDecimalExp is ParseBigDecimal with an exponent of up to expBits
// bits: Java's 32, or 64 for the text stored in jsonb, where the decimal
// of scale -2^31 is 1E+2147483648.
func parseDecimalExp(s string, expBits int) (*big.Int, int32, bool) {
	body := s
	neg := false
	if body != "" && (body[0] == '+' || body[0] == '-') {
		neg = body[0] == '-'
		body = body[1:]
	}
	mant, expText := body, ""
	var exp int64
	if e := strings.IndexAny(body, "eE"); e >= 0 {
		mant, expText = body[:e], body[e+1:]
		digits := strings.TrimLeft(expText, "+-")
		if len(expText)-len(digits) > 1 || !allDigits(digits) {
			return nil, 0, false
		}
		var err error
		if exp, err = strconv.ParseInt(expText, 10, expBits); err != nil {
			return nil, 0, false
		}
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	if (intPart == "" && frac == "") || (intPart != "" && !allDigits(intPart)) || (frac != "" && !allDigits(frac)) {
		return nil, 0, false
	}
	scale := int64(len(frac)) - exp
	if scale != int64(int32(scale)) || (exp < 0 && scale < 0) {
		return nil, 0, false
	}
	n, _ := new(big.Int).SetString(intPart+frac, 10)
	if neg {
		n.Neg(n)
	}
	return n, int32(scale), true
}

// bigDecimalString formats unscaled × 10^-scale as Java's
// BigDecimal.toString: plain when the scale is not negative and the
// adjusted exponent is at least -6, else scientific (1.23E+5, 1E-10).
func bigDecimalString(digits string, neg bool, scale int64) string {
	adjusted := -scale + int64(len(digits)-1)
	if scale >= 0 && adjusted >= -6 {
		return bigDecimalPlain(digits, neg, scale)
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	b.WriteByte(digits[0])
	if len(digits) > 1 {
		b.WriteByte('.')
		b.WriteString(digits[1:])
	}
	b.WriteByte('E')
	if adjusted > 0 {
		b.WriteByte('+')
	}
	b.WriteString(strconv.FormatInt(adjusted, 10))
	return b.String()
}

// bigDecimalPlain formats a decimal with a non-negative scale without an
// exponent, as BigDecimal.toPlainString does.
func bigDecimalPlain(digits string, neg bool, scale int64) string {
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	switch {
	case scale == 0:
		b.WriteString(digits)
	case int64(len(digits)) > scale:
		b.WriteString(digits[:int64(len(digits))-scale])
		b.WriteByte('.')
		b.WriteString(digits[int64(len(digits))-scale:])
	default:
		b.WriteString("0.")
		b.WriteString(strings.Repeat("0", int(scale)-len(digits)))
		b.WriteString(digits)
	}
	return b.String()
}

// String is BigDecimal.toString: plain when the scale is not negative and
// the adjusted exponent is at least -6, else scientific (1.23E+5, 1E-10).
func (d BigDecimal) String() string {
	return bigDecimalString(new(big.Int).Abs(d.Unscaled).String(), d.Unscaled.Sign() < 0, int64(d.Scale))
}

// decimalText formats a serialized decimal as BigDecimal.toString.
func decimalText(v []byte) (string, error) {
	scale, unscaled, err := decimalParts(v)
	if err != nil {
		return "", err
	}
	digits, neg := varintDigits(unscaled)
	return bigDecimalString(digits, neg && digits != "0", int64(scale)), nil
}

// TruncInt is BigDecimal.toBigInteger: the integer part, rounded toward
// zero.
func (d BigDecimal) TruncInt() *big.Int { return d.truncInt() }

// Precision is BigDecimal.precision: the digits of the unscaled value, 1
// for zero.
func (d BigDecimal) Precision() int {
	return len(new(big.Int).Abs(d.Unscaled).String())
}

// IsOne reports whether d equals 1, whatever its scale.
func (d BigDecimal) IsOne() bool {
	return d.Scale >= 0 && d.Unscaled.Cmp(pow10(int64(d.Scale))) == 0
}

// RoundHalfUp is BigDecimal.setScale(scale, HALF_UP): ties away from
// zero. A scale at or above d's only pads.
func (d BigDecimal) RoundHalfUp(scale int32) BigDecimal {
	if scale >= d.Scale {
		return BigDecimal{d.rescale(scale), scale}
	}
	div := pow10(int64(d.Scale) - int64(scale))
	q, r := new(big.Int).QuoRem(d.Unscaled, div, new(big.Int))
	if twice := new(big.Int).Lsh(new(big.Int).Abs(r), 1); twice.Cmp(div) >= 0 {
		if d.Unscaled.Sign() < 0 {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	return BigDecimal{q, scale}
}

// BigFloat is d as a binary float of prec bits.
func (d BigDecimal) BigFloat(prec uint) *big.Float {
	f := new(big.Float).SetPrec(prec).SetInt(d.Unscaled)
	switch {
	case d.Scale > 0:
		f.Quo(f, new(big.Float).SetPrec(prec).SetInt(pow10(int64(d.Scale))))
	case d.Scale < 0:
		f.Mul(f, new(big.Float).SetPrec(prec).SetInt(pow10(-int64(d.Scale))))
	}
	return f
}

// BigDecimalOfBigFloat rounds a binary float to a decimal of the given
// significant digits, half to even, as new BigDecimal(x).round(new
// MathContext(digits, HALF_EVEN)) does: once, from its exact value. It
// should carry enough bits that the digits kept are settled.
func BigDecimalOfBigFloat(f *big.Float, digits int) BigDecimal {
	if f.Sign() == 0 {
		return BigDecimal{Unscaled: new(big.Int)}
	}
	r, _ := f.Rat(nil)
	num, den := new(big.Int).Abs(r.Num()), r.Denom()
	// The scale at which the integer part has exactly digits digits.
	scale := int64(digits) - 1 - int64(math.Floor(float64(f.MantExp(nil))*math.Log10(2)))
	for {
		q := scaledQuo(num, den, scale)
		n := int64(len(q.String()))
		if q.Sign() == 0 {
			n = 0
		}
		switch {
		case n > int64(digits):
			scale--
			continue
		case n < int64(digits):
			scale++
			continue
		}
		break
	}
	signed := r.Num()
	var n *big.Int
	if scale >= 0 {
		n = divRoundHalfEven(new(big.Int).Mul(signed, pow10(scale)), den)
	} else {
		n = divRoundHalfEven(signed, new(big.Int).Mul(den, pow10(-scale)))
	}
	if len(new(big.Int).Abs(n).String()) > digits { // rounded up to 10^digits
		n.Quo(n, big.NewInt(10))
		scale--
	}
	return BigDecimal{n, int32(scale)}
}

// scaledQuo is floor(num × 10^scale / den), for num, den > 0.
func scaledQuo(num, den *big.Int, scale int64) *big.Int {
	if scale >= 0 {
		return new(big.Int).Quo(new(big.Int).Mul(num, pow10(scale)), den)
	}
	return new(big.Int).Quo(num, new(big.Int).Mul(den, pow10(-scale)))
}
