package pgschema

import (
	"fmt"
	"strings"
)

// MergeSQL returns the statement merging into t data read from another
// replica: $1, $2 and $3 (json) are the deletions, static rows and rows,
// as ReadRepairSQL or PageRepairSQL give them, each possibly null; those
// of a part t does not have are ignored, so the caller declares all three
// as json when it prepares the statement. It returns one row of bigints:
// deletions, static rows and rows merged, and rows already here that an
// arriving deletion shadowed.
//
// Merging follows the reconciliation of writes (cqlpg.cell_wins), read
// as a union of two replicas' states rather than a write into one:
//
//   - a deletion record keeps the greater time;
//   - a row's deletion time (_del_wt) is the greatest of the two rows',
//     and of the deletions here or arriving that cover the row;
//   - each cell, and the row marker, is the winner of the two by
//     cell_wins (two tombstones of one write time keep the later
//     expiry, so that the winner never depends on the direction), and
//     is cleared when no newer than the row's deletion time, as a row
//     deletion clears it;
//   - rows here that no arriving row names, in partitions an arriving
//     deletion covers, take that deletion as a deletion statement would.
//
// The result is the same whichever replica merges into which and in what
// order, and merging the same data again changes nothing. A non-frozen
// collection or user type is one cell here: the newer whole value wins,
// where Cassandra would merge its elements one by one.
func (t *Table) MergeSQL() string {
	var ctes []string
	counts := []string{"0::bigint", "0::bigint", "0::bigint", "0::bigint"}
	deletions := t.HasPart(RepairDeletions)
	if deletions {
		d := t.partIdent(RepairDeletions)
		cols := t.partColumns(RepairDeletions)
		ctes = append(ctes,
			fmt.Sprintf("dr AS MATERIALIZED (SELECT %s FROM json_populate_recordset(NULL::%s, $1::json) AS x)", quals("x", cols), d),
			fmt.Sprintf("md AS (INSERT INTO %s AS t (%s) SELECT %s FROM dr AS x\n    ON CONFLICT (%s) DO UPDATE SET %s = GREATEST(%s, excluded.%[5]s) RETURNING 1)",
				d, quoteAll(cols), quals("x", cols), quoteAll(t.RepairKey(RepairDeletions)), Quote(DeletedColumn), qual("t", DeletedColumn)))
		counts[0] = "(SELECT count(*) FROM md)"
	}
	if t.HasPart(RepairStatic) {
		ctes = append(ctes, "ms AS ("+t.mergeStatic()+" RETURNING 1)")
		counts[1] = "(SELECT count(*) FROM ms)"
	}
	cols := t.partColumns(RepairRows)
	ctes = append(ctes,
		fmt.Sprintf("ir AS MATERIALIZED (SELECT %s FROM json_populate_recordset(NULL::%s, $3::json) AS x)", quals("x", cols), t.Ident()),
		"mr AS ("+t.mergeRows(deletions)+" RETURNING 1)")
	counts[2] = "(SELECT count(*) FROM mr)"
	if deletions {
		ctes = append(ctes, t.shadowExisting()...)
		counts[3] = "(SELECT count(*) FROM ur)"
	}
	return "WITH " + strings.Join(ctes, ",\n") + "\nSELECT " + strings.Join(counts, ", ")
}

// clearedBy is the value of column col of alias once a deletion at time
// del has applied: null when the column's write time wt is no newer.
func clearedBy(alias, col, wt, del string) string {
	return fmt.Sprintf("CASE WHEN %s <= %s THEN NULL ELSE %s END", qual(alias, wt), del, qual(alias, col))
}

// mergeItems are the SET items merging the cells (and, on the main
// table, the marker) of excluded into t, given the merged deletion time.
func (t *Table) mergeItems(kind ColumnKind, del string) []string {
	return t.mergeItemsWith(kind, del, del)
}

