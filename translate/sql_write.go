package translate

import (
	"fmt"
	"strings"

	sq "github.com/Masterminds/squirrel"

	"github.com/cqlpg/cqlpg/pgschema"
)

// keyInsert returns the columns and parameters common to every write of a
// row: the token and the key columns (the partition key only for the
// static table).
func keyInsert(t *pgschema.Table, static bool) ([]string, []any) {
	keys := t.KeyColumns()
	if static {
		keys = t.PartitionKey
	}
	cols := []string{quote(pgschema.TokenColumn)}
	vals := []any{Param{Kind: ParamToken}}
	for i, c := range keys {
		cols = append(cols, quote(c.PGName))
		vals = append(vals, Param{Kind: ParamKey, Key: i, Column: c, Element: -1})
		if o := c.OrderColumn(); o != "" {
			cols = append(cols, quote(o))
			vals = append(vals, keyParam(t, i))
		}
		if x := c.ExactColumn(); x != "" {
			cols = append(cols, quote(x))
			vals = append(vals, exactParam(Param{Kind: ParamKey, Key: i, Column: c, Element: -1}))
		}
	}
	return cols, vals
}

// conflictTarget names the key index's columns for ON CONFLICT.
func conflictTarget(t *pgschema.Table, static bool) string {
	keys := t.KeyColumns()
	if static {
		keys = t.PartitionKey
	}
	cols := []string{quote(pgschema.TokenColumn)}
	for _, c := range keys {
		cols = append(cols, quote(c.SortColumn()))
	}
	return "ON CONFLICT (" + strings.Join(cols, ", ") + ") DO UPDATE SET "
}

// winners are SET items (pgschema.Column.WinnerSQL) as squirrel parts.
func winners(items []string) []sq.Sqlizer {
	out := make([]sq.Sqlizer, len(items))
	for i, item := range items {
		out[i] = sq.Expr(item)
	}
	return out
}

// cellSQL adds one cell to an upsert: its value, write time and expiry
// columns and parameters, and the SET items that keep the winning cell by
// Cassandra's reconciliation rules, fn being the table's wins function
// (pgschema.Column.WinnerSQL).
func cellSQL(c cell, fn string, cols *[]string, vals *[]any, set *[]sq.Sqlizer) error {
	if _, err := pgschema.StorageOf(c.column.Type); err != nil {
		return invalidf("%v", err)
	}
	if c.column.HasCells() {
		cellsSQL(c, cols, vals, set)
		return nil
	}
	if len(c.changes) > 0 {
		changeSQL(c, cols, vals, set)
		return nil
	}
	v, wt, exp := quote(c.column.PGName), quote(c.column.WritetimeColumn()), quote(c.column.ExpiryColumn())
	emptyCol := c.column.EmptyColumn()
	param := c.stamp(valueParam(c.column, c.value))
	param.EmptyAsNull = emptyCol != ""
	*cols = append(*cols, v, wt, exp)
	*vals = append(*vals, param,
		c.stamp(Param{Kind: ParamWritetime, Value: c.value, Cell: true, Element: -1}),
		c.stamp(Param{Kind: ParamExpiry, Value: c.value, Cell: true, Element: -1}))
	if emptyCol != "" {
		*cols = append(*cols, quote(emptyCol))
		*vals = append(*vals, c.stamp(Param{Kind: ParamEmptyFlag, Value: c.value, Element: -1}))
	}
	if x := c.column.ExactColumn(); x != "" {
		*cols = append(*cols, quote(x))
		*vals = append(*vals, exactParam(param))
	}
	// Names are escaped for squirrel by quote.
	*set = append(*set, winners(c.column.WinnerSQL(fn, quote))...)
	return nil
}

