package translate

import (
	"strings"

	"github.com/cqlpg/cqlpg/pgschema"
)

// RestrictionKind tells the shapes of resolved WHERE relations apart.
type RestrictionKind uint8

// Restriction kinds.
const (
	// OnColumn restricts one column: c op v, c IN (...), c CONTAINS v.
	OnColumn RestrictionKind = iota
	// OnElement restricts a map entry: m[k] = v.
	OnElement
	// OnTuple restricts clustering columns together: (c1, c2) op (v1, v2).
	OnTuple
	// OnToken restricts the partition's token: token(k1, k2) op v.
	OnToken
)

// Restriction is one WHERE relation, resolved and typed.
type Restriction struct {
	Kind RestrictionKind
	// Column is the restricted column (OnColumn, OnElement); Columns the
	// restricted clustering columns (OnTuple).
	Column  *pgschema.Column
	Columns []*pgschema.Column
	Op      Operator
	// Values holds the operand: one value for = and the slices, the list
	// for IN; for OnTuple = and slices, one value per column. For IN ?,
	// Values holds the one marker, bound to a list, and ListMarker is set.
	Values     []Value
	ListMarker bool
	// Tuples holds an OnTuple IN list (and a write's =, as a list of one):
	// one value per column each, or one marker for a tuple bound whole.
	Tuples [][]Value
	// TupleMarker marks an OnTuple = or slice whose tuple is one marker,
	// held in Values[0].
	TupleMarker bool
	// Key is the map key of an OnElement restriction.
	Key Value
	// Fold, a SQL template of one %s, is applied to both sides of an = on
	// text that a storage-attached index matches case-insensitively or
	// normalized (pgschema.Index.Fold).
	Fold string
	// Prefixed is an = on an indexed text or blob column, whose Postgres
	// index holds the values' prefixes (pgschema.IndexPrefix).
	Prefixed bool
}

// requiresFiltering is Cassandra's ALLOW FILTERING refusal, word for word.
const requiresFiltering = "Cannot execute this query as it might involve data filtering and thus may have " +
	"unpredictable performance. If you want to execute this query despite the performance " +
	"unpredictability, use ALLOW FILTERING"

// restrictions holds a WHERE clause grouped by the part of the key each
// relation restricts, in the order the relations were written.
type restrictions struct {
	table     *pgschema.Table
	partition [][]Restriction // single-column, per partition key column
	cluster   [][]Restriction // single-column, per clustering column
	tuples    []Restriction   // multi-column, on clustering columns
	// tupleSlices are a DELETE's multi-column slices (spreadTuples).
	tupleSlices []Restriction
	token       []Restriction
	others      []Restriction // static and regular columns, elements, CONTAINS
	// clusterSeq holds the clustering restrictions, single-column and
	// tuple, in the order they were written; allowFiltering lifts the
	// rules on their order (checkSliceOrder).
	clusterSeq     []Restriction
	allowFiltering bool
}

// restrict resolves the relations of a WHERE clause against t; writes
// never allow filtering.
func (p *planner) restrict(t *pgschema.Table, where []Relation, allowFiltering bool) (*restrictions, error) {
	r := &restrictions{table: t, allowFiltering: allowFiltering,
		partition: make([][]Restriction, len(t.PartitionKey)),
		cluster:   make([][]Restriction, len(t.Clustering))}
	for _, rel := range where {
		var err error
		switch rel.Kind {
		case TokenRelation:
			err = p.tokenRestriction(r, rel)
		case TupleRelation:
			err = p.tupleRestriction(r, rel)
		default:
			err = p.columnRestriction(r, rel)
		}
		if err != nil {
			return nil, err
		}
	}
	return r, nil
}

