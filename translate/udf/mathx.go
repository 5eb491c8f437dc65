package udf

import (
	"math"
	"math/big"
	"sync"
)

// Correctly rounded sin, cos, tan, exp, log, log10 and pow. HotSpot runs
// Java's Math versions of these as intrinsics accurate to about half an
// ulp, so Java's results are the correctly rounded ones but for rare
// ties; Go's math package is up to an ulp away (math.Tan(1) is not Java's
// 1.5574077246549023). These evaluate the functions in 160-bit binary
// floating point, far more than rounding to a double needs.

const xprec = 160

// piBits holds π to 1200 bits, enough to reduce any double modulo π/2.
var piBits = sync.OnceValue(func() *big.Float {
	// π = 16 atan(1/5) - 4 atan(1/239) (Machin).
	const prec = 1300
	atanInv := func(n int64) *big.Float {
		x := new(big.Float).SetPrec(prec).Quo(big.NewFloat(1).SetPrec(prec), new(big.Float).SetPrec(prec).SetInt64(n))
		x2 := new(big.Float).SetPrec(prec).Mul(x, x)
		sum := new(big.Float).SetPrec(prec).Set(x)
		term := new(big.Float).SetPrec(prec).Set(x)
		eps := new(big.Float).SetPrec(prec).SetMantExp(big.NewFloat(1), -prec)
		for k := int64(1); ; k++ {
			term.Mul(term, x2)
			t := new(big.Float).SetPrec(prec).Quo(term, new(big.Float).SetPrec(prec).SetInt64(2*k+1))
			if t.Cmp(eps) < 0 {
				break
			}
			if k%2 == 1 {
				sum.Sub(sum, t)
			} else {
				sum.Add(sum, t)
			}
		}
		return sum
	}
	a := atanInv(5)
	a.Mul(a, big.NewFloat(16))
	b := atanInv(239)
	b.Mul(b, big.NewFloat(4))
	return a.Sub(a, b)
})

func xf(f float64) *big.Float { return new(big.Float).SetPrec(xprec).SetFloat64(f) }

func round64(x *big.Float) float64 {
	f, _ := x.Float64()
	return f
}

// reduce returns r and k with x = k·π/2 + r and |r| <= π/4.
func reduce(x float64) (*big.Float, int) {
	_, e := math.Frexp(x)
	prec := uint(xprec + 64 + max(e, 0))
	halfPi := new(big.Float).SetPrec(prec).Quo(piBits(), big.NewFloat(2))
	X := new(big.Float).SetPrec(prec).SetFloat64(x)
	q := new(big.Float).SetPrec(prec).Quo(X, halfPi)
	// k = round(q)
	qi, _ := new(big.Float).SetPrec(prec).Add(q, big.NewFloat(0.5)).Int(nil)
	if q.Sign() < 0 {
		t := new(big.Float).SetPrec(prec).Sub(q, big.NewFloat(0.5))
		qi, _ = t.Int(nil)
	}
	r := new(big.Float).SetPrec(prec).Mul(new(big.Float).SetPrec(prec).SetInt(qi), halfPi)
	r.Sub(X, r)
	k := int(new(big.Int).And(qi, big.NewInt(3)).Int64())
	return new(big.Float).SetPrec(xprec).Set(r), k
}

// sinCosSeries returns sin r and cos r for |r| <= π/4.
func sinCosSeries(r *big.Float) (*big.Float, *big.Float) {
	s := new(big.Float).SetPrec(xprec)
	c := new(big.Float).SetPrec(xprec)
	term := new(big.Float).SetPrec(xprec).SetInt64(1)
	for n := int64(0); n < 60; n++ {
		switch n % 4 {
		case 0:
			c.Add(c, term)
		case 1:
			s.Add(s, term)
		case 2:
			c.Sub(c, term)
		case 3:
			s.Sub(s, term)
		}
		term.Mul(term, r)
		term.Quo(term, new(big.Float).SetPrec(xprec).SetInt64(n+1))
		if term.Sign() == 0 {
			break
		}
	}
	return s, c
}

// xsincos returns sin x and cos x to 160 bits; x must be finite.
func xsincos(x float64) (*big.Float, *big.Float) {
	r, k := reduce(x)
	s, c := sinCosSeries(r)
	switch k {
	case 1:
		return c, s.Neg(s)
	case 2:
		return s.Neg(s), c.Neg(c)
	case 3:
		return c.Neg(c), s
	}
	return s, c
}

func xSin(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return math.NaN()
	}
	if x == 0 || math.Abs(x) < 1e-9 {
		return math.Sin(x) // sin x rounds to x there
	}
	s, _ := xsincos(x)
	return round64(s)
}

func xCos(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return math.NaN()
	}
	_, c := xsincos(x)
	return round64(c)
}

func xTan(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return math.NaN()
	}
	if x == 0 || math.Abs(x) < 1e-9 {
		return math.Tan(x)
	}
	s, c := xsincos(x)
	return round64(s.Quo(s, c))
}

// ln2 to 160 bits.
var ln2 = sync.OnceValue(func() *big.Float { return xlogSeries(xf(2)) })

