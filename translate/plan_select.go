package translate

import (
	"github.com/cqlpg/cqlpg/pgschema"
)

// Route says how a query finds its partitions.
type Route uint8

// Routes.
const (
	// RoutePartitions reads the partitions whose keys the WHERE clause
	// gives, each on its own replicas.
	RoutePartitions Route = iota
	// RouteScan reads every token range of the ring, in token order.
	RouteScan
)

// SlotKind says what a slot fetches for a row.
type SlotKind uint8

// Slot kinds.
const (
	SlotValue     SlotKind = iota // the column's value
	SlotWritetime                 // the cell's write time (µs)
	SlotTTL                       // the cell's remaining time to live (s)
	SlotToken                     // the partition's stored token
)

// Slot is one value a row fetches; in SQL, one item of the select list.
type Slot struct {
	Kind   SlotKind
	Column *pgschema.Column
}

// TokenBound bounds the tokens a query reads.
type TokenBound struct {
	Value     Value
	Inclusive bool
}

// Select reads rows.
type Select struct {
	Metadata
	Table *pgschema.Table
	Slots []Slot
	// Outputs compute the result columns from a row's slots.
	Outputs []Expr
	// cqlfunc.Aggregate is set when the selection folds rows: per group of
	// GroupSlots values when GROUP BY is given, else over all rows.
	Aggregate  bool
	GroupSlots []int
	// JSON wraps the outputs in one [json] column, keyed by JSONNames.
	JSON      bool
	JSONNames []string
	Route     Route
	// Filtering says the query needed ALLOW FILTERING; Index names the
	// secondary index it reads through, if any. The advisor reports such
	// queries.
	Filtering bool
	Index     string
	// Keys restricts each partition key column by = or IN when Route is
	// RoutePartitions; the partitions read are their cartesian product,
	// in the key type's order.
	Keys []Restriction
	// Filters are the other restrictions; SQL applies them for stored
	// tables, the gateway for virtual ones.
	Filters []Restriction
	// TokenStart and TokenEnd bound the tokens read, when given.
	TokenStart, TokenEnd *TokenBound
	// Reversed reads partitions in reverse clustering order (ORDER BY).
	Reversed bool
	// ANN orders the rows by their vector's similarity to a query vector
	// and keeps the LIMIT best (ORDER BY v ANN OF [...]).
	ANN *ANNOrder
	// SortSlots and SortDesc order the rows of several partitions after
	// reading them (IN with ORDER BY), which cannot be paged.
	SortSlots []int
	SortDesc  []bool
	// PartitionSlots hold the partition key; rows of one partition come
	// together, which PER PARTITION LIMIT counts on.
	PartitionSlots []int
	// PerPartition says the query returns one row per partition (DISTINCT,
	// or the read of a partition's static row for a conditional write).
	PerPartition bool
	// SQL reads one partition; ScanSQL reads one token range.
	SQL        string
	Params     []Param
	ScanSQL    string
	ScanParams []Param
	// PageSQL and PageScanSQL are SQL and ScanSQL capped by a row limit
	// (ParamLimit), which reading a page needs; they are SQL and ScanSQL
	// themselves when those take a limit already or fold rows.
	PageSQL        string
	PageParams     []Param
	PageScanSQL    string
	PageScanParams []Param
	// Pageable says the query can be read in pages. A page ends at a
	// position, the primary key of its last row (or group, or partition),
	// and the next page reads only what comes strictly after it in the
	// order of the table's key index, so rows written or deleted between
	// pages shift nothing. PositionSlots hold the clustering columns a
	// position records: all of them, those GROUP BY names, or none when
	// pages end at partitions (DISTINCT); a partition holding only static
	// data reads with null clustering columns and ends at the partition.
	// TokenSlot holds the stored token of a scan's rows, -1 when the route
	// reads partitions.
	Pageable      bool
	PositionSlots []int
	TokenSlot     int
	// ResumeSQL is PageSQL reading only the rows of the partition after a
	// clustering position (ParamAfter); it is empty when positions hold
	// no clustering columns, since a page that ended at a partition
	// resumes at the next one. ResumeScanSQL is PageScanSQL reading only
	// the rows of the token range after a position (ParamToken, ParamKey)
	// for a scan: those after its clustering prefix too (ParamAfter) when
	// ResumeScanInside, else only the partitions after the position's,
	// the executor reading the rest of that one with ResumeSQL. Each bounds
	// the key index, where one statement over a clustering column read
	// DESC would have Postgres filter the partition's rows up to the
	// position.
	ResumeSQL        string
	ResumeParams     []Param
	ResumeScanSQL    string
	ResumeScanParams []Param
	ResumeScanInside bool
	// Limit and PerPartitionLimit cap the rows returned, when set.
	Limit, PerPartitionLimit *Value
}

