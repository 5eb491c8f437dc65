package translate

import (
	"fmt"
	"strconv"
	"strings"

	sq "github.com/Masterminds/squirrel"

	"github.com/cqlpg/cqlpg/pgschema"
)

// Table aliases in SELECT SQL: the main table and the companion table of
// static columns.
const (
	mainAlias   = "r"
	staticAlias = "s"
)

// aliasOf returns the alias of the table that holds a column.
func aliasOf(c *pgschema.Column) string {
	if c.Kind == pgschema.Static {
		return staticAlias
	}
	return mainAlias
}

// slotSQL returns the select-list item of a slot, reading the columns of
// alias (and, for static columns, of the static table).
func slotSQL(sl Slot, alias string) sq.Sqlizer {
	switch sl.Kind {
	case SlotToken:
		return sq.Expr(qcol(alias, pgschema.TokenColumn))
	case SlotWritetime:
		c := sl.Column
		return expr(fmt.Sprintf("CASE WHEN %s THEN %s END", cellLiveText(aliasOf(c), c), qcol(aliasOf(c), c.WritetimeColumn())),
			Param{Kind: ParamNow})
	case SlotTTL:
		c := sl.Column
		return expr(fmt.Sprintf("CASE WHEN %s AND %[2]s IS NOT NULL THEN %[2]s - ? END", cellLiveText(aliasOf(c), c),
			qcol(aliasOf(c), c.ExpiryColumn())), Param{Kind: ParamNow}, Param{Kind: ParamNow})
	}
	c := sl.Column
	if c.IsKey() {
		return sq.Expr(storedValue(alias, c))
	}
	return liveValue(aliasOf(c), c)
}

func cellLiveText(alias string, c *pgschema.Column) string {
	return fmt.Sprintf("(%[1]s AND (%[2]s IS NULL OR %[2]s > ?))", cellHolds(alias, c), qcol(alias, c.ExpiryColumn()))
}

// routeSQL is the condition that picks one partition (_token and the
// partition key) or one token range of the table alias.
func routeSQL(t *pgschema.Table, alias string, scan bool) sq.Sqlizer {
	if scan {
		return expr(fmt.Sprintf("%[1]s > ? AND %[1]s <= ?", qcol(alias, pgschema.TokenColumn)),
			Param{Kind: ParamRangeStart}, Param{Kind: ParamRangeEnd})
	}
	and := sq.And{expr(qcol(alias, pgschema.TokenColumn)+" = ?", Param{Kind: ParamToken})}
	for i, c := range t.PartitionKey {
		and = append(and, expr(qcol(alias, c.PGName)+" = ?", Param{Kind: ParamKey, Key: i, Column: c, Element: -1}))
	}
	return and
}

// partitionJoin is the condition joining a row to its partition's static
// row.
func partitionJoin(t *pgschema.Table) string {
	parts := []string{qcol(staticAlias, pgschema.TokenColumn) + " = " + qcol(mainAlias, pgschema.TokenColumn)}
	for _, c := range t.PartitionKey {
		parts = append(parts, qcol(staticAlias, c.PGName)+" = "+qcol(mainAlias, c.PGName))
	}
	return strings.Join(parts, " AND ")
}

// keyOrder returns the key columns of the ORDER BY, in the index's order,
// reversed if asked; alias qualifies them unless it is empty, in which case
// the names k0, k1, ... of a wrapping query are used.
func keyOrder(t *pgschema.Table, alias string, reversed bool, partitionOnly bool) []string {
	cols := t.KeyColumns()
	if partitionOnly {
		cols = t.PartitionKey
	}
	names := []string{pgschema.TokenColumn}
	for _, c := range cols {
		names = append(names, c.SortColumn())
	}
	out := make([]string, len(names))
	for i, n := range names {
		desc := i > len(t.PartitionKey) && cols[i-1].Desc
		if reversed && i > len(t.PartitionKey) {
			desc = !desc
		}
		item := "k" + strconv.Itoa(i)
		if alias != "" {
			item = qcol(alias, n)
		}
		if desc {
			item += " DESC"
		}
		out[i] = item
	}
	return out
}

// filterSQL ANDs the restrictions SQL checks row by row. For the static
// table (static set) only those on the partition key and static columns
// apply; the others rule out static-only rows altogether.
func (s *Select) filterSQL(static bool) (sq.And, error) {
	var and sq.And
	for _, f := range s.Filters {
		alias := ""
		if static {
			if f.Column == nil || (f.Column.Kind != pgschema.PartitionKey && f.Column.Kind != pgschema.Static) {
				continue
			}
			alias = staticAlias
		}
		cond, err := conditionSQL(f, alias)
		if err != nil {
			return nil, err
		}
		and = append(and, cond)
	}
	if s.Route == RouteScan {
		return and, nil // the executor reads only the token ranges in bounds
	}
	alias := mainAlias
	if static {
		alias = staticAlias
	}
	type bound struct {
		op string
		b  *TokenBound
	}
	var bounds []bound
	switch {
	case s.TokenStart != nil && s.TokenStart == s.TokenEnd:
		bounds = []bound{{"=", s.TokenStart}}
	default:
		if b := s.TokenStart; b != nil {
			bounds = append(bounds, bound{map[bool]string{true: ">=", false: ">"}[b.Inclusive], b})
		}
		if b := s.TokenEnd; b != nil {
			bounds = append(bounds, bound{map[bool]string{true: "<=", false: "<"}[b.Inclusive], b})
		}
	}
	for _, b := range bounds {
		and = append(and, expr(qcol(alias, pgschema.TokenColumn)+" "+b.op+" ?",
			Param{Kind: ParamValue, Type: pgschema.Scalar(pgschema.Bigint), Value: b.b.Value, Element: -1}))
	}
	return and, nil
}

