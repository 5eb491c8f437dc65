package pgschema

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Kind identifies a CQL type. Its values are the native protocol's [option]
// ids, so a Kind can be written to the wire as it is; Vector, which the
// protocol carries as a custom type, uses a value of its own above that range.
type Kind uint16

// The CQL type kinds.
const (
	Custom    Kind = 0x0000
	Ascii     Kind = 0x0001
	Bigint    Kind = 0x0002
	Blob      Kind = 0x0003
	Boolean   Kind = 0x0004
	Counter   Kind = 0x0005
	Decimal   Kind = 0x0006
	Double    Kind = 0x0007
	Float     Kind = 0x0008
	Int       Kind = 0x0009
	Timestamp Kind = 0x000B
	UUID      Kind = 0x000C
	Text      Kind = 0x000D // varchar is the same type
	Varint    Kind = 0x000E
	Timeuuid  Kind = 0x000F
	Inet      Kind = 0x0010
	Date      Kind = 0x0011
	Time      Kind = 0x0012
	Smallint  Kind = 0x0013
	Tinyint   Kind = 0x0014
	Duration  Kind = 0x0015
	List      Kind = 0x0020
	Map       Kind = 0x0021
	Set       Kind = 0x0022
	UDT       Kind = 0x0030
	Tuple     Kind = 0x0031
	Vector    Kind = 0x0100
)

// kindTable maps the scalar kinds to a value: an array indexed by kind,
// as the per-value look-ups of every request need it.
type kindTable[V any] [Duration + 1]V

// get returns k's value, the zero value for a kind beyond the scalars.
func (t *kindTable[V]) get(k Kind) V {
	if int(k) < len(t) {
		return t[k]
	}
	var zero V
	return zero
}

var scalarNames = map[Kind]string{
	Ascii: "ascii", Bigint: "bigint", Blob: "blob", Boolean: "boolean",
	Counter: "counter", Decimal: "decimal", Double: "double", Float: "float",
	Int: "int", Timestamp: "timestamp", UUID: "uuid", Text: "text",
	Varint: "varint", Timeuuid: "timeuuid", Inet: "inet", Date: "date",
	Time: "time", Smallint: "smallint", Tinyint: "tinyint", Duration: "duration",
}

// scalarByName maps every CQL scalar type name, aliases included, to its
// kind; scalars holds the one shared *Type of each scalar kind.
var scalarByName, scalars = buildScalars()

func buildScalars() (map[string]Kind, map[Kind]*Type) {
	byName := map[string]Kind{"varchar": Text}
	types := map[Kind]*Type{}
	for k, n := range scalarNames {
		byName[n] = k
		types[k] = &Type{Kind: k}
	}
	return byName, types
}

// Type is a CQL type. Types are immutable once built and shared freely;
// build them with Scalar, NewList, NewSet, NewMap, NewTuple, NewUDT and
// NewVector, or ParseType.
type Type struct {
	Kind Kind
	// Frozen is set on collections and user types declared frozen<...>.
	// Tuples and vectors are always frozen.
	Frozen bool
	// Elem holds the component types: the element of a list, set or
	// vector, the key and value of a map, the fields of a tuple or UDT.
	Elem []*Type
	// Keyspace, Name and Fields describe a user-defined type.
	Keyspace, Name string
	Fields         []string
	// Dim is a vector's dimension.
	Dim int
	// Legacy marks the list, set or vector type of a column created before
	// exact companions (Column.Legacy): one of dates or decimals is a
	// Postgres array, where a newer column's is jsonb, which holds every
	// value.
	Legacy bool
}

// Scalar returns the shared type of a scalar kind, or nil for a kind that
// takes parameters.
func Scalar(k Kind) *Type { return scalars[k] }

// NewList returns list<elem>.
func NewList(elem *Type, frozen bool) *Type {
	return &Type{Kind: List, Frozen: frozen, Elem: []*Type{elem}}
}

