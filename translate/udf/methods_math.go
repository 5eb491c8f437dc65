package udf

import (
	"math"
	"math/rand/v2"

	"github.com/cqlpg/cqlpg/pgschema"
)

// java.lang.Math, and StrictMath, which bodies may use alike.

func declareMath() {
	for _, c := range []*jclass{clsMath, clsStrictMath} {
		declareMathOf(c)
	}
}

func declareMathOf(c *jclass) {
	constField(c, "PI", "double", dval(math.Pi), math.Pi)
	constField(c, "E", "double", dval(math.E), math.E)
	unary := map[string]func(float64) float64{
		"sqrt": math.Sqrt, "cbrt": math.Cbrt, "exp": xExp, "expm1": math.Expm1, "log": xLog,
		"log10": xLog10, "log1p": math.Log1p, "sin": xSin, "cos": xCos, "tan": xTan,
		"asin": math.Asin, "acos": math.Acos, "atan": math.Atan, "sinh": math.Sinh, "cosh": math.Cosh,
		"tanh": math.Tanh, "floor": math.Floor, "ceil": math.Ceil, "rint": math.RoundToEven,
		"toRadians": func(x float64) float64 { return x / 180 * math.Pi },
		"toDegrees": func(x float64) float64 { return x * 180 / math.Pi },
		"ulp": func(x float64) float64 {
			x = math.Abs(x)
			return math.Nextafter(x, math.Inf(1)) - x
		},
	}
	for name, f := range unary {
		def(c, "static double "+name+"(double)", func(_ *frame, _ val, a []val) val { return dval(f(a[0].d())) })
	}
	def(c, "static double pow(double,double)", func(_ *frame, _ val, a []val) val { return dval(xPow(a[0].d(), a[1].d())) })
	def(c, "static double atan2(double,double)", func(_ *frame, _ val, a []val) val { return dval(math.Atan2(a[0].d(), a[1].d())) })
	def(c, "static double hypot(double,double)", func(_ *frame, _ val, a []val) val { return dval(math.Hypot(a[0].d(), a[1].d())) })
	def(c, "static double IEEEremainder(double,double)", func(_ *frame, _ val, a []val) val {
		return dval(math.Remainder(a[0].d(), a[1].d()))
	})
	def(c, "static double signum(double)", func(_ *frame, _ val, a []val) val { return dval(signum(a[0].d())) })
	def(c, "static float signum(float)", func(_ *frame, _ val, a []val) val { return fval(float32(signum(a[0].d()))) })
	def(c, "static long round(double)", func(_ *frame, _ val, a []val) val { return jval(pgschema.JavaDoubleToLong(javaRound(a[0].d()))) })
	def(c, "static int round(float)", func(_ *frame, _ val, a []val) val { return ival(pgschema.JavaDoubleToInt(javaRound(a[0].d()))) })
	def(c, "static double random()", func(*frame, val, []val) val { return dval(rand.Float64()) })

	def(c, "static int abs(int)", func(_ *frame, _ val, a []val) val { return ival(absI(a[0].i())) })
	def(c, "static long abs(long)", func(_ *frame, _ val, a []val) val {
		if a[0].j() < 0 {
			return jval(-a[0].j())
		}
		return a[0]
	})
	def(c, "static float abs(float)", func(_ *frame, _ val, a []val) val { return fval(float32(math.Abs(a[0].d()))) })
	def(c, "static double abs(double)", func(_ *frame, _ val, a []val) val { return dval(math.Abs(a[0].d())) })
	def(c, "static int max(int,int)", func(_ *frame, _ val, a []val) val { return ival(max(a[0].i(), a[1].i())) })
	def(c, "static long max(long,long)", func(_ *frame, _ val, a []val) val { return jval(max(a[0].j(), a[1].j())) })
	def(c, "static float max(float,float)", func(_ *frame, _ val, a []val) val { return fval(float32(javaMax(a[0].d(), a[1].d()))) })
	def(c, "static double max(double,double)", func(_ *frame, _ val, a []val) val { return dval(javaMax(a[0].d(), a[1].d())) })
	def(c, "static int min(int,int)", func(_ *frame, _ val, a []val) val { return ival(min(a[0].i(), a[1].i())) })
	def(c, "static long min(long,long)", func(_ *frame, _ val, a []val) val { return jval(min(a[0].j(), a[1].j())) })
	def(c, "static float min(float,float)", func(_ *frame, _ val, a []val) val { return fval(float32(javaMin(a[0].d(), a[1].d()))) })
	def(c, "static double min(double,double)", func(_ *frame, _ val, a []val) val { return dval(javaMin(a[0].d(), a[1].d())) })

	def(c, "static int floorDiv(int,int)", func(_ *frame, _ val, a []val) val {
		return ival(int32(floorDiv(a[0].j(), a[1].j())))
	})
	def(c, "static long floorDiv(long,long)", func(_ *frame, _ val, a []val) val { return jval(floorDiv(a[0].j(), a[1].j())) })
	def(c, "static int floorMod(int,int)", func(_ *frame, _ val, a []val) val {
		return ival(int32(floorMod(a[0].j(), a[1].j())))
	})
	def(c, "static long floorMod(long,long)", func(_ *frame, _ val, a []val) val { return jval(floorMod(a[0].j(), a[1].j())) })

	exact := func(name string, f func(x, y int64) int64) {
		def(c, "static int "+name+"(int,int)", func(_ *frame, _ val, a []val) val {
			r := f(a[0].j(), a[1].j())
			if r != int64(int32(r)) {
				throw(clsArithmetic, "integer overflow")
			}
			return ival(int32(r))
		})
		def(c, "static long "+name+"(long,long)", func(_ *frame, _ val, a []val) val {
			x, y := a[0].j(), a[1].j()
			r := f(x, y)
			if !exactOK(name, x, y, r) {
				throw(clsArithmetic, "long overflow")
			}
			return jval(r)
		})
	}
	exact("addExact", func(x, y int64) int64 { return x + y })
	exact("subtractExact", func(x, y int64) int64 { return x - y })
	exact("multiplyExact", func(x, y int64) int64 { return x * y })
	def(c, "static int negateExact(int)", func(_ *frame, _ val, a []val) val {
		if a[0].i() == math.MinInt32 {
			throw(clsArithmetic, "integer overflow")
		}
		return ival(-a[0].i())
	})
	def(c, "static long negateExact(long)", func(_ *frame, _ val, a []val) val {
		if a[0].j() == math.MinInt64 {
			throw(clsArithmetic, "long overflow")
		}
		return jval(-a[0].j())
	})
	def(c, "static int toIntExact(long)", func(_ *frame, _ val, a []val) val {
		if a[0].j() != int64(int32(a[0].j())) {
			throw(clsArithmetic, "integer overflow")
		}
		return ival(int32(a[0].j()))
	})
	def(c, "static int incrementExact(int)", func(_ *frame, _ val, a []val) val {
		if a[0].i() == math.MaxInt32 {
			throw(clsArithmetic, "integer overflow")
		}
		return ival(a[0].i() + 1)
	})
	def(c, "static int decrementExact(int)", func(_ *frame, _ val, a []val) val {
		if a[0].i() == math.MinInt32 {
			throw(clsArithmetic, "integer overflow")
		}
		return ival(a[0].i() - 1)
	})
}