// changeSQL adds a user type changed by field operations. A row that does
// not exist yet gets the changes applied to nothing; an existing one gets
// them applied to its live value under the row lock, unless a deletion at
// or after the write's time shadows them. The cell keeps its latest write
// time; the write's TTL, if any, applies to the whole value.
func changeSQL(c cell, cols *[]string, vals *[]any, set *[]sq.Sqlizer) {
	v, wt, exp := quote(c.column.PGName), quote(c.column.WritetimeColumn()), quote(c.column.ExpiryColumn())
	*cols = append(*cols, v, wt, exp)
	writetime := c.stamp(Param{Kind: ParamWritetime, Value: c.value, Cell: true, Element: -1})
	initial := applyChanges(c.changes, sq.Expr("NULL"))
	if c.dropped {
		// Hidden by the column's drop, the write time is null: so is the
		// value of a row written for the first time.
		initial = sq.ConcatExpr(expr("CASE WHEN ?::int8 IS NOT NULL THEN ", writetime), initial, " END")
	}
	*vals = append(*vals, initial, writetime,
		c.stamp(Param{Kind: ParamExpiry, Value: c.value, Cell: true, Element: -1}))
	old := expr(fmt.Sprintf("CASE WHEN t.%[2]s IS NULL OR t.%[2]s > ? THEN t.%[1]s END", v, exp), Param{Kind: ParamNow})
	applies := fmt.Sprintf("cqlpg.change_applies(excluded.%[2]s, t.%[2]s, t.%[1]s IS NULL, t.%[3]s)",
		v, wt, quote(pgschema.DeletedColumn))
	*set = append(*set,
		sq.ConcatExpr(fmt.Sprintf("%s = CASE WHEN %s THEN ", v, applies), applyChanges(c.changes, old), fmt.Sprintf(" ELSE t.%s END", v)),
		sq.Expr(fmt.Sprintf("%[1]s = CASE WHEN %[2]s THEN GREATEST(t.%[1]s, excluded.%[1]s) ELSE t.%[1]s END", wt, applies)),
		sq.Expr(fmt.Sprintf("%[1]s = CASE WHEN %[2]s THEN excluded.%[1]s ELSE t.%[1]s END", exp, applies)))
	if e := c.column.EmptyColumn(); e != "" {
		// A change leaves a collection or user type that is not empty.
		*set = append(*set, sq.Expr(fmt.Sprintf("%[1]s = CASE WHEN %[2]s THEN NULL ELSE t.%[1]s END", quote(e), applies)))
	}
}

// applyChanges nests a cell's changes around its old value.
func applyChanges(changes []change, old sq.Sqlizer) sq.Sqlizer {
	for _, ch := range changes {
		before, after, _ := strings.Cut(ch.sql, "%s")
		args := make([]any, len(ch.args))
		for i, a := range ch.args {
			args[i] = a
		}
		old = sq.ConcatExpr(before, old, sq.Expr(after, args...))
	}
	return old
}

// readded notes, when the cell's column was dropped and added again, the
// time of the drop, which writes at or before it do not pass.
func (c *cell) readded(t *pgschema.Table) {
	for _, d := range t.Dropped {
		if d.Name == c.column.Name {
			c.dropped, c.droppedAt = true, d.Dropped.UnixMicro()
		}
	}
}

// stamp marks p, a parameter of the cell's write, with the cell's drop
// time, if it has one.
func (c cell) stamp(p Param) Param {
	if c.dropped {
		p.Readded, p.DroppedAt = true, c.droppedAt
	}
	return p
}

// valueNeeded returns the error a cell's changes raise when there is no
// stored value, or "".
func valueNeeded(c cell) string {
	for _, ch := range c.changes {
		if ch.needsValue != "" {
			return ch.needsValue
		}
	}
	return ""
}

