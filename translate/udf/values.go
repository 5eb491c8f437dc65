package udf

import (
	"math"
	"math/big"

	"github.com/cqlpg/cqlpg/pgschema"
)

// Runtime values. The compiler knows every expression's static type, so a
// value need not say what it is: a primitive is its bits in n, and a
// reference is r (nil for null). A boxed primitive keeps its bits in n and
// its box class in r, so that boxing allocates nothing and an Integer seen
// as an Object still knows it is an Integer.
//
// References by class:
//
//	String          string
//	Integer, ...    *jclass (the box class; the value in n)
//	BigDecimal      pgschema.BigDecimal
//	BigInteger      *big.Int
//	UUID            juuid
//	Date            jdate
//	LocalDate       jlocalDate
//	InetAddress     jinet
//	Duration        pgschema.DurationValue
//	ByteBuffer      *jbuffer
//	List            *jlist
//	Set, Map        *jmap
//	Map.Entry       *entry
//	TupleValue      *jtuple (UDTValue too)
//	StringBuilder   *jbuilder
//	Iterator        *jiter
//	Random          *jrandom
//	arrays          *jarray
//	exceptions      *jthrow
//	Class           *jtype
//	RoundingMode    roundingMode
//	UDFContext      udfContext
type val struct {
	n uint64
	r any
}

// The primitive accessors and constructors. int, short, byte and char
// keep their value sign- or zero-extended to 64 bits; float keeps the bits
// of its float64 value.
func ival(v int32) val     { return val{n: uint64(int64(v))} }
func jval(v int64) val     { return val{n: uint64(v)} }
func dval(v float64) val   { return val{n: math.Float64bits(v)} }
func fval(v float32) val   { return val{n: math.Float64bits(float64(v))} }
func cval(v uint16) val    { return val{n: uint64(v)} }
func sval(v int16) val     { return val{n: uint64(int64(v))} }
func byval(v int8) val     { return val{n: uint64(int64(v))} }
func zval(v bool) val      { return val{n: b2u(v)} }
func (v val) i() int32     { return int32(v.n) }
func (v val) j() int64     { return int64(v.n) }
func (v val) d() float64   { return math.Float64frombits(v.n) }
func (v val) f() float32   { return float32(math.Float64frombits(v.n)) }
func (v val) c() uint16    { return uint16(v.n) }
func (v val) z() bool      { return v.n != 0 }
func (v val) isNull() bool { return v.r == nil }

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// str returns a String reference's value.
func (v val) str() string { return v.r.(string) }

// strval makes a String value.
func strval(s string) val { return val{r: s} }

// refval makes a reference value.
func refval(r any) val { return val{r: r} }

// boxed makes a box of class c holding bits n.
func boxed(c *jclass, n uint64) val { return val{n: n, r: c} }

// null is the null reference.
var null = val{}

// Reference representations that are plain values.
type (
	juuid      [16]byte
	jdate      int64 // milliseconds since the epoch
	jlocalDate int32 // days since the epoch
	jinet      string
)

// jbuffer is a java.nio.ByteBuffer: bytes with a position and a limit.
type jbuffer struct {
	b        []byte
	pos, lim int
}

// jlist is a java.util.List.
type jlist struct {
	cls   *jclass
	elems []val
	mod   int
	fixed uint8 // fixedSize (Arrays.asList) or immutable (List.of)
	of    *jmap // the map whose values or entries this is a view of
}

const (
	mutable = iota
	fixedSize
	immutable
)

// jtuple is a TupleValue or UDTValue: its CQL type and its components
// serialized, as the driver keeps them.
type jtuple struct {
	t    *pgschema.Type
	vals [][]byte
}

// jbuilder is a StringBuilder, in UTF-16 code units as Java keeps it.
type jbuilder struct{ u []uint16 }

// jarray is a Java array.
type jarray struct {
	elem *jtype
	vals []val
}

// jthrow is a Java exception: its class and message (hasMsg false for a
// null message).
type jthrow struct {
	cls    *jclass
	msg    string
	hasMsg bool
}

// udfContext is the udfContext object Cassandra gives bodies.
type udfContext struct{}

// bigOf returns a BigInteger value.
func bigOf(v val) *big.Int { return v.r.(*big.Int) }

// decOf returns a BigDecimal value.
func decOf(v val) pgschema.BigDecimal { return v.r.(pgschema.BigDecimal) }