// NewSet returns set<elem>.
func NewSet(elem *Type, frozen bool) *Type {
	return &Type{Kind: Set, Frozen: frozen, Elem: []*Type{elem}}
}

// NewMap returns map<key, value>.
func NewMap(key, value *Type, frozen bool) *Type {
	return &Type{Kind: Map, Frozen: frozen, Elem: []*Type{key, value}}
}

// NewTuple returns tuple<elems...>, which is always frozen.
func NewTuple(elems ...*Type) *Type {
	return &Type{Kind: Tuple, Frozen: true, Elem: elems}
}

// NewUDT returns a user-defined type with the given fields.
func NewUDT(keyspace, name string, fields []string, types []*Type, frozen bool) *Type {
	return &Type{Kind: UDT, Frozen: frozen, Keyspace: keyspace, Name: name, Fields: fields, Elem: types}
}

// NewVector returns vector<elem, dim>.
func NewVector(elem *Type, dim int) *Type {
	return &Type{Kind: Vector, Frozen: true, Elem: []*Type{elem}, Dim: dim}
}

// Freeze returns t marked frozen.
func (t *Type) Freeze() *Type {
	if t.Frozen || t.Kind < List {
		return t
	}
	c := *t
	c.Frozen = true
	return &c
}

// IsCollection reports whether t is a list, set or map.
func (t *Type) IsCollection() bool { return t.Kind == List || t.Kind == Set || t.Kind == Map }

// IsMultiCell reports whether t is stored as several cells in Cassandra: a
// collection or user type that is not frozen.
func (t *Type) IsMultiCell() bool { return (t.IsCollection() || t.Kind == UDT) && !t.Frozen }

// IsCounter reports whether t is the counter type.
func (t *Type) IsCounter() bool { return t.Kind == Counter }

// Has reports whether t, or a type nested in it at any depth, satisfies
// pred.
func (t *Type) Has(pred func(*Type) bool) bool {
	if pred(t) {
		return true
	}
	for _, e := range t.Elem {
		if e.Has(pred) {
			return true
		}
	}
	return false
}

// Equal reports whether t and o are the same type: for user types, of
// the same name with the same fields, which an ALTER TYPE changes.
func (t *Type) Equal(o *Type) bool {
	if t == o {
		return true
	}
	if t == nil || o == nil || t.Kind != o.Kind || t.Frozen != o.Frozen || t.Dim != o.Dim ||
		t.Keyspace != o.Keyspace || t.Name != o.Name || len(t.Elem) != len(o.Elem) ||
		!slices.Equal(t.Fields, o.Fields) {
		return false
	}
	for i := range t.Elem {
		if !t.Elem[i].Equal(o.Elem[i]) {
			return false
		}
	}
	return true
}

// String returns the type as CQL writes it, the form system_schema shows:
// "int", "frozen<list<int>>", "map<text, int>", "frozen<tuple<int, text>>".
func (t *Type) String() string {
	var b strings.Builder
	t.write(&b, true)
	return b.String()
}

func (t *Type) write(b *strings.Builder, top bool) {
	if n, ok := scalarNames[t.Kind]; ok {
		b.WriteString(n)
		return
	}
	frozen := t.Frozen && (t.Kind != Vector)
	if frozen {
		b.WriteString("frozen<")
	}
	switch t.Kind {
	case List, Set, Map, Tuple:
		b.WriteString(map[Kind]string{List: "list", Set: "set", Map: "map", Tuple: "tuple"}[t.Kind])
		b.WriteByte('<')
		for i, e := range t.Elem {
			if i > 0 {
				b.WriteString(", ")
			}
			e.write(b, false)
		}
		b.WriteByte('>')
	case UDT:
		b.WriteString(QuoteIdentifier(t.Name))
	case Vector:
		b.WriteString("vector<")
		t.Elem[0].write(b, false)
		b.WriteString(", ")
		b.WriteString(strconv.Itoa(t.Dim))
		b.WriteByte('>')
	default:
		fmt.Fprintf(b, "'custom:%d'", t.Kind)
	}
	if frozen {
		b.WriteByte('>')
	}
}

