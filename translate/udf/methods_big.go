package udf

import (
	"math"
	"math/big"
	"strings"

	"github.com/cqlpg/cqlpg/pgschema"
)

// java.math: BigDecimal, BigInteger and RoundingMode, with Java's scales,
// rounding and exceptions. Operations that would make numbers of more
// digits than the call's memory allows throw OutOfMemoryError first.

// roundingMode is a java.math.RoundingMode constant, in its ordinal order.
type roundingMode uint8

const (
	roundUp roundingMode = iota
	roundDown
	roundCeiling
	roundFloor
	roundHalfUp
	roundHalfDown
	roundHalfEven
	roundUnnecessary
)

var roundingNames = [...]string{"UP", "DOWN", "CEILING", "FLOOR", "HALF_UP", "HALF_DOWN", "HALF_EVEN", "UNNECESSARY"}

// decCompare is BigDecimal.compareTo: by value, whatever the scales.
func decCompare(a, b pgschema.BigDecimal) int {
	if a.Scale == b.Scale {
		return a.Unscaled.Cmp(b.Unscaled)
	}
	sign := a.Unscaled.Sign()
	if sign != b.Unscaled.Sign() {
		return sign - b.Unscaled.Sign()
	}
	if sign == 0 {
		return 0
	}
	// Magnitudes of different orders compare without scaling, which
	// would make numbers as long as the scales are far apart.
	ea, eb := int64(a.Precision())-int64(a.Scale), int64(b.Precision())-int64(b.Scale)
	if ea != eb {
		if ea > eb {
			return sign
		}
		return -sign
	}
	s := max(a.Scale, b.Scale)
	return scaled(a, s).Cmp(scaled(b, s))
}

// scaled is d's unscaled value at scale s >= d.Scale.
func scaled(d pgschema.BigDecimal, s int32) *big.Int {
	if s == d.Scale {
		return d.Unscaled
	}
	return new(big.Int).Mul(d.Unscaled, pow10(int64(s)-int64(d.Scale)))
}

func pow10(n int64) *big.Int { return new(big.Int).Exp(big.NewInt(10), big.NewInt(n), nil) }

// digitBudget charges the memory of a text or number of about n decimal
// digits.
func digitBudget(fr *frame, n int64) {
	if n > 1<<40 {
		n = 1 << 40
	}
	fr.alloc(int(n/2 + 8))
}

// maxBigDigits bounds the digits of the numbers BigDecimal and BigInteger
// compute with: past it one multiplication or conversion to text takes
// tens of milliseconds, too long for a single step of a call. Java's
// BigInteger refuses numbers past 2^31 bits with the same exception.
const maxBigDigits = 300000

// bigGrowth charges an arithmetic result of about n decimal digits,
// refusing one past maxBigDigits before computing it.
func bigGrowth(fr *frame, n int64) {
	if n > maxBigDigits {
		throw(clsArithmetic, "BigInteger would overflow supported range")
	}
	digitBudget(fr, n)
}

// bigBits is bigGrowth for a result of about n bits.
func bigBits(fr *frame, n int64) { bigGrowth(fr, n*3/10+1) }

