package udf

import (
	"encoding/binary"
	"fmt"
	"strings"
	"time"

	"github.com/cqlpg/cqlpg/pgschema"
)

// The Java driver's classes Cassandra gives bodies: TupleValue and
// UDTValue with their typed getters and setters, LocalDate, Duration, and
// the udfContext that makes new tuple and user type values. The getters
// and setters check the component's CQL type as the driver's codec
// registry does, and a primitive getter reads null as 0 or false.

// javaClassName is the Java class the driver maps a CQL type to, as its
// messages print it.
func javaClassName(t *pgschema.Type) string {
	jt, err := javaTypeOf(t, false)
	if err != nil {
		return "java.lang.Object"
	}
	return javaTypeName(jt)
}

// javaTypeName prints a type with qualified names: java.util.List<java.lang.Integer>.
func javaTypeName(t *jtype) string {
	if t.cls == nil || t.isPrim() {
		return t.String()
	}
	name := strings.ReplaceAll(t.cls.full, "$", ".")
	if len(t.args) == 0 {
		return name
	}
	parts := make([]string, len(t.args))
	for i, a := range t.args {
		parts[i] = javaTypeName(a)
	}
	return name + "<" + strings.Join(parts, ", ") + ">"
}

// codecMismatch throws the driver's CodecNotFoundException.
func codecMismatch(t *pgschema.Type, java string) {
	throw(clsCodecNotFound, "Codec not found for requested operation: [%s <-> %s]", t, java)
}

// component resolves a component of a tuple or user type value by index
// (an int) or, for a user type, by field name (a String).
func component(r val, at val, byName bool) (*jtuple, int) {
	tv := r.r.(*jtuple)
	if byName {
		if at.r == nil {
			npe()
		}
		return tv, fieldIndex(tv.t, at.str())
	}
	i := int(at.i())
	if i < 0 || i >= len(tv.vals) {
		indexOutOfBounds(clsArrayIndex, i, len(tv.vals))
	}
	return tv, i
}

// fieldIndex finds a user type's field by name: case-insensitively unless
// quoted, as the driver's Metadata.handleId reads names.
func fieldIndex(t *pgschema.Type, name string) int {
	id := strings.ToLower(name)
	if len(name) >= 2 && name[0] == '"' && name[len(name)-1] == '"' {
		id = strings.ReplaceAll(name[1:len(name)-1], `""`, `"`)
	}
	for i, f := range t.Fields {
		if f == id {
			return i
		}
	}
	throw(clsIllegalArgument, "%s is not a field defined in this UDT", name)
	return 0
}

// kindSet lists the CQL kinds a getter or setter reads or writes.
type kindSet []pgschema.Kind

func (ks kindSet) has(k pgschema.Kind) bool {
	for _, x := range ks {
		if x == k {
			return true
		}
	}
	return false
}

// accessor is a typed getter and setter pair of the driver.
type accessor struct {
	name  string // Int for getInt and setInt
	java  string // the Java type of the value, in signatures
	kinds kindSet
	box   string // the Java class in CodecNotFoundException messages
}

var accessors = []accessor{
	{"Bool", "boolean", kindSet{pgschema.Boolean}, "java.lang.Boolean"},
	{"Byte", "byte", kindSet{pgschema.Tinyint}, "java.lang.Byte"},
	{"Short", "short", kindSet{pgschema.Smallint}, "java.lang.Short"},
	{"Int", "int", kindSet{pgschema.Int}, "java.lang.Integer"},
	{"Long", "long", kindSet{pgschema.Bigint, pgschema.Counter, pgschema.Time}, "java.lang.Long"},
	{"Time", "long", kindSet{pgschema.Time}, "java.lang.Long"},
	{"Float", "float", kindSet{pgschema.Float}, "java.lang.Float"},
	{"Double", "double", kindSet{pgschema.Double}, "java.lang.Double"},
	{"String", "String", kindSet{pgschema.Text, pgschema.Ascii}, "java.lang.String"},
	{"Bytes", "ByteBuffer", kindSet{pgschema.Blob}, "java.nio.ByteBuffer"},
	{"Varint", "BigInteger", kindSet{pgschema.Varint}, "java.math.BigInteger"},
	{"Decimal", "BigDecimal", kindSet{pgschema.Decimal}, "java.math.BigDecimal"},
	{"UUID", "UUID", kindSet{pgschema.UUID, pgschema.Timeuuid}, "java.util.UUID"},
	{"Timestamp", "Date", kindSet{pgschema.Timestamp}, "java.util.Date"},
	{"Date", "LocalDate", kindSet{pgschema.Date}, "org.apache.cassandra.cql3.functions.types.LocalDate"},
	{"Inet", "InetAddress", kindSet{pgschema.Inet}, "java.net.InetAddress"},
	{"UDTValue", "UDTValue", kindSet{pgschema.UDT}, "org.apache.cassandra.cql3.functions.types.UDTValue"},
	{"TupleValue", "TupleValue", kindSet{pgschema.Tuple}, "org.apache.cassandra.cql3.functions.types.TupleValue"},
}