// mergeItemsWith is mergeItems with the deletion time that clears the
// marker (markerDel) apart from the one that clears cells (cellDel): a
// view row whose deletion shadows its marker only (StrictLiveness) keeps
// its cells, with cellDel "NULL".
func (t *Table) mergeItemsWith(kind ColumnKind, markerDel, cellDel string) []string {
	var set []string
	del := cellDel
	pick := func(wins, wt string, cols []string) {
		for _, col := range cols {
			set = append(set, fmt.Sprintf("%s = CASE WHEN %s THEN %s ELSE %s END", Quote(col), wins,
				clearedBy("excluded", col, wt, del), clearedBy("t", col, wt, del)))
		}
	}
	if kind == Regular {
		wins := fmt.Sprintf("cqlpg.cell_wins(%s, %s, false, NULL, %s, %s, false, NULL, NULL)",
			qual("excluded", RowWritetimeColumn), qual("excluded", RowExpiryColumn),
			qual("t", RowWritetimeColumn), qual("t", RowExpiryColumn))
		del = markerDel
		pick(wins, RowWritetimeColumn, []string{RowExpiryColumn, RowWritetimeColumn})
		del = cellDel
		if t.HasBaseCells() {
			set = append(set, fmt.Sprintf("%s = cqlpg.view_cells_merge(%s, %s, %s)", Quote(BaseCellsColumn),
				qual("t", BaseCellsColumn), qual("excluded", BaseCellsColumn), del))
		}
	}
	for _, c := range t.cells(kind) {
		if c.column != nil {
			set = append(set, c.column.cellsMergeItems(del)...)
			continue
		}
		e, o := "excluded", "t"
		// cell_wins settles every tie but one: two tombstones of one
		// write time, which the later expiry decides here, so that the
		// winner does not depend on which side is merged into which.
		wins := fmt.Sprintf("(cqlpg.cell_wins(%s, %s, %s, %s, %s, %s, %s, %s, NULL) OR "+
			"(%[1]s = %[5]s AND %[3]s AND %[7]s AND coalesce(%[2]s, -1) > coalesce(%[6]s, -1)))",
			qual(e, c.wt), qual(e, c.exp), c.isNull(e), c.key(e), qual(o, c.wt), qual(o, c.exp), c.isNull(o), c.key(o))
		pick(wins, c.wt, c.names())
	}
	return set
}

// arriving returns the select list of an arriving part's rows (alias s),
// each cell and marker cleared when no newer than the deletion time del.
func (t *Table) arriving(p RepairPart, del string) string {
	kind := Regular
	if p == RepairStatic {
		kind = Static
	}
	cleared := map[string]string{DeletedColumn: del}
	if p == RepairRows {
		cleared[RowWritetimeColumn] = clearedBy("s", RowWritetimeColumn, RowWritetimeColumn, del)
		cleared[RowExpiryColumn] = clearedBy("s", RowExpiryColumn, RowWritetimeColumn, del)
	}
	for _, c := range t.cells(kind) {
		if t.StrictLiveness() {
			break // a view row's deletion shadows its marker, not its cells
		}
		for _, col := range c.names() {
			cleared[col] = clearedBy("s", col, c.wt, del)
		}
		if c.column != nil {
			cleared[c.value], cleared[c.column.CellsColumn()] = c.column.CellsClearedSQL("s", del, Quote)
		}
	}
	var out []string
	for _, col := range t.partColumns(p) {
		if v, ok := cleared[col]; ok {
			out = append(out, v)
		} else {
			out = append(out, qual("s", col))
		}
	}
	return strings.Join(out, ", ")
}

// mergeStatic merges arriving static rows ($2): a partition deletion
// reaches them through their own _del_wt, which every partition deletion
// sets.
func (t *Table) mergeStatic() string {
	s := t.partIdent(RepairStatic)
	del := fmt.Sprintf("GREATEST(%s, excluded.%s)", qual("t", DeletedColumn), Quote(DeletedColumn))
	set := append([]string{Quote(DeletedColumn) + " = " + del}, t.mergeItems(Static, del)...)
	return fmt.Sprintf("INSERT INTO %[1]s AS t (%[2]s)\n    SELECT %[3]s FROM json_populate_recordset(NULL::%[1]s, $2::json) AS s\n    ON CONFLICT (%[4]s) DO UPDATE SET %[5]s",
		s, quoteAll(t.partColumns(RepairStatic)), t.arriving(RepairStatic, qual("s", DeletedColumn)),
		quoteAll(t.RepairKey(RepairStatic)), strings.Join(set, ",\n        "))
}

// mergeRows merges the arriving rows (ir). An arriving row takes the
// newest deletion covering it, recorded here or arriving with it, looked
// up once per row (OFFSET 0 keeps the planner from copying the lookup
// into every column that uses it).
func (t *Table) mergeRows(deletions bool) string {
	from, del := "ir AS s", qual("s", DeletedColumn)
	if deletions {
		from = fmt.Sprintf(`ir AS s CROSS JOIN LATERAL (SELECT GREATEST(s."_del_wt", (SELECT max(y.w) FROM (
        SELECT x."_del_wt" AS w FROM %s AS x WHERE %s
        UNION ALL SELECT x."_del_wt" FROM dr AS x WHERE %[2]s) AS y)) AS d OFFSET 0) AS cv`,
			t.partIdent(RepairDeletions), t.covers("x", "s"))
		del = "cv.d"
	}
	merged := fmt.Sprintf("GREATEST(%s, excluded.%s)", qual("t", DeletedColumn), Quote(DeletedColumn))
	cellDel := merged
	if t.StrictLiveness() {
		cellDel = "NULL"
	}
	set := append([]string{Quote(DeletedColumn) + " = " + merged}, t.mergeItemsWith(Regular, merged, cellDel)...)
	return fmt.Sprintf("INSERT INTO %s AS t (%s)\n    SELECT %s FROM %s\n    ON CONFLICT (%s) DO UPDATE SET %s",
		t.Ident(), quoteAll(t.partColumns(RepairRows)), t.arriving(RepairRows, del), from,
		quoteAll(t.RepairKey(RepairRows)), strings.Join(set, ",\n        "))
}

