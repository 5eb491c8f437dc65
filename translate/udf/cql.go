package udf

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"strings"

	"github.com/cqlpg/cqlpg/pgschema"
)

// CQL values in and out: the Java type Cassandra gives each CQL type, and
// the driver codecs that turn serialized values into Java objects and
// back (native protocol v4 serialization).

// javaTypeOf returns the Java type of arguments (and, boxed, results) of
// CQL type t; prim makes the types that have one primitive, as Cassandra
// declares the arguments of a RETURNS NULL ON NULL INPUT function.
func javaTypeOf(t *pgschema.Type, prim bool) (*jtype, error) {
	var jt *jtype
	switch t.Kind {
	case pgschema.Int:
		jt = tInt
	case pgschema.Bigint, pgschema.Counter, pgschema.Time:
		jt = tLong
	case pgschema.Smallint:
		jt = tShort
	case pgschema.Tinyint:
		jt = tByte
	case pgschema.Float:
		jt = tFloat
	case pgschema.Double:
		jt = tDouble
	case pgschema.Boolean:
		jt = tBoolean
	case pgschema.Text, pgschema.Ascii:
		return typeString, nil
	case pgschema.Blob:
		return classType(clsByteBuffer), nil
	case pgschema.Decimal:
		return classType(clsBigDecimal), nil
	case pgschema.Varint:
		return classType(clsBigInteger), nil
	case pgschema.UUID, pgschema.Timeuuid:
		return classType(clsUUID), nil
	case pgschema.Timestamp:
		return classType(clsDate), nil
	case pgschema.Date:
		return classType(clsLocalDate), nil
	case pgschema.Inet:
		return classType(clsInetAddress), nil
	case pgschema.Duration:
		return classType(clsDuration), nil
	case pgschema.Tuple:
		return classType(clsTupleValue), nil
	case pgschema.UDT:
		return classType(clsUDTValue), nil
	case pgschema.List, pgschema.Set:
		e, err := javaTypeOf(t.Elem[0], false)
		if err != nil {
			return nil, err
		}
		if t.Kind == pgschema.List {
			return classType(clsList, e), nil
		}
		return classType(clsSet, e), nil
	case pgschema.Map:
		k, err := javaTypeOf(t.Elem[0], false)
		if err != nil {
			return nil, err
		}
		v, err := javaTypeOf(t.Elem[1], false)
		if err != nil {
			return nil, err
		}
		return classType(clsMap, k, v), nil
	default:
		return nil, fmt.Errorf("%s values are not supported by cqlpg user functions", t)
	}
	if prim {
		return jt, nil
	}
	return boxOf(jt), nil
}

// emptyIsNull reports whether an empty value of type t means null to a
// function, as Cassandra's isEmptyValueMeaningless types do.
func emptyIsNull(t *pgschema.Type) bool {
	switch t.Kind {
	case pgschema.Text, pgschema.Ascii, pgschema.Blob, pgschema.List, pgschema.Set, pgschema.Map,
		pgschema.Tuple, pgschema.UDT, pgschema.Duration:
		return false
	}
	return true
}

// argReader returns how an argument of CQL type t reads into Java type jt.
func argReader(t *pgschema.Type, jt *jtype) func(fr *frame, b []byte) val {
	return func(fr *frame, b []byte) val {
		v := decodeCQL(t, b)
		if jt.isPrim() {
			v.r = nil
		}
		return v
	}
}

// resultWriter returns how a result of Java type jt writes as CQL type t.
func resultWriter(t *pgschema.Type, jt *jtype) func(fr *frame, v val) []byte {
	return func(fr *frame, v val) []byte { return encodeCQL(t, v) }
}

func invalidType(format string, args ...any) {
	throw(clsInvalidType, format, args...)
}

// fixedLen checks a fixed-size value's length as the driver's codecs do.
func fixedLen(b []byte, n int, what string) {
	if len(b) != n {
		unit := "bytes"
		if n == 1 {
			unit = "byte"
		}
		invalidType("Invalid %s value, expecting %d %s but got %d", what, n, unit, len(b))
	}
}