func declareDriver() {
	for _, c := range []*jclass{clsTupleValue, clsUDTValue} {
		keys := []string{"int"}
		if c == clsUDTValue {
			keys = append(keys, "String")
		}
		for _, key := range keys {
			declareAccessors(c, key)
		}
	}
	declareLocalDate()
	declareDuration()
	declareContext()
}

// declareAccessors declares a value class's getters and setters with the
// index type key (int, or String for user type fields).
func declareAccessors(c *jclass, key string) {
	self := c.name
	byName := key == "String"
	for _, ac := range accessors {
		ac := ac
		prim := primTypes[ac.java] != nil
		def(c, ac.java+" get"+ac.name+"("+key+")", func(_ *frame, r val, a []val) val {
			tv, i := component(r, a[0], byName)
			t := tv.t.Elem[i]
			if !ac.kinds.has(t.Kind) {
				codecMismatch(t, ac.box)
			}
			b := tv.vals[i]
			if b == nil || len(b) == 0 && emptyIsNull(t) {
				return null // 0 or false for a primitive getter
			}
			v := decodeCQL(t, b)
			if prim {
				v.r = nil
			}
			return v
		})
		def(c, self+" set"+ac.name+"("+key+","+ac.java+")", func(fr *frame, r val, a []val) val {
			tv, i := component(r, a[0], byName)
			t := tv.t.Elem[i]
			if !ac.kinds.has(t.Kind) {
				codecMismatch(t, ac.box)
			}
			v := a[1]
			if prim {
				v.r = boxOf(primTypes[ac.java]).cls
			}
			b := encodeCQL(t, v)
			fr.alloc(len(b))
			tv.vals[i] = b
			return r
		})
	}
	coll := func(kind pgschema.Kind, name, sig string, classes int) {
		def(c, sig, func(fr *frame, r val, a []val) val {
			tv, i := component(r, a[0], byName)
			t := tv.t.Elem[i]
			if t.Kind != kind || !classesMatch(t, a[1:1+classes]) {
				codecMismatch(t, collectionName(name, a[1:1+classes]))
			}
			b := tv.vals[i]
			if b == nil {
				return decodeCollection(t, nil)
			}
			return decodeCQL(t, b)
		})
	}
	coll(pgschema.List, "java.util.List", "<T> List<T> getList("+key+",Class<T>)", 1)
	coll(pgschema.Set, "java.util.Set", "<T> Set<T> getSet("+key+",Class<T>)", 1)
	coll(pgschema.Map, "java.util.Map", "<K,V> Map<K,V> getMap("+key+",Class<K>,Class<V>)", 2)
	for _, s := range []struct {
		kind pgschema.Kind
		sig  string
	}{{pgschema.List, "List<?>"}, {pgschema.Set, "Set<?>"}, {pgschema.Map, "Map<?,?>"}} {
		s := s
		name := strings.SplitN(s.sig, "<", 2)[0]
		def(c, self+" set"+name+"("+key+","+s.sig+")", func(fr *frame, r val, a []val) val {
			tv, i := component(r, a[0], byName)
			t := tv.t.Elem[i]
			if t.Kind != s.kind {
				codecMismatch(t, "java.util."+name)
			}
			b := encodeCQL(t, a[1])
			fr.alloc(len(b))
			tv.vals[i] = b
			return r
		})
	}
	def(c, "Object getObject("+key+")", func(_ *frame, r val, a []val) val {
		tv, i := component(r, a[0], byName)
		if tv.vals[i] == nil {
			return null
		}
		return decodeCQL(tv.t.Elem[i], tv.vals[i])
	})
	def(c, "boolean isNull("+key+")", func(_ *frame, r val, a []val) val {
		tv, i := component(r, a[0], byName)
		return zval(tv.vals[i] == nil)
	})
	def(c, self+" setToNull("+key+")", func(_ *frame, r val, a []val) val {
		tv, i := component(r, a[0], byName)
		tv.vals[i] = nil
		return r
	})
	def(c, "ByteBuffer getBytesUnsafe("+key+")", func(_ *frame, r val, a []val) val {
		tv, i := component(r, a[0], byName)
		if tv.vals[i] == nil {
			return null
		}
		b := append([]byte(nil), tv.vals[i]...)
		return refval(&jbuffer{b: b, lim: len(b)})
	})
}

