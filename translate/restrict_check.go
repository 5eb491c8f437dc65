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
	want, sliced := "", false
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
	case res.Op.IsSlice() && !res.Column.Type.IsCollection():
		want, sliced = name, true
	default:
		return nil
	}
	for _, idx := range t.Indexes {
		// A storage-attached index answers ranges too, on types it orders.
		if idx.Target() == want && (!sliced || idx.IsSAI() && saiRanges(res.Column.Type)) {
			return idx
		}
	}
	return nil
}

// saiRanges reports whether a storage-attached index answers ranges on a
// type: numbers, dates and times, and addresses. Text, booleans and the
// others it answers by equality only.
func saiRanges(t *pgschema.Type) bool {
	switch t.Kind {
	case pgschema.Tinyint, pgschema.Smallint, pgschema.Int, pgschema.Bigint, pgschema.Varint, pgschema.Decimal,
		pgschema.Float, pgschema.Double, pgschema.Date, pgschema.Time, pgschema.Timestamp, pgschema.Inet:
		return true
	}
	return false
}

// allSAI reports whether storage-attached indexes answer every
// restriction on non-key columns, which then need no filtering: such
// indexes combine, where a legacy index answers one restriction alone.
func (r *restrictions) allSAI() bool {
	if len(r.others) == 0 {
		return false
	}
	for _, o := range r.others {
		idx := indexFor(r.table, o)
		if idx == nil || !idx.IsSAI() {
			return false
		}
	}
	return true
}

// selectShape is what the restrictions of a SELECT decide: how it finds its
// partitions and which index, if any, it reads through.
type selectShape struct {
	route Route
	index *pgschema.Index
	// filtering says the query needs ALLOW FILTERING, which Cassandra
	// reports only after its checks of DISTINCT and ORDER BY; filters
	// that it filters rows, whether it says ALLOW FILTERING or not.
	filtering, filters bool
}

// checkSelect applies Cassandra's rules to a SELECT's restrictions
// (reference §1, after StatementRestrictions), in its order, and decides
// the query's shape. onlyStatic says the selection holds static columns
// and no other non-key ones.
func (r *restrictions) checkSelect(allowFiltering, onlyStatic bool) (*selectShape, error) {
	shape := &selectShape{route: RouteScan}
	complete := r.partitionKeyComplete() && r.hasPartition()
	// An index on a restricted column that is not a full partition key
	// lets the query read through it; so does one on a clustering column
	// when the clustering restrictions are not one slice of a partition,
	// which may then restrict a column past an unrestricted one
	// (Cassandra's hasQueriableIndex).
	candidates := append([]Restriction(nil), r.others...)
	if !complete {
		for _, rs := range r.partition {
			candidates = append(candidates, rs...)
		}
	}
	if !complete || r.clusteringFilters() {
		for _, rs := range r.cluster {
			candidates = append(candidates, rs...)
		}
	}
	for _, res := range candidates {
		if idx := indexFor(r.table, res); idx != nil {
			shape.index = idx
			break
		}
	}
	indexed := shape.index != nil
	partial := r.hasPartition() && !complete
	if partial && !allowFiltering && !indexed {
		return nil, invalidf(requiresFiltering)
	}
	if onlyStatic && r.hasClustering() {
		return nil, invalidf("Cannot restrict clustering columns when selecting only static columns")
	}
	if !allowFiltering && !indexed {
		if err := r.checkClusteringRestricted(); err != nil {
			return nil, err
		}
	}
	if len(r.others) > 0 && !allowFiltering && !indexed {
		return nil, invalidf(requiresFiltering)
	}
	if indexed && r.partitionIN() {
		return nil, invalidf("Select on indexed columns and with IN clause for the PRIMARY KEY are not supported")
	}
	if !complete || indexed {
		need := r.needFiltering(indexed && (!r.hasPartition() || partial), partial)
		if need && r.allSAI() && !partial && !r.clusteringFilters() {
			need = false
		}
		shape.filtering = need && !allowFiltering
		shape.filters = need
	}
	// Restrictions of regular columns no index answers filter rows too.
	shape.filters = shape.filters || len(r.others) > 0 && !indexed
	if complete {
		shape.route = RoutePartitions
	}
	return shape, nil
}