// exactOK reports whether a long operation did not overflow.
func exactOK(name string, x, y, r int64) bool {
	switch name {
	case "addExact":
		return (x^r)&(y^r) >= 0
	case "subtractExact":
		return (x^y)&(x^r) >= 0
	}
	return x == 0 || r/x == y && !(x == -1 && y == math.MinInt64)
}

func absI(n int32) int32 {
	if n < 0 {
		return -n
	}
	return n
}

func signum(x float64) float64 {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return x // NaN, 0.0 and -0.0
}

// javaRound is Math.round before the conversion to an integer: the
// nearest integer, ties toward positive infinity.
func javaRound(x float64) float64 {
	if x != x {
		return 0
	}
	f := math.Floor(x)
	if x-f >= 0.5 {
		f++
	}
	return f
}

func floorDiv(x, y int64) int64 {
	if y == 0 {
		throw(clsArithmetic, "/ by zero")
	}
	if y == -1 {
		return -x
	}
	q := x / y
	if (x%y != 0) && ((x < 0) != (y < 0)) {
		q--
	}
	return q
}

func floorMod(x, y int64) int64 {
	if y == 0 {
		throw(clsArithmetic, "/ by zero")
	}
	if y == -1 {
		return 0
	}
	m := x % y
	if m != 0 && (m < 0) != (y < 0) {
		m += y
	}
	return m
}