// xlogSeries is ln m for m near 1, as 2·atanh((m-1)/(m+1)).
func xlogSeries(m *big.Float) *big.Float {
	one := xf(1)
	z := new(big.Float).SetPrec(xprec).Quo(new(big.Float).SetPrec(xprec).Sub(m, one), new(big.Float).SetPrec(xprec).Add(m, one))
	z2 := new(big.Float).SetPrec(xprec).Mul(z, z)
	sum := new(big.Float).SetPrec(xprec)
	term := new(big.Float).SetPrec(xprec).Set(z)
	for k := int64(0); k < 400; k++ {
		t := new(big.Float).SetPrec(xprec).Quo(term, new(big.Float).SetPrec(xprec).SetInt64(2*k+1))
		sum.Add(sum, t)
		term.Mul(term, z2)
		if term.Sign() == 0 || term.MantExp(nil)-sum.MantExp(nil) < -xprec-4 {
			break
		}
	}
	return sum.Mul(sum, xf(2))
}

// xlog is ln x for x > 0 to 160 bits.
func xlog(x *big.Float) *big.Float {
	m := new(big.Float).SetPrec(xprec)
	e := x.MantExp(m) // x = m · 2^e, m in [0.5, 1)
	if m.Cmp(xf(math.Sqrt2/2)) < 0 {
		m.Mul(m, xf(2))
		e--
	}
	l := xlogSeries(m)
	return l.Add(l, new(big.Float).SetPrec(xprec).Mul(ln2(), new(big.Float).SetPrec(xprec).SetInt64(int64(e))))
}

// xexp is e^x to 160 bits; x must be in range.
func xexp(x *big.Float) *big.Float {
	// x = k·ln2 + r, |r| <= ln2/2.
	kf := new(big.Float).SetPrec(xprec).Quo(x, ln2())
	kf.Add(kf, xf(0.5))
	if kf.Sign() < 0 {
		kf.Sub(kf, xf(1))
	}
	k, _ := kf.Int64()
	r := new(big.Float).SetPrec(xprec).Sub(x, new(big.Float).SetPrec(xprec).Mul(ln2(), new(big.Float).SetPrec(xprec).SetInt64(k)))
	sum := xf(1)
	term := xf(1)
	for n := int64(1); n < 80; n++ {
		term.Mul(term, r)
		term.Quo(term, new(big.Float).SetPrec(xprec).SetInt64(n))
		sum.Add(sum, term)
		if term.Sign() == 0 || term.MantExp(nil)-sum.MantExp(nil) < -xprec-4 {
			break
		}
	}
	return sum.SetMantExp(sum, int(k))
}

func xExp(x float64) float64 {
	switch {
	case math.IsNaN(x):
		return x
	case x > 709.8:
		return math.Inf(1)
	case x < -746:
		return 0
	case x == 0:
		return 1
	}
	return round64(xexp(xf(x)))
}

func xLog(x float64) float64 {
	if x <= 0 || math.IsNaN(x) || math.IsInf(x, 1) || x == 1 {
		return math.Log(x)
	}
	return round64(xlog(xf(x)))
}

func xLog10(x float64) float64 {
	if x <= 0 || math.IsNaN(x) || math.IsInf(x, 1) || x == 1 {
		return math.Log10(x)
	}
	// Exact powers of ten give exact results.
	if p := math.Round(math.Log10(x)); math.Abs(p) <= 22 && math.Pow(10, p) == x {
		return p
	}
	l := xlog(xf(x))
	return round64(l.Quo(l, xlog(xf(10))))
}

// xPow is Math.pow: Java's special cases, then exact powers computed
// exactly and the rest as exp(y·ln x) to 160 bits.
func xPow(x, y float64) float64 {
	switch {
	case math.IsNaN(y):
		return math.NaN()
	case y == 0:
		return 1
	case math.IsNaN(x):
		return math.NaN()
	case math.IsInf(y, 0) && math.Abs(x) == 1:
		return math.NaN()
	case math.IsInf(x, 0) || math.IsInf(y, 0) || x == 0 || y == 1:
		return math.Pow(x, y)
	}
	integral := y == math.Trunc(y)
	if x < 0 && !integral {
		return math.NaN()
	}
	if integral && math.Abs(y) <= 64 {
		// Exactly, then one rounding.
		n := int(math.Abs(y))
		p := new(big.Float).SetPrec(uint(53*n + 64)).SetFloat64(1)
		b := new(big.Float).SetPrec(uint(53*n + 64)).SetFloat64(x)
		for i := 0; i < n; i++ {
			p.Mul(p, b)
		}
		if y < 0 {
			p = new(big.Float).SetPrec(xprec).Quo(xf(1), p)
		}
		return round64(p)
	}
	l := xlog(xf(math.Abs(x)))
	l.Mul(l, xf(y))
	if v, _ := l.Float64(); v > 709.8 {
		return signedPow(x, y, math.Inf(1))
	} else if v < -746 {
		return signedPow(x, y, 0)
	}
	return signedPow(x, y, round64(xexp(l)))
}

// signedPow gives |x|^y the sign of x^y: negative for a negative x raised
// to an odd integer.
func signedPow(x, y, r float64) float64 {
	if x < 0 && math.Mod(y, 2) != 0 {
		return -r
	}
	return r
}
