package translate

import (
	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/translate/cqlfunc"
)

// planOrdering applies ORDER BY: the checks of Cassandra's SelectStatement
// (reference §1.5), whether partitions are read in reverse, and, for IN on
// the partition key, how rows of several partitions are merged.
func (p *planner) planOrdering(plan *Select, s *SelectStmt, r *restrictions, shape *selectShape) error {
	if len(s.OrderBy) == 0 {
		return nil
	}
	for _, o := range s.OrderBy {
		if o.ANN != nil {
			return p.planANN(plan, s, r)
		}
	}
	t := plan.Table
	cols := make([]*pgschema.Column, len(s.OrderBy))
	for i, o := range s.OrderBy {
		c, err := column(t, o.Column)
		if err != nil {
			return err
		}
		cols[i] = c
	}
	if shape.index != nil {
		return invalidf("ORDER BY with 2ndary indexes is not supported.")
	}
	if shape.route != RoutePartitions {
		return invalidf("ORDER BY is only supported when the partition key is restricted by an EQ or an IN.")
	}
	reversed := make([]*bool, len(t.Clustering))
	next := 0
	for i, c := range cols {
		if c.Kind != pgschema.Clustering {
			return invalidf("Order by is currently only supported on the clustered columns of the PRIMARY KEY, got %s", c.Name)
		}
		for ; next != c.Position; next++ {
			if next > c.Position || !r.restrictedByEQ(t.Clustering[next]) {
				return invalidf("Order by currently only supports the ordering of columns following their declared order in the PRIMARY KEY")
			}
		}
		next++
		rev := s.OrderBy[i].Desc != c.Desc
		reversed[c.Position] = &rev
	}
	var isReversed *bool
	for _, b := range reversed {
		if b == nil {
			continue
		}
		if isReversed == nil {
			isReversed = b
		} else if *isReversed != *b {
			return invalidf("Unsupported order by relation")
		}
	}
	plan.Reversed = *isReversed
	if r.partitionIN() {
		// Rows of several partitions are merged by the ORDER BY columns.
		for i, c := range cols {
			plan.SortSlots = append(plan.SortSlots, plan.slot(SlotValue, c))
			plan.SortDesc = append(plan.SortDesc, s.OrderBy[i].Desc)
		}
	}
	return nil
}

// restrictedByEQ reports whether a clustering column is restricted by =.
func (r *restrictions) restrictedByEQ(c *pgschema.Column) bool {
	for _, res := range r.cluster[c.Position] {
		if res.Op == OpEQ {
			return true
		}
	}
	for _, tr := range r.tuples {
		if tr.Op == OpEQ && containsColumn(tr.Columns, c) {
			return true
		}
	}
	return false
}

// planGroupBy applies GROUP BY: a prefix of the primary key, skipping
// columns restricted by =, never part of the partition key only.
func (p *planner) planGroupBy(plan *Select, s *SelectStmt, r *restrictions) error {
	if len(s.GroupBy) == 0 {
		return nil
	}
	t := plan.Table
	keys := t.KeyColumns()
	next, clustering := 0, 0
	var last *pgschema.Column
	for _, name := range s.GroupBy {
		c, err := column(t, name)
		if err != nil {
			return err
		}
		if !c.IsKey() {
			return invalidf("Group by is currently only supported on the columns of the PRIMARY KEY, got %s", c.Name)
		}
		for {
			if next >= len(keys) {
				return invalidf("Group by currently only support groups of columns following their declared order in the PRIMARY KEY")
			}
			k := keys[next]
			next++
			if k.Kind == pgschema.Clustering {
				clustering++
			}
			if k == c {
				break
			}
			eq := (k.Kind == pgschema.PartitionKey && len(r.partition[k.Position]) > 0 && r.partition[k.Position][0].Op == OpEQ) ||
				(k.Kind == pgschema.Clustering && r.restrictedByEQ(k))
			if !eq {
				return invalidf("Group by currently only support groups of columns following their declared order in the PRIMARY KEY")
			}
		}
		last = c
	}
	if next < len(keys) && keys[next].Kind == pgschema.PartitionKey {
		return invalidf("Group by is not supported on only a part of the partition key")
	}
	if clustering > 0 && s.Distinct {
		return invalidf("Grouping on clustering columns is not allowed for SELECT DISTINCT queries")
	}
	for _, k := range keys[:last.Index+1] {
		plan.GroupSlots = append(plan.GroupSlots, plan.slot(SlotValue, k))
	}
	plan.Aggregate = true
	return nil
}

// ANNOrder orders a query's rows by the similarity of their vector to a
// query vector, most similar first, as the column's storage-attached index
// scores it; the LIMIT best are kept.
type ANNOrder struct {
	Slot       int // the vector column's
	Query      Value
	Similarity cqlfunc.Similarity
}

// MaxANNLimit is the largest LIMIT an ANN query may have.
const MaxANNLimit = 1000

// ANNLimitError is Cassandra's refusal of an ANN query's LIMIT, printed as
// limit says.
func ANNLimitError(limit string) error {
	return invalidf("Use of ANN OF in an ORDER BY clause requires a LIMIT that is not greater than %d. LIMIT was %s",
		MaxANNLimit, limit)
}

// planANN plans ORDER BY v ANN OF [...], with Cassandra 5.0's rules: one
// ordering, on a float vector with a storage-attached index, every other
// restricted column indexed too.
func (p *planner) planANN(plan *Select, s *SelectStmt, r *restrictions) error {
	if len(s.OrderBy) > 1 {
		return invalidf("ANN ordering does not support any other ordering")
	}
	o := s.OrderBy[0]
	t := plan.Table
	c, err := column(t, o.Column)
	if err != nil {
		return err
	}
	if c.Type.Kind != pgschema.Vector || c.Type.Elem[0].Kind != pgschema.Float {
		return invalidf("ANN ordering is only supported on float vector indexes")
	}
	var idx *pgschema.Index
	for _, i := range t.Indexes {
		if i.IsSAI() && i.Target() == pgschema.QuoteIdentifier(c.Name) {
			idx = i
		}
	}
	if idx == nil {
		return invalidf("ANN ordering by vector requires the column to be indexed")
	}
	// Key columns restricted outside a whole partition key filter, and no
	// index answers them.
	complete := r.hasPartition() && r.partitionKeyComplete()
	if len(r.others) > 0 && !r.allSAI() || !complete && (r.hasPartition() || r.hasClustering()) {
		return invalidf("ANN ordering by vector requires all restricted column(s) to be indexed")
	}
	if plan.Aggregate {
		return invalidf("ANN ordering cannot be used with aggregation")
	}
	sim := cqlfunc.Cosine
	if name, ok := idx.Options["similarity_function"]; ok {
		sim, _ = cqlfunc.SimilarityOf(name)
	}
	q, err := p.value(o.ANN, ColumnSpec{Keyspace: t.Keyspace, Table: t.Name, Name: c.Name, Type: c.Type})
	if err != nil {
		return err
	}
	plan.ANN = &ANNOrder{Slot: plan.slot(SlotValue, c), Query: q, Similarity: sim}
	return nil
}