// upsert builds the write of cells to one row of the main table, or to the
// partition's static row.
func upsert(t *pgschema.Table, cells []cell, marker, static bool) (sq.InsertBuilder, error) {
	cols, vals := keyInsert(t, static)
	var set []sq.Sqlizer
	var check string
	fn := winsIdent(t, static)
	for _, c := range cells {
		c.readded(t)
		if err := cellSQL(c, fn, &cols, &vals, &set); err != nil {
			return sq.InsertBuilder{}, err
		}
		if msg := valueNeeded(c); msg != "" && check == "" {
			check = msg
		}
	}
	if marker {
		wt, exp := quote(pgschema.RowWritetimeColumn), quote(pgschema.RowExpiryColumn)
		cols = append(cols, wt, exp)
		vals = append(vals, Param{Kind: ParamWritetime, Element: -1}, Param{Kind: ParamExpiry, Element: -1})
		set = append(set, winners(pgschema.MarkerWinnerSQL(fn, quote))...)
	}
	if len(set) == 0 {
		set = append(set, sq.Expr(fmt.Sprintf("%[1]s = t.%[1]s", quote(pgschema.TokenColumn))))
	}
	table := tableIdent(t)
	if static {
		table = staticIdent(t)
	}
	suffix := []any{conflictTarget(t, static)}
	for i, item := range set {
		if i > 0 {
			suffix = append(suffix, ", ")
		}
		suffix = append(suffix, item)
	}
	if check != "" {
		// A row that did not exist had no value to change; the messages
		// are the project's own constants.
		suffix = append(suffix, " RETURNING cqlpg.fail_if(xmax = 0, '"+check+"')")
	}
	b := sq.Insert(table + " AS t")
	if !static && t.DeletionsIdent() != "" {
		b = shadowed(t, b, cols, vals)
	} else {
		b = b.Columns(cols...).Values(vals...)
	}
	return b.SuffixExpr(sq.ConcatExpr(suffix...)), nil
}

// upsertSQL builds the write of cells (and, for INSERT, the row marker) to
// one row. Static cells go to the partition's static row, in the same
// statement so that the write stays atomic; a write of static cells only,
// named by its partition key, touches the static row alone. Each cell
// replaces the stored one only if it wins by Cassandra's reconciliation
// rules, so replicas that apply the same writes in any order end up equal.
func upsertSQL(t *pgschema.Table, cells []cell, marker bool) (string, []Param, error) {
	var regular, static []cell
	for _, c := range cells {
		if c.column.Kind == pgschema.Static {
			static = append(static, c)
		} else {
			regular = append(regular, c)
		}
	}
	main, err := upsert(t, regular, marker, false)
	if err != nil || len(static) == 0 {
		return sqlOf(main, err)
	}
	st, err := upsert(t, static, false, true)
	if err != nil {
		return "", nil, err
	}
	if len(regular) == 0 && !marker {
		return toSQL(st)
	}
	return toSQL(main.PrefixExpr(sq.ConcatExpr("WITH st AS (", st, ") ")))
}

// staticUpsertSQL builds the write of static cells to a partition named by
// its key alone.
func staticUpsertSQL(t *pgschema.Table, cells []cell) (string, []Param, error) {
	st, err := upsert(t, cells, false, true)
	return sqlOf(st, err)
}

func sqlOf(b sq.Sqlizer, err error) (string, []Param, error) {
	if err != nil {
		return "", nil, err
	}
	return toSQL(b)
}

// counterSQL builds a counter update: each counter adds its delta to the
// stored value, starting from zero; an unset delta (null) changes nothing.
func counterSQL(t *pgschema.Table, cells []cell) (string, []Param, error) {
	cols, vals := keyInsert(t, false)
	var set []string
	for _, c := range cells {
		v, wt := quote(c.column.PGName), quote(c.column.WritetimeColumn())
		param := valueParam(c.column, c.value)
		param.Increment = true
		delta := expr("?", param)
		if c.op == AssignSub {
			delta = expr("-?", param)
		}
		cols = append(cols, v, wt)
		vals = append(vals, delta, Param{Kind: ParamWritetime, Value: c.value, Cell: true, Element: -1})
		set = append(set, fmt.Sprintf("%[1]s = CASE WHEN excluded.%[1]s IS NULL THEN t.%[1]s ELSE coalesce(t.%[1]s, 0) + excluded.%[1]s END", v),
			fmt.Sprintf("%[1]s = GREATEST(t.%[1]s, excluded.%[1]s)", wt))
	}
	return toSQL(sq.Insert(tableIdent(t) + " AS t").Columns(cols...).Values(vals...).
		Suffix(conflictTarget(t, false) + strings.Join(set, ", ")))
}
