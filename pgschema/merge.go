package pgschema

import (
	"fmt"
	"strings"
	"time"
)

// Anti-entropy repair compares a token range of a table on its replicas
// and merges what differs, by the same rules every write reconciles with,
// so that merging replica A into B and B into A leaves both holding the
// reconciled union, whatever the order, and merging twice changes
// nothing. The statements here are the storage side of it; the gateway
// chooses the ranges and the replicas (gateway/repair).
//
// Rows travel as JSON text: a json array of objects keyed by Postgres
// column name, read with json_agg and written back through
// json_populate_recordset of the receiving table's row type. json, not
// jsonb, because jsonb keeps numbers as numeric, which has no -0.0; json
// keeps each value's output text, which every type cqlpg stores reads
// back exactly, with two exceptions: NaNs of real and double precision
// columns arrive as the one NaN Postgres prints, whatever their payload,
// and a jsonb column holding the JSON null would arrive as SQL null (the
// gateway never stores one: its jsonb values are objects and arrays).
// Output text depends on a few session settings, which RepairSettingsSQL
// pins first in the same transaction, so that replicas holding the same
// data send the same text.
//
// A digest hashes exactly that text, per row, so two replicas' digests
// agree when, and only when, repair has nothing to carry between them.
// Expired cells compare as stored: a replica that has swept a cell into
// a tombstone differs from one that has not, and the merge settles it (a
// tombstone beats a live cell of the same write time).
//
// Token ranges here are inclusive, [$1, $2], so that a range can reach
// the smallest token; the ring's (start, end] is [start+1, end].

// RepairPart names one of the Postgres tables holding a CQL table's data,
// in the order a merge applies them: deletions before the rows they
// shadow.
type RepairPart uint8

// The parts, in the order a merge applies them.
const (
	// RepairDeletions is the table of partition and range deletions.
	RepairDeletions RepairPart = iota
	// RepairStatic is the table of static cells, one row per partition.
	RepairStatic
	// RepairRows is the main table.
	RepairRows
	// NumRepairParts counts the parts a table can have.
	NumRepairParts = 3
)

// String names the part as logs show it.
func (p RepairPart) String() string {
	return [...]string{"deletions", "static", "rows"}[p]
}

// RepairSettingsSQL fixes, until the end of the transaction, the session
// settings that the JSON text of values depends on: the time zone of
// timestamps, the digits of floats (shortest exact) and the form of
// bytea. It turns JIT compilation off: the merge's long expressions,
// costed high for their rarely run tie-breaking subqueries, would be
// compiled for seconds to run for milliseconds. And it bounds waiting for
// a lock to RepairLockTimeout: a merge locks many rows, in its own order,
// and a client's transaction locking some of them in another order must
// not wait for it, nor lose a deadlock to it (Postgres looks for
// deadlocks after deadlock_timeout, a second by default), so the merge
// gives up first and is retried. It returns no rows. Every statement of
// this file runs after it, in one transaction.
const RepairSettingsSQL = `SELECT FROM (SELECT set_config('TimeZone', 'UTC', true) AS a, ` +
	`set_config('extra_float_digits', '1', true) AS b, set_config('bytea_output', 'hex', true) AS c, ` +
	`set_config('jit', 'off', true) AS d, set_config('lock_timeout', '200ms', true) AS e) AS s ` +
	`WHERE concat(s.a, s.b, s.c, s.d, s.e) IS NULL`

// RepairLockTimeout is the lock_timeout RepairSettingsSQL sets.
const RepairLockTimeout = 200 * time.Millisecond

// HasPart reports whether t has the part.
func (t *Table) HasPart(p RepairPart) bool {
	switch p {
	case RepairDeletions:
		return len(t.Clustering) > 0
	case RepairStatic:
		return t.HasStatic()
	}
	return true
}

// partIdent returns the quoted name of one of t's Postgres tables.
func (t *Table) partIdent(p RepairPart) string {
	switch p {
	case RepairDeletions:
		return t.DeletionsIdent()
	case RepairStatic:
		return t.StaticIdent()
	}
	return t.Ident()
}

// sortCol is one column of a part's unique key, in the key's order.
type sortCol struct {
	name string
	desc bool
}

// partKey returns the columns of a part's unique key, in index order.
func (t *Table) partKey(p RepairPart) []sortCol {
	key := []sortCol{{name: TokenColumn}}
	switch p {
	case RepairDeletions:
		for _, c := range t.PartitionKey {
			key = append(key, sortCol{name: c.PGName})
		}
		key = append(key, sortCol{name: PrefixColumn})
		for i := range t.Clustering {
			for _, bound := range []string{"", "lo", "hi"} {
				key = append(key, sortCol{name: DeletionColumn(i, bound)})
			}
		}
		return append(key, sortCol{name: LoInclColumn}, sortCol{name: HiInclColumn})
	case RepairStatic:
		for _, c := range t.PartitionKey {
			key = append(key, sortCol{name: c.PGName})
		}
		return key
	}
	for _, c := range t.KeyColumns() {
		key = append(key, sortCol{name: c.SortColumn(), desc: c.Desc})
	}
	return key
}

