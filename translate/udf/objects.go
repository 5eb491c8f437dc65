package udf

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"

	"github.com/cqlpg/cqlpg/pgschema"
)

// Object's methods on any reference: equals, hashCode, compareTo (for the
// Comparable classes) and toString, as each Java class defines them.

// Equality keys: Go values equal exactly when the Java values are equal.
type (
	boxKey struct {
		c *jclass
		n uint64
	}
	decKey struct {
		unscaled string
		scale    int32
	}
	bigKey  string
	bufKey  string
	listKey string
	setKey  string
	mapKey  string
	tupKey  struct{ t, v string }
	pairKey struct{ k, v any }
)

// keyOf returns v's equality key: keyOf(a) == keyOf(b) exactly when
// a.equals(b) in Java (null equal to null).
func keyOf(v val) any { return keyAt(v, 0) }

// keyAt is keyOf at a nesting depth: a collection that contains itself
// overflows Java's stack, and this one's.
func keyAt(v val, depth int) any {
	if depth > maxPrintDepth {
		throwBare(clsStackOverflow)
	}
	switch r := v.r.(type) {
	case nil:
		return nil
	case string, juuid, jdate, jlocalDate, jinet, pgschema.DurationValue:
		return r
	case *jclass:
		n := v.n
		if r == clsDouble || r == clsFloat {
			if f := math.Float64frombits(n); f != f {
				n = math.Float64bits(math.NaN())
			}
		}
		return boxKey{r, n}
	case pgschema.BigDecimal:
		return decKey{r.Unscaled.String(), r.Scale}
	case *big.Int:
		return bigKey(r.String())
	case *jbuffer:
		return bufKey(r.b[r.pos:r.lim])
	case *jlist:
		return listKey(keyStrings(r.elems, false, depth))
	case *jmap:
		if r.set {
			return setKey(keyStrings(elements(v), true, depth))
		}
		parts := make([]val, 0, r.size())
		for _, e := range r.entries() {
			parts = append(parts, refval(e))
		}
		return mapKey(keyStrings(parts, true, depth))
	case *entry:
		return pairKey{keyAt(r.k, depth+1), keyAt(r.v, depth+1)}
	case *jtuple:
		return tupKey{r.t.String(), string(pgschema.SerializeTuple(r.vals))}
	}
	return v.r // identity
}

// keyStrings joins the keys of vs, sorted when order does not matter.
func keyStrings(vs []val, unordered bool, depth int) string {
	parts := make([]string, len(vs))
	for i, e := range vs {
		k := keyAt(e, depth+1)
		parts[i] = fmt.Sprintf("%T:%v", k, k)
	}
	if unordered {
		sort.Strings(parts)
	}
	return strconv.Itoa(len(parts)) + "[" + strings.Join(parts, "\x00") + "]"
}

// javaEquals is a.equals(b).
func javaEquals(a, b val) bool {
	if a.r == nil || b.r == nil {
		return a.r == nil && b.r == nil
	}
	if refEquals(a, b) {
		return true
	}
	return keyOf(a) == keyOf(b)
}

// javaHash is v.hashCode() (0 for null, as Objects.hashCode).
func javaHash(v val) int32 { return hashAt(v, 0) }

