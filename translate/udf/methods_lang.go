package udf

import (
	"cmp"
	"math"
	"math/bits"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/cqlpg/cqlpg/pgschema"
)

// java.lang: Object's methods, the boxes and Number, Character, System.

// parseJavaInt is Integer.parseInt (bits 32) and its Long, Short and Byte
// siblings: an optional sign and digits of the radix, else
// NumberFormatException with Java 11's text.
func parseJavaInt(v val, radix, bitSize int) int64 {
	if v.r == nil {
		throw(clsNumberFormat, "null")
	}
	s := v.str()
	bad := func() { throw(clsNumberFormat, "For input string: \"%s\"", s) }
	if radix < 2 || radix > 36 {
		throw(clsNumberFormat, "radix %d out of range", radix)
	}
	body := s
	if body != "" && (body[0] == '+' || body[0] == '-') {
		body = body[1:]
	}
	if body == "" || strings.ContainsAny(body, "+-_") {
		bad()
	}
	n, err := strconv.ParseInt(s, radix, bitSize)
	if err != nil {
		if bitSize < 32 {
			if _, err32 := strconv.ParseInt(s, radix, 32); err32 == nil {
				throw(clsNumberFormat, "Value out of range. Value:\"%s\" Radix:%d", s, radix)
			}
		}
		bad()
	}
	return n
}

// parseJavaFloat is Double.parseDouble (bits 64) and Float.parseFloat.
func parseJavaFloat(v val, bitSize int) float64 {
	if v.r == nil {
		npe()
	}
	s := v.str()
	if strings.TrimFunc(s, func(r rune) bool { return r <= ' ' }) == "" {
		throw(clsNumberFormat, "empty String")
	}
	kind := pgschema.Double
	if bitSize == 32 {
		kind = pgschema.Float
	}
	b, err := pgschema.FromString(pgschema.Scalar(kind), s)
	if err != nil {
		throw(clsNumberFormat, "For input string: \"%s\"", s)
	}
	if bitSize == 32 {
		return float64(math.Float32frombits(uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])))
	}
	return math.Float64frombits(uint64(b[0])<<56 | uint64(b[1])<<48 | uint64(b[2])<<40 | uint64(b[3])<<32 |
		uint64(b[4])<<24 | uint64(b[5])<<16 | uint64(b[6])<<8 | uint64(b[7]))
}

// numberAs is Number's xxxValue methods on any number.
func numberAs(v val, p prim) val {
	var i int64
	var f float64
	isFloat := false
	switch r := v.r.(type) {
	case *jclass:
		switch r.unboxed {
		case pFloat, pDouble:
			f, isFloat = v.d(), true
		default:
			i = v.j()
		}
	case pgschema.BigDecimal:
		if p == pFloat || p == pDouble {
			return dvalAs(r.Float(map[prim]int{pFloat: 32, pDouble: 64}[p]), p)
		}
		i = r.LongValue()
	default:
		n := bigOf(v)
		if p == pFloat || p == pDouble {
			return dvalAs(pgschema.BigDecimal{Unscaled: n}.Float(map[prim]int{pFloat: 32, pDouble: 64}[p]), p)
		}
		i = pgschema.LowInt64(n)
	}
	if isFloat {
		switch p {
		case pFloat:
			return fval(float32(f))
		case pDouble:
			return dval(f)
		case pLong:
			return jval(pgschema.JavaDoubleToLong(f))
		}
		return narrowInt(p, int64(pgschema.JavaDoubleToInt(f)))
	}
	switch p {
	case pFloat:
		return fval(float32(i))
	case pDouble:
		return dval(float64(i))
	case pLong:
		return jval(i)
	}
	return narrowInt(p, i)
}

func dvalAs(f float64, p prim) val {
	if p == pFloat {
		return fval(float32(f))
	}
	return dval(f)
}

// radixString is Integer.toString(i, radix) and Long.toString.
func radixString(n int64, radix int) string {
	if radix < 2 || radix > 36 {
		radix = 10
	}
	return strconv.FormatInt(n, radix)
}