// classesMatch reports whether class literals name the Java types of a
// collection type's elements.
func classesMatch(t *pgschema.Type, classes []val) bool {
	for i, c := range classes {
		if c.r == nil {
			npe()
		}
		want, err := javaTypeOf(t.Elem[i], false)
		if err != nil || c.r.(*jtype).cls != want.cls {
			return false
		}
	}
	return true
}

// collectionName prints the Java type a collection getter asked for.
func collectionName(name string, classes []val) string {
	parts := make([]string, len(classes))
	for i, c := range classes {
		parts[i] = javaTypeName(c.r.(*jtype))
	}
	return name + "<" + strings.Join(parts, ", ") + ">"
}

// formatTuple is TupleValue.toString and UDTValue.toString: the value as
// a CQL literal, (1,'a') or {f:1,g:'a'}, as the driver's codecs format it.
func formatTuple(tv *jtuple) string {
	var b strings.Builder
	writeLiteral(&b, tv.t, pgschema.SerializeTuple(tv.vals))
	return b.String()
}

// brackets are the delimiters of the CQL literals of composite types.
var brackets = map[pgschema.Kind][2]string{pgschema.Tuple: {"(", ")"}, pgschema.UDT: {"{", "}"},
	pgschema.List: {"[", "]"}, pgschema.Set: {"{", "}"}, pgschema.Map: {"{", "}"}}

// writeLiteral writes a serialized value of type t as a CQL literal.
func writeLiteral(b *strings.Builder, t *pgschema.Type, v []byte) {
	if v == nil {
		b.WriteString("NULL")
		return
	}
	switch t.Kind {
	case pgschema.Tuple, pgschema.UDT, pgschema.List, pgschema.Set, pgschema.Map:
		elems, err := pgschema.Elements(t, v)
		if err != nil {
			b.WriteString("NULL")
			return
		}
		open, closing := brackets[t.Kind][0], brackets[t.Kind][1]
		b.WriteString(open)
		for i, e := range elems {
			if i > 0 && !(t.Kind == pgschema.Map && i%2 == 1) {
				b.WriteByte(',')
			}
			switch t.Kind {
			case pgschema.UDT:
				b.WriteString(pgschema.QuoteIdentifier(t.Fields[i]) + ":")
				writeLiteral(b, t.Elem[i], e)
			case pgschema.Tuple:
				writeLiteral(b, t.Elem[i], e)
			case pgschema.Map:
				if i%2 == 1 {
					b.WriteByte(':')
				}
				writeLiteral(b, t.Elem[i%2], e)
			default:
				writeLiteral(b, t.Elem[0], e)
			}
		}
		b.WriteString(closing)
		return
	}
	if len(v) == 0 && emptyIsNull(t) {
		b.WriteString("NULL")
		return
	}
	x := decodeCQL(t, v)
	switch t.Kind {
	case pgschema.Text, pgschema.Ascii:
		b.WriteString("'" + strings.ReplaceAll(x.str(), "'", "''") + "'")
	case pgschema.Blob:
		b.WriteString("0x" + fmt.Sprintf("%x", v))
	case pgschema.Inet:
		b.WriteString("'" + inetText(x.r.(jinet)) + "'")
	case pgschema.Date:
		b.WriteString("'" + pgschema.FormatDate(binary.BigEndian.Uint32(v)) + "'")
	case pgschema.Time:
		b.WriteString("'" + pgschema.FormatTime(x.j()) + "'")
	case pgschema.Timestamp:
		b.WriteString("'" + time.UnixMilli(int64(x.r.(jdate))).UTC().Format("2006-01-02T15:04:05.000Z07:00") + "'")
	default:
		writeJava(b, x, 0)
	}
}
