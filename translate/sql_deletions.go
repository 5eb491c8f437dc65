package translate

import (
	"fmt"
	"strings"

	sq "github.com/Masterminds/squirrel"

	"github.com/cqlpg/cqlpg/pgschema"
)

// shadowed makes a write to a table with clustering columns respect the
// partition and range deletions recorded for its row: the newest covering
// deletion is read in the same statement, a write no newer than it writes
// nothing, and a row the write creates remembers it in _del_wt, which
// every later write of the row checks.
func shadowed(t *pgschema.Table, b sq.InsertBuilder, cols []string, vals []any) sq.InsertBuilder {
	row := sq.Select()
	for _, v := range vals {
		switch v := v.(type) {
		case Param:
			row = row.Column(expr("?", v))
		case sq.Sqlizer:
			row = row.Column(v)
		}
	}
	row = row.Column("d.wt").FromSelect(coveringDeletion(t), "d").
		Where(expr("d.wt IS NULL OR d.wt < ?", Param{Kind: ParamWritetime, Element: -1}))
	return b.Columns(append(cols, quote(pgschema.DeletedColumn))...).Select(row)
}

// coveringDeletion selects, as wt, the timestamp of the newest recorded
// deletion covering the row a write names (null when there is none): its
// partition, or a clustering prefix or slice holding the row.
func coveringDeletion(t *pgschema.Table) sq.SelectBuilder {
	key := sq.Select()
	npk := len(t.PartitionKey)
	for i := range t.Clustering {
		key = key.Column(sq.Alias(expr("?", keyParam(t, npk+i)), "c"+fmt.Sprint(i+1)))
	}
	where := sq.And{expr("x."+quote(pgschema.TokenColumn)+" = ?", Param{Kind: ParamToken})}
	for i, c := range t.PartitionKey {
		where = append(where, expr("x."+quote(c.PGName)+" = ?", keyParam(t, i)))
	}
	prefix, loIncl, hiIncl := "x."+quote(pgschema.PrefixColumn), "x."+quote(pgschema.LoInclColumn), "x."+quote(pgschema.HiInclColumn)
	for i := range t.Clustering {
		v := fmt.Sprintf("k.c%d", i+1)
		eq, lo, hi := "x."+quote(pgschema.DeletionColumn(i, "")), "x."+quote(pgschema.DeletionColumn(i, "lo")), "x."+quote(pgschema.DeletionColumn(i, "hi"))
		where = append(where,
			sq.Expr(fmt.Sprintf("(%s <= %d OR %s = %s)", prefix, i, eq, v)),
			sq.Expr(fmt.Sprintf("(%[1]s <> %[2]d OR ((%[3]s IS NULL OR %[5]s > %[3]s OR (%[6]s AND %[5]s = %[3]s)) AND "+
				"(%[4]s IS NULL OR %[5]s < %[4]s OR (%[7]s AND %[5]s = %[4]s))))", prefix, i, lo, hi, v, loIncl, hiIncl)))
	}
	return sq.Select("max(x." + quote(pgschema.DeletedColumn) + ") AS wt").
		From(strings.ReplaceAll(t.DeletionsIdent(), "?", "??") + " AS x").
		JoinClause(sq.ConcatExpr("CROSS JOIN (", key, ") AS k")).Where(where)
}

// rangeBound is one end of a range deletion's slice: op and the value of
// its clustering column, as a parameter.
type rangeBound struct {
	column *pgschema.Column
	op     Operator
	value  Param
}

// sliceBounds are the bounds of single-column slice restrictions.
func sliceBounds(slice []Restriction) []rangeBound {
	out := make([]rangeBound, len(slice))
	for i, r := range slice {
		out[i] = rangeBound{r.Column, r.Op, sortParam(r.Column, r.Values[0])}
	}
	return out
}

