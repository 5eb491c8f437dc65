package translate

import (
	"fmt"
	"strings"

	sq "github.com/Masterminds/squirrel"

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

// OutputKind says how a result column is computed from a row's slots.
type OutputKind uint8

// Output kinds.
const (
	OutSlot  OutputKind = iota // a slot as it is
	OutToken                   // the Murmur3 token of slots hashed as a partition key
)

// Output is one result column.
type Output struct {
	Kind  OutputKind
	Slots []int
}

// Select reads rows.
type Select struct {
	Metadata
	Table   *pgschema.Table
	Slots   []Slot
	Outputs []Output
	Route   Route
	// Keys restricts each partition key column by = or IN when Route is
	// RoutePartitions; the partitions read are their cartesian product,
	// in the key type's order.
	Keys []Restriction
	// Filters are the other restrictions; SQL applies them for stored
	// tables, the gateway for virtual ones.
	Filters []Restriction
	// SQL reads one partition; ScanSQL reads one token range.
	SQL        string
	Params     []Param
	ScanSQL    string
	ScanParams []Param
	// Limit caps the rows returned, when set.
	Limit *Value
}

func (p *planner) planSelect(s *SelectStmt) (Plan, error) {
	t, err := p.table(s.Table)
	if err != nil {
		return nil, err
	}
	if s.JSON || s.Distinct || len(s.GroupBy) > 0 || len(s.OrderBy) > 0 || s.PerPartitionLimit != nil {
		return nil, invalidf("SELECT JSON, DISTINCT, GROUP BY, ORDER BY and PER PARTITION LIMIT are not supported yet")
	}
	plan := &Select{Table: t}
	if err := p.planSelectors(plan, s.Selectors); err != nil {
		return nil, err
	}
	r, err := p.restrict(t, s.Where)
	if err != nil {
		return nil, err
	}
	if err := r.checkSelect(s.AllowFiltering); err != nil {
		return nil, err
	}
	if r.partitionKeyComplete() {
		plan.Route = RoutePartitions
		for _, rs := range r.partition {
			plan.Keys = append(plan.Keys, rs[0])
		}
	} else {
		plan.Route = RouteScan
		for _, rs := range r.partition {
			plan.Filters = append(plan.Filters, rs...)
		}
	}
	for _, rs := range r.cluster {
		plan.Filters = append(plan.Filters, rs...)
	}
	plan.Filters = append(plan.Filters, r.others...)
	if s.Limit != nil {
		v, err := p.value(s.Limit, ColumnSpec{Keyspace: t.Keyspace, Table: t.Name, Name: "[limit]",
			Type: pgschema.Scalar(pgschema.Int)})
		if err != nil {
			return nil, err
		}
		plan.Limit = &v
	}
	if !t.Virtual {
		if err := plan.buildSQL(); err != nil {
			return nil, err
		}
	}
	plan.PKIndexes = pkIndexes(t, p.vars)
	return plan, nil
}

// planSelectors resolves the selection into slots, outputs and result
// metadata.
func (p *planner) planSelectors(plan *Select, sels []Selector) error {
	t := plan.Table
	if sels == nil {
		for _, c := range t.Columns {
			plan.output(OutSlot, c.Name, c.Type, plan.slot(SlotValue, c))
		}
		return nil
	}
	for _, sel := range sels {
		switch e := sel.Expr.(type) {
		case *ColumnSelector:
			c, err := column(t, e.Name)
			if err != nil {
				return err
			}
			plan.output(OutSlot, or(sel.Alias, c.Name), c.Type, plan.slot(SlotValue, c))
		case *CallSelector:
			if err := p.planCall(plan, e, sel.Alias); err != nil {
				return err
			}
		default:
			return invalidf("this kind of selector is not supported yet")
		}
	}
	return nil
}

// planCall plans token(), writetime() and ttl() selectors.
func (p *planner) planCall(plan *Select, e *CallSelector, alias string) error {
	t := plan.Table
	var cols []*pgschema.Column
	for _, a := range e.Args {
		cs, ok := a.(*ColumnSelector)
		if !ok {
			return invalidf("Function %s takes only columns as arguments here", e.Name)
		}
		c, err := column(t, cs.Name)
		if err != nil {
			return err
		}
		cols = append(cols, c)
	}
	switch strings.ToLower(e.Name) {
	case "token":
		// As a selector, token() of any columns hashes them as a partition
		// key would; of the partition key itself, it is the stored token.
		names := make([]string, len(cols))
		for i, c := range cols {
			names[i] = pgschema.QuoteIdentifier(c.Name)
		}
		name := or(alias, "system.token("+strings.Join(names, ", ")+")")
		bigint := pgschema.Scalar(pgschema.Bigint)
		if !t.Virtual && sameColumns(cols, t.PartitionKey) {
			plan.output(OutSlot, name, bigint, plan.slot(SlotToken, nil))
			return nil
		}
		slots := make([]int, len(cols))
		for i, c := range cols {
			slots[i] = plan.slot(SlotValue, c)
		}
		plan.output(OutToken, name, bigint, slots...)
		return nil
	case "writetime", "ttl":
		if len(cols) != 1 {
			return invalidf("Invalid number of arguments in call to function %s: 1 required but %d provided", strings.ToLower(e.Name), len(cols))
		}
		if cols[0].IsKey() || t.Virtual {
			return invalidf("Cannot use selection function %s on PRIMARY KEY part %s", e.Name, cols[0].Name)
		}
		kind, typ := SlotWritetime, pgschema.Scalar(pgschema.Bigint)
		if strings.ToLower(e.Name) == "ttl" {
			kind, typ = SlotTTL, pgschema.Scalar(pgschema.Int)
		}
		name := or(alias, strings.ToLower(e.Name)+"("+pgschema.QuoteIdentifier(cols[0].Name)+")")
		plan.output(OutSlot, name, typ, plan.slot(kind, cols[0]))
		return nil
	}
	return invalidf("Unknown function '%s'", e.Name)
}

func sameColumns(a, b []*pgschema.Column) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
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

func (s *Select) output(kind OutputKind, name string, typ *pgschema.Type, slots ...int) {
	s.Outputs = append(s.Outputs, Output{Kind: kind, Slots: slots})
	s.Result = append(s.Result, ColumnSpec{Keyspace: s.Table.Keyspace, Table: s.Table.Name, Name: name, Type: typ})
}

// slotSQL returns the select-list item of a slot.
func slotSQL(sl Slot) sq.Sqlizer {
	switch sl.Kind {
	case SlotToken:
		return sq.Expr(quote(pgschema.TokenColumn))
	case SlotWritetime:
		return expr(fmt.Sprintf("CASE WHEN %[1]s IS NOT NULL AND (%[2]s IS NULL OR %[2]s > ?) THEN %[3]s END",
			quote(sl.Column.PGName), quote(sl.Column.ExpiryColumn()), quote(sl.Column.WritetimeColumn())),
			Param{Kind: ParamNow})
	case SlotTTL:
		return expr(fmt.Sprintf("CASE WHEN %[1]s IS NOT NULL AND %[2]s > ? THEN %[2]s - ? END",
			quote(sl.Column.PGName), quote(sl.Column.ExpiryColumn())),
			Param{Kind: ParamNow}, Param{Kind: ParamNow})
	}
	return liveValue(sl.Column)
}

// buildSQL builds the statement reading one partition and the one reading
// one token range. Both return live rows in the table's key order, which
// the key index gives without sorting.
func (s *Select) buildSQL() error {
	t := s.Table
	base := sq.Select().From(tableIdent(t))
	for _, sl := range s.Slots {
		base = base.Column(slotSQL(sl))
	}
	var where sq.And
	for _, f := range s.Filters {
		cond, err := restrictionSQL(f)
		if err != nil {
			return err
		}
		where = append(where, cond)
	}
	where = append(where, rowLive(t))
	order := []string{quote(pgschema.TokenColumn)}
	for _, c := range t.KeyColumns() {
		col := quote(c.PGName)
		if c.Desc {
			col += " DESC"
		}
		order = append(order, col)
	}
	finish := func(b sq.SelectBuilder) sq.SelectBuilder {
		b = b.Where(where).OrderBy(order...)
		if s.Limit != nil {
			b = b.Suffix("LIMIT ?", Param{Kind: ParamLimit, Value: *s.Limit})
		}
		return b
	}

	partition := sq.And{expr(quote(pgschema.TokenColumn)+" = ?", Param{Kind: ParamToken})}
	for i, c := range t.PartitionKey {
		partition = append(partition, expr(quote(c.PGName)+" = ?", Param{Kind: ParamKey, Key: i, Column: c}))
	}
	var err error
	if s.SQL, s.Params, err = toSQL(finish(base.Where(partition))); err != nil {
		return err
	}
	scan := expr(fmt.Sprintf("%[1]s > ? AND %[1]s <= ?", quote(pgschema.TokenColumn)),
		Param{Kind: ParamRangeStart}, Param{Kind: ParamRangeEnd})
	s.ScanSQL, s.ScanParams, err = toSQL(finish(base.Where(scan)))
	return err
}
