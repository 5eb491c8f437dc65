package bulk

import (
	"fmt"
	"strings"

	"github.com/cqlpg/cqlpg/pgschema"
)

// Names of the staging tables, temporary tables of a load's connections.
const (
	stageRows   = "cqlpg_load_rows"
	stageStatic = "cqlpg_load_static"
)

// stage lists the columns of a staging table, in COPY order.
type stage struct {
	names []string
}

func (s *stage) add(names ...string) { s.names = append(s.names, names...) }

// statements are a load's SQL for one table and one set of columns.
type statements struct {
	rows, static     stage
	create           []string
	applyRows        string // $1 write time, $2 expiry (or null); none with perCell
	applyStatic      string // same parameters; "" when no static column is loaded
	rowsIdx, statIdx []*pgschema.Column
	// perCell stages each cell's write time and expiry with its value,
	// and the row marker's with the row, rather than one of each for the
	// whole load (a copy from another cluster).
	perCell bool
}

// buildStatements builds the staging tables and the statements that apply
// them for a load of cols (key columns and the cells the file gives).
func buildStatements(t *pgschema.Table, cols []*pgschema.Column) (*statements, error) {
	return buildStatementsOf(t, cols, false)
}

func buildStatementsOf(t *pgschema.Table, cols []*pgschema.Column, perCell bool) (*statements, error) {
	st := &statements{perCell: perCell}
	st.rows.add(pgschema.TokenColumn)
	st.static.add(pgschema.TokenColumn)
	for _, c := range t.KeyColumns() {
		st.rows.add(keyNames(c, false)...)
		if c.Kind == pgschema.PartitionKey {
			st.static.add(keyNames(c, true)...)
		}
	}
	var regular, static []*pgschema.Column
	for _, c := range cols {
		switch c.Kind {
		case pgschema.Regular:
			regular = append(regular, c)
			st.rows.add(cellNames(c, perCell)...)
		case pgschema.Static:
			static = append(static, c)
			st.static.add(cellNames(c, perCell)...)
		}
	}
	st.rowsIdx, st.statIdx = regular, static
	if perCell {
		st.rows.add(pgschema.RowWritetimeColumn, pgschema.RowExpiryColumn)
	}
	st.create = []string{
		"DROP TABLE IF EXISTS pg_temp." + stageRows + ", pg_temp." + stageStatic,
		fmt.Sprintf("CREATE TEMP TABLE %s ON COMMIT DELETE ROWS AS SELECT %s FROM %s WITH NO DATA",
			stageRows, quoteAll(st.rows.names), t.Ident()),
	}
	rows, err := applySQL(t, regular, false, perCell)
	if err != nil {
		return nil, err
	}
	st.applyRows = rows
	if len(static) > 0 {
		st.create = append(st.create, fmt.Sprintf("CREATE TEMP TABLE %s ON COMMIT DELETE ROWS AS SELECT %s FROM %s WITH NO DATA",
			stageStatic, quoteAll(st.static.names), t.StaticIdent()))
		if st.applyStatic, err = applySQL(t, static, true, perCell); err != nil {
			return nil, err
		}
	}
	return st, nil
}

// keyNames are the staged columns of a key column: its value and, where
// the column has them, its order key (which the static table, keyed by
// partition, has not) and exact companion.
func keyNames(c *pgschema.Column, static bool) []string {
	names := []string{c.PGName}
	if o := c.OrderColumn(); o != "" && !static {
		names = append(names, o)
	}
	if x := c.ExactColumn(); x != "" {
		names = append(names, x)
	}
	return names
}

// cellNames are the staged columns of a cell: its value and, where the
// column has them, its empty flag and exact companion; then, perCell, its
// write time and expiry, which are otherwise the load's.
func cellNames(c *pgschema.Column, perCell bool) []string {
	names := []string{c.PGName}
	if e := c.EmptyColumn(); e != "" {
		names = append(names, e)
	}
	if x := c.ExactColumn(); x != "" {
		names = append(names, x)
	}
	if perCell {
		names = append(names, c.WritetimeColumn(), c.ExpiryColumn())
	}
	return names
}