func (p *planner) planSelect(s *SelectStmt) (Plan, error) {
	t, err := p.table(s.Table)
	if err != nil {
		return nil, err
	}
	plan := &Select{Table: t, JSON: s.JSON}
	if err := p.planSelectors(plan, s); err != nil {
		return nil, err
	}
	r, err := p.restrict(t, s.Where, s.AllowFiltering)
	if err != nil {
		return nil, err
	}
	shape, err := r.checkSelect(s.AllowFiltering, selectsOnlyStatic(plan))
	if err != nil {
		return nil, err
	}
	if err := p.checkDistinct(plan, s, r); err != nil {
		return nil, err
	}
	if s.PerPartitionLimit != nil && plan.Aggregate && len(s.GroupBy) == 0 {
		return nil, invalidf("PER PARTITION LIMIT is not allowed with aggregate queries.")
	}
	plan.Route, plan.Filtering = shape.route, shape.filters
	if shape.index != nil {
		plan.Index = shape.index.Name
	}
	if plan.Route == RoutePartitions {
		for _, rs := range r.partition {
			plan.Keys = append(plan.Keys, rs[0])
		}
	} else {
		for _, rs := range r.partition {
			plan.Filters = append(plan.Filters, rs...)
		}
	}
	for _, rs := range r.cluster {
		plan.Filters = append(plan.Filters, rs...)
	}
	for i, o := range r.others {
		if o.Kind == OnColumn && o.Op == OpEQ && pgschema.PrefixExpr(o.Column.Type, "") != "" && !o.Column.IsKey() {
			if idx := indexFor(t, o); idx != nil {
				r.others[i].Fold, r.others[i].Prefixed = idx.Fold(), true
			}
		}
	}
	plan.Filters = append(append(plan.Filters, r.tuples...), r.others...)
	for _, tr := range r.token {
		bound := &TokenBound{Value: tr.Values[0], Inclusive: tr.Op != OpGT && tr.Op != OpLT}
		if tr.Op == OpEQ || isStart(tr.Op) {
			plan.TokenStart = bound
		}
		if tr.Op == OpEQ || !isStart(tr.Op) {
			plan.TokenEnd = bound
		}
	}
	for _, c := range t.PartitionKey {
		plan.PartitionSlots = append(plan.PartitionSlots, plan.slot(SlotValue, c))
	}
	if err := p.planOrdering(plan, s, r, shape); err != nil {
		return nil, err
	}
	if plan.ANN != nil {
		if s.Limit == nil {
			return nil, ANNLimitError("NO LIMIT")
		}
		shape.filtering = false // the vector index answers it with the other SAI indexes
	}
	if shape.filtering {
		return nil, invalidf(requiresFiltering)
	}
	if err := p.planGroupBy(plan, s, r); err != nil {
		return nil, err
	}
	if err := p.planLimits(plan, s); err != nil {
		return nil, err
	}
	plan.planPosition()
	if !t.Virtual {
		if err := plan.buildSQL(); err != nil {
			return nil, err
		}
	}
	plan.PKIndexes = pkIndexes(t, p.vars)
	return plan, nil
}

// selectsOnlyStatic reports whether a selection holds static columns and
// no non-key ones besides. Such a query still returns one row per
// clustering row, as Cassandra does, but may not restrict clustering
// columns (reference §1.6).
func selectsOnlyStatic(plan *Select) bool {
	onlyStatic, anyStatic := true, false
	for _, sl := range plan.Slots {
		if sl.Column != nil && sl.Column.Kind != pgschema.PartitionKey && sl.Column.Kind != pgschema.Static {
			onlyStatic = false
		}
		anyStatic = anyStatic || sl.Column != nil && sl.Column.Kind == pgschema.Static
	}
	return onlyStatic && anyStatic
}