// guardedDeletion records a partition or range deletion: the first nkeys
// key columns fixed, the next clustering columns fixed to the values of
// fixed, and a slice of the clustering column after them. Deleting the
// same range again keeps the newer timestamp. It is made only when guard,
// a condition on the statement's parameters, holds (nil: always).
func guardedDeletion(t *pgschema.Table, nkeys int, fixed []Param, slice []rangeBound, guard sq.Sqlizer) sq.Sqlizer {
	npk := len(t.PartitionKey)
	cols := []string{quote(pgschema.TokenColumn)}
	vals := []any{Param{Kind: ParamToken}}
	for i, c := range t.PartitionKey {
		cols, vals = append(cols, quote(c.PGName)), append(vals, keyParam(t, i))
	}
	cols, vals = append(cols, quote(pgschema.PrefixColumn)), append(vals, sq.Expr(fmt.Sprint(nkeys-npk+len(fixed))))
	for i := range nkeys - npk {
		cols, vals = append(cols, quote(pgschema.DeletionColumn(i, ""))), append(vals, keyParam(t, npk+i))
	}
	for i, p := range fixed {
		cols, vals = append(cols, quote(pgschema.DeletionColumn(nkeys-npk+i, ""))), append(vals, p)
	}
	loIncl, hiIncl := "false", "false"
	for _, r := range slice {
		i := r.column.Position
		switch r.op {
		case OpGT, OpGTE:
			cols, vals = append(cols, quote(pgschema.DeletionColumn(i, "lo"))), append(vals, r.value)
			if r.op == OpGTE {
				loIncl = "true"
			}
		case OpLT, OpLTE:
			cols, vals = append(cols, quote(pgschema.DeletionColumn(i, "hi"))), append(vals, r.value)
			if r.op == OpLTE {
				hiIncl = "true"
			}
		}
	}
	cols = append(cols, quote(pgschema.LoInclColumn), quote(pgschema.HiInclColumn), quote(pgschema.DeletedColumn))
	vals = append(vals, sq.Expr(loIncl), sq.Expr(hiIncl), Param{Kind: ParamWritetime, Element: -1})
	del := quote(pgschema.DeletedColumn)
	target := []string{quote(pgschema.TokenColumn)}
	for _, c := range t.PartitionKey {
		target = append(target, quote(c.PGName))
	}
	target = append(target, quote(pgschema.PrefixColumn))
	for i := range t.Clustering {
		for _, bound := range []string{"", "lo", "hi"} {
			target = append(target, quote(pgschema.DeletionColumn(i, bound)))
		}
	}
	target = append(target, quote(pgschema.LoInclColumn), quote(pgschema.HiInclColumn))
	insert := sq.Insert(strings.ReplaceAll(t.DeletionsIdent(), "?", "??") + " AS x").Columns(cols...)
	if guard == nil {
		insert = insert.Values(vals...)
	} else {
		sel := sq.Select()
		for _, v := range vals {
			if p, ok := v.(Param); ok {
				sel = sel.Column(sq.Expr("?", p))
			} else {
				sel = sel.Column(v)
			}
		}
		insert = insert.Select(sel.Where(guard))
	}
	return insert.Suffix(fmt.Sprintf("ON CONFLICT (%s) DO UPDATE SET %[2]s = GREATEST(x.%[2]s, excluded.%[2]s)", strings.Join(target, ", "), del))
}

// tupleDeletions records the deletion of a one-sided tuple slice, (c1, c2,
// c3) > (v1, v2, v3), as the ranges its rows fall in, which the deletions
// table holds: c1 > v1; c1 = v1 and c2 > v2; c1 = v1, c2 = v2 and c3 > v3
// (>= for the last when the slice includes its bound).
func tupleDeletions(t *pgschema.Table, nkeys int, tuple Restriction) []sq.Sqlizer {
	value, last := tupleValue(tuple), len(tuple.Columns)-1
	out := make([]sq.Sqlizer, 0, len(tuple.Columns))
	for i, c := range tuple.Columns {
		op := tuple.Op
		if i < last {
			op = strictOp(op)
		}
		out = append(out, guardedDeletion(t, nkeys, tuplePrefix(value, i), []rangeBound{{c, op, value(i)}}, nil))
	}
	return out
}

// strictOp is a slice's operator without its bound: >= is >, <= is <.
func strictOp(op Operator) Operator {
	switch op {
	case OpGTE:
		return OpGT
	case OpLTE:
		return OpLT
	}
	return op
}

// tuplePrefix returns the parameters of a tuple's first n elements.
func tuplePrefix(value func(int) Param, n int) []Param {
	out := make([]Param, n)
	for i := range n {
		out[i] = value(i)
	}
	return out
}

