package udf

import (
	"math"
	"math/big"

	"github.com/cqlpg/cqlpg/pgschema"
)

// Java's conversions between types: which the compiler allows in
// assignment, invocation and casting contexts, and the closures that
// carry them out on values.

// invocable reports whether a value of type a may be passed for a
// parameter of type p: by identity, primitive widening and reference
// widening, and when loose also by boxing and unboxing.
func invocable(a, p *jtype, loose bool) bool {
	switch {
	case a.isPrim() && p.isPrim():
		return widensTo(a.prim, p.prim)
	case a.isRef() && p.isRef():
		return isSubtype(a, p)
	case !loose:
		return false
	case a.isPrim():
		return isSubtype(boxOf(a), p)
	default:
		u := unboxed(a)
		return u != nil && widensTo(u.prim, p.prim)
	}
}

// assignable reports whether a value of type a may be assigned to a
// variable of type p; constant is a's compile-time constant value if any,
// which lets an int constant narrow to byte, short or char (or their box)
// when it fits.
func assignable(a, p *jtype, constant any) bool {
	if invocable(a, p, true) {
		return true
	}
	n, ok := constant.(int64)
	if !ok || !(a.prim == pInt || a.prim == pShort || a.prim == pChar || a.prim == pByte) {
		return false
	}
	target := p
	if u := unboxed(p); u != nil {
		target = u
	}
	switch target.prim {
	case pByte:
		return n >= math.MinInt8 && n <= math.MaxInt8
	case pShort:
		return n >= math.MinInt16 && n <= math.MaxInt16
	case pChar:
		return n >= 0 && n <= math.MaxUint16
	}
	return false
}

// castable reports whether (p) x compiles for x of type a.
func castable(a, p *jtype) bool {
	switch {
	case a.isPrim() && p.isPrim():
		return a.prim == p.prim || a.isNumeric() && p.isNumeric()
	case a.isPrim():
		return isSubtype(boxOf(a), p)
	case p.isPrim():
		if u := unboxed(a); u != nil {
			return widensTo(u.prim, p.prim)
		}
		return a.cls == clsObject || a.cls == clsNumber && p.isNumeric()
	}
	return isSubtype(a, p) || isSubtype(p, a) || isInterface(a.cls) && isInterface(p.cls) ||
		isInterface(a.cls) && p.elem == nil || isInterface(p.cls) && a.elem == nil && !finalClass(a.cls)
}

// isInterface reports whether c is one of the library's interfaces.
func isInterface(c *jclass) bool {
	switch c {
	case clsCharSequence, clsIterable, clsCollection, clsList, clsSet, clsSortedSet, clsNavigableSet,
		clsMap, clsSortedMap, clsNavigableMap, clsEntry, clsIterator, clsUDFContext:
		return true
	}
	return false
}

// finalClass reports whether c is final, which no interface cast reaches.
func finalClass(c *jclass) bool {
	return c.unboxed != pRef || c == clsString || c == clsBuilder || c == clsBuffer || c == clsUUID
}

// convFn converts a value from one type to another.
type convFn func(fr *frame, v val) val

// converter returns the conversion of a value of type a to type p, nil
// when nothing changes. The compiler has checked the conversion is
// allowed; cast also allows narrowing and checked downcasts.
func converter(a, p *jtype, cast bool) convFn {
	switch {
	case a.prim == pNull || p.prim == pVoid:
		return nil
	case a.isPrim() && p.isPrim():
		return primConv(a.prim, p.prim)
	case a.isPrim():
		box := boxOf(a).cls
		return func(_ *frame, v val) val { return val{n: v.n, r: box} }
	case p.isPrim():
		u := unboxed(a)
		if u == nil { // (int) obj: a checked cast to the box, then unboxing
			box := boxOf(p).cls
			return func(_ *frame, v val) val {
				checkCast(v, classType(box))
				if v.r == nil {
					npe()
				}
				return val{n: v.n}
			}
		}
		widen := primConv(u.prim, p.prim)
		return func(fr *frame, v val) val {
			if v.r == nil {
				npe()
			}
			v = val{n: v.n}
			if widen != nil {
				v = widen(fr, v)
			}
			return v
		}
	case cast && !isSubtype(a, p):
		return func(_ *frame, v val) val {
			checkCast(v, p)
			return v
		}
	}
	return nil
}

