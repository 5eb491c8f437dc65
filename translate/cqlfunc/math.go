package cqlfunc

import (
	"encoding/binary"
	"math"
	"math/big"

	"github.com/cqlpg/cqlpg/pgschema"
)

// Cassandra 5.0's math functions: abs, exp, log, log10 and round of every
// numeric type, each returning its argument's type. Integers and floats
// compute as Java does on them: in double, then narrowed back to the type
// as a Java cast narrows (saturating to int first, for tinyint and
// smallint, then keeping the low bits). Varints and decimals compute
// exactly, to 32 significant digits or the argument's precision when it
// has more, rounded half to even; a varint's result then drops its
// fraction.

// mathKinds are the types the math functions are declared for, in
// Cassandra's order.
var mathKinds = []pgschema.Kind{pgschema.Tinyint, pgschema.Smallint, pgschema.Int, pgschema.Float, pgschema.Bigint,
	pgschema.Double, pgschema.Varint, pgschema.Decimal, pgschema.Counter}

// mathOps are the functions, in the order Cassandra declares each type's.
var mathOps = []string{"abs", "exp", "log", "log10", "round"}

func mathFunctions() []*Function {
	var fns []*Function
	for _, k := range mathKinds {
		t := scalar(k)
		for _, op := range mathOps {
			fns = append(fns, pureFunction(op, t, []*pgschema.Type{t}, mathEval(op, k)))
		}
	}
	return fns
}

// mathEval returns op's evaluation on values of kind k.
func mathEval(op string, k pgschema.Kind) func([][]byte) ([]byte, error) {
	return func(a [][]byte) ([]byte, error) {
		v := a[0]
		if v == nil {
			return nil, nil
		}
		switch k {
		case pgschema.Float:
			if len(v) != 4 {
				return nil, nil // empty
			}
			return floatMath(op, math.Float32frombits(binary.BigEndian.Uint32(v))), nil
		case pgschema.Double:
			if len(v) != 8 {
				return nil, nil
			}
			return doubleMath(op, math.Float64frombits(binary.BigEndian.Uint64(v))), nil
		case pgschema.Varint:
			if len(v) == 0 {
				return nil, nil
			}
			return varintMath(op, pgschema.VarintValue(v))
		case pgschema.Decimal:
			if len(v) == 0 {
				return nil, nil
			}
			d, err := pgschema.DecodeBigDecimal(v)
			if err != nil {
				return nil, err
			}
			return decimalMath(op, d)
		}
		if len(v) == 0 {
			return nil, nil
		}
		return integerMath(op, k, decodeInteger(v)), nil
	}
}

// decodeInteger reads a tinyint, smallint, int, bigint or counter.
func decodeInteger(v []byte) int64 {
	switch len(v) {
	case 1:
		return int64(int8(v[0]))
	case 2:
		return int64(int16(binary.BigEndian.Uint16(v)))
	case 4:
		return int64(int32(binary.BigEndian.Uint32(v)))
	}
	return int64(binary.BigEndian.Uint64(v))
}

// integerMath is op on an integer type, as Java computes it on the type:
// abs and round on the value, the others in double, narrowed back.
func integerMath(op string, k pgschema.Kind, n int64) []byte {
	var r int64
	switch op {
	case "abs":
		r = javaNarrow(k, absInt(k, n))
	case "round":
		r = n
	default:
		r = narrowDouble(k, doubleOf(op, float64(n)))
	}
	return encodeInteger(k, r)
}

// absInt is Java's Math.abs on the value widened as Java widens it: to int
// for tinyint and smallint, so that their least value comes back itself
// once narrowed.
func absInt(k pgschema.Kind, n int64) int64 {
	switch k {
	case pgschema.Bigint, pgschema.Counter:
		if n == math.MinInt64 {
			return n
		}
	default:
		if int32(n) == math.MinInt32 {
			return n
		}
	}
	if n < 0 {
		return -n
	}
	return n
}

// javaNarrow keeps the low bits of an int result for tinyint and smallint,
// as a Java cast does.
func javaNarrow(k pgschema.Kind, n int64) int64 {
	switch k {
	case pgschema.Tinyint:
		return int64(int8(n))
	case pgschema.Smallint:
		return int64(int16(n))
	case pgschema.Int:
		return int64(int32(n))
	}
	return n
}