// roundDiv divides num by den (den > 0 or < 0) rounding as mode does.
func roundDiv(num, den *big.Int, mode roundingMode) *big.Int {
	q, r := new(big.Int).QuoRem(num, den, new(big.Int))
	if r.Sign() == 0 {
		return q
	}
	if mode == roundUnnecessary {
		throw(clsArithmetic, "Rounding necessary")
	}
	neg := (num.Sign() < 0) != (den.Sign() < 0)
	away := false
	switch mode {
	case roundUp:
		away = true
	case roundCeiling:
		away = !neg
	case roundFloor:
		away = neg
	case roundHalfUp, roundHalfDown, roundHalfEven:
		c := new(big.Int).Abs(new(big.Int).Lsh(r, 1)).Cmp(new(big.Int).Abs(den))
		away = c > 0 || c == 0 && (mode == roundHalfUp || mode == roundHalfEven && q.Bit(0) == 1)
	}
	if away {
		if neg {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	return q
}

// setScale is BigDecimal.setScale(s, mode).
func setScale(fr *frame, d pgschema.BigDecimal, s int32, mode roundingMode) pgschema.BigDecimal {
	if s >= d.Scale {
		bigGrowth(fr, int64(d.Precision())+int64(s)-int64(d.Scale))
		return pgschema.BigDecimal{Unscaled: scaled(d, s), Scale: s}
	}
	bigGrowth(fr, int64(d.Scale)-int64(s))
	return pgschema.BigDecimal{Unscaled: roundDiv(d.Unscaled, pow10(int64(d.Scale)-int64(s)), mode), Scale: s}
}

// decDivide is BigDecimal.divide(BigDecimal): the exact quotient at the
// smallest scale at or above the preferred one (this.scale -
// divisor.scale), or ArithmeticException when it does not terminate.
func decDivide(fr *frame, a, b pgschema.BigDecimal) pgschema.BigDecimal {
	if b.Unscaled.Sign() == 0 {
		if a.Unscaled.Sign() == 0 {
			throw(clsArithmetic, "Division undefined")
		}
		throw(clsArithmetic, "Division by zero")
	}
	preferred := int64(a.Scale) - int64(b.Scale)
	if a.Unscaled.Sign() == 0 {
		return pgschema.BigDecimal{Unscaled: new(big.Int), Scale: int32(max(min(preferred, math.MaxInt32), math.MinInt32))}
	}
	num, den := new(big.Int).Set(a.Unscaled), new(big.Int).Set(b.Unscaled)
	if den.Sign() < 0 {
		num.Neg(num)
		den.Neg(den)
	}
	g := new(big.Int).GCD(nil, nil, new(big.Int).Abs(num), den)
	num.Quo(num, g)
	den.Quo(den, g)
	twos, fives := 0, 0
	for den.Bit(0) == 0 {
		den.Rsh(den, 1)
		twos++
	}
	five := big.NewInt(5)
	for new(big.Int).Rem(den, five).Sign() == 0 {
		den.Quo(den, five)
		fives++
	}
	if den.Cmp(big.NewInt(1)) != 0 {
		throw(clsArithmetic, "Non-terminating decimal expansion; no exact representable decimal result.")
	}
	k := max(twos, fives)
	bigGrowth(fr, int64(k)+int64(num.BitLen())*3/10)
	num.Mul(num, new(big.Int).Exp(big.NewInt(2), big.NewInt(int64(k-twos)), nil))
	num.Mul(num, new(big.Int).Exp(five, big.NewInt(int64(k-fives)), nil))
	scale := int64(k) + preferred
	ten := big.NewInt(10)
	for scale > preferred {
		q, r := new(big.Int).QuoRem(num, ten, new(big.Int))
		if r.Sign() != 0 {
			break
		}
		num, scale = q, scale-1
	}
	if scale < preferred {
		num.Mul(num, pow10(preferred-scale))
		scale = preferred
	}
	if scale != int64(int32(scale)) {
		throw(clsArithmetic, "Overflow")
	}
	return pgschema.BigDecimal{Unscaled: num, Scale: int32(scale)}
}

// decDivideScale is BigDecimal.divide(divisor, scale, mode).
func decDivideScale(fr *frame, a, b pgschema.BigDecimal, s int32, mode roundingMode) pgschema.BigDecimal {
	if b.Unscaled.Sign() == 0 {
		if a.Unscaled.Sign() == 0 {
			throw(clsArithmetic, "Division undefined")
		}
		throw(clsArithmetic, "Division by zero")
	}
	// a/b at scale s: a.u * 10^(s + b.s - a.s) / b.u
	shift := int64(s) + int64(b.Scale) - int64(a.Scale)
	num, den := new(big.Int).Set(a.Unscaled), new(big.Int).Set(b.Unscaled)
	if shift >= 0 {
		bigGrowth(fr, shift+int64(a.Precision()))
		num.Mul(num, pow10(shift))
	} else {
		bigGrowth(fr, -shift+int64(b.Precision()))
		den.Mul(den, pow10(-shift))
	}
	return pgschema.BigDecimal{Unscaled: roundDiv(num, den, mode), Scale: s}
}

// parseDecimal is new BigDecimal(String).
func parseDecimal(v val) pgschema.BigDecimal {
	if v.r == nil {
		npe()
	}
	if len(v.str()) > maxBigDigits {
		throw(clsArithmetic, "BigInteger would overflow supported range")
	}
	d, ok := pgschema.ParseBigDecimal(v.str())
	if !ok {
		if v.str() == "" {
			throw(clsNumberFormat, "Index 0 out of bounds for length 0")
		}
		throwBare(clsNumberFormat)
	}
	return d
}

// exactDecimal is new BigDecimal(double): the double's exact binary value.
func exactDecimal(f float64) pgschema.BigDecimal {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		throw(clsNumberFormat, "Infinite or NaN")
	}
	r, _ := new(big.Float).SetFloat64(f).Rat(nil)
	num, den := r.Num(), r.Denom()
	k := int64(den.BitLen() - 1) // den is 2^k
	num = new(big.Int).Mul(num, new(big.Int).Exp(big.NewInt(5), big.NewInt(k), nil))
	return pgschema.BigDecimal{Unscaled: num, Scale: int32(k)}
}

// parseBigInteger is new BigInteger(String, radix).
func parseBigInteger(v val, radix int) *big.Int {
	if v.r == nil {
		npe()
	}
	s := v.str()
	if radix < 2 || radix > 36 {
		throw(clsNumberFormat, "Radix out of range")
	}
	if s == "" {
		throw(clsNumberFormat, "Zero length BigInteger")
	}
	body := strings.TrimLeft(s, "+-")
	if len(s)-len(body) > 1 || strings.ContainsAny(body, "+-_") {
		throw(clsNumberFormat, "Illegal embedded sign character")
	}
	if body == "" {
		throw(clsNumberFormat, "Zero length BigInteger")
	}
	if len(body) > maxBigDigits {
		throw(clsArithmetic, "BigInteger would overflow supported range")
	}
	n, ok := new(big.Int).SetString(s, radix)
	if !ok {
		throw(clsNumberFormat, "For input string: \"%s\"", body)
	}
	return n
}

func declareBig() {
	for i, name := range roundingNames {
		clsRoundingMode.fields[name] = &field{t: classType(clsRoundingMode), v: refval(roundingMode(i))}
	}
	c := clsBigDecimal
	dec := func(d pgschema.BigDecimal) val { return refval(d) }
	mode := func(v val) roundingMode {
		if v.r == nil {
			npe()
		}
		return v.r.(roundingMode)
	}
	legacy := func(v val) roundingMode {
		if v.i() < 0 || v.i() > 7 {
			throw(clsIllegalArgument, "Invalid rounding mode")
		}
		return roundingMode(v.i())
	}
	for i, name := range roundingNames {
		constField(c, "ROUND_"+name, "int", ival(int32(i)), int64(i))
	}
	c.fields["ZERO"] = &field{t: classType(c), v: dec(pgschema.BigDecimal{Unscaled: big.NewInt(0)})}
	c.fields["ONE"] = &field{t: classType(c), v: dec(pgschema.BigDecimal{Unscaled: big.NewInt(1)})}
	c.fields["TEN"] = &field{t: classType(c), v: dec(pgschema.BigDecimal{Unscaled: big.NewInt(10)})}
	def(c, "static BigDecimal valueOf(long)", func(_ *frame, _ val, a []val) val {
		return dec(pgschema.BigDecimal{Unscaled: big.NewInt(a[0].j())})
	})
	def(c, "static BigDecimal valueOf(long,int)", func(_ *frame, _ val, a []val) val {
		return dec(pgschema.BigDecimal{Unscaled: big.NewInt(a[0].j()), Scale: a[1].i()})
	})
	def(c, "static BigDecimal valueOf(double)", func(_ *frame, _ val, a []val) val {
		d, err := pgschema.BigDecimalOfFloat(a[0].d(), 64)
		if err != nil {
			throw(clsNumberFormat, "Infinite or NaN")
		}
		return dec(d)
	})
	ctor(c, "(String)", func(_ *frame, _ val, a []val) val { return dec(parseDecimal(a[0])) })
	ctor(c, "(int)", func(_ *frame, _ val, a []val) val { return dec(pgschema.BigDecimal{Unscaled: big.NewInt(a[0].j())}) })
	ctor(c, "(long)", func(_ *frame, _ val, a []val) val { return dec(pgschema.BigDecimal{Unscaled: big.NewInt(a[0].j())}) })
	ctor(c, "(double)", func(_ *frame, _ val, a []val) val { return dec(exactDecimal(a[0].d())) })
	ctor(c, "(BigInteger)", func(_ *frame, _ val, a []val) val {
		if a[0].r == nil {
			npe()
		}
		return dec(pgschema.BigDecimal{Unscaled: bigOf(a[0])})
	})
	ctor(c, "(BigInteger,int)", func(_ *frame, _ val, a []val) val {
		if a[0].r == nil {
			npe()
		}
		return dec(pgschema.BigDecimal{Unscaled: bigOf(a[0]), Scale: a[1].i()})
	})
	arg := func(v val) pgschema.BigDecimal {
		if v.r == nil {
			npe()
		}
		return decOf(v)
	}
	def(c, "BigDecimal add(BigDecimal)", func(fr *frame, r val, a []val) val {
		b := arg(a[0])
		bigGrowth(fr, absScaleDiff(decOf(r), b)+int64(max(decOf(r).Precision(), b.Precision())))
		return dec(decOf(r).Add(b))
	})
	def(c, "BigDecimal subtract(BigDecimal)", func(fr *frame, r val, a []val) val {
		b := arg(a[0])
		bigGrowth(fr, absScaleDiff(decOf(r), b)+int64(max(decOf(r).Precision(), b.Precision())))
		return dec(decOf(r).Sub(b))
	})
	def(c, "BigDecimal multiply(BigDecimal)", func(fr *frame, r val, a []val) val {
		x, y := decOf(r), arg(a[0])
		bigBits(fr, int64(x.Unscaled.BitLen()+y.Unscaled.BitLen()))
		s := int64(x.Scale) + int64(y.Scale)
		if s != int64(int32(s)) {
			throw(clsArithmetic, "Overflow")
		}
		return dec(pgschema.BigDecimal{Unscaled: new(big.Int).Mul(x.Unscaled, y.Unscaled), Scale: int32(s)})
	})
	def(c, "BigDecimal divide(BigDecimal)", func(fr *frame, r val, a []val) val { return dec(decDivide(fr, decOf(r), arg(a[0]))) })
	def(c, "BigDecimal divide(BigDecimal,RoundingMode)", func(fr *frame, r val, a []val) val {
		return dec(decDivideScale(fr, decOf(r), arg(a[0]), decOf(r).Scale, mode(a[1])))
	})
	def(c, "BigDecimal divide(BigDecimal,int)", func(fr *frame, r val, a []val) val {
		return dec(decDivideScale(fr, decOf(r), arg(a[0]), decOf(r).Scale, legacy(a[1])))
	})
	def(c, "BigDecimal divide(BigDecimal,int,RoundingMode)", func(fr *frame, r val, a []val) val {
		return dec(decDivideScale(fr, decOf(r), arg(a[0]), a[1].i(), mode(a[2])))
	})
	def(c, "BigDecimal divide(BigDecimal,int,int)", func(fr *frame, r val, a []val) val {
		return dec(decDivideScale(fr, decOf(r), arg(a[0]), a[1].i(), legacy(a[2])))
	})
	def(c, "BigDecimal remainder(BigDecimal)", func(fr *frame, r val, a []val) val {
		x, y := decOf(r), arg(a[0])
		q := decDivideScale(fr, x, y, 0, roundDown)
		prod := pgschema.BigDecimal{Unscaled: new(big.Int).Mul(q.Unscaled, y.Unscaled), Scale: y.Scale}
		return dec(x.Sub(prod))
	})
	def(c, "BigDecimal negate()", func(_ *frame, r val, _ []val) val {
		d := decOf(r)
		return dec(pgschema.BigDecimal{Unscaled: new(big.Int).Neg(d.Unscaled), Scale: d.Scale})
	})
	def(c, "BigDecimal abs()", func(_ *frame, r val, _ []val) val {
		d := decOf(r)
		return dec(pgschema.BigDecimal{Unscaled: new(big.Int).Abs(d.Unscaled), Scale: d.Scale})
	})
	def(c, "BigDecimal pow(int)", func(fr *frame, r val, a []val) val {
		d, n := decOf(r), int64(a[0].i())
		if n < 0 || n > 999999999 {
			throw(clsArithmetic, "Invalid operation")
		}
		bigGrowth(fr, int64(d.Precision())*n)
		s := int64(d.Scale) * n
		if s != int64(int32(s)) {
			throw(clsArithmetic, "Overflow")
		}
		return dec(pgschema.BigDecimal{Unscaled: new(big.Int).Exp(d.Unscaled, big.NewInt(n), nil), Scale: int32(s)})
	})
	def(c, "int signum()", func(_ *frame, r val, _ []val) val { return ival(int32(decOf(r).Unscaled.Sign())) })
	def(c, "int scale()", func(_ *frame, r val, _ []val) val { return ival(decOf(r).Scale) })
	def(c, "int precision()", func(_ *frame, r val, _ []val) val { return ival(int32(decOf(r).Precision())) })
	def(c, "BigInteger unscaledValue()", func(_ *frame, r val, _ []val) val { return refval(decOf(r).Unscaled) })
	def(c, "int compareTo(BigDecimal)", func(_ *frame, r val, a []val) val { return ival(int32(decCompare(decOf(r), arg(a[0])))) })
	def(c, "BigDecimal max(BigDecimal)", func(_ *frame, r val, a []val) val {
		if decCompare(decOf(r), arg(a[0])) >= 0 {
			return r
		}
		return a[0]
	})
	def(c, "BigDecimal min(BigDecimal)", func(_ *frame, r val, a []val) val {
		if decCompare(decOf(r), arg(a[0])) <= 0 {
			return r
		}
		return a[0]
	})
	def(c, "BigDecimal setScale(int)", func(fr *frame, r val, a []val) val {
		return dec(setScale(fr, decOf(r), a[0].i(), roundUnnecessary))
	})
	def(c, "BigDecimal setScale(int,RoundingMode)", func(fr *frame, r val, a []val) val {
		return dec(setScale(fr, decOf(r), a[0].i(), mode(a[1])))
	})
	def(c, "BigDecimal setScale(int,int)", func(fr *frame, r val, a []val) val {
		return dec(setScale(fr, decOf(r), a[0].i(), legacy(a[1])))
	})
	def(c, "BigDecimal stripTrailingZeros()", func(_ *frame, r val, _ []val) val {
		d := decOf(r)
		if d.Unscaled.Sign() == 0 {
			return dec(pgschema.BigDecimal{Unscaled: new(big.Int)})
		}
		u, s := new(big.Int).Set(d.Unscaled), int64(d.Scale)
		ten := big.NewInt(10)
		for {
			q, m := new(big.Int).QuoRem(u, ten, new(big.Int))
			if m.Sign() != 0 || s == math.MinInt32 {
				break
			}
			u, s = q, s-1
		}
		return dec(pgschema.BigDecimal{Unscaled: u, Scale: int32(s)})
	})
	def(c, "BigDecimal movePointLeft(int)", func(fr *frame, r val, a []val) val { return dec(movePoint(fr, decOf(r), -int64(a[0].i()))) })
	def(c, "BigDecimal movePointRight(int)", func(fr *frame, r val, a []val) val { return dec(movePoint(fr, decOf(r), int64(a[0].i()))) })
	def(c, "String toPlainString()", func(fr *frame, r val, _ []val) val {
		d := decOf(r)
		digitBudget(fr, int64(absI(d.Scale)))
		return strval(d.PlainString())
	})
	def(c, "BigInteger toBigInteger()", func(fr *frame, r val, _ []val) val {
		d := decOf(r)
		bigGrowth(fr, int64(d.Precision())-int64(min(d.Scale, 0)))
		return refval(d.TruncInt())
	})
	def(c, "long longValueExact()", func(fr *frame, r val, _ []val) val {
		return jval(exactLong(fr, decOf(r), 64))
	})
	def(c, "int intValueExact()", func(fr *frame, r val, _ []val) val {
		return ival(int32(exactLong(fr, decOf(r), 32)))
	})
	declareBigInteger()
}

// absScaleDiff is how far apart two decimals' scales are.
func absScaleDiff(a, b pgschema.BigDecimal) int64 {
	d := int64(a.Scale) - int64(b.Scale)
	if d < 0 {
		return -d
	}
	return d
}

// movePoint is movePointRight(n) (and Left with -n): the scale drops by
// n but stays at least zero.
func movePoint(fr *frame, d pgschema.BigDecimal, n int64) pgschema.BigDecimal {
	s := int64(d.Scale) - n
	if s != int64(int32(s)) {
		throw(clsArithmetic, "Overflow")
	}
	out := pgschema.BigDecimal{Unscaled: d.Unscaled, Scale: int32(s)}
	if s < 0 {
		return setScale(fr, out, 0, roundUnnecessary)
	}
	return out
}

// exactLong is longValueExact and intValueExact.
func exactLong(fr *frame, d pgschema.BigDecimal, bits int) int64 {
	if d.Scale > 0 {
		d = setScale(fr, d, 0, roundUnnecessary)
	} else if d.Scale < -20 && d.Unscaled.Sign() != 0 {
		throw(clsArithmetic, "Overflow")
	}
	n := d.TruncInt()
	if n.BitLen() >= bits {
		throw(clsArithmetic, "Overflow")
	}
	return n.Int64()
}