// shadowExisting returns the CTEs applying arriving deletions (dr) to the
// rows here that no arriving row names (those are merged by mergeRows):
// each takes the newest arriving deletion covering it, when newer than
// its own, and drops what it shadows, as a deletion statement would.
// Rows are matched by key, not by ctid, so that a row a concurrent write
// changed meanwhile is still found.
func (t *Table) shadowExisting() []string {
	key := t.RepairKey(RepairRows)
	var same []string
	for _, k := range key {
		same = append(same, fmt.Sprintf("%s = %s", qual("s", k), qual("y", k)))
	}
	var match []string
	for _, k := range key {
		match = append(match, fmt.Sprintf("%s = %s", qual("t", k), qual("c", k)))
	}
	set := []string{fmt.Sprintf("%s = GREATEST(%s, c.w)", Quote(DeletedColumn), qual("t", DeletedColumn))}
	set = append(set,
		fmt.Sprintf("%s = %s", Quote(RowExpiryColumn), clearedBy("t", RowExpiryColumn, RowWritetimeColumn, "c.w")),
		fmt.Sprintf("%s = %s", Quote(RowWritetimeColumn), clearedBy("t", RowWritetimeColumn, RowWritetimeColumn, "c.w")))
	for _, c := range t.cells(Regular) {
		if c.column != nil {
			value, cells := c.column.CellsClearedSQL("t", "c.w", Quote)
			set = append(set, fmt.Sprintf("%s = %s", Quote(c.value), value), fmt.Sprintf("%s = %s", Quote(c.column.CellsColumn()), cells),
				fmt.Sprintf("%s = %s", Quote(c.exp), clearedBy("t", c.exp, c.wt, "c.w")),
				fmt.Sprintf("%s = %s", Quote(c.wt), clearedBy("t", c.wt, c.wt, "c.w")))
			continue
		}
		for _, col := range c.names() {
			set = append(set, fmt.Sprintf("%s = %s", Quote(col), clearedBy("t", col, c.wt, "c.w")))
		}
	}
	newer := func(a, w string) string {
		return fmt.Sprintf("(%s IS NULL OR %[1]s < %s)", qual(a, DeletedColumn), w)
	}
	return []string{
		fmt.Sprintf(`cov AS (
    SELECT %s, max(x."_del_wt") AS w
    FROM dr AS x JOIN %s AS y ON %s
    WHERE %s AND NOT EXISTS (SELECT FROM ir AS s WHERE %s)
    GROUP BY %[1]s)`, quals("y", key), t.Ident(), t.covers("x", "y"), newer("y", `x."_del_wt"`), strings.Join(same, " AND ")),
		fmt.Sprintf("ur AS (UPDATE %s AS t SET %s\n    FROM cov AS c WHERE %s AND %s RETURNING 1)",
			t.Ident(), strings.Join(set, ",\n        "), strings.Join(match, " AND "), newer("t", "c.w")),
	}
}

// covers is the condition for the deletion record x to cover the row y (a
// row of the main table, or one arriving): the same partition, and the
// row within the record's clustering prefix and slice. The gateway's
// writes check the same condition (translate's coveringDeletion).
func (t *Table) covers(x, y string) string {
	cond := []string{fmt.Sprintf("%s = %s", qual(x, TokenColumn), qual(y, TokenColumn))}
	for _, c := range t.PartitionKey {
		cond = append(cond, fmt.Sprintf("%s = %s", qual(x, c.PGName), qual(y, c.PGName)))
	}
	prefix, loIncl, hiIncl := qual(x, PrefixColumn), qual(x, LoInclColumn), qual(x, HiInclColumn)
	for i, c := range t.Clustering {
		v := qual(y, c.SortColumn())
		eq, lo, hi := qual(x, DeletionColumn(i, "")), qual(x, DeletionColumn(i, "lo")), qual(x, DeletionColumn(i, "hi"))
		cond = append(cond,
			// the first _prefix clustering columns equal the record's
			fmt.Sprintf("(%s <= %d OR %s = %s)", prefix, i, eq, v),
			// the next one within the slice, if any
			fmt.Sprintf("(%[1]s <> %[2]d OR ((%[3]s IS NULL OR %[5]s > %[3]s OR (%[6]s AND %[5]s = %[3]s)) AND "+
				"(%[4]s IS NULL OR %[5]s < %[4]s OR (%[7]s AND %[5]s = %[4]s))))", prefix, i, lo, hi, v, loIncl, hiIncl))
	}
	return strings.Join(cond, " AND ")
}