// narrowDouble is a Java cast of a double to an integer type: NaN is 0,
// values beyond long (or int, for the narrower types) saturate, and
// tinyint and smallint then keep the int's low bits.
func narrowDouble(k pgschema.Kind, d float64) int64 {
	if k == pgschema.Bigint || k == pgschema.Counter {
		return pgschema.JavaDoubleToLong(d)
	}
	return javaNarrow(k, int64(pgschema.JavaDoubleToInt(d)))
}

// doubleOf is exp, log or log10 of a double, as Java's Math has them.
func doubleOf(op string, d float64) float64 {
	switch op {
	case "exp":
		return math.Exp(d)
	case "log":
		return math.Log(d)
	}
	return math.Log10(d)
}

// javaRound is Java's Math.round of a double: the closest long, ties
// toward positive infinity, NaN 0, saturating.
func javaRound(d float64) int64 {
	if math.IsNaN(d) {
		return 0
	}
	r := math.Floor(d)
	if d-r >= 0.5 {
		r++
	}
	return pgschema.JavaDoubleToLong(r)
}

// javaRoundFloat is Java's Math.round of a float: the closest int, ties
// toward positive infinity, NaN 0, saturating.
func javaRoundFloat(f float32) int32 {
	if f != f {
		return 0
	}
	r := float32(math.Floor(float64(f)))
	if f-r >= 0.5 {
		r++
	}
	switch {
	case r >= math.MaxInt32:
		return math.MaxInt32
	case r <= math.MinInt32:
		return math.MinInt32
	}
	return int32(r)
}

func floatMath(op string, f float32) []byte {
	var r float32
	switch op {
	case "abs":
		r = float32(math.Abs(float64(f)))
	case "round":
		r = float32(javaRoundFloat(f))
	default:
		r = float32(doubleOf(op, float64(f)))
	}
	return binary.BigEndian.AppendUint32(nil, math.Float32bits(r))
}

func doubleMath(op string, d float64) []byte {
	var r float64
	switch op {
	case "abs":
		r = math.Abs(d)
	case "round":
		r = float64(javaRound(d))
	default:
		r = doubleOf(op, d)
	}
	return binary.BigEndian.AppendUint64(nil, math.Float64bits(r))
}

func varintMath(op string, n *big.Int) ([]byte, error) {
	switch op {
	case "abs":
		return pgschema.VarintBytes(new(big.Int).Abs(n)), nil
	case "round":
		return pgschema.VarintBytes(n), nil
	}
	d := pgschema.BigDecimal{Unscaled: n}
	r, err := decimalTranscendental(op, "varint", d)
	if err != nil {
		return nil, err
	}
	return pgschema.VarintBytes(r.TruncInt()), nil
}

func decimalMath(op string, d pgschema.BigDecimal) ([]byte, error) {
	switch op {
	case "abs":
		return pgschema.BigDecimal{Unscaled: new(big.Int).Abs(d.Unscaled), Scale: d.Scale}.Bytes(), nil
	case "round":
		return d.RoundHalfUp(0).Bytes(), nil
	}
	r, err := decimalTranscendental(op, "decimal", d)
	if err != nil {
		return nil, err
	}
	return r.Bytes(), nil
}

// Precision of decimal exp, log and log10: the argument's, but at least
// minDecimalDigits and at most maxDecimalDigits significant digits.
const (
	minDecimalDigits = 32
	maxDecimalDigits = 10000
)