// RepairKey names the columns identifying a row of the part, as the JSON
// objects of ReadRepairSQL key them.
func (t *Table) RepairKey(p RepairPart) []string {
	var names []string
	for _, c := range t.partKey(p) {
		names = append(names, c.name)
	}
	return names
}

// cellColumns are a regular or static column's Postgres columns.
type cellColumns struct {
	value, wt, exp, empty, exact string
	sortKey                      string // Storage.SortKey
	// column is set for a column with a cell per element (cells.go),
	// whose value merges element by element.
	column *Column
}

func (t *Table) cells(kind ColumnKind) []cellColumns {
	var out []cellColumns
	for _, c := range t.Columns {
		if c.Kind != kind {
			continue
		}
		st, _ := StorageOf(c.Type) // the table was built from checked types
		cc := cellColumns{value: c.PGName, wt: c.WritetimeColumn(), exp: c.ExpiryColumn(),
			empty: c.EmptyColumn(), exact: c.ExactColumn(), sortKey: st.SortKey}
		if c.HasCells() {
			cc.column = c
		}
		out = append(out, cc)
	}
	return out
}

// names lists the cell's Postgres columns, its write time last.
func (c cellColumns) names() []string {
	n := []string{c.value, c.exp}
	if c.empty != "" {
		n = append(n, c.empty)
	}
	if c.exact != "" {
		n = append(n, c.exact)
	}
	if c.column != nil {
		n = append(n, c.column.CellsColumn())
	}
	return append(n, c.wt)
}

// isNull is the condition for the cell to be a tombstone (or unwritten):
// no value, and not the empty value.
func (c cellColumns) isNull(alias string) string {
	if c.empty == "" {
		return qual(alias, c.value) + " IS NULL"
	}
	return fmt.Sprintf("(%s IS NULL AND %s IS NOT TRUE)", qual(alias, c.value), qual(alias, c.empty))
}

// key is the cell's value as the bytes ties are broken on.
func (c cellColumns) key(alias string) string {
	k := fmt.Sprintf(c.sortKey, qual(alias, c.value))
	if c.exact != "" {
		k = fmt.Sprintf("COALESCE(%s, %s)", qual(alias, c.exact), k)
	}
	if c.empty == "" {
		return k
	}
	return fmt.Sprintf("CASE WHEN %s THEN ''::bytea ELSE %s END", qual(alias, c.empty), k)
}

// partColumns lists the Postgres columns of a part.
func (t *Table) partColumns(p RepairPart) []string {
	var cols []string
	switch p {
	case RepairDeletions:
		return append(t.RepairKey(p), DeletedColumn)
	case RepairStatic:
		cols = append(t.RepairKey(p), DeletedColumn)
		for _, c := range t.PartitionKey {
			if x := c.ExactColumn(); x != "" {
				cols = append(cols, x)
			}
		}
		for _, c := range t.cells(Static) {
			cols = append(cols, c.names()...)
		}
		return cols
	}
	cols = []string{TokenColumn}
	for _, c := range t.KeyColumns() {
		cols = append(cols, c.PGName)
		if o := c.OrderColumn(); o != "" {
			cols = append(cols, o)
		}
		if x := c.ExactColumn(); x != "" {
			cols = append(cols, x)
		}
	}
	cols = append(cols, RowWritetimeColumn, RowExpiryColumn, DeletedColumn)
	for _, c := range t.cells(Regular) {
		cols = append(cols, c.names()...)
	}
	if t.HasBaseCells() {
		cols = append(cols, BaseCellsColumn)
	}
	return cols
}

// quals qualifies and joins column names.
func quals(alias string, names []string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = qual(alias, n)
	}
	return strings.Join(out, ", ")
}

// quoteAll quotes and joins column names.
func quoteAll(names []string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = Quote(n)
	}
	return strings.Join(out, ", ")
}

// orderBy is a part's key order, on columns of alias.
func (t *Table) orderBy(p RepairPart, alias string) string {
	var out []string
	for _, c := range t.partKey(p) {
		o := qual(alias, c.name)
		if c.desc {
			o += " DESC"
		}
		out = append(out, o)
	}
	return strings.Join(out, ", ")
}

// inRange selects the rows of alias in the token range [$1, $2].
func inRange(alias string) string {
	return qual(alias, TokenColumn) + " BETWEEN $1::bigint AND $2::bigint"
}