// tupleValue returns the parameter of element i of a tuple slice's bound.
func tupleValue(tuple Restriction) func(i int) Param {
	return func(i int) Param {
		v := tuple.Values[min(i, len(tuple.Values)-1)]
		p := sortParam(tuple.Columns[i], v)
		if tuple.TupleMarker {
			p.Element = i
		}
		return p
	}
}

// tupleRangeDeletions records the deletion of a tuple slice bounded on
// both sides, lo < (c1, ..., cn) < hi, as the ranges the deletions table
// holds. They depend on how many leading elements the bounds share, p,
// which only the bound values tell: each set is recorded under a guard
// that holds for one p. With p shared, the rows fall in c(p+1) strictly
// between the bounds' elements, plus, past it, the ranges above lo's
// elements (tupleDeletions) and below hi's; bounds equal in full leave
// one point when both include it.
func tupleRangeDeletions(t *pgschema.Table, nkeys int, lo, hi Restriction) []sq.Sqlizer {
	a, b, n := tupleValue(lo), tupleValue(hi), len(lo.Columns)
	compare := func(i int, op string) sq.Sqlizer {
		c := lo.Columns[i]
		if fn := orderFunction(c); fn != "" {
			return expr(fn+"(?) "+op+" "+fn+"(?)", a(i), b(i))
		}
		return expr("? "+op+" ?", a(i), b(i))
	}
	var out []sq.Sqlizer
	for p := range n + 1 {
		guard := sq.And{}
		for i := range min(p, n) {
			guard = append(guard, compare(i, "="))
		}
		if p == n {
			if lo.Op == OpGTE && hi.Op == OpLTE {
				c := lo.Columns[n-1]
				out = append(out, guardedDeletion(t, nkeys, tuplePrefix(a, n-1), []rangeBound{{c, OpGTE, a(n - 1)}, {c, OpLTE, a(n - 1)}}, guard))
			}
			continue
		}
		guard = append(guard, compare(p, "<"))
		c := lo.Columns[p]
		loOp, hiOp := strictOp(lo.Op), strictOp(hi.Op)
		if p == n-1 {
			loOp, hiOp = lo.Op, hi.Op
		}
		out = append(out, guardedDeletion(t, nkeys, tuplePrefix(a, p), []rangeBound{{c, loOp, a(p)}, {c, hiOp, b(p)}}, guard))
		for i := p + 1; i < n; i++ {
			loOp, hiOp := OpGT, OpLT
			if i == n-1 {
				loOp, hiOp = lo.Op, hi.Op
			}
			out = append(out,
				guardedDeletion(t, nkeys, tuplePrefix(a, i), []rangeBound{{lo.Columns[i], loOp, a(i)}}, guard),
				guardedDeletion(t, nkeys, tuplePrefix(b, i), []rangeBound{{lo.Columns[i], hiOp, b(i)}}, guard))
		}
	}
	return out
}

// clearItems are the SET items that drop a row's cells and marker no newer
// than a deletion, whose time the deletion parameter gives.
func clearItems(t *pgschema.Table, kind pgschema.ColumnKind, alias, deletion string) []string {
	var set []string
	clear := func(wt string, dependent ...string) {
		for _, c := range append(dependent, wt) {
			set = append(set, fmt.Sprintf("%s = CASE WHEN %s.%s <= %s THEN NULL ELSE %s.%s END", c, alias, wt, deletion, alias, c))
		}
	}
	if kind == pgschema.Regular {
		clear(quote(pgschema.RowWritetimeColumn), quote(pgschema.RowExpiryColumn))
	}
	for _, c := range t.Columns {
		if c.Kind != kind {
			continue
		}
		if c.HasCells() {
			// Elements newer than the deletion stay.
			value, cells := c.CellsClearedSQL(alias, deletion, quote)
			set = append(set, quote(c.PGName)+" = "+value, quote(c.CellsColumn())+" = "+cells)
			clear(quote(c.WritetimeColumn()), quote(c.ExpiryColumn()))
			continue
		}
		dependent := []string{quote(c.PGName), quote(c.ExpiryColumn())}
		if e := c.EmptyColumn(); e != "" {
			dependent = append(dependent, quote(e))
		}
		if x := c.ExactColumn(); x != "" {
			dependent = append(dependent, quote(x))
		}
		clear(quote(c.WritetimeColumn()), dependent...)
	}
	return set
}