// decodeCQL deserializes a non-null value of type t into the Java object
// the driver's codec makes: boxes for the primitive types, ArrayList,
// LinkedHashSet and LinkedHashMap for collections.
func decodeCQL(t *pgschema.Type, b []byte) val {
	switch t.Kind {
	case pgschema.Int:
		fixedLen(b, 4, "32-bits integer")
		return boxed(clsInteger, ival(int32(binary.BigEndian.Uint32(b))).n)
	case pgschema.Bigint, pgschema.Counter, pgschema.Time:
		fixedLen(b, 8, "64-bits long")
		return boxed(clsLong, binary.BigEndian.Uint64(b))
	case pgschema.Smallint:
		fixedLen(b, 2, "16-bits integer")
		return boxed(clsShort, sval(int16(binary.BigEndian.Uint16(b))).n)
	case pgschema.Tinyint:
		fixedLen(b, 1, "8-bits integer")
		return boxed(clsByte, byval(int8(b[0])).n)
	case pgschema.Float:
		fixedLen(b, 4, "32-bits float")
		return boxed(clsFloat, fval(math.Float32frombits(binary.BigEndian.Uint32(b))).n)
	case pgschema.Double:
		fixedLen(b, 8, "64-bits double")
		return boxed(clsDouble, binary.BigEndian.Uint64(b))
	case pgschema.Boolean:
		fixedLen(b, 1, "boolean")
		return boxed(clsBoolean, b2u(b[0] != 0))
	case pgschema.Text, pgschema.Ascii:
		return strval(strings.Clone(string(b))) // its own bytes: a new String, as the codec makes
	case pgschema.Blob:
		c := append([]byte(nil), b...)
		return refval(&jbuffer{b: c, lim: len(c)})
	case pgschema.Decimal:
		d, err := pgschema.DecodeBigDecimal(b)
		if err != nil {
			invalidType("Invalid decimal value, expecting at least 4 bytes but got %d", len(b))
		}
		return refval(d)
	case pgschema.Varint:
		return refval(pgschema.VarintValue(b))
	case pgschema.UUID, pgschema.Timeuuid:
		fixedLen(b, 16, "UUID")
		var u juuid
		copy(u[:], b)
		return refval(u)
	case pgschema.Timestamp:
		fixedLen(b, 8, "64-bits long")
		return refval(jdate(int64(binary.BigEndian.Uint64(b))))
	case pgschema.Date:
		fixedLen(b, 4, "32-bits integer")
		return refval(jlocalDate(int32(binary.BigEndian.Uint32(b) - 1<<31)))
	case pgschema.Inet:
		if len(b) != 4 && len(b) != 16 {
			invalidType("Invalid bytes for inet value, got %d bytes", len(b))
		}
		return refval(jinet(b))
	case pgschema.Duration:
		d, err := pgschema.DecodeDuration(b)
		if err != nil {
			invalidType("%s", err.Error())
		}
		return refval(d)
	case pgschema.List, pgschema.Set, pgschema.Map:
		elems, err := pgschema.Elements(t, b)
		if err != nil {
			invalidType("%s", err.Error())
		}
		return decodeCollection(t, elems)
	case pgschema.Tuple, pgschema.UDT:
		elems, err := pgschema.Elements(t, b)
		if err != nil {
			invalidType("%s", err.Error())
		}
		vals := make([][]byte, len(t.Elem))
		copy(vals, elems)
		return refval(&jtuple{t: t, vals: vals})
	}
	invalidType("Invalid value for CQL type %s", t)
	return null
}

// decodeCollection makes the list, set or map of serialized elements.
func decodeCollection(t *pgschema.Type, elems [][]byte) val {
	elem := func(et *pgschema.Type, b []byte) val {
		if b == nil {
			return null
		}
		return decodeCQL(et, b)
	}
	switch t.Kind {
	case pgschema.List:
		l := newList(clsArrayList, len(elems))
		for _, e := range elems {
			l.elems = append(l.elems, elem(t.Elem[0], e))
		}
		return refval(l)
	case pgschema.Set:
		s := newMap(clsLinkedHashSet, true)
		for _, e := range elems {
			s.put(nil, elem(t.Elem[0], e), null)
		}
		return refval(s)
	}
	m := newMap(clsLinkedHashMap, false)
	for i := 0; i+1 < len(elems); i += 2 {
		m.put(nil, elem(t.Elem[0], elems[i]), elem(t.Elem[1], elems[i+1]))
	}
	return refval(m)
}

