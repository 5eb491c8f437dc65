package translate

import (
	"github.com/cqlpg/cqlpg/pgschema"
)

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

// hasPartition reports whether any partition key column is restricted by
// a single-column relation.
func (r *restrictions) hasPartition() bool {
	for _, rs := range r.partition {
		if len(rs) > 0 {
			return true
		}
	}
	return false
}

// partitionIN reports whether a partition key column is restricted by IN.
func (r *restrictions) partitionIN() bool {
	for _, rs := range r.partition {
		if len(rs) > 0 && rs[0].Op == OpIN {
			return true
		}
	}
	return false
}

func (r *restrictions) hasClustering() bool {
	if len(r.tuples) > 0 {
		return true
	}
	for _, rs := range r.cluster {
		if len(rs) > 0 {
			return true
		}
	}
	return false
}

// indexFor returns the secondary index that can answer a restriction, or
// nil: a plain index answers =, values() answers CONTAINS, keys() answers
// CONTAINS KEY, entries() answers m[k] = v, full() answers = on a frozen
// collection.
func indexFor(t *pgschema.Table, res Restriction) *pgschema.Index {
	if res.Kind != OnColumn && res.Kind != OnElement {
		return nil
	}
	name := pgschema.QuoteIdentifier(res.Column.Name)
	want := ""
	switch {
	case res.Kind == OnElement:
		want = "entries(" + name + ")"
	case res.Op == OpContains:
		want = "values(" + name + ")"
	case res.Op == OpContainsKey:
		want = "keys(" + name + ")"
	case res.Op == OpEQ && res.Column.Type.IsCollection():
		want = "full(" + name + ")"
	case res.Op == OpEQ:
		want = name
	default:
		return nil
	}
	for _, idx := range t.Indexes {
		if idx.Target() == want {
			return idx
		}
	}
	return nil
}

// selectShape is what the restrictions of a SELECT decide: how it finds its
// partitions and which index, if any, it reads through.
type selectShape struct {
	route Route
	index *pgschema.Index
}

// checkSelect applies Cassandra's rules to a SELECT's restrictions
// (reference §1, after StatementRestrictions and SelectStatement) and
// decides the query's shape.
func (r *restrictions) checkSelect(allowFiltering bool) (*selectShape, error) {
	shape := &selectShape{route: RouteScan}
	complete := r.partitionKeyComplete() && r.hasPartition()
	// An index on a restricted column that is not a full partition key
	// lets the query read through it.
	candidates := append([]Restriction(nil), r.others...)
	if !complete {
		for _, rs := range r.partition {
			candidates = append(candidates, rs...)
		}
	}
	for _, res := range candidates {
		if idx := indexFor(r.table, res); idx != nil {
			shape.index = idx
			break
		}
	}
	if r.hasPartition() && !complete && !allowFiltering && shape.index == nil {
		return nil, invalidf(requiresFiltering)
	}
	if shape.index != nil && r.partitionIN() {
		return nil, invalidf("Select on indexed columns and with IN clause for the PRIMARY KEY are not supported")
	}
	if !allowFiltering && shape.index == nil {
		if err := r.checkClusteringPrefix(); err != nil {
			return nil, err
		}
	}
	nonKey := len(r.others)
	var needFiltering bool
	if shape.index != nil {
		needFiltering = nonKey > 1 || (nonKey == 0 && r.hasClustering())
	} else {
		needFiltering = nonKey != 0 || (!complete && r.hasClustering())
	}
	if needFiltering && !allowFiltering {
		return nil, invalidf(requiresFiltering)
	}
	if complete {
		shape.route = RoutePartitions
	}
	return shape, nil
}

// checkClusteringPrefix refuses a clustering column restricted after an
// unrestricted one, or after a slice; the wording depends on whether the
// later column's relation was written before the slice.
func (r *restrictions) checkClusteringPrefix() error {
	cols := r.table.Clustering
	restricted := func(i int) (Operator, bool) {
		if len(r.cluster[i]) > 0 {
			return r.cluster[i][0].Op, true
		}
		for _, tr := range r.tuples {
			if containsColumn(tr.Columns, cols[i]) {
				return tr.Op, true
			}
		}
		return 0, false
	}
	for i := range cols {
		op, ok := restricted(i)
		if !ok {
			for j := i + 1; j < len(cols); j++ {
				if _, later := restricted(j); later {
					return invalidf("PRIMARY KEY column \"%s\" cannot be restricted as preceding column \"%s\" is not restricted",
						cols[j].Name, cols[i].Name)
				}
			}
			return nil
		}
		if !op.IsSlice() {
			continue
		}
		for j := i + 1; j < len(cols); j++ {
			if _, later := restricted(j); !later || sameTuple(r, cols[i], cols[j]) {
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
	return nil
}

// sameTuple reports whether a and b are restricted by one tuple relation.
func sameTuple(r *restrictions, a, b *pgschema.Column) bool {
	for _, tr := range r.tuples {
		if containsColumn(tr.Columns, a) && containsColumn(tr.Columns, b) {
			return true
		}
	}
	return false
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
