package translate

import (
	"fmt"
	"strings"

	sq "github.com/Masterminds/squirrel"

	"github.com/cqlpg/cqlpg/pgschema"
)

// cell is one column a write sets, to a value or (nil constant) to null.
type cell struct {
	column *pgschema.Column
	value  Value
}

// keyInsert returns the columns and parameters common to every write: the
// token and the key columns.
func keyInsert(t *pgschema.Table) ([]string, []any) {
	cols := []string{quote(pgschema.TokenColumn)}
	vals := []any{Param{Kind: ParamToken}}
	for i, c := range t.KeyColumns() {
		cols = append(cols, quote(c.PGName))
		vals = append(vals, Param{Kind: ParamKey, Key: i, Column: c})
	}
	return cols, vals
}

// conflictTarget names the key index's columns for ON CONFLICT.
func conflictTarget(t *pgschema.Table) string {
	cols := []string{quote(pgschema.TokenColumn)}
	for _, c := range t.KeyColumns() {
		cols = append(cols, quote(c.PGName))
	}
	return "ON CONFLICT (" + strings.Join(cols, ", ") + ") DO UPDATE SET "
}

// upsertSQL builds the write of cells (and, for INSERT, the row marker) to
// one row. Each cell replaces the stored one only if it wins by
// Cassandra's reconciliation rules (cqlpg.cell_wins), so replicas that
// apply the same writes in any order end up equal.
func upsertSQL(t *pgschema.Table, cells []cell, marker bool) (string, []Param, error) {
	cols, vals := keyInsert(t)
	var set []string
	winner := func(newer, older string) string { // SET item taking the winning side's column
		return fmt.Sprintf("%[1]s = CASE WHEN %[2]s THEN excluded.%[1]s ELSE t.%[1]s END", newer, older)
	}
	for _, c := range cells {
		st, err := pgschema.StorageOf(c.column.Type)
		if err != nil {
			return "", nil, invalidf("%v", err)
		}
		v, wt, exp := quote(c.column.PGName), quote(c.column.WritetimeColumn()), quote(c.column.ExpiryColumn())
		cols = append(cols, v, wt, exp)
		vals = append(vals,
			Param{Kind: ParamValue, Column: c.column, Value: c.value},
			Param{Kind: ParamWritetime, Value: c.value, Cell: true},
			Param{Kind: ParamExpiry, Value: c.value, Cell: true})
		// v is quoted for squirrel already; the sort key expressions hold no
		// question mark of their own.
		wins := fmt.Sprintf("cqlpg.cell_wins(excluded.%[2]s, excluded.%[3]s, excluded.%[1]s IS NULL, %[4]s, "+
			"t.%[2]s, t.%[3]s, t.%[1]s IS NULL, %[5]s, t.%[6]s)", v, wt, exp,
			fmt.Sprintf(st.SortKey, "excluded."+v), fmt.Sprintf(st.SortKey, "t."+v),
			quote(pgschema.DeletedColumn))
		set = append(set, winner(v, wins), winner(wt, wins), winner(exp, wins))
	}
	if marker {
		wt, exp := quote(pgschema.RowWritetimeColumn), quote(pgschema.RowExpiryColumn)
		cols = append(cols, wt, exp)
		vals = append(vals, Param{Kind: ParamWritetime}, Param{Kind: ParamExpiry})
		wins := fmt.Sprintf("cqlpg.cell_wins(excluded.%[1]s, excluded.%[2]s, false, NULL, t.%[1]s, t.%[2]s, false, NULL, t.%[3]s)",
			wt, exp, quote(pgschema.DeletedColumn))
		set = append(set, winner(wt, wins), winner(exp, wins))
	}
	if len(set) == 0 {
		// An UPDATE always sets something; keep the statement valid anyway.
		set = append(set, fmt.Sprintf("%[1]s = t.%[1]s", quote(pgschema.TokenColumn)))
	}
	b := sq.Insert(tableIdent(t) + " AS t").Columns(cols...).Values(vals...).
		Suffix(conflictTarget(t) + strings.Join(set, ", "))
	return toSQL(b)
}

// deleteRowSQL builds the deletion of one row at a timestamp: the row keeps
// the deletion time, which stops older writes from reviving it, and drops
// every cell and row marker no newer than it.
func deleteRowSQL(t *pgschema.Table) (string, []Param, error) {
	cols, vals := keyInsert(t)
	del := quote(pgschema.DeletedColumn)
	cols = append(cols, del)
	vals = append(vals, Param{Kind: ParamWritetime})
	set := []string{fmt.Sprintf("%[1]s = GREATEST(t.%[1]s, excluded.%[1]s)", del)}
	clear := func(wt string, dependent ...string) {
		for _, col := range append(dependent, wt) {
			set = append(set, fmt.Sprintf("%s = CASE WHEN t.%s <= excluded.%s THEN NULL ELSE t.%s END", col, wt, del, col))
		}
	}
	clear(quote(pgschema.RowWritetimeColumn), quote(pgschema.RowExpiryColumn))
	for _, c := range t.Columns {
		if c.Kind == pgschema.Regular {
			clear(quote(c.WritetimeColumn()), quote(c.PGName), quote(c.ExpiryColumn()))
		}
	}
	b := sq.Insert(tableIdent(t) + " AS t").Columns(cols...).Values(vals...).
		Suffix(conflictTarget(t) + strings.Join(set, ", "))
	return toSQL(b)
}