// DigestSQL returns the statement digesting t's data in the token range
// [$1, $2] (bigint), split into buckets that start at the tokens of $3
// (bigint[], ascending, its first element $1). It returns one row per
// part and bucket holding data: the part (smallint, a RepairPart), the
// bucket (integer, 1 for the one starting at $3[1]), the number of rows
// (bigint), the XOR over the rows of each half of the md5 of the row's
// JSON text (two bigints), and the smallest and largest token holding
// rows (bigint), which let a repair narrow a bucket to where its rows
// are. Replicas holding the same data return the same rows; an XOR needs
// no sort, so the statement reads each table once, in any order.
func (t *Table) DigestSQL() string {
	var parts []string
	for p := range RepairPart(NumRepairParts) {
		if !t.HasPart(p) {
			continue
		}
		parts = append(parts, fmt.Sprintf(`SELECT %d::smallint, width_bucket(h."_token", $3::bigint[]), count(*),
    bit_xor(('x' || substr(h.h, 1, 16))::bit(64)::bigint), bit_xor(('x' || substr(h.h, 17, 16))::bit(64)::bigint),
    min(h."_token"), max(h."_token")
FROM (SELECT r."_token", md5(row_to_json(r)::text) AS h FROM (SELECT %s FROM %s AS x WHERE %s) AS r) AS h
GROUP BY 2`, p, quals("x", t.partColumns(p)), t.partIdent(p), inRange("x")))
	}
	return strings.Join(parts, "\nUNION ALL\n")
}

// ReadRepairSQL returns the statement reading t's data in the token range
// [$1, $2] (bigint), at most $3 (bigint) rows of each part: one row of
// NumRepairParts json arrays, one per part in RepairPart order (null
// when the part has no rows there or the table does not have it), each
// of objects keyed by Postgres column name, in key order. MergeSQL takes
// them as they are.
func (t *Table) ReadRepairSQL() string {
	var cols []string
	for p := range RepairPart(NumRepairParts) {
		if !t.HasPart(p) {
			cols = append(cols, "NULL::json")
			continue
		}
		cols = append(cols, fmt.Sprintf("(SELECT json_agg(r ORDER BY %s) FROM (SELECT %s FROM %s AS x WHERE %s ORDER BY %s LIMIT $3::bigint) AS r)",
			t.orderBy(p, "r"), quals("x", t.partColumns(p)), t.partIdent(p), inRange("x"), t.orderBy(p, "x")))
	}
	return "SELECT " + strings.Join(cols, ",\n    ")
}

// PageRepairSQL returns the statement reading one page of a part of t in
// the token range [$1, $2] (bigint), in key order, for ranges too large
// to read at once. It returns one row: the json array of the page, as
// ReadRepairSQL gives it, and the last token the page covers.
//
// A page of the deletions or the static table holds at least $3 (bigint)
// rows, or all that are left, and ends with a whole token, so that the
// next page starts at the token after the one returned. A page of the
// main table holds at most $3 rows, and may end inside a partition: the
// next page is asked for with $4 (json), the last row of this one; the
// token returned is null.
func (t *Table) PageRepairSQL(p RepairPart) string {
	cols, ident := quals("x", t.partColumns(p)), t.partIdent(p)
	if p != RepairRows {
		return fmt.Sprintf(`WITH e AS MATERIALIZED (
    SELECT coalesce((SELECT x."_token" FROM %[2]s AS x WHERE %[3]s ORDER BY x."_token" OFFSET $3::bigint - 1 LIMIT 1), $2::bigint) AS tok
)
SELECT (SELECT json_agg(r ORDER BY %[4]s) FROM (SELECT %[1]s FROM %[2]s AS x
    WHERE x."_token" BETWEEN $1::bigint AND (SELECT tok FROM e)) AS r), (SELECT tok FROM e)`,
			cols, ident, inRange("x"), t.orderBy(p, "r"))
	}
	key := t.partKey(p)
	after := func(i int) string { return fmt.Sprintf("(SELECT %s FROM a)", qual("a", key[i].name)) }
	// The rows after the last one read: a greater key in the index's
	// order, column by column (DESC columns decreasing). The token's own
	// bound comes first, where the index can start from it.
	var keyset string
	for i := len(key) - 1; i >= 0; i-- {
		op := ">"
		if key[i].desc {
			op = "<"
		}
		cmp := fmt.Sprintf("%s %s %s", qual("x", key[i].name), op, after(i))
		if keyset == "" {
			keyset = cmp
			continue
		}
		keyset = fmt.Sprintf("(%s OR (%s = %s AND %s))", cmp, qual("x", key[i].name), after(i), keyset)
	}
	return fmt.Sprintf(`WITH a AS MATERIALIZED (SELECT * FROM json_populate_record(NULL::%[2]s, $4::json))
SELECT (SELECT json_agg(r ORDER BY %[3]s) FROM (SELECT %[1]s FROM %[2]s AS x
    WHERE %[4]s AND x."_token" >= coalesce(%[5]s, $1::bigint) AND (%[5]s IS NULL OR %[6]s)
    ORDER BY %[7]s LIMIT $3::bigint) AS r), NULL::bigint`,
		cols, ident, t.orderBy(p, "r"), inRange("x"), after(0), keyset, t.orderBy(p, "x"))
}