// columnRestriction resolves a single-column relation.
func (p *planner) columnRestriction(r *restrictions, rel Relation) error {
	t := r.table
	c, err := column(t, rel.Columns[0])
	if err != nil {
		return err
	}
	res := Restriction{Kind: OnColumn, Column: c, Op: rel.Op}
	spec := specOf(t, c)
	if rel.Key != nil {
		return p.elementRestriction(r, c, rel)
	}
	switch rel.Op {
	case OpNEQ:
		return invalidf("Unsupported \"!=\" relation: %s != %s", pgschema.QuoteIdentifier(c.Name), termString(rel.Value))
	case OpIsNotNull:
		return invalidf("Unsupported restriction: %s IS NOT NULL", pgschema.QuoteIdentifier(c.Name))
	case OpLike:
		return invalidf("LIKE restriction is only supported on properly indexed columns. %s LIKE %s is not valid.",
			pgschema.QuoteIdentifier(c.Name), termString(rel.Value))
	case OpContains, OpContainsKey, OpNotContains, OpNotContainsKey:
		return p.containsRestriction(r, c, rel)
	}
	if c.Type.Kind == pgschema.UDT && c.Type.IsMultiCell() {
		return invalidf("Non-frozen UDT column '%s' (%s) cannot be restricted by any relation", c.Name, c.Type)
	}
	if c.Type.IsMultiCell() {
		// Whole non-frozen collections cannot be compared.
		return invalidf("Collection column '%s' (%s) cannot be restricted by a '%s' relation", c.Name, c.Type, rel.Op)
	}
	if rel.Op.IsSlice() {
		if err := durationRefusal(c.Type, "Slice restrictions are not supported on %s containing durations",
			"Slice restrictions are not supported on duration columns"); err != nil {
			return err
		}
	}
	switch rel.Op {
	case OpIN, OpNotIn:
		if rel.Value != nil { // IN ?
			listSpec := ColumnSpec{Keyspace: t.Keyspace, Table: t.Name, Name: "in(" + c.Name + ")",
				Type: pgschema.NewList(c.Type, false)}
			res.Values, res.ListMarker = []Value{p.bind(rel.Value.(*Marker), listSpec)}, true
		}
		for _, term := range rel.Values {
			v, err := p.value(term, spec)
			if err != nil {
				return err
			}
			if err := checkNotNull(v, c); err != nil {
				return err
			}
			res.Values = append(res.Values, v)
		}
		if rel.Op == OpNotIn {
			// NOT IN filters, on any column (Cassandra 5.0).
			r.others = append(r.others, res)
			return nil
		}
		if len(res.Values) == 1 && !res.ListMarker {
			// An IN of one value is an EQ, as Cassandra plans it.
			res.Op = OpEQ
		}
		return r.add(res)
	}
	v, err := p.value(rel.Value, spec)
	if err != nil {
		return err
	}
	if err := checkNotNull(v, c); err != nil {
		return err
	}
	res.Values = []Value{v}
	return r.add(res)
}

// durationRefusal refuses, with Cassandra's texts, what it cannot do with
// durations (which have no order): in of a collection, tuple or user type
// holding one (inside names "collections", "tuples" or "UDTs"), or
// whole of a duration.
func durationRefusal(t *pgschema.Type, inside, whole string) error {
	if !referencesDuration(t) {
		return nil
	}
	switch {
	case t.IsCollection():
		return invalidf(inside, "collections")
	case t.Kind == pgschema.Tuple:
		return invalidf(inside, "tuples")
	case t.Kind == pgschema.UDT:
		return invalidf(inside, "UDTs")
	}
	return invalidf("%s", whole)
}

// referencesDuration reports whether t is or holds a duration.
func referencesDuration(t *pgschema.Type) bool {
	return t.Has(func(e *pgschema.Type) bool { return e.Kind == pgschema.Duration })
}

// containsRestriction resolves CONTAINS and CONTAINS KEY.
func (p *planner) containsRestriction(r *restrictions, c *pgschema.Column, rel Relation) error {
	t := r.table
	if !c.Type.IsCollection() {
		return invalidf("Cannot use %s on non-collection column %s", rel.Op, c.Name)
	}
	elem := c.Type.Elem[len(c.Type.Elem)-1] // a map's values
	name := "value(" + c.Name + ")"
	if rel.Op.Positive() == OpContainsKey {
		if c.Type.Kind != pgschema.Map {
			return invalidf("Cannot use CONTAINS KEY on non-map column %s", c.Name)
		}
		elem, name = c.Type.Elem[0], "key("+c.Name+")"
	}
	v, err := p.value(rel.Value, ColumnSpec{Keyspace: t.Keyspace, Table: t.Name, Name: name, Type: elem})
	if err != nil {
		return err
	}
	if err := checkNotNull(v, c); err != nil {
		return err
	}
	r.others = append(r.others, Restriction{Kind: OnColumn, Column: c, Op: rel.Op, Values: []Value{v}})
	return nil
}

// elementRestriction resolves m[k] = v.
func (p *planner) elementRestriction(r *restrictions, c *pgschema.Column, rel Relation) error {
	t := r.table
	if c.Type.Kind == pgschema.List {
		return invalidf("Indexes on list entries (%s[index] = value) are not currently supported.", c.Name)
	}
	if c.Type.Kind != pgschema.Map {
		return invalidf("Column %s cannot be used as a map", c.Name)
	}
	if c.Type.Frozen {
		return invalidf("Map-entry equality predicates on frozen map column %s are not supported", c.Name)
	}
	if rel.Op != OpEQ {
		return invalidf("Only EQ relations are supported on map entries")
	}
	key, err := p.value(rel.Key, ColumnSpec{Keyspace: t.Keyspace, Table: t.Name, Name: "key(" + c.Name + ")", Type: c.Type.Elem[0]})
	if err != nil {
		return err
	}
	v, err := p.value(rel.Value, ColumnSpec{Keyspace: t.Keyspace, Table: t.Name, Name: "value(" + c.Name + ")", Type: c.Type.Elem[1]})
	if err != nil {
		return err
	}
	if err := checkNotNull(key, c); err != nil {
		return err
	}
	if err := checkNotNull(v, c); err != nil {
		return err
	}
	r.others = append(r.others, Restriction{Kind: OnElement, Column: c, Op: OpEQ, Key: key, Values: []Value{v}})
	return nil
}