func hashAt(v val, depth int) int32 {
	if depth > maxPrintDepth {
		throwBare(clsStackOverflow)
	}
	switch r := v.r.(type) {
	case nil:
		return 0
	case string:
		return jhash(r)
	case *jclass:
		switch r {
		case clsLong:
			return int32(v.j() ^ int64(uint64(v.j())>>32))
		case clsBoolean:
			if v.z() {
				return 1231
			}
			return 1237
		case clsDouble:
			bits := v.n
			if f := v.d(); f != f {
				bits = 0x7ff8000000000000
			}
			return int32(bits ^ bits>>32)
		case clsFloat:
			bits := math.Float32bits(v.f())
			if f := v.f(); f != f {
				bits = 0x7fc00000
			}
			return int32(bits)
		}
		return int32(v.n)
	case *big.Int:
		return bigHash(r)
	case pgschema.BigDecimal:
		if r.Unscaled.IsInt64() && r.Unscaled.Int64() != math.MinInt64 {
			u := r.Unscaled.Int64()
			a := u
			if a < 0 {
				a = -a
			}
			temp := int32(int32(uint64(a)>>32)*31 + int32(uint32(a)))
			if u < 0 {
				temp = -temp
			}
			return 31*temp + r.Scale
		}
		return 31*bigHash(r.Unscaled) + r.Scale
	case juuid:
		hilo := binary.BigEndian.Uint64(r[:8]) ^ binary.BigEndian.Uint64(r[8:])
		return int32(hilo>>32) ^ int32(hilo)
	case jdate:
		return int32(int64(r) ^ int64(uint64(r)>>32))
	case jlocalDate:
		return int32(r)
	case *jbuffer:
		h := int32(1)
		for i := r.lim - 1; i >= r.pos; i-- {
			h = 31*h + int32(int8(r.b[i]))
		}
		return h
	case *jlist:
		h := int32(1)
		for _, e := range r.elems {
			h = 31*h + hashAt(e, depth+1)
		}
		return h
	case *jmap:
		var h int32
		for _, e := range r.entries() {
			if r.set {
				h += hashAt(e.k, depth+1)
			} else {
				h += hashAt(e.k, depth+1) ^ hashAt(e.v, depth+1)
			}
		}
		return h
	case *entry:
		return hashAt(r.k, depth+1) ^ hashAt(r.v, depth+1)
	}
	return 0
}

// bigHash is BigInteger.hashCode: over the 32-bit words of the magnitude,
// times the sign.
func bigHash(n *big.Int) int32 {
	mag := new(big.Int).Abs(n).Bytes()
	for len(mag)%4 != 0 {
		mag = append([]byte{0}, mag...)
	}
	var h int32
	for i := 0; i < len(mag); i += 4 {
		h = 31*h + int32(binary.BigEndian.Uint32(mag[i:]))
	}
	return h * int32(n.Sign())
}

// javaCompare is a.compareTo(b) for the Comparable classes, throwing
// ClassCastException for values of other or different classes and
// NullPointerException for null.
func javaCompare(a, b val) int {
	if a.r == nil || b.r == nil {
		npe()
	}
	ca, cb := classOf(a), classOf(b)
	if !comparable(ca) {
		throw(clsClassCast, "class %s cannot be cast to class java.lang.Comparable", ca.full)
	}
	if ca != cb {
		checkCast(b, classType(ca))
	}
	switch r := a.r.(type) {
	case string:
		return jcompare(r, b.str())
	case *jclass:
		switch r {
		case clsDouble, clsFloat:
			return pgschema.CompareJavaFloat(a.d(), b.d())
		case clsBoolean:
			return int(a.n) - int(b.n)
		}
		return cmp.Compare(a.j(), b.j())
	case pgschema.BigDecimal:
		return decCompare(r, decOf(b))
	case *big.Int:
		return r.Cmp(bigOf(b))
	case juuid:
		y := b.r.(juuid)
		if c := cmp.Compare(int64(binary.BigEndian.Uint64(r[:8])), int64(binary.BigEndian.Uint64(y[:8]))); c != 0 {
			return c
		}
		return cmp.Compare(int64(binary.BigEndian.Uint64(r[8:])), int64(binary.BigEndian.Uint64(y[8:])))
	case jdate:
		return cmp.Compare(int64(r), int64(b.r.(jdate)))
	case jlocalDate:
		return cmp.Compare(int64(r), int64(b.r.(jlocalDate)))
	case *jbuffer:
		y := b.r.(*jbuffer)
		return strings.Compare(string(r.b[r.pos:r.lim]), string(y.b[y.pos:y.lim]))
	}
	return 0
}

// comparable reports whether c's values have a natural order.
func comparable(c *jclass) bool {
	switch c {
	case clsString, clsInteger, clsLong, clsShort, clsByte, clsCharacter, clsBoolean, clsFloat, clsDouble,
		clsBigDecimal, clsBigInteger, clsUUID, clsDate, clsLocalDate, clsByteBuffer:
		return true
	}
	return false
}