// encodeCQL serializes a Java object as CQL type t, as the driver's codec
// does; null is nil.
func encodeCQL(t *pgschema.Type, v val) []byte {
	if v.r == nil {
		return nil
	}
	switch t.Kind {
	case pgschema.Int:
		checkCast(v, typeInteger)
		return binary.BigEndian.AppendUint32(nil, uint32(v.i()))
	case pgschema.Bigint, pgschema.Counter, pgschema.Time:
		checkCast(v, typeLong)
		return binary.BigEndian.AppendUint64(nil, v.n)
	case pgschema.Smallint:
		checkCast(v, typeShort)
		return binary.BigEndian.AppendUint16(nil, uint16(v.n))
	case pgschema.Tinyint:
		checkCast(v, typeByte)
		return []byte{byte(v.n)}
	case pgschema.Float:
		checkCast(v, typeFloatBox)
		return binary.BigEndian.AppendUint32(nil, math.Float32bits(v.f()))
	case pgschema.Double:
		checkCast(v, typeDoubleBox)
		return binary.BigEndian.AppendUint64(nil, v.n)
	case pgschema.Boolean:
		checkCast(v, typeBoolean)
		if v.z() {
			return []byte{1}
		}
		return []byte{0}
	case pgschema.Text, pgschema.Ascii:
		checkCast(v, typeString)
		if t.Kind == pgschema.Ascii && !isASCII(v.str()) {
			invalidType("Invalid characters in ascii value %s", v.str())
		}
		return []byte(v.str())
	case pgschema.Blob:
		checkCast(v, classType(clsByteBuffer))
		r := v.r.(*jbuffer)
		return append([]byte{}, r.b[r.pos:r.lim]...)
	case pgschema.Decimal:
		checkCast(v, classType(clsBigDecimal))
		return decOf(v).Bytes()
	case pgschema.Varint:
		checkCast(v, classType(clsBigInteger))
		return pgschema.VarintBytes(bigOf(v))
	case pgschema.UUID, pgschema.Timeuuid:
		checkCast(v, classType(clsUUID))
		u := v.r.(juuid)
		if t.Kind == pgschema.Timeuuid && u[6]>>4 != 1 {
			invalidType("%s is not a Type 1 (time-based) UUID", pgschema.UUIDText(u[:]))
		}
		return append([]byte{}, u[:]...)
	case pgschema.Timestamp:
		checkCast(v, classType(clsDate))
		return binary.BigEndian.AppendUint64(nil, uint64(v.r.(jdate)))
	case pgschema.Date:
		checkCast(v, classType(clsLocalDate))
		return binary.BigEndian.AppendUint32(nil, uint32(int64(v.r.(jlocalDate))+1<<31))
	case pgschema.Inet:
		checkCast(v, classType(clsInetAddress))
		return []byte(v.r.(jinet))
	case pgschema.Duration:
		checkCast(v, classType(clsDuration))
		return v.r.(pgschema.DurationValue).Append(nil)
	case pgschema.List, pgschema.Set:
		checkCast(v, classType(map[pgschema.Kind]*jclass{pgschema.List: clsList, pgschema.Set: clsSet}[t.Kind]))
		elems := elements(v)
		out := make([][]byte, len(elems))
		for i, e := range elems {
			if e.r == nil {
				throw(clsNPE, "Collection elements cannot be null")
			}
			out[i] = encodeCQL(t.Elem[0], e)
		}
		return pgschema.SerializeCollection(out)
	case pgschema.Map:
		checkCast(v, classType(clsMap))
		es := v.r.(*jmap).entries()
		keys, vals := make([][]byte, len(es)), make([][]byte, len(es))
		for i, e := range es {
			if e.k.r == nil {
				throw(clsNPE, "Map keys cannot be null")
			}
			if e.v.r == nil {
				throw(clsNPE, "Map values cannot be null")
			}
			keys[i], vals[i] = encodeCQL(t.Elem[0], e.k), encodeCQL(t.Elem[1], e.v)
		}
		return pgschema.SerializeMap(keys, vals)
	case pgschema.Tuple, pgschema.UDT:
		want := classType(clsTupleValue)
		if t.Kind == pgschema.UDT {
			want = classType(clsUDTValue)
		}
		checkCast(v, want)
		tv := v.r.(*jtuple)
		if !tv.t.Freeze().Equal(t.Freeze()) {
			invalidType("Invalid value for CQL type %s: the value is of type %s", t, tv.t)
		}
		return pgschema.SerializeTuple(tv.vals)
	}
	invalidType("Invalid value for CQL type %s", t)
	return nil
}

// bigZero is a shared zero, never changed.
var bigZero = new(big.Int)