func declareLang() {
	def(clsObject, "boolean equals(Object)", func(_ *frame, r val, a []val) val { return zval(javaEquals(r, a[0])) })
	def(clsObject, "int hashCode()", func(_ *frame, r val, _ []val) val { return ival(javaHash(r)) })
	def(clsObject, "String toString()", func(fr *frame, r val, _ []val) val { return strval(toJavaString(fr, r)) })

	for _, p := range []string{"byte", "short", "int", "long", "float", "double"} {
		pt := primTypes[p]
		def(clsNumber, p+" "+p+"Value()", func(_ *frame, r val, _ []val) val { return numberAs(r, pt.prim) })
	}
	declareIntegral(clsInteger, "int", "Int", 32, math.MinInt32, math.MaxInt32)
	declareIntegral(clsLong, "long", "Long", 64, math.MinInt64, math.MaxInt64)
	declareIntegral(clsShort, "short", "Short", 16, math.MinInt16, math.MaxInt16)
	declareIntegral(clsByte, "byte", "Byte", 8, math.MinInt8, math.MaxInt8)
	declareFloating(clsDouble, "double", "Double", 64)
	declareFloating(clsFloat, "float", "Float", 32)
	declareBoolean()
	declareCharacter()
	declareSystem()
}

// declareIntegral declares Integer, Long, Short or Byte.
func declareIntegral(c *jclass, p, name string, bitSize int, minV, maxV int64) {
	pt := primTypes[p]
	box := func(n int64) val { return val{n: narrowOrLong(pt.prim, n).n, r: c} }
	def(c, "static "+p+" parse"+name+"(String)", func(_ *frame, _ val, a []val) val {
		return narrowOrLong(pt.prim, parseJavaInt(a[0], 10, bitSize))
	})
	def(c, "static "+p+" parse"+name+"(String,int)", func(_ *frame, _ val, a []val) val {
		return narrowOrLong(pt.prim, parseJavaInt(a[0], int(a[1].i()), bitSize))
	})
	def(c, "static "+c.name+" valueOf("+p+")", func(_ *frame, _ val, a []val) val { return box(a[0].j()) })
	def(c, "static "+c.name+" valueOf(String)", func(_ *frame, _ val, a []val) val {
		return box(parseJavaInt(a[0], 10, bitSize))
	})
	def(c, "static String toString("+p+")", func(fr *frame, _ val, a []val) val {
		return strval(strconv.FormatInt(a[0].j(), 10))
	})
	def(c, "static int compare("+p+","+p+")", func(_ *frame, _ val, a []val) val {
		if bitSize < 32 {
			return ival(int32(a[0].j() - a[1].j()))
		}
		return ival(int32(cmp.Compare(a[0].j(), a[1].j())))
	})
	def(c, "int compareTo("+c.name+")", func(_ *frame, r val, a []val) val {
		if a[0].r == nil {
			npe()
		}
		if bitSize < 32 {
			return ival(int32(r.j() - a[0].j()))
		}
		return ival(int32(cmp.Compare(r.j(), a[0].j())))
	})
	def(c, "static int hashCode("+p+")", func(_ *frame, _ val, a []val) val { return ival(javaHash(box(a[0].j()))) })
	ctor(c, "("+p+")", func(_ *frame, _ val, a []val) val { return box(a[0].j()) })
	ctor(c, "(String)", func(_ *frame, _ val, a []val) val { return box(parseJavaInt(a[0], 10, bitSize)) })
	constField(c, "MAX_VALUE", p, narrowOrLong(pt.prim, maxV), maxV)
	constField(c, "MIN_VALUE", p, narrowOrLong(pt.prim, minV), minV)
	constField(c, "SIZE", "int", ival(int32(bitSize)), int64(bitSize))
	constField(c, "BYTES", "int", ival(int32(bitSize/8)), int64(bitSize/8))
	if bitSize < 32 {
		return
	}
	def(c, "static String toString("+p+",int)", func(_ *frame, _ val, a []val) val {
		return strval(radixString(a[0].j(), int(a[1].i())))
	})
	unsigned := func(n int64) uint64 {
		if bitSize == 32 {
			return uint64(uint32(n))
		}
		return uint64(n)
	}
	for fn, base := range map[string]int{"toHexString": 16, "toBinaryString": 2, "toOctalString": 8} {
		def(c, "static String "+fn+"("+p+")", func(_ *frame, _ val, a []val) val {
			return strval(strconv.FormatUint(unsigned(a[0].j()), base))
		})
	}
	def(c, "static "+p+" max("+p+","+p+")", func(_ *frame, _ val, a []val) val { return box(max(a[0].j(), a[1].j())).unbox() })
	def(c, "static "+p+" min("+p+","+p+")", func(_ *frame, _ val, a []val) val { return box(min(a[0].j(), a[1].j())).unbox() })
	def(c, "static "+p+" sum("+p+","+p+")", func(_ *frame, _ val, a []val) val { return box(a[0].j() + a[1].j()).unbox() })
	def(c, "static int signum("+p+")", func(_ *frame, _ val, a []val) val { return ival(int32(cmp.Compare(a[0].j(), 0))) })
	def(c, "static int bitCount("+p+")", func(_ *frame, _ val, a []val) val {
		return ival(int32(bits.OnesCount64(unsigned(a[0].j()))))
	})
	def(c, "static int numberOfLeadingZeros("+p+")", func(_ *frame, _ val, a []val) val {
		return ival(int32(bits.LeadingZeros64(unsigned(a[0].j())) - (64 - bitSize)))
	})
	def(c, "static int numberOfTrailingZeros("+p+")", func(_ *frame, _ val, a []val) val {
		n := bits.TrailingZeros64(unsigned(a[0].j()))
		return ival(int32(min(n, bitSize)))
	})
	def(c, "static "+p+" abs("+p+")", func(_ *frame, _ val, a []val) val {
		n := a[0].j()
		if n < 0 {
			n = -n
		}
		return box(n).unbox()
	})
}