// checkNotNull refuses a null constant in a relation.
func checkNotNull(v Value, c *pgschema.Column) error {
	if v.Marker < 0 && v.Const == nil {
		return invalidf("Invalid null value in condition for column %s", c.Name)
	}
	return nil
}

// add files a single-column restriction under its column, refusing the
// combinations Cassandra refuses for one column.
func (r *restrictions) add(res Restriction) error {
	c := res.Column
	var list *[]Restriction
	switch c.Kind {
	case pgschema.PartitionKey:
		list = &r.partition[c.Position]
	case pgschema.Clustering:
		list = &r.cluster[c.Position]
		for _, tr := range r.tuples {
			if containsColumn(tr.Columns, c) {
				return mixedTupleError(c, tr, res)
			}
		}
	default:
		r.others = append(r.others, res)
		return nil
	}
	for _, prev := range *list {
		if err := mergeError(c.Name, prev.Op, res.Op); err != nil {
			return err
		}
	}
	if c.Kind == pgschema.Clustering {
		if err := r.checkSliceOrder(res); err != nil {
			return err
		}
	}
	*list = append(*list, res)
	return nil
}

// mergeError refuses a second restriction on a column (or token) as
// Cassandra does: the restriction already there decides the message.
func mergeError(name string, prev, next Operator) error {
	switch {
	case prev == OpEQ:
		return invalidf("%s cannot be restricted by more than one relation if it includes an Equal", name)
	case prev == OpIN:
		return invalidf("%s cannot be restricted by more than one relation if it includes a IN", name)
	case !next.IsSlice():
		return invalidf("Column \"%s\" cannot be restricted by both an equality and an inequality relation", name)
	case isStart(prev) && isStart(next):
		return invalidf("More than one restriction was found for the start bound on %s", name)
	case !isStart(prev) && !isStart(next):
		return invalidf("More than one restriction was found for the end bound on %s", name)
	}
	return nil
}

func isStart(op Operator) bool { return op == OpGT || op == OpGTE }

func containsColumn(cols []*pgschema.Column, c *pgschema.Column) bool {
	for _, x := range cols {
		if x == c {
			return true
		}
	}
	return false
}

func mixedTupleError(c *pgschema.Column, tuple, single Restriction) error {
	if tuple.Op.IsSlice() && single.Op.IsSlice() {
		return invalidf("Column \"%s\" cannot be restricted by both a tuple notation inequality and a single column inequality (%s %s ...)",
			c.Name, c.Name, single.Op)
	}
	return invalidf("%s cannot be restricted by more than one relation if it includes an Equal", c.Name)
}

// columnNames joins the names of columns with ", ".
func columnNames(cols []*pgschema.Column) string {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.Name
	}
	return strings.Join(names, ", ")
}

// termString renders a term for an error message.
func termString(t Term) string {
	switch v := t.(type) {
	case *Literal:
		if v.Kind == LitString {
			return "'" + v.Text + "'"
		}
		return v.Text
	case *Marker:
		if v.Name != "" {
			return ":" + v.Name
		}
		return "?"
	case *Collection:
		open, close := "{", "}"
		if v.Kind == ListLiteral {
			open, close = "[", "]"
		}
		items := make([]string, len(v.Elems))
		for i, e := range v.Elems {
			items[i] = termString(e)
			if v.Kind == MapLiteral {
				items[i] += ": " + termString(v.Values[i])
			}
		}
		return open + strings.Join(items, ", ") + close
	case *Tuple:
		items := make([]string, len(v.Elems))
		for i, e := range v.Elems {
			items[i] = termString(e)
		}
		return "(" + strings.Join(items, ", ") + ")"
	case *UDTLiteral:
		items := make([]string, len(v.Fields))
		for i, f := range v.Fields {
			items[i] = f + ": " + termString(v.Values[i])
		}
		return "{" + strings.Join(items, ", ") + "}"
	case *FunctionCall:
		items := make([]string, len(v.Args))
		for i, a := range v.Args {
			items[i] = termString(a)
		}
		return v.Name + "(" + strings.Join(items, ", ") + ")"
	case *TypeHint:
		return "(" + v.Type.String() + ")" + termString(v.Term)
	}
	return "..."
}