// UDTResolver finds a user-defined type by name in the keyspace being read.
type UDTResolver func(name string) (*Type, error)

// ParseType reads a type in the form String writes. User types are looked up
// with udt, which may be nil when none are expected.
func ParseType(s string, udt UDTResolver) (*Type, error) {
	p := typeParser{s: s, udt: udt}
	t, err := p.parse()
	if err != nil {
		return nil, err
	}
	p.space()
	if p.i != len(p.s) {
		return nil, fmt.Errorf("unexpected %q after type in %q", p.s[p.i:], s)
	}
	return t, nil
}

type typeParser struct {
	s   string
	i   int
	udt UDTResolver
}

func (p *typeParser) space() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == '\n') {
		p.i++
	}
}

func (p *typeParser) word() string {
	p.space()
	if p.i < len(p.s) && p.s[p.i] == '"' {
		var b strings.Builder
		for p.i++; p.i < len(p.s); p.i++ {
			if p.s[p.i] == '"' {
				if p.i+1 < len(p.s) && p.s[p.i+1] == '"' {
					b.WriteByte('"')
					p.i++
					continue
				}
				p.i++
				return b.String()
			}
			b.WriteByte(p.s[p.i])
		}
		return b.String()
	}
	start := p.i
	for p.i < len(p.s) {
		c := p.s[p.i]
		if c == '<' || c == '>' || c == ',' || c == ' ' {
			break
		}
		p.i++
	}
	return strings.ToLower(p.s[start:p.i])
}

func (p *typeParser) expect(c byte) error {
	p.space()
	if p.i >= len(p.s) || p.s[p.i] != c {
		return fmt.Errorf("expected %q at offset %d of %q", c, p.i, p.s)
	}
	p.i++
	return nil
}

func (p *typeParser) args(n int) ([]*Type, error) {
	if err := p.expect('<'); err != nil {
		return nil, err
	}
	var out []*Type
	for {
		t, err := p.parse()
		if err != nil {
			return nil, err
		}
		out = append(out, t)
		p.space()
		if p.i < len(p.s) && p.s[p.i] == ',' {
			p.i++
			continue
		}
		break
	}
	if err := p.expect('>'); err != nil {
		return nil, err
	}
	if n > 0 && len(out) != n {
		return nil, fmt.Errorf("expected %d type parameters in %q", n, p.s)
	}
	return out, nil
}

func (p *typeParser) parse() (*Type, error) {
	w := p.word()
	if k, ok := scalarByName[w]; ok {
		return scalars[k], nil
	}
	switch w {
	case "frozen":
		a, err := p.args(1)
		if err != nil {
			return nil, err
		}
		return a[0].Freeze(), nil
	case "list", "set":
		a, err := p.args(1)
		if err != nil {
			return nil, err
		}
		if w == "list" {
			return NewList(a[0], false), nil
		}
		return NewSet(a[0], false), nil
	case "map":
		a, err := p.args(2)
		if err != nil {
			return nil, err
		}
		return NewMap(a[0], a[1], false), nil
	case "tuple":
		a, err := p.args(0)
		if err != nil {
			return nil, err
		}
		return NewTuple(a...), nil
	case "vector":
		if err := p.expect('<'); err != nil {
			return nil, err
		}
		elem, err := p.parse()
		if err != nil {
			return nil, err
		}
		if err := p.expect(','); err != nil {
			return nil, err
		}
		dim, err := strconv.Atoi(p.word())
		if err != nil || dim <= 0 {
			return nil, fmt.Errorf("invalid vector dimension in %q", p.s)
		}
		if err := p.expect('>'); err != nil {
			return nil, err
		}
		return NewVector(elem, dim), nil
	case "":
		return nil, fmt.Errorf("missing type in %q", p.s)
	}
	if p.udt == nil {
		return nil, fmt.Errorf("unknown type %s", w)
	}
	return p.udt(w)
}