// unbox strips a box's class.
func (v val) unbox() val { return val{n: v.n} }

// narrowOrLong is narrowInt, keeping longs whole.
func narrowOrLong(p prim, n int64) val {
	if p == pLong {
		return jval(n)
	}
	return narrowInt(p, n)
}

// declareFloating declares Double or Float.
func declareFloating(c *jclass, p, name string, bitSize int) {
	pt := primTypes[p]
	conv := func(f float64) val { return dvalAs(f, pt.prim) }
	box := func(f float64) val { return val{n: conv(f).n, r: c} }
	def(c, "static "+p+" parse"+name+"(String)", func(_ *frame, _ val, a []val) val { return conv(parseJavaFloat(a[0], bitSize)) })
	def(c, "static "+c.name+" valueOf("+p+")", func(_ *frame, _ val, a []val) val { return box(a[0].d()) })
	def(c, "static "+c.name+" valueOf(String)", func(_ *frame, _ val, a []val) val { return box(parseJavaFloat(a[0], bitSize)) })
	def(c, "static String toString("+p+")", func(_ *frame, _ val, a []val) val {
		return strval(pgschema.JavaFloat(a[0].d(), bitSize))
	})
	def(c, "static boolean isNaN("+p+")", func(_ *frame, _ val, a []val) val { return zval(math.IsNaN(a[0].d())) })
	def(c, "static boolean isInfinite("+p+")", func(_ *frame, _ val, a []val) val { return zval(math.IsInf(a[0].d(), 0)) })
	def(c, "static boolean isFinite("+p+")", func(_ *frame, _ val, a []val) val {
		return zval(!math.IsInf(a[0].d(), 0) && !math.IsNaN(a[0].d()))
	})
	def(c, "boolean isNaN()", func(_ *frame, r val, _ []val) val { return zval(math.IsNaN(r.d())) })
	def(c, "boolean isInfinite()", func(_ *frame, r val, _ []val) val { return zval(math.IsInf(r.d(), 0)) })
	def(c, "static int compare("+p+","+p+")", func(_ *frame, _ val, a []val) val {
		return ival(int32(pgschema.CompareJavaFloat(a[0].d(), a[1].d())))
	})
	def(c, "int compareTo("+c.name+")", func(_ *frame, r val, a []val) val {
		if a[0].r == nil {
			npe()
		}
		return ival(int32(pgschema.CompareJavaFloat(r.d(), a[0].d())))
	})
	def(c, "static "+p+" max("+p+","+p+")", func(_ *frame, _ val, a []val) val { return conv(javaMax(a[0].d(), a[1].d())) })
	def(c, "static "+p+" min("+p+","+p+")", func(_ *frame, _ val, a []val) val { return conv(javaMin(a[0].d(), a[1].d())) })
	def(c, "static "+p+" sum("+p+","+p+")", func(_ *frame, _ val, a []val) val { return conv(a[0].d() + a[1].d()) })
	def(c, "static int hashCode("+p+")", func(_ *frame, _ val, a []val) val { return ival(javaHash(box(a[0].d()))) })
	ctor(c, "("+p+")", func(_ *frame, _ val, a []val) val { return box(a[0].d()) })
	ctor(c, "(String)", func(_ *frame, _ val, a []val) val { return box(parseJavaFloat(a[0], bitSize)) })
	if bitSize == 64 {
		constField(c, "MAX_VALUE", p, dval(math.MaxFloat64), math.MaxFloat64)
		constField(c, "MIN_VALUE", p, dval(math.SmallestNonzeroFloat64), math.SmallestNonzeroFloat64)
		def(c, "static long doubleToLongBits(double)", func(_ *frame, _ val, a []val) val {
			if math.IsNaN(a[0].d()) {
				return jval(0x7ff8000000000000)
			}
			return jval(int64(a[0].n))
		})
		def(c, "static long doubleToRawLongBits(double)", func(_ *frame, _ val, a []val) val { return jval(int64(a[0].n)) })
		def(c, "static double longBitsToDouble(long)", func(_ *frame, _ val, a []val) val { return val{n: a[0].n} })
	} else {
		constField(c, "MAX_VALUE", p, fval(math.MaxFloat32), float64(float32(math.MaxFloat32)))
		constField(c, "MIN_VALUE", p, fval(math.SmallestNonzeroFloat32), float64(float32(math.SmallestNonzeroFloat32)))
		def(c, "static int floatToIntBits(float)", func(_ *frame, _ val, a []val) val {
			if math.IsNaN(a[0].d()) {
				return ival(0x7fc00000)
			}
			return ival(int32(math.Float32bits(a[0].f())))
		})
		def(c, "static float intBitsToFloat(int)", func(_ *frame, _ val, a []val) val {
			return fval(math.Float32frombits(uint32(a[0].i())))
		})
	}
	constField(c, "POSITIVE_INFINITY", p, conv(math.Inf(1)), math.Inf(1))
	constField(c, "NEGATIVE_INFINITY", p, conv(math.Inf(-1)), math.Inf(-1))
	constField(c, "NaN", p, conv(math.NaN()), math.NaN())
	constField(c, "SIZE", "int", ival(int32(bitSize)), int64(bitSize))
	constField(c, "BYTES", "int", ival(int32(bitSize/8)), int64(bitSize/8))
}

