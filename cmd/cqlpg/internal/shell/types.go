package shell

import (
	"strconv"
	"strings"

	"github.com/gocql/gocql"

	"github.com/cqlpg/cqlpg/pgschema"
)

// typeOf converts the type gocql reports for a result column; nil when it
// is a custom type other than the ones below.
func typeOf(ti gocql.TypeInfo) *pgschema.Type {
	switch t := ti.(type) {
	case gocql.CollectionType:
		switch t.Type() {
		case gocql.TypeList:
			if e := typeOf(t.Elem); e != nil {
				return pgschema.NewList(e, true)
			}
		case gocql.TypeSet:
			if e := typeOf(t.Elem); e != nil {
				return pgschema.NewSet(e, true)
			}
		case gocql.TypeMap:
			k, v := typeOf(t.Key), typeOf(t.Elem)
			if k != nil && v != nil {
				return pgschema.NewMap(k, v, true)
			}
		}
		return nil
	case gocql.TupleTypeInfo:
		elems := make([]*pgschema.Type, len(t.Elems))
		for i, e := range t.Elems {
			if elems[i] = typeOf(e); elems[i] == nil {
				return nil
			}
		}
		return pgschema.NewTuple(elems...)
	case gocql.UDTTypeInfo:
		names := make([]string, len(t.Elements))
		types := make([]*pgschema.Type, len(t.Elements))
		for i, f := range t.Elements {
			names[i] = f.Name
			if types[i] = typeOf(f.Type); types[i] == nil {
				return nil
			}
		}
		return pgschema.NewUDT(t.KeySpace, t.Name, names, types, true)
	case gocql.NativeType:
		if t.Type() == gocql.TypeCustom {
			p := &classParser{s: t.Custom()}
			return p.parse()
		}
		return pgschema.Scalar(pgschema.Kind(t.Type()))
	}
	return nil
}

// marshalClasses are the Java class names of the scalar types, as a
// custom type's name spells them.
var marshalClasses = map[string]pgschema.Kind{
	"AsciiType": pgschema.Ascii, "LongType": pgschema.Bigint, "BytesType": pgschema.Blob,
	"BooleanType": pgschema.Boolean, "CounterColumnType": pgschema.Counter, "DecimalType": pgschema.Decimal,
	"DoubleType": pgschema.Double, "FloatType": pgschema.Float, "Int32Type": pgschema.Int,
	"TimestampType": pgschema.Timestamp, "UUIDType": pgschema.UUID, "UTF8Type": pgschema.Text,
	"IntegerType": pgschema.Varint, "TimeUUIDType": pgschema.Timeuuid, "InetAddressType": pgschema.Inet,
	"SimpleDateType": pgschema.Date, "TimeType": pgschema.Time, "ShortType": pgschema.Smallint,
	"ByteType": pgschema.Tinyint, "DurationType": pgschema.Duration,
}

// classParser reads a custom type's class name, such as
// org.apache.cassandra.db.marshal.VectorType(org.apache.cassandra.db.marshal.FloatType, 3).
type classParser struct {
	s string
	i int
}

func (p *classParser) name() string {
	for p.i < len(p.s) && p.s[p.i] == ' ' {
		p.i++
	}
	j := p.i
	for p.i < len(p.s) && !strings.ContainsRune("(), ", rune(p.s[p.i])) {
		p.i++
	}
	n := p.s[j:p.i]
	return n[strings.LastIndexByte(n, '.')+1:]
}

func (p *classParser) args() []string {
	var out []string
	if p.i >= len(p.s) || p.s[p.i] != '(' {
		return nil
	}
	depth, start := 0, p.i+1
	for ; p.i < len(p.s); p.i++ {
		switch p.s[p.i] {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				out = append(out, strings.TrimSpace(p.s[start:p.i]))
				p.i++
				return out
			}
		case ',':
			if depth == 1 {
				out = append(out, strings.TrimSpace(p.s[start:p.i]))
				start = p.i + 1
			}
		}
	}
	return out
}

func (p *classParser) parse() *pgschema.Type {
	n := p.name()
	if k, ok := marshalClasses[n]; ok {
		return pgschema.Scalar(k)
	}
	args := p.args()
	sub := func(i int) *pgschema.Type {
		if i >= len(args) {
			return nil
		}
		return (&classParser{s: args[i]}).parse()
	}
	switch n {
	case "FrozenType":
		return sub(0)
	case "ListType", "SetType":
		e := sub(0)
		if e == nil {
			return nil
		}
		if n == "ListType" {
			return pgschema.NewList(e, true)
		}
		return pgschema.NewSet(e, true)
	case "MapType":
		k, v := sub(0), sub(1)
		if k == nil || v == nil {
			return nil
		}
		return pgschema.NewMap(k, v, true)
	case "VectorType":
		e := sub(0)
		if e == nil || len(args) != 2 {
			return nil
		}
		dim, err := strconv.Atoi(args[1])
		if err != nil {
			return nil
		}
		return pgschema.NewVector(e, dim)
	}
	return nil
}