// primConv converts between primitive types as Java's widening and
// narrowing primitive conversions do.
func primConv(a, b prim) convFn {
	if a == b || a == pBoolean || b == pBoolean {
		return nil
	}
	switch a {
	case pFloat, pDouble:
		switch b {
		case pFloat:
			return func(_ *frame, v val) val { return fval(float32(v.d())) }
		case pDouble:
			return nil // a float's bits are its float64 value's
		case pLong:
			return func(_ *frame, v val) val { return jval(pgschema.JavaDoubleToLong(v.d())) }
		}
		return func(_ *frame, v val) val { return narrowInt(b, int64(pgschema.JavaDoubleToInt(v.d()))) }
	}
	// From an integral type, whose value is in n sign- or zero-extended.
	switch b {
	case pFloat:
		return func(_ *frame, v val) val { return fval(float32(v.j())) }
	case pDouble:
		return func(_ *frame, v val) val { return dval(float64(v.j())) }
	case pLong:
		return nil
	}
	if widensTo(a, b) && a != pChar {
		return nil
	}
	return func(_ *frame, v val) val { return narrowInt(b, v.j()) }
}

// narrowInt keeps the low bits of n for an int, short, byte or char.
func narrowInt(b prim, n int64) val {
	switch b {
	case pByte:
		return byval(int8(n))
	case pShort:
		return sval(int16(n))
	case pChar:
		return cval(uint16(n))
	}
	return ival(int32(n))
}

// classOf returns the class of a non-null reference.
func classOf(v val) *jclass {
	switch r := v.r.(type) {
	case string:
		return clsString
	case *jclass:
		return r
	case pgschema.BigDecimal:
		return clsBigDecimal
	case *big.Int:
		return clsBigInteger
	case juuid:
		return clsUUID
	case jdate:
		return clsDate
	case jlocalDate:
		return clsLocalDate
	case jinet:
		return clsInetAddress
	case pgschema.DurationValue:
		return clsDuration
	case *jbuffer:
		return clsByteBuffer
	case *jlist:
		return r.cls
	case *jmap:
		return r.cls
	case *entry:
		return clsEntry
	case *jtuple:
		if r.t.Kind == pgschema.UDT {
			return clsUDTValue
		}
		return clsTupleValue
	case *jbuilder:
		return clsBuilder
	case *jiter:
		return clsIterator
	case *jrandom:
		return clsRandom
	case *jarray:
		return clsArray
	case *jthrow:
		return r.cls
	case *jtype:
		return clsClass
	case udfContext:
		return clsUDFContext
	case roundingMode:
		return clsRoundingMode
	case *jdateFormat:
		return clsDateFormat
	case jtimeZone:
		return clsTimeZone
	}
	return clsObject
}

// instanceOf reports whether a non-null reference is a value of type t.
func instanceOf(v val, t *jtype) bool {
	if t.elem != nil {
		a, ok := v.r.(*jarray)
		return ok && (t.elem.isRef() && a.elem.isRef() || same(t.elem, a.elem))
	}
	return isSubtype(classType(classOf(v)), classType(t.cls))
}

// checkCast throws ClassCastException unless v is null or of type t.
func checkCast(v val, t *jtype) {
	if v.r == nil || instanceOf(v, t) {
		return
	}
	from, to := classOf(v).full, t.cls.full
	if t.elem != nil {
		to = "[L" + t.elem.String() + ";"
	}
	if isJavaBase(from) && isJavaBase(to) {
		throw(clsClassCast, "class %s cannot be cast to class %s (%s and %s are in module java.base of loader 'bootstrap')", from, to, from, to)
	}
	throw(clsClassCast, "class %s cannot be cast to class %s", from, to)
}

func isJavaBase(name string) bool {
	return len(name) > 5 && name[:5] == "java."
}