// buildSQL builds the statement reading one partition and the one reading
// one token range. Both return live rows in key order, which the key index
// gives without sorting; a table with static columns joins its static
// rows, and a partition holding only static data reads as one row when the
// query asks for whole partitions. A pageable query also gets the
// statements that resume a page after a position.
func (s *Select) buildSQL() error {
	s.ResumeScanInside = s.Route == RouteScan && s.resumesInside()
	for _, scan := range []bool{false, true} {
		b, err := s.selectSQL(scan, false)
		if err != nil {
			return err
		}
		limited := b.Suffix("LIMIT ?", Param{Kind: ParamLimit})
		if !scan && s.oneRow() {
			limited = b // a limit is one row at least
		}
		if s.limited() {
			b = limited
		}
		sql, params, err := toSQL(b)
		if err != nil {
			return err
		}
		pageSQL, pageParams := sql, params
		if !s.limited() && !s.Aggregate {
			if pageSQL, pageParams, err = toSQL(limited); err != nil {
				return err
			}
		}
		if scan {
			s.ScanSQL, s.ScanParams = sql, params
			s.PageScanSQL, s.PageScanParams = pageSQL, pageParams
		} else {
			s.SQL, s.Params = sql, params
			s.PageSQL, s.PageParams = pageSQL, pageParams
		}
		// A route reading partitions resumes inside the position's
		// partition (ResumeSQL); a scan resumes in the token range
		// (ResumeScanSQL), and with ResumeSQL inside the partition unless
		// ResumeScanSQL reads that too.
		if !s.Pageable || scan && s.Route != RouteScan ||
			!scan && (len(s.PositionSlots) == 0 || s.Route == RouteScan && s.ResumeScanInside) {
			continue
		}
		resume, err := s.selectSQL(scan, true)
		if err != nil {
			return err
		}
		if !s.Aggregate {
			// As the page statements: groups take an unknown number of rows.
			resume = resume.Suffix("LIMIT ?", Param{Kind: ParamLimit})
		}
		if sql, params, err = toSQL(resume); err != nil {
			return err
		}
		if scan {
			s.ResumeScanSQL, s.ResumeScanParams = sql, params
		} else {
			s.ResumeSQL, s.ResumeParams = sql, params
		}
	}
	return nil
}

// oneRow reports whether a read of one partition returns one row at most:
// every clustering column is restricted to one value by =, and the
// partition's static row does not make a row of its own. Its SQL then has
// neither an order nor a limit, whose plan nodes Postgres builds at every
// execution: a tenth of a point read's work.
func (s *Select) oneRow() bool {
	if s.Route != RoutePartitions || s.PerPartition || s.usesStatic() {
		return false
	}
	fixed := map[*pgschema.Column]bool{}
	for _, f := range s.Filters {
		switch {
		case f.Op != OpEQ:
		case f.Kind == OnColumn && f.Column != nil && f.Column.Kind == pgschema.Clustering:
			fixed[f.Column] = true
		case f.Kind == OnTuple:
			for _, c := range f.Columns {
				fixed[c] = true
			}
		}
	}
	return len(fixed) == len(s.Table.Clustering)
}

// limited reports whether the SQL takes a row limit.
func (s *Select) limited() bool {
	// An ANN query reads every row its restrictions allow: the best are
	// anywhere.
	return !s.Aggregate && s.ANN == nil && (s.Limit != nil || s.PerPartitionLimit != nil)
}

// usesStatic reports whether the query reads the static table: when it
// selects or restricts static columns, and when it selects no column
// outside the primary key (a selection such as count(*) or k, c), which
// Cassandra answers by reading every column, static ones included, so that
// a partition holding only static data shows as a row.
func (s *Select) usesStatic() bool {
	if !s.Table.HasStatic() {
		return false
	}
	keysOnly := true
	for _, sl := range s.Slots {
		if sl.Column != nil && sl.Column.Kind == pgschema.Static {
			return true
		}
		if sl.Column != nil && !sl.Column.IsKey() {
			keysOnly = false
		}
	}
	if keysOnly {
		return true
	}
	for _, f := range s.Filters {
		if f.Column != nil && f.Column.Kind == pgschema.Static {
			return true
		}
	}
	return s.PerPartition
}