// javaMax is Math.max on doubles: NaN if either is, and 0.0 above -0.0.
func javaMax(a, b float64) float64 {
	switch {
	case a != a || b != b:
		return math.NaN()
	case a == 0 && b == 0:
		if math.Signbit(a) {
			return b
		}
		return a
	}
	return math.Max(a, b)
}

// javaMin is Math.min on doubles.
func javaMin(a, b float64) float64 {
	switch {
	case a != a || b != b:
		return math.NaN()
	case a == 0 && b == 0:
		if math.Signbit(a) {
			return a
		}
		return b
	}
	return math.Min(a, b)
}

func declareBoolean() {
	c := clsBoolean
	box := func(b bool) val { return val{n: b2u(b), r: c} }
	parse := func(v val) bool { return v.r != nil && strings.EqualFold(v.str(), "true") }
	def(c, "static boolean parseBoolean(String)", func(_ *frame, _ val, a []val) val { return zval(parse(a[0])) })
	def(c, "static Boolean valueOf(boolean)", func(_ *frame, _ val, a []val) val { return box(a[0].z()) })
	def(c, "static Boolean valueOf(String)", func(_ *frame, _ val, a []val) val { return box(parse(a[0])) })
	def(c, "static String toString(boolean)", func(_ *frame, _ val, a []val) val { return strval(strconv.FormatBool(a[0].z())) })
	def(c, "boolean booleanValue()", func(_ *frame, r val, _ []val) val { return r.unbox() })
	def(c, "static int compare(boolean,boolean)", func(_ *frame, _ val, a []val) val { return ival(int32(a[0].n) - int32(a[1].n)) })
	def(c, "int compareTo(Boolean)", func(_ *frame, r val, a []val) val {
		if a[0].r == nil {
			npe()
		}
		return ival(int32(r.n) - int32(a[0].n))
	})
	def(c, "static boolean logicalAnd(boolean,boolean)", func(_ *frame, _ val, a []val) val { return zval(a[0].z() && a[1].z()) })
	def(c, "static boolean logicalOr(boolean,boolean)", func(_ *frame, _ val, a []val) val { return zval(a[0].z() || a[1].z()) })
	def(c, "static boolean logicalXor(boolean,boolean)", func(_ *frame, _ val, a []val) val { return zval(a[0].z() != a[1].z()) })
	ctor(c, "(boolean)", func(_ *frame, _ val, a []val) val { return box(a[0].z()) })
	ctor(c, "(String)", func(_ *frame, _ val, a []val) val { return box(parse(a[0])) })
	c.fields["TRUE"] = &field{t: typeBoolean, v: box(true)}
	c.fields["FALSE"] = &field{t: typeBoolean, v: box(false)}
}

