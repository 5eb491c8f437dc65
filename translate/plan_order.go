package translate

import (
	"github.com/cqlpg/cqlpg/pgschema"
)

// planOrdering applies ORDER BY: the checks of Cassandra's SelectStatement
// (reference §1.5), whether partitions are read in reverse, and, for IN on
// the partition key, how rows of several partitions are merged.
func (p *planner) planOrdering(plan *Select, s *SelectStmt, r *restrictions, shape *selectShape) error {
	if len(s.OrderBy) == 0 {
		return nil
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
