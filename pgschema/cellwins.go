package pgschema

import (
	"fmt"
	"hash/fnv"
	"strings"
)

// Writes decide cell by cell which of the stored and the written cell wins,
// by Cassandra's reconciliation (cqlpg.cell_wins, migration 0001). Nearly
// every write is newer than the cell it replaces, which one comparison
// tells: the write SQL asks only that, and hands the rest, a tie of write
// times, to the table's wins function, which holds the whole rule for each
// of its cells. Postgres builds a statement's expressions anew at each
// execution, so the whole rule inlined in every SET item (four per cell)
// cost a write more than its own work: the upsert of a row of four
// columns spent 74 µs of shard CPU with it, 57 µs with the function.

// cellNames are the columns of one cell, and of its row's newest deletion
// time, each quoted: empty and exact are "" when the cell has no such
// companion.
type cellNames struct {
	value, writetime, expiry, empty, deleted string
	// exact is the exact companion (exact.go).
	exact string
}

// cellNames returns the columns of c's cell, each quoted by quote.
func (c *Column) cellNames(quote func(string) string) cellNames {
	n := cellNames{value: quote(c.PGName), writetime: quote(c.WritetimeColumn()), expiry: quote(c.ExpiryColumn()),
		deleted: quote(DeletedColumn)}
	if e := c.EmptyColumn(); e != "" {
		n.empty = quote(e)
	}
	if x := c.ExactColumn(); x != "" {
		n.exact = quote(x)
	}
	return n
}

// rule is the condition under which cell n of the row aliased newer
// replaces the one of the row aliased older, by Cassandra's
// reconciliation: sortKey formats a value column as the bytes ties are
// broken on (Storage.SortKey). The empty value is stored as null beside a
// true flag: it is no tombstone, and sorts before every other value.
func (n cellNames) rule(sortKey, newer, older string) string {
	v := n.value
	key := func(alias string) string { return fmt.Sprintf(sortKey, alias+"."+v) }
	if n.exact != "" {
		// The companion holds CQL bytes, as the sort key gives them.
		key = func(alias string) string {
			return fmt.Sprintf("COALESCE(%s.%s, %s)", alias, n.exact, fmt.Sprintf(sortKey, alias+"."+v))
		}
	}
	isNull := func(alias string) string { return alias + "." + v + " IS NULL" }
	if n.empty != "" {
		value := key
		key = func(alias string) string {
			return fmt.Sprintf("CASE WHEN %s.%s THEN ''::bytea ELSE %s END", alias, n.empty, value(alias))
		}
		isNull = func(alias string) string {
			return fmt.Sprintf("(%[1]s.%[2]s IS NULL AND %[1]s.%[3]s IS NOT TRUE)", alias, v, n.empty)
		}
	}
	return fmt.Sprintf("cqlpg.cell_wins(%[1]s.%[3]s, %[1]s.%[4]s, %[5]s, %[6]s, "+
		"%[2]s.%[3]s, %[2]s.%[4]s, %[7]s, %[8]s, %[2]s.%[9]s)", newer, older, n.writetime, n.expiry,
		isNull(newer), key(newer), isNull(older), key(older), n.deleted)
}

// WinnerSQL returns the SET items of an INSERT ... ON CONFLICT DO UPDATE,
// its stored row aliased t, that keep in each column of c's cell the
// winning side's: the written cell wins when it is newer than the stored
// one and the row's newest deletion, or as old as the stored one and the
// table's wins function fn (Table.WinsFunction) says it wins the tie.
// quote quotes a name for the statement at hand.
func (c *Column) WinnerSQL(fn string, quote func(string) string) []string {
	var cols []string
	for _, name := range c.storedColumns() {
		cols = append(cols, quote(name))
	}
	return winners(cols, winsSQL(quote(c.WritetimeColumn()), quote(DeletedColumn), fn, c.WinsKey()))
}