func declareCharacter() {
	c := clsCharacter
	pred := map[string]func(rune) bool{
		"isDigit": unicode.IsDigit, "isLetter": unicode.IsLetter,
		"isLetterOrDigit": func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) },
		"isUpperCase":     unicode.IsUpper, "isLowerCase": unicode.IsLower,
		"isAlphabetic": unicode.IsLetter,
		"isWhitespace": func(r rune) bool {
			return r >= 0x1c && r <= 0x1f || r >= 9 && r <= 13 || unicode.IsSpace(r) && r != 0xa0 && r != 0x2007 && r != 0x202f
		},
		"isSpaceChar":  func(r rune) bool { return unicode.In(r, unicode.Zs, unicode.Zl, unicode.Zp) },
		"isISOControl": func(r rune) bool { return r <= 0x1f || r >= 0x7f && r <= 0x9f },
	}
	for name, f := range pred {
		def(c, "static boolean "+name+"(char)", func(_ *frame, _ val, a []val) val { return zval(f(rune(a[0].c()))) })
	}
	def(c, "static char toUpperCase(char)", func(_ *frame, _ val, a []val) val { return cval(uint16(unicode.ToUpper(rune(a[0].c())))) })
	def(c, "static char toLowerCase(char)", func(_ *frame, _ val, a []val) val { return cval(uint16(unicode.ToLower(rune(a[0].c())))) })
	def(c, "static int getNumericValue(char)", func(_ *frame, _ val, a []val) val { return ival(int32(digitOf(a[0].c(), 36, true))) })
	def(c, "static int digit(char,int)", func(_ *frame, _ val, a []val) val { return ival(int32(digitOf(a[0].c(), int(a[1].i()), false))) })
	def(c, "static Character valueOf(char)", func(_ *frame, _ val, a []val) val { return val{n: a[0].n, r: c} })
	def(c, "static String toString(char)", func(_ *frame, _ val, a []val) val { return strval(charString(a[0].c())) })
	def(c, "char charValue()", func(_ *frame, r val, _ []val) val { return r.unbox() })
	def(c, "static int compare(char,char)", func(_ *frame, _ val, a []val) val { return ival(int32(a[0].c()) - int32(a[1].c())) })
	def(c, "int compareTo(Character)", func(_ *frame, r val, a []val) val {
		if a[0].r == nil {
			npe()
		}
		return ival(int32(r.c()) - int32(a[0].c()))
	})
	ctor(c, "(char)", func(_ *frame, _ val, a []val) val { return val{n: a[0].n, r: c} })
	constField(c, "MIN_VALUE", "char", cval(0), int64(0))
	constField(c, "MAX_VALUE", "char", cval(0xffff), int64(0xffff))
}

// digitOf is Character.digit (and getNumericValue, which answers
// letters up to z as 10 to 35 and other characters -1).
func digitOf(ch uint16, radix int, numeric bool) int {
	r := rune(ch)
	d := -1
	switch {
	case r >= '0' && r <= '9':
		d = int(r - '0')
	case r >= 'a' && r <= 'z':
		d = int(r-'a') + 10
	case r >= 'A' && r <= 'Z':
		d = int(r-'A') + 10
	}
	if numeric {
		return d
	}
	if d >= radix || radix < 2 || radix > 36 {
		return -1
	}
	return d
}

func declareSystem() {
	def(clsSystem, "static long currentTimeMillis()", func(*frame, val, []val) val { return jval(time.Now().UnixMilli()) })
	def(clsSystem, "static long nanoTime()", func(*frame, val, []val) val { return jval(time.Since(processStart).Nanoseconds()) })
	def(clsSystem, "static String lineSeparator()", func(*frame, val, []val) val { return strval("\n") })
	def(clsSystem, "static void arraycopy(Object,int,Object,int,int)", func(fr *frame, _ val, a []val) val {
		if a[0].r == nil || a[2].r == nil {
			npe()
		}
		src, ok1 := a[0].r.(*jarray)
		dst, ok2 := a[2].r.(*jarray)
		if !ok1 || !ok2 {
			throw(clsArrayStore, "arraycopy: source type %s is not an array", classOf(a[0]).full)
		}
		sp, dp, n := int(a[1].i()), int(a[3].i()), int(a[4].i())
		if sp < 0 || dp < 0 || n < 0 || sp+n > len(src.vals) || dp+n > len(dst.vals) {
			throw(clsArrayIndex, "arraycopy: last source index %d out of bounds for length %d", sp+n, len(src.vals))
		}
		copy(dst.vals[dp:dp+n], src.vals[sp:sp+n])
		return null
	})
}

// processStart is the origin of System.nanoTime.
var processStart = time.Now()