// deleteRowSQL builds the deletion of one row at a timestamp: the row keeps
// the deletion time, which stops older writes from reviving it, and drops
// every cell and row marker no newer than it.
func deleteRowSQL(t *pgschema.Table) (string, []Param, error) {
	cols, vals := keyInsert(t, false)
	del := quote(pgschema.DeletedColumn)
	cols = append(cols, del)
	vals = append(vals, Param{Kind: ParamWritetime, Element: -1})
	set := append([]string{fmt.Sprintf("%[1]s = GREATEST(t.%[1]s, excluded.%[1]s)", del)},
		clearItems(t, pgschema.Regular, "t", "excluded."+del)...)
	return toSQL(sq.Insert(tableIdent(t) + " AS t").Columns(cols...).Values(vals...).
		Suffix(conflictTarget(t, false) + strings.Join(set, ", ")))
}

// deleteRangeSQL builds the deletion of the rows of a partition whose
// first nkeys key columns are given and whose next clustering column is
// in slice, or whose next clustering columns are in the tuple slice
// tuple: each row keeps the deletion time and drops what it shadows.
// Deleting a whole partition marks its static row too.
func deleteRangeSQL(t *pgschema.Table, nkeys int, slice []Restriction, tuples []Restriction) (string, []Param, error) {
	ts := Param{Kind: ParamWritetime, Element: -1}
	del := quote(pgschema.DeletedColumn)
	where := sq.And{expr("t."+quote(pgschema.TokenColumn)+" = ?", Param{Kind: ParamToken})}
	for i, c := range t.KeyColumns()[:nkeys] {
		where = append(where, expr("t."+quote(c.SortColumn())+" = ?", keyParam(t, i)))
	}
	for _, s := range slice {
		where = append(where, expr("t."+quote(s.Column.SortColumn())+" "+s.Op.String()+" ?", sortParam(s.Column, s.Values[0])))
	}
	for _, tuple := range tuples {
		cond, err := tupleSQL(tuple, "t")
		if err != nil {
			return "", nil, err
		}
		where = append(where, cond)
	}
	var records []sq.Sqlizer
	switch len(tuples) {
	case 0:
		records = []sq.Sqlizer{guardedDeletion(t, nkeys, nil, sliceBounds(slice), nil)}
	case 1:
		records = tupleDeletions(t, nkeys, tuples[0])
	default:
		records = tupleRangeDeletions(t, nkeys, tuples[0], tuples[1])
	}
	update := sq.Update(tableIdent(t)+" AS t").Set(del, expr("GREATEST(t."+del+", ?)", ts))
	at := map[string]sq.Sqlizer{markTime: expr("?", ts)}
	for _, item := range clearItems(t, pgschema.Regular, "t", markTime) {
		name, value, _ := strings.Cut(item, " = ")
		update = update.Set(name, template(value, at))
	}
	update = update.Where(where)
	with := []any{"WITH d AS (", update, ")"}
	for i, r := range records {
		name := "rd"
		if i > 0 {
			name += fmt.Sprint(i)
		}
		with = append(with, ", "+name+" AS (", r, ")")
	}
	if nkeys == len(t.PartitionKey) && len(slice) == 0 && len(tuples) == 0 && t.HasStatic() {
		// A partition deletion; a range deletion leaves statics alone.
		cols, vals := keyInsert(t, true)
		cols, vals = append(cols, del), append(vals, ts)
		set := append([]string{fmt.Sprintf("%[1]s = GREATEST(t.%[1]s, excluded.%[1]s)", del)},
			clearItems(t, pgschema.Static, "t", "excluded."+del)...)
		st := sq.Insert(staticIdent(t) + " AS t").Columns(cols...).Values(vals...).
			Suffix(conflictTarget(t, true) + strings.Join(set, ", "))
		with = append(with, ", st AS (", st, ")")
	}
	stmt := sq.Select("1").PrefixExpr(sq.ConcatExpr(append(with, " ")...))
	return toSQL(stmt)
}