// checkDistinct applies the rules on DISTINCT (reference §1.6), in
// Cassandra's order; DISTINCT returns one row per partition.
func (p *planner) checkDistinct(plan *Select, s *SelectStmt, r *restrictions) error {
	if !s.Distinct {
		return nil
	}
	if s.PerPartitionLimit != nil {
		return invalidf("PER PARTITION LIMIT is not allowed with SELECT DISTINCT queries")
	}
	if r.hasClustering() || nonStaticFilter(r) {
		return invalidf("SELECT DISTINCT with WHERE clause only supports restriction by partition key and/or static columns.")
	}
	for _, sl := range plan.Slots {
		if sl.Column != nil && sl.Column.Kind != pgschema.PartitionKey && sl.Column.Kind != pgschema.Static {
			return invalidf("SELECT DISTINCT queries must only request partition key columns and/or static columns (not %s)", sl.Column.Name)
		}
	}
	if !r.partitionKeyComplete() || !r.hasPartition() {
		// A column counts as requested when it is selected, alone or as a
		// function's argument (token(k1, k2)), as Cassandra counts it.
		named := map[string]bool{}
		for _, sel := range s.Selectors {
			selectorColumns(sel.Expr, named)
		}
		for _, c := range plan.Table.PartitionKey {
			if !selects(plan, c) && !named[c.Name] {
				return invalidf("SELECT DISTINCT queries must request all the partition key columns (missing %s)", c.Name)
			}
		}
	}
	plan.PerPartition = true
	return nil
}

// selectorColumns adds the names of the columns a selector reads to names.
func selectorColumns(e SelectorExpr, names map[string]bool) {
	switch e := e.(type) {
	case *ColumnSelector:
		names[e.Name] = true
	case *CallSelector:
		for _, a := range e.Args {
			selectorColumns(a, names)
		}
	case *CastSelector:
		selectorColumns(e.Expr, names)
	case *FieldSelector:
		selectorColumns(e.Expr, names)
	case *ElementSelector:
		selectorColumns(e.Expr, names)
	}
}

func nonStaticFilter(r *restrictions) bool {
	for _, o := range r.others {
		if o.Column.Kind != pgschema.Static {
			return true
		}
	}
	return false
}

func selects(plan *Select, c *pgschema.Column) bool {
	for _, sl := range plan.Slots {
		if sl.Column == c && sl.Kind == SlotValue {
			return true
		}
	}
	return false
}

// planLimits plans LIMIT and PER PARTITION LIMIT, whose values are checked
// at execution.
func (p *planner) planLimits(plan *Select, s *SelectStmt) error {
	t := plan.Table
	limit := func(term Term, name string) (*Value, error) {
		if term == nil {
			return nil, nil
		}
		v, err := p.value(term, ColumnSpec{Keyspace: t.Keyspace, Table: t.Name, Name: name, Type: pgschema.Scalar(pgschema.Int)})
		return &v, err
	}
	var err error
	if plan.PerPartitionLimit, err = limit(s.PerPartitionLimit, "[per_partition_limit]"); err != nil {
		return err
	}
	plan.Limit, err = limit(s.Limit, "[limit]")
	return err
}

// planPosition decides whether the query can be paged and what the
// position a page ends at records, adding the slots it needs: a query
// that folds all its rows into one, reads a virtual table, or sorts the
// rows of several partitions after reading them is never paged.
func (s *Select) planPosition() {
	s.TokenSlot = -1
	if s.Table.Virtual || len(s.SortSlots) > 0 || s.ANN != nil || s.Aggregate && len(s.GroupSlots) == 0 {
		return
	}
	s.Pageable = true
	if s.Route == RouteScan {
		// The stored token, not one computed from the key read back: a key
		// Postgres stores in another form (a non-minimal varint) hashes
		// differently.
		s.TokenSlot = s.slot(SlotToken, nil)
	}
	switch {
	case s.Aggregate:
		// GROUP BY names a prefix of the primary key that holds the whole
		// partition key.
		s.PositionSlots = s.GroupSlots[len(s.Table.PartitionKey):]
	case !s.PerPartition:
		for _, c := range s.Table.Clustering {
			s.PositionSlots = append(s.PositionSlots, s.slot(SlotValue, c))
		}
	}
}

// slot returns the index of a slot, adding it if it is new.
func (s *Select) slot(kind SlotKind, c *pgschema.Column) int {
	for i, sl := range s.Slots {
		if sl.Kind == kind && sl.Column == c {
			return i
		}
	}
	s.Slots = append(s.Slots, Slot{Kind: kind, Column: c})
	return len(s.Slots) - 1
}

// output adds a result column.
func (s *Select) output(name string, e Expr) {
	s.Outputs = append(s.Outputs, e)
	s.Result = append(s.Result, ColumnSpec{Keyspace: s.Table.Keyspace, Table: s.Table.Name, Name: name, Type: e.Type()})
}
