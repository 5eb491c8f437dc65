package translate

import (
	"slices"

	"github.com/cqlpg/cqlpg/pgschema"
)

// tokenRestriction resolves token(k1, k2) op v, with Cassandra's checks
// on the columns and on combining token relations.
func (p *planner) tokenRestriction(r *restrictions, rel Relation) error {
	t := r.table
	var cols []*pgschema.Column
	for _, name := range rel.Columns {
		c, err := column(t, name)
		if err != nil {
			return err
		}
		cols = append(cols, c)
	}
	if err := checkTokenColumns(t, cols); err != nil {
		return err
	}
	name := "token(" + columnNames(cols) + ")"
	switch rel.Op {
	case OpIN, OpContains, OpContainsKey, OpLike:
		return invalidf("%s cannot be used with the token function", rel.Op)
	case OpNEQ:
		return invalidf("Unsupported \"!=\" relation: %s != %s", name, termString(rel.Value))
	}
	for _, prev := range r.token {
		if prev.Op == OpEQ || rel.Op == OpEQ {
			if prev.Op == OpEQ {
				return invalidf("%s cannot be restricted by more than one relation if it includes an Equal", columnNames(cols))
			}
			return invalidf("Columns \"%s\" cannot be restricted by both an equality and an inequality relation", columnNames(cols))
		}
		if err := mergeError(columnNames(cols), prev.Op, rel.Op); err != nil {
			return err
		}
	}
	v, err := p.value(rel.Value, ColumnSpec{Keyspace: t.Keyspace, Table: t.Name, Name: "partition key token",
		Type: pgschema.Scalar(pgschema.Bigint)})
	if err != nil {
		return err
	}
	if v.Marker < 0 && v.Const == nil {
		return invalidf("Invalid null token value")
	}
	r.token = append(r.token, Restriction{Kind: OnToken, Op: rel.Op, Values: []Value{v}})
	return nil
}

// checkTokenColumns checks the columns of token(...) in Cassandra's order:
// every partition key column, then no duplicates, then nothing else, then
// the key's order.
func checkTokenColumns(t *pgschema.Table, cols []*pgschema.Column) error {
	if slices.Equal(cols, t.PartitionKey) {
		return nil
	}
	for _, k := range t.PartitionKey {
		if !containsColumn(cols, k) {
			return invalidf("The token() function must be applied to all partition key components or none of them")
		}
	}
	for i, c := range cols {
		if containsColumn(cols[:i], c) {
			return invalidf("The token() function contains duplicate partition key components")
		}
	}
	for _, c := range cols {
		if c.Kind != pgschema.PartitionKey {
			return invalidf("The token() function must contains only partition key components")
		}
	}
	return invalidf("The token function arguments must be in the partition key order: %s", columnNames(t.PartitionKey))
}

// tupleRestriction resolves (c1, c2) op (v1, v2) and (c1, c2) IN (...):
// only on clustering columns, in their key order.
func (p *planner) tupleRestriction(r *restrictions, rel Relation) error {
	t := r.table
	var cols []*pgschema.Column
	for _, name := range rel.Columns {
		c, err := column(t, name)
		if err != nil {
			return err
		}
		cols = append(cols, c)
	}
	for _, c := range cols {
		if c.Kind != pgschema.Clustering {
			return invalidf("Multi-column relations can only be applied to clustering columns but was applied to: %s", c.Name)
		}
	}
	for i := 1; i < len(cols); i++ {
		if cols[i].Position != cols[i-1].Position+1 {
			return invalidf("Clustering columns must appear in the PRIMARY KEY order in multi-column relations: (%s)",
				columnNames(cols))
		}
	}
	if rel.Op == OpNEQ {
		return invalidf("Unsupported \"!=\" relation: (%s) != %s", columnNames(cols), termString(rel.Value))
	}
	res := Restriction{Kind: OnTuple, Columns: cols, Op: rel.Op}
	tupleType := func() *pgschema.Type {
		types := make([]*pgschema.Type, len(cols))
		for i, c := range cols {
			types[i] = c.Type
		}
		return pgschema.NewTuple(types...)
	}
	name := "(" + columnNames(cols) + ")"
	switch {
	case rel.Op == OpIN && rel.Value != nil: // IN ?
		spec := ColumnSpec{Keyspace: t.Keyspace, Table: t.Name, Name: "in" + name, Type: pgschema.NewList(tupleType(), false)}
		res.Values, res.ListMarker = []Value{p.bind(rel.Value.(*Marker), spec)}, true
	case rel.Op == OpIN:
		for _, term := range rel.Values {
			values, err := p.tupleValues(t, cols, term, name, tupleType)
			if err != nil {
				return err
			}
			res.Tuples = append(res.Tuples, values)
		}
	default:
		values, err := p.tupleValues(t, cols, rel.Value, name, tupleType)
		if err != nil {
			return err
		}
		res.Values, res.TupleMarker = values, len(values) == 1 && len(cols) > 1
	}
	for _, c := range cols {
		if len(r.cluster[c.Position]) > 0 {
			return mixedTupleError(c, res, r.cluster[c.Position][0])
		}
	}
	for _, prev := range r.tuples {
		for _, c := range cols {
			if containsColumn(prev.Columns, c) {
				if err := mergeError(c.Name, prev.Op, res.Op); err != nil {
					return err
				}
			}
		}
	}
	if err := r.checkSliceOrder(res); err != nil {
		return err
	}
	r.tuples = append(r.tuples, res)
	return nil
}

// tupleValues types one tuple of a multi-column relation: a tuple literal
// of one term per column, or one marker for the whole tuple.
func (p *planner) tupleValues(t *pgschema.Table, cols []*pgschema.Column, term Term, name string,
	tupleType func() *pgschema.Type) ([]Value, error) {
	switch v := term.(type) {
	case *Marker:
		spec := ColumnSpec{Keyspace: t.Keyspace, Table: t.Name, Name: name, Type: tupleType()}
		if len(cols) == 1 {
			spec = specOf(t, cols[0])
		}
		return []Value{p.bind(v, spec)}, nil
	case *Tuple:
		if len(v.Elems) != len(cols) {
			return nil, invalidf("Expected %d elements in value tuple, but got %d: %s", len(cols), len(v.Elems), "("+joinTerms(v.Elems)+")")
		}
		out := make([]Value, len(cols))
		for i, el := range v.Elems {
			val, err := p.value(el, specOf(t, cols[i]))
			if err != nil {
				return nil, err
			}
			if err := checkNotNull(val, cols[i]); err != nil {
				return nil, err
			}
			out[i] = val
		}
		return out, nil
	}
	if len(cols) == 1 {
		val, err := p.value(term, specOf(t, cols[0]))
		return []Value{val}, err
	}
	return nil, invalidf("Invalid tuple value for %s", name)
}

func joinTerms(ts []Term) string {
	out := ""
	for i, t := range ts {
		if i > 0 {
			out += ", "
		}
		out += termString(t)
	}
	return out
}
