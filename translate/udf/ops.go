package udf

import (
	"math"
	"strconv"
	"unsafe"

	"github.com/cqlpg/cqlpg/pgschema"
)

// Java's operators on values of a promoted primitive type: int and long
// arithmetic wraps, integral division by zero throws, floating point
// follows IEEE 754 as Java does (float rounded to float at each step).

// binop is an operator on two values of one primitive type.
type binop func(x, y val) val

// arith returns the arithmetic or bitwise operator op on type p (int,
// long, float or double; boolean for & | ^), nil when undefined.
func arith(op string, p prim) binop {
	switch p {
	case pInt:
		switch op {
		case "+":
			return func(x, y val) val { return ival(x.i() + y.i()) }
		case "-":
			return func(x, y val) val { return ival(x.i() - y.i()) }
		case "*":
			return func(x, y val) val { return ival(x.i() * y.i()) }
		case "/":
			return func(x, y val) val {
				if y.i() == 0 {
					throw(clsArithmetic, "/ by zero")
				}
				if y.i() == -1 {
					return ival(-x.i())
				}
				return ival(x.i() / y.i())
			}
		case "%":
			return func(x, y val) val {
				if y.i() == 0 {
					throw(clsArithmetic, "/ by zero")
				}
				if y.i() == -1 {
					return ival(0)
				}
				return ival(x.i() % y.i())
			}
		case "&":
			return func(x, y val) val { return ival(x.i() & y.i()) }
		case "|":
			return func(x, y val) val { return ival(x.i() | y.i()) }
		case "^":
			return func(x, y val) val { return ival(x.i() ^ y.i()) }
		case "<<":
			return func(x, y val) val { return ival(x.i() << (y.j() & 31)) }
		case ">>":
			return func(x, y val) val { return ival(x.i() >> (y.j() & 31)) }
		case ">>>":
			return func(x, y val) val { return ival(int32(uint32(x.i()) >> (y.j() & 31))) }
		}
	case pLong:
		switch op {
		case "+":
			return func(x, y val) val { return jval(x.j() + y.j()) }
		case "-":
			return func(x, y val) val { return jval(x.j() - y.j()) }
		case "*":
			return func(x, y val) val { return jval(x.j() * y.j()) }
		case "/":
			return func(x, y val) val {
				if y.j() == 0 {
					throw(clsArithmetic, "/ by zero")
				}
				if y.j() == -1 {
					return jval(-x.j())
				}
				return jval(x.j() / y.j())
			}
		case "%":
			return func(x, y val) val {
				if y.j() == 0 {
					throw(clsArithmetic, "/ by zero")
				}
				if y.j() == -1 {
					return jval(0)
				}
				return jval(x.j() % y.j())
			}
		case "&":
			return func(x, y val) val { return jval(x.j() & y.j()) }
		case "|":
			return func(x, y val) val { return jval(x.j() | y.j()) }
		case "^":
			return func(x, y val) val { return jval(x.j() ^ y.j()) }
		case "<<":
			return func(x, y val) val { return jval(x.j() << (y.j() & 63)) }
		case ">>":
			return func(x, y val) val { return jval(x.j() >> (y.j() & 63)) }
		case ">>>":
			return func(x, y val) val { return jval(int64(uint64(x.j()) >> (y.j() & 63))) }
		}
	case pFloat:
		switch op {
		case "+":
			return func(x, y val) val { return fval(x.f() + y.f()) }
		case "-":
			return func(x, y val) val { return fval(x.f() - y.f()) }
		case "*":
			return func(x, y val) val { return fval(x.f() * y.f()) }
		case "/":
			return func(x, y val) val { return fval(x.f() / y.f()) }
		case "%":
			return func(x, y val) val { return fval(float32(math.Mod(x.d(), y.d()))) }
		}
	case pDouble:
		switch op {
		case "+":
			return func(x, y val) val { return dval(x.d() + y.d()) }
		case "-":
			return func(x, y val) val { return dval(x.d() - y.d()) }
		case "*":
			return func(x, y val) val { return dval(x.d() * y.d()) }
		case "/":
			return func(x, y val) val { return dval(x.d() / y.d()) }
		case "%":
			return func(x, y val) val { return dval(math.Mod(x.d(), y.d())) }
		}
	case pBoolean:
		switch op {
		case "&":
			return func(x, y val) val { return zval(x.z() && y.z()) }
		case "|":
			return func(x, y val) val { return zval(x.z() || y.z()) }
		case "^":
			return func(x, y val) val { return zval(x.z() != y.z()) }
		}
	}
	return nil
}

// compare returns the comparison op on type p.
func compare(op string, p prim) binop {
	var cmp func(x, y val) (lt, eq bool)
	switch p {
	case pInt, pLong, pShort, pByte, pChar:
		cmp = func(x, y val) (bool, bool) { return x.j() < y.j(), x.j() == y.j() }
	case pBoolean:
		cmp = func(x, y val) (bool, bool) { return false, x.z() == y.z() }
	default:
		cmp = func(x, y val) (bool, bool) { return x.d() < y.d(), x.d() == y.d() }
	}
	switch op {
	case "<":
		return func(x, y val) val { lt, _ := cmp(x, y); return zval(lt) }
	case "<=":
		return func(x, y val) val { lt, eq := cmp(x, y); return zval(lt || eq) }
	case ">":
		return func(x, y val) val { return cmpGreater(cmp, x, y, false) }
	case ">=":
		return func(x, y val) val { return cmpGreater(cmp, x, y, true) }
	case "==":
		return func(x, y val) val { _, eq := cmp(x, y); return zval(eq) }
	}
	return func(x, y val) val { _, eq := cmp(x, y); return zval(!eq) }
}

// cmpGreater is x > y (or >=), false when either is NaN.
func cmpGreater(cmp func(x, y val) (bool, bool), x, y val, orEqual bool) val {
	lt, eq := cmp(y, x)
	return zval(lt || orEqual && eq)
}

// refEquals is == on references: identity for objects, value equality for
// boxed primitives, dates, uuids and the other values the interpreter
// keeps without identity (Java compares identities there, which only
// agree with values for small cached boxes). Strings are identical when
// they share their bytes: string constants are interned as in Java.
func refEquals(a, b val) bool {
	if a.r == nil || b.r == nil {
		return a.r == nil && b.r == nil
	}
	switch x := a.r.(type) {
	case string:
		y, ok := b.r.(string)
		return ok && len(x) == len(y) && (len(x) == 0 || unsafe.StringData(x) == unsafe.StringData(y))
	case *jclass:
		return a.r == b.r && a.n == b.n
	case pgschema.BigDecimal:
		y, ok := b.r.(pgschema.BigDecimal)
		return ok && x.Unscaled == y.Unscaled && x.Scale == y.Scale
	}
	return a.r == b.r
}

// primString is String.valueOf of a primitive of type p.
func primString(p prim, v val) string {
	switch p {
	case pBoolean:
		return strconv.FormatBool(v.z())
	case pChar:
		return charString(v.c())
	case pFloat:
		return pgschema.JavaFloat(v.d(), 32)
	case pDouble:
		return pgschema.JavaFloat(v.d(), 64)
	}
	return strconv.FormatInt(v.j(), 10)
}
