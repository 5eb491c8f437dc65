package translate

import (
	"github.com/cqlpg/cqlpg/pgschema"
)

// Restriction is a WHERE relation on one column, resolved and typed.
type Restriction struct {
	Column *pgschema.Column
	Op     Operator
	// Values holds the operand: one value for = and the slices, the list
	// for IN. For IN ? it holds the one marker, bound to a list, and
	// ListMarker is set.
	Values     []Value
	ListMarker bool
}

// requiresFiltering is Cassandra's ALLOW FILTERING refusal, word for word.
const requiresFiltering = "Cannot execute this query as it might involve data filtering and thus may have " +
	"unpredictable performance. If you want to execute this query despite the performance " +
	"unpredictability, use ALLOW FILTERING"

// restrictions holds a WHERE clause grouped by the part of the key each
// relation restricts, in the order the relations were written.
type restrictions struct {
	table     *pgschema.Table
	partition [][]Restriction // per partition key column
	cluster   [][]Restriction // per clustering column
	others    []Restriction   // static and regular columns
	order     []*pgschema.Column
	token     []Relation
}

// restrict resolves the relations of a WHERE clause against t.
func (p *planner) restrict(t *pgschema.Table, where []Relation) (*restrictions, error) {
	r := &restrictions{table: t,
		partition: make([][]Restriction, len(t.PartitionKey)),
		cluster:   make([][]Restriction, len(t.Clustering))}
	for _, rel := range where {
		switch rel.Kind {
		case TokenRelation:
			r.token = append(r.token, rel)
			continue
		case TupleRelation:
			return nil, invalidf("Multi-column relations are not supported yet")
		}
		c, err := column(t, rel.Columns[0])
		if err != nil {
			return nil, err
		}
		res, err := p.restriction(t, c, rel)
		if err != nil {
			return nil, err
		}
		if err := r.add(res); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// restriction types a single-column relation's operand.
func (p *planner) restriction(t *pgschema.Table, c *pgschema.Column, rel Relation) (Restriction, error) {
	res := Restriction{Column: c, Op: rel.Op}
	spec := specOf(t, c)
	switch rel.Op {
	case OpNEQ:
		return res, invalidf("Unsupported \"!=\" relation: %s != %s", pgschema.QuoteIdentifier(c.Name), termString(rel.Value))
	case OpIN:
		if rel.Value != nil { // IN ?
			listSpec := ColumnSpec{Keyspace: t.Keyspace, Table: t.Name, Name: "in(" + c.Name + ")",
				Type: pgschema.NewList(c.Type, false)}
			res.Values, res.ListMarker = []Value{p.bind(rel.Value.(*Marker), listSpec)}, true
			return res, nil
		}
		for _, term := range rel.Values {
			v, err := p.value(term, spec)
			if err != nil {
				return res, err
			}
			if err := checkNotNull(v, c); err != nil {
				return res, err
			}
			res.Values = append(res.Values, v)
		}
		return res, nil
	case OpEQ, OpLT, OpLTE, OpGT, OpGTE:
		v, err := p.value(rel.Value, spec)
		if err != nil {
			return res, err
		}
		if err := checkNotNull(v, c); err != nil {
			return res, err
		}
		res.Values = []Value{v}
		return res, nil
	}
	return res, invalidf("%s restrictions are not supported yet", rel.Op)
}

// checkNotNull refuses a null constant in a relation.
func checkNotNull(v Value, c *pgschema.Column) error {
	if v.Marker < 0 && v.Const == nil {
		return invalidf("Invalid null value in condition for column %s", c.Name)
	}
	return nil
}

// add files a restriction under its column, refusing the combinations
// Cassandra refuses for one column.
func (r *restrictions) add(res Restriction) error {
	c := res.Column
	var list *[]Restriction
	switch c.Kind {
	case pgschema.PartitionKey:
		list = &r.partition[c.Position]
	case pgschema.Clustering:
		list = &r.cluster[c.Position]
	default:
		r.others = append(r.others, res)
		r.order = append(r.order, c)
		return nil
	}
	// The restriction already there decides the message, as in Cassandra's
	// mergeWith; names print unquoted.
	name := c.Name
	for _, prev := range *list {
		switch {
		case prev.Op == OpEQ:
			return invalidf("%s cannot be restricted by more than one relation if it includes an Equal", name)
		case prev.Op == OpIN:
			return invalidf("%s cannot be restricted by more than one relation if it includes a IN", name)
		case !res.Op.IsSlice():
			return invalidf("Column \"%s\" cannot be restricted by both an equality and an inequality relation", name)
		case isStart(prev.Op) && isStart(res.Op):
			return invalidf("More than one restriction was found for the start bound on %s", name)
		case !isStart(prev.Op) && !isStart(res.Op):
			return invalidf("More than one restriction was found for the end bound on %s", name)
		}
	}
	*list = append(*list, res)
	r.order = append(r.order, c)
	return nil
}

func isStart(op Operator) bool { return op == OpGT || op == OpGTE }

// partitionKeyComplete reports whether every partition key column is
// restricted by = or IN, which routes the query to known partitions.
func (r *restrictions) partitionKeyComplete() bool {
	for _, rs := range r.partition {
		if len(rs) != 1 || (rs[0].Op != OpEQ && rs[0].Op != OpIN) {
			return false
		}
	}
	return true
}

// hasPartition reports whether any partition key column is restricted.
func (r *restrictions) hasPartition() bool {
	for _, rs := range r.partition {
		if len(rs) > 0 {
			return true
		}
	}
	return false
}

// checkSelect applies Cassandra's key rules for SELECT (see reference §1).
func (r *restrictions) checkSelect(allowFiltering bool) error {
	if len(r.token) > 0 {
		return invalidf("token() restrictions are not supported yet")
	}
	complete := r.partitionKeyComplete()
	if !allowFiltering {
		if r.hasPartition() && !complete {
			return invalidf(requiresFiltering)
		}
		if err := r.checkClusteringPrefix(); err != nil {
			return err
		}
		if len(r.others) > 0 {
			return invalidf(requiresFiltering)
		}
		if !complete && r.hasClustering() {
			return invalidf(requiresFiltering)
		}
	}
	return nil
}

func (r *restrictions) hasClustering() bool {
	for _, rs := range r.cluster {
		if len(rs) > 0 {
			return true
		}
	}
	return false
}

// checkClusteringPrefix refuses a clustering column restricted after an
// unrestricted one, or after a slice; the wording depends on whether the
// later column's relation was written before the slice.
func (r *restrictions) checkClusteringPrefix() error {
	cols := r.table.Clustering
	for i := range cols {
		if len(r.cluster[i]) == 0 {
			for j := i + 1; j < len(cols); j++ {
				if len(r.cluster[j]) > 0 {
					return invalidf("PRIMARY KEY column \"%s\" cannot be restricted as preceding column \"%s\" is not restricted",
						cols[j].Name, cols[i].Name)
				}
			}
			return nil
		}
		if r.cluster[i][0].Op.IsSlice() {
			for j := i + 1; j < len(cols); j++ {
				if len(r.cluster[j]) == 0 {
					continue
				}
				if r.writtenBefore(cols[j], cols[i]) {
					return invalidf("PRIMARY KEY column \"%s\" cannot be restricted (preceding column \"%s\" is restricted by a non-EQ relation)",
						cols[j].Name, cols[i].Name)
				}
				return invalidf("Clustering column \"%s\" cannot be restricted (preceding column \"%s\" is restricted by a non-EQ relation)",
					cols[j].Name, cols[i].Name)
			}
			return nil
		}
	}
	return nil
}

// writtenBefore reports whether a's first relation precedes b's in WHERE.
func (r *restrictions) writtenBefore(a, b *pgschema.Column) bool {
	for _, c := range r.order {
		switch c {
		case a:
			return true
		case b:
			return false
		}
	}
	return false
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
	}
	return "..."
}