// applySQL is the statement writing the staged rows (or static rows) as
// INSERTs of the same cells would: the SET items are those of a gateway
// write (translate's cellSQL and upsert), taken from excluded and t alone,
// and a row of a table with clustering columns is written only when it
// is newer than the newest recorded deletion covering it, which it then
// remembers in _del_wt. perCell takes each cell's write time and expiry,
// and the row marker's, from the staged row: a cell with none is left as
// it is, as a write that does not set it; a collection's elements are
// added to those the target holds.
func applySQL(t *pgschema.Table, cells []*pgschema.Column, static, perCell bool) (string, error) {
	wtOf := func(string) string { return "$1::bigint" }
	expOf := func(string) string { return "$2::integer" }
	if perCell {
		wtOf = func(col string) string { return "s." + quote(col) }
		expOf = wtOf
	}
	target, keys := t.Ident(), t.KeyColumns()
	if static {
		target, keys = t.StaticIdent(), t.PartitionKey
	}
	cols := []string{quote(pgschema.TokenColumn)}
	vals := []string{"s." + quote(pgschema.TokenColumn)}
	conflict := []string{quote(pgschema.TokenColumn)}
	for _, c := range keys {
		for _, n := range keyNames(c, static) {
			cols, vals = append(cols, quote(n)), append(vals, "s."+quote(n))
		}
		conflict = append(conflict, quote(c.SortColumn()))
	}
	var set []string
	for _, c := range cells {
		s, err := pgschema.StorageOf(c.Type)
		if err != nil {
			return "", err
		}
		v, wt, exp := quote(c.PGName), quote(c.WritetimeColumn()), quote(c.ExpiryColumn())
		value := "s." + v
		if c.Type.IsMultiCell() && c.Type.Kind != pgschema.UDT {
			// A non-frozen collection set to empty is null.
			empty := "'{}'"
			if s.SQL == "jsonb" && c.Type.Kind != pgschema.Map {
				empty = "'[]'"
			}
			value = "NULLIF(" + value + ", " + empty + ")"
		}
		cwt, cexp := wtOf(c.WritetimeColumn()), expOf(c.ExpiryColumn())
		if c.HasCells() {
			// Merged element by element, as the gateway's writes are.
			cleared := "CASE WHEN s." + v + " IS NULL THEN $1::bigint ELSE $1::bigint - 1 END"
			if perCell {
				cleared = "NULL"
			}
			live, cells := c.CellsDeltaSQL(value, "NULL", cwt, cleared)
			cols, vals = append(cols, v, quote(c.CellsColumn()), wt, exp), append(vals, live, cells, cwt, cexp)
			set = append(set, c.CellsMergeSQL("t."+quote(pgschema.DeletedColumn), "extract(epoch FROM statement_timestamp())::integer", quote)...)
			continue
		}
		cols, vals = append(cols, v, wt, exp), append(vals, value, cwt, cexp)
		for _, x := range []string{c.EmptyColumn(), c.ExactColumn()} {
			if x != "" {
				cols, vals = append(cols, quote(x)), append(vals, "s."+quote(x))
			}
		}
		set = append(set, c.WinnerSQL(t.WinsFunction(static), quote)...)
	}
	from := fmt.Sprintf("pg_temp.%s AS s", stageRows)
	if static {
		from = fmt.Sprintf("pg_temp.%s AS s", stageStatic)
	}
	where := ""
	if !static {
		wt, exp := quote(pgschema.RowWritetimeColumn), quote(pgschema.RowExpiryColumn)
		mwt := wtOf(pgschema.RowWritetimeColumn)
		cols, vals = append(cols, wt, exp), append(vals, mwt, expOf(pgschema.RowExpiryColumn))
		set = append(set, pgschema.MarkerWinnerSQL(t.WinsFunction(false), quote)...)
		if t.DeletionsIdent() != "" {
			from += fmt.Sprintf(" CROSS JOIN LATERAL (SELECT max(x.%s) AS wt FROM %s AS x WHERE %s) AS d",
				quote(pgschema.DeletedColumn), t.DeletionsIdent(), t.Covers("x", "s"))
			where = " WHERE d.wt IS NULL OR d.wt < " + mwt
			cols, vals = append(cols, quote(pgschema.DeletedColumn)), append(vals, "d.wt")
		}
	}
	if len(set) == 0 {
		set = append(set, fmt.Sprintf("%[1]s = t.%[1]s", quote(pgschema.TokenColumn)))
	}
	return fmt.Sprintf("INSERT INTO %s AS t (%s) SELECT %s FROM %s%s ON CONFLICT (%s) DO UPDATE SET %s",
		target, strings.Join(cols, ", "), strings.Join(vals, ", "), from, where,
		strings.Join(conflict, ", "), strings.Join(set, ", ")), nil
}