// decimalTranscendental computes exp, log or log10 of a decimal to its
// precision, rounded half to even; log and log10 of zero or less fail as
// Cassandra's do.
func decimalTranscendental(op, typeName string, d pgschema.BigDecimal) (pgschema.BigDecimal, error) {
	if op != "exp" && d.Unscaled.Sign() <= 0 {
		what := "Natural log"
		if op == "log10" {
			what = "Log10"
		}
		return pgschema.BigDecimal{}, &FunctionFailureError{Keyspace: NativeKeyspace, Function: op, ArgTypes: []string{typeName},
			Msg: "execution of '" + NativeKeyspace + "." + op + "[" + typeName + "]' failed: java.lang.ArithmeticException: " +
				what + " of number zero or less"}
	}
	digits := min(max(d.Precision(), minDecimalDigits), maxDecimalDigits)
	switch {
	case op == "exp" && d.Unscaled.Sign() == 0:
		return pgschema.BigDecimal{Unscaled: big.NewInt(1)}, nil
	case op != "exp" && d.IsOne():
		return pgschema.BigDecimal{Unscaled: new(big.Int)}, nil
	}
	// Enough binary digits for the decimal ones and a margin that makes
	// the last decimal digit exact.
	prec := uint(float64(digits)*math.Log2(10)) + 64
	x := d.BigFloat(prec)
	var r *big.Float
	switch op {
	case "exp":
		r = bigExp(x, prec)
	case "log":
		r = bigLog(x, prec)
	default:
		r = new(big.Float).SetPrec(prec).Quo(bigLog(x, prec), bigLog(new(big.Float).SetPrec(prec).SetInt64(10), prec))
	}
	return pgschema.BigDecimalOfBigFloat(r, digits), nil
}

// bigExp is e^x to prec bits: x is halved until small, the series summed,
// and the result squared back.
func bigExp(x *big.Float, prec uint) *big.Float {
	work := prec + 64
	y := new(big.Float).SetPrec(work).Set(x)
	neg := y.Sign() < 0
	if neg {
		y.Neg(y)
	}
	halvings := 0
	for y.Cmp(big.NewFloat(0.5)) > 0 {
		y.Quo(y, big.NewFloat(2))
		halvings++
	}
	halvings += 8 // a smaller argument converges in fewer terms
	y.SetMantExp(y, -8)
	sum := new(big.Float).SetPrec(work).SetInt64(1)
	term := new(big.Float).SetPrec(work).SetInt64(1)
	eps := new(big.Float).SetPrec(work).SetMantExp(big.NewFloat(1), -int(work))
	for i := int64(1); ; i++ {
		term.Mul(term, y)
		term.Quo(term, new(big.Float).SetPrec(work).SetInt64(i))
		sum.Add(sum, term)
		if term.Cmp(eps) < 0 {
			break
		}
	}
	for range halvings {
		sum.Mul(sum, sum)
	}
	if neg {
		sum.Quo(new(big.Float).SetPrec(work).SetInt64(1), sum)
	}
	return sum.SetPrec(prec)
}

// bigLog is ln(x), x > 0, to prec bits: x = m·2^e with m in [0.5, 1), and
// ln m = 2·atanh((m−1)/(m+1)) summed as a series, plus e·ln 2.
func bigLog(x *big.Float, prec uint) *big.Float {
	work := prec + 64
	m := new(big.Float).SetPrec(work)
	e := x.MantExp(m)
	r := atanhLog(m, work)
	if e != 0 {
		ln2 := atanhLog(new(big.Float).SetPrec(work).SetInt64(2), work)
		r.Add(r, ln2.Mul(ln2, new(big.Float).SetPrec(work).SetInt64(int64(e))))
	}
	return r.SetPrec(prec)
}

// atanhLog is ln(m) = 2·atanh((m−1)/(m+1)), for m near 1.
func atanhLog(m *big.Float, work uint) *big.Float {
	one := new(big.Float).SetPrec(work).SetInt64(1)
	z := new(big.Float).SetPrec(work).Sub(m, one)
	z.Quo(z, new(big.Float).SetPrec(work).Add(m, one))
	z2 := new(big.Float).SetPrec(work).Mul(z, z)
	sum := new(big.Float).SetPrec(work).Set(z)
	term := new(big.Float).SetPrec(work).Set(z)
	eps := new(big.Float).SetPrec(work).SetMantExp(big.NewFloat(1), -int(work))
	for i := int64(3); ; i += 2 {
		term.Mul(term, z2)
		t := new(big.Float).SetPrec(work).Quo(term, new(big.Float).SetPrec(work).SetInt64(i))
		sum.Add(sum, t)
		if new(big.Float).Abs(t).Cmp(eps) < 0 {
			break
		}
	}
	return sum.Mul(sum, new(big.Float).SetPrec(work).SetInt64(2))
}