// MarkerWinnerSQL is WinnerSQL for the row marker.
func MarkerWinnerSQL(fn string, quote func(string) string) []string {
	wt := quote(RowWritetimeColumn)
	return winners([]string{wt, quote(RowExpiryColumn)}, winsSQL(wt, quote(DeletedColumn), fn, winsKey(markerCell)))
}

// winners returns the SET items keeping in each of cols the written value
// when wins holds, else the stored one.
func winners(cols []string, wins string) []string {
	items := make([]string, len(cols))
	for i, c := range cols {
		items[i] = fmt.Sprintf("%[1]s = CASE WHEN %[2]s THEN excluded.%[1]s ELSE t.%[1]s END", c, wins)
	}
	return items
}

func winsSQL(wt, deleted, fn string, key int64) string {
	return fmt.Sprintf("(excluded.%[1]s > GREATEST(t.%[1]s, t.%[2]s, -9223372036854775807 - 1) OR "+
		"(excluded.%[1]s = t.%[1]s AND %[3]s(t.*, excluded.*, %[4]d)))", wt, deleted, fn, key)
}

// markerCell is the row marker's name for the wins function: no column's
// Postgres name starts with '$' (PGColumnName).
const markerCell = "$row"

// WinsKey is the number that names the column's cell to its table's wins
// function: a digest of its Postgres name, so that it stays the same
// whatever columns come and go, and no name is written into the SQL. Two
// cells of a table share one with a chance of about n²/2⁶⁴.
func (c *Column) WinsKey() int64 { return winsKey(c.PGName) }

func winsKey(name string) int64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	return int64(h.Sum64() >> 1)
}

// winsSuffix ends the name of a table's wins function.
const winsSuffix = "$wins"

// WinsFunction returns the quoted name of the wins function of the table,
// or of its static companion table.
func (t *Table) WinsFunction(static bool) string { return t.functionIdent(static, winsSuffix) }

// winsFunctionSQL creates or replaces the wins function of the table, or
// of its static companion table: wins(t, n, cell) tells whether cell of
// row n, written, replaces the one of row t, stored, by Cassandra's rules.
func (t *Table) winsFunctionSQL(static bool) []string {
	what := "a cell of " + t.QualifiedName()
	if static {
		what = "a static cell of " + t.QualifiedName()
	}
	// Its rows are records, not the table's type, which would make the
	// function a dependent of the table that DROP TABLE refuses to drop.
	return functionSQL(t.WinsFunction(static), "t record, n record, cell int8", "boolean IMMUTABLE PARALLEL SAFE",
		t.winsBody(static), "Whether "+what+" written (n) replaces the one stored (t) when their write times tie, "+
			"by Cassandra's reconciliation.")
}

// winsBody generates the wins function's body: one branch per cell. A
// cell the function does not know raises (CASE_NOT_FOUND), as a write
// planned for columns the table does not have would.
func (t *Table) winsBody(static bool) string {
	kind := Regular
	if static {
		kind = Static
	}
	var b strings.Builder
	b.WriteString("\nBEGIN\n    CASE cell\n")
	for _, c := range t.Columns {
		if c.Kind != kind {
			continue
		}
		st, err := StorageOf(c.Type)
		if err != nil {
			continue
		}
		fmt.Fprintf(&b, "    WHEN %d THEN RETURN %s;\n", c.WinsKey(), c.cellNames(Quote).rule(st.SortKey, "n", "t"))
	}
	if !static {
		wt, exp := Quote(RowWritetimeColumn), Quote(RowExpiryColumn)
		fmt.Fprintf(&b, "    WHEN %d THEN RETURN cqlpg.cell_wins(n.%[2]s, n.%[3]s, false, NULL, t.%[2]s, t.%[3]s, false, NULL, t.%[4]s); -- row marker\n",
			winsKey(markerCell), wt, exp, Quote(DeletedColumn))
	}
	b.WriteString("    END CASE;\nEND\n")
	return b.String()
}