// needFiltering is Cassandra's test for a key-range or index query: it
// filters unless exactly one restriction is left for the index or the
// row filter, or none and no clustering restriction. The partition key and
// clustering restrictions count when they filter, or when an index was
// chosen for want of a usable partition key (indexEarly).
func (r *restrictions) needFiltering(indexEarly, partial bool) bool {
	n := 0
	if indexEarly || partial {
		for _, rs := range r.partition {
			if len(rs) > 0 {
				n++
			}
		}
	}
	if indexEarly || r.clusteringFilters() {
		for _, c := range r.table.Clustering {
			if r.clusteringRestricted(c) {
				n++
			}
		}
	}
	var cols []*pgschema.Column
	contains := map[*pgschema.Column]int{}
	multipleContains := false
	for _, o := range r.others {
		if !containsColumn(cols, o.Column) {
			cols = append(cols, o.Column)
		}
		// CONTAINS, CONTAINS KEY and m[k] = v on one collection merge
		// into one restriction, which an index answers for one value
		// only (Cassandra's hasMultipleContains).
		if o.Kind == OnElement || o.Op == OpContains || o.Op == OpContainsKey {
			contains[o.Column]++
			multipleContains = multipleContains || contains[o.Column] > 1
		}
	}
	n += len(cols)
	return n > 1 || n == 0 && r.hasClustering() || multipleContains
}

// clusteringRestricted reports whether a clustering column has a
// restriction, alone or in a tuple.
func (r *restrictions) clusteringRestricted(c *pgschema.Column) bool {
	if len(r.cluster[c.Position]) > 0 {
		return true
	}
	for _, tr := range r.tuples {
		if containsColumn(tr.Columns, c) {
			return true
		}
	}
	return false
}

// clusteringFilters reports whether the clustering restrictions cannot all
// be read as one slice of the partition: a column restricted after an
// unrestricted one, or after a slice.
func (r *restrictions) clusteringFilters() bool {
	sliced, gap := false, false
	for _, c := range r.table.Clustering {
		if !r.clusteringRestricted(c) {
			gap = true
			continue
		}
		if gap || sliced {
			return true
		}
		for _, res := range r.cluster[c.Position] {
			sliced = sliced || res.Op.IsSlice()
		}
		for _, tr := range r.tuples {
			sliced = sliced || tr.Op.IsSlice() && tr.Columns[len(tr.Columns)-1] == c
		}
	}
	return false
}

// checkClusteringRestricted refuses a clustering column restricted after
// an unrestricted one.
func (r *restrictions) checkClusteringRestricted() error {
	cols := r.table.Clustering
	for i, c := range cols {
		if r.clusteringRestricted(c) {
			continue
		}
		for _, later := range cols[i+1:] {
			if r.clusteringRestricted(later) {
				return invalidf("PRIMARY KEY column \"%s\" cannot be restricted as preceding column \"%s\" is not restricted",
					later.Name, c.Name)
			}
		}
		return nil
	}
	return nil
}

// checkSliceOrder applies, as a clustering restriction joins those written
// before it, Cassandra's refusal of a restriction after a slice: the
// wording depends on which of the two was written first. ALLOW FILTERING
// lifts the rule.
func (r *restrictions) checkSliceOrder(res Restriction) error {
	defer func() { r.clusterSeq = append(r.clusterSeq, res) }()
	if r.allowFiltering || len(r.clusterSeq) == 0 {
		return nil
	}
	first := func(x Restriction) *pgschema.Column {
		if x.Kind == OnTuple {
			return x.Columns[0]
		}
		return x.Column
	}
	lastCol := func(x Restriction) *pgschema.Column {
		if x.Kind == OnTuple {
			return x.Columns[len(x.Columns)-1]
		}
		return x.Column
	}
	// The restriction on the last column restricted so far.
	last := r.clusterSeq[0]
	for _, x := range r.clusterSeq[1:] {
		if lastCol(x).Position >= lastCol(last).Position {
			last = x
		}
	}
	start, lastStart := first(res), first(last)
	if last.Op.IsSlice() && start.Position > lastStart.Position {
		return invalidf("Clustering column \"%s\" cannot be restricted (preceding column \"%s\" is restricted by a non-EQ relation)",
			start.Name, lastStart.Name)
	}
	if start.Position < lastStart.Position && res.Op.IsSlice() {
		// Name the first column restricted so far after the new one's.
		var next *pgschema.Column
		for _, x := range r.clusterSeq {
			cols := x.Columns
			if x.Kind != OnTuple {
				cols = []*pgschema.Column{x.Column}
			}
			for _, c := range cols {
				if c.Position > start.Position && (next == nil || c.Position < next.Position) {
					next = c
				}
			}
		}
		return invalidf("PRIMARY KEY column \"%s\" cannot be restricted (preceding column \"%s\" is restricted by a non-EQ relation)",
			next.Name, start.Name)
	}
	return nil
}