// toJavaString is String.valueOf(v): "null" or v.toString(), its bytes
// counted against the call's memory.
func toJavaString(fr *frame, v val) string {
	var b strings.Builder
	writeJava(&b, v, 0)
	s := b.String()
	if fr != nil {
		fr.alloc(len(s))
	}
	return s
}

// maxPrintDepth bounds the nesting toString follows, past which Java
// would overflow its stack.
const maxPrintDepth = 64

// writeJava writes v.toString().
func writeJava(b *strings.Builder, v val, depth int) {
	if depth > maxPrintDepth {
		throwBare(clsStackOverflow)
	}
	switch r := v.r.(type) {
	case nil:
		b.WriteString("null")
	case string:
		b.WriteString(r)
	case *jclass:
		b.WriteString(primString(r.unboxed, v))
	case pgschema.BigDecimal:
		b.WriteString(r.String())
	case *big.Int:
		b.WriteString(r.String())
	case juuid:
		b.WriteString(pgschema.UUIDText(r[:]))
	case jdate:
		b.WriteString(dateString(int64(r)))
	case jlocalDate:
		b.WriteString(pgschema.FormatDate(uint32(int64(r) + 1<<31)))
	case jinet:
		b.WriteString("/" + inetText(r))
	case pgschema.DurationValue:
		b.WriteString(r.String())
	case *jbuffer:
		fmt.Fprintf(b, "java.nio.HeapByteBuffer[pos=%d lim=%d cap=%d]", r.pos, r.lim, len(r.b))
	case *jlist:
		writeElems(b, v, r.elems, depth)
	case *jmap:
		if r.set {
			writeElems(b, v, elements(v), depth)
			return
		}
		b.WriteByte('{')
		for i, e := range r.entries() {
			if i > 0 {
				b.WriteString(", ")
			}
			writeSelf(b, v, e.k, "(this Map)", depth)
			b.WriteByte('=')
			writeSelf(b, v, e.v, "(this Map)", depth)
		}
		b.WriteByte('}')
	case *entry:
		writeJava(b, r.k, depth+1)
		b.WriteByte('=')
		writeJava(b, r.v, depth+1)
	case *jtuple:
		b.WriteString(formatTuple(r))
	case *jbuilder:
		b.WriteString(utf16Decode(r.u))
	case *jthrow:
		b.WriteString(r.text())
	case *jtype:
		b.WriteString("class " + r.cls.full)
	case roundingMode:
		b.WriteString(roundingNames[r])
	default:
		fmt.Fprintf(b, "%s@%x", classOf(v).full, uint32(javaHash(v)))
	}
}

func writeElems(b *strings.Builder, self val, elems []val, depth int) {
	b.WriteByte('[')
	for i, e := range elems {
		if i > 0 {
			b.WriteString(", ")
		}
		writeSelf(b, self, e, "(this Collection)", depth)
	}
	b.WriteByte(']')
}

// writeSelf writes an element, or what Java writes for a collection that
// contains itself.
func writeSelf(b *strings.Builder, self, e val, name string, depth int) {
	if e.r != nil && e.r == self.r {
		b.WriteString(name)
		return
	}
	writeJava(b, e, depth+1)
}

var dayNames = [...]string{"Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"}
var monthNames = [...]string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}

// dateString is Date.toString in UTC, the zone Cassandra servers run in:
// "Thu Jan 01 00:00:00 UTC 1970".
func dateString(ms int64) string {
	c := pgschema.JavaCalendarAt(ms)
	days := ms / 86400000
	if ms%86400000 < 0 {
		days--
	}
	dow := dayNames[((days%7)+7)%7]
	secs := c.MsOfDay / 1000
	year := c.Year
	if year <= 0 {
		year = 1 - year
	}
	return fmt.Sprintf("%s %s %02d %02d:%02d:%02d UTC %d", dow, monthNames[c.Month-1], c.Day,
		secs/3600, secs/60%60, secs%60, year)
}