// wholePartitions reports whether the query asks for whole partitions,
// which is when a partition with only static data shows as a row: it
// restricts nothing but the partition key, tokens and static columns (by
// filter or through an index on one).
func (s *Select) wholePartitions() bool {
	for _, f := range s.Filters {
		if f.Column == nil || f.Column.Kind != pgschema.PartitionKey && f.Column.Kind != pgschema.Static {
			if f.Kind != OnToken {
				return false
			}
		}
	}
	return true
}

// selectSQL builds the statement reading one partition or one token
// range; resume restricts it to the rows after a page's position
// (afterSQL). Resuming inside a partition leaves out the row of a
// partition holding only static data, which sorts before its rows.
func (s *Select) selectSQL(scan, resume bool) (sq.SelectBuilder, error) {
	t := s.Table
	filters, err := s.filterSQL(false)
	if err != nil {
		return sq.SelectBuilder{}, err
	}
	where := append(sq.And{routeSQL(t, mainAlias, scan)}, append(filters, rowLive(mainAlias, t))...)
	if resume {
		where = append(where, s.afterSQL(mainAlias, scan, !scan || s.ResumeScanInside))
	}
	if !s.usesStatic() {
		b := sq.Select().From(tableIdent(t) + " AS " + mainAlias)
		if s.PerPartition {
			b = b.Options("DISTINCT ON (" + strings.Join(keyOrder(t, mainAlias, false, true), ", ") + ")")
		}
		for _, sl := range s.Slots {
			b = b.Column(slotSQL(sl, mainAlias))
		}
		if !scan && s.oneRow() {
			return b.Where(where), nil
		}
		return b.Where(where).OrderBy(keyOrder(t, mainAlias, s.Reversed, s.PerPartition)...), nil
	}
	// With static columns: rows joined to their static row, and partitions
	// with only static data, wrapped so that both sort by key together.
	rows := sq.Select().From(tableIdent(t) + " AS " + mainAlias).
		JoinClause("LEFT JOIN " + staticIdent(t) + " AS " + staticAlias + " ON " + partitionJoin(t))
	keyCols := t.KeyColumns()
	if s.PerPartition {
		keyCols = t.PartitionKey
		rows = rows.Options("DISTINCT ON (" + strings.Join(keyOrder(t, mainAlias, false, true), ", ") + ")").
			OrderBy(keyOrder(t, mainAlias, false, true)...)
	}
	rows = rows.Column(sq.Alias(sq.Expr(qcol(mainAlias, pgschema.TokenColumn)), "k0"))
	for i, c := range keyCols {
		rows = rows.Column(sq.Alias(sq.Expr(qcol(mainAlias, c.SortColumn())), "k"+strconv.Itoa(i+1)))
	}
	for i, sl := range s.Slots {
		rows = rows.Column(sq.Alias(slotSQL(sl, mainAlias), "c"+strconv.Itoa(i)))
	}
	rows = rows.Where(where)
	union := rows
	if (s.PerPartition || s.wholePartitions()) && (scan || !resume) {
		static, err := s.staticOnlySQL(scan, resume, keyCols)
		if err != nil {
			return sq.SelectBuilder{}, err
		}
		if s.PerPartition {
			rows = rows.Prefix("(").Suffix(")")
		}
		union = rows.SuffixExpr(sq.ConcatExpr(" UNION ALL ", static))
	}
	outer := sq.Select().FromSelect(union, "q")
	for i := range s.Slots {
		outer = outer.Column("c" + strconv.Itoa(i))
	}
	return outer.OrderBy(keyOrder(t, "", s.Reversed, s.PerPartition)...), nil
}

// staticOnlySQL selects the partitions that hold only static data, with
// null clustering and regular columns; resume keeps those after the
// position's partition (only scans resume with it).
func (s *Select) staticOnlySQL(scan, resume bool, keyCols []*pgschema.Column) (sq.SelectBuilder, error) {
	t := s.Table
	b := sq.Select().From(staticIdent(t) + " AS " + staticAlias).
		Column(qcol(staticAlias, pgschema.TokenColumn))
	for _, c := range keyCols {
		if c.Kind == pgschema.PartitionKey {
			b = b.Column(qcol(staticAlias, c.PGName))
		} else {
			b = b.Column("NULL")
		}
	}
	for _, sl := range s.Slots {
		switch {
		case sl.Kind == SlotToken:
			b = b.Column(qcol(staticAlias, pgschema.TokenColumn))
		case sl.Column.Kind == pgschema.PartitionKey || sl.Column.Kind == pgschema.Static:
			b = b.Column(slotSQL(sl, staticAlias))
		default:
			b = b.Column("NULL")
		}
	}
	filters, err := s.filterSQL(true)
	if err != nil {
		return b, err
	}
	noRows := sq.Select("1").From(tableIdent(t) + " AS " + mainAlias).
		Where(partitionJoin(t)).Where(rowLive(mainAlias, t)).Prefix("NOT EXISTS (").Suffix(")")
	where := append(sq.And{routeSQL(t, staticAlias, scan), staticLive(staticAlias, t), noRows}, filters...)
	if resume {
		where = append(where, s.afterSQL(staticAlias, scan, false))
	}
	return b.Where(where), nil
}

func staticIdent(t *pgschema.Table) string { return strings.ReplaceAll(t.StaticIdent(), "?", "??") }
