package pgschema

import "fmt"

// Cassandra keeps a cell per element of a non-frozen set or map, each
// with its own write time: adding
// an element writes its cell, removing one writes a tombstone for it,
// and replicas merge them cell by cell. One write time for the whole
// value loses elements: when one replica missed an addition and another
// missed a later one, whichever value repair keeps lacks an element a
// client was told was written.
//
// Such a column c therefore keeps, beside its live value, its cells in
// c$cells (jsonb, migration 0022): the write time of each live element
// and of each removal, by the element's key, and the time of the last
// deletion or overwrite of the whole value. Every change is a merge:
// a write builds the cells it makes (a delta) and the value it adds, and
// the stored row takes the union (cqlpg.cells_merge), then the live
// value is rebuilt from both sides' elements. Repair merges two
// replicas' rows the same way. c$wt stays the newest write time the
// value has seen, and c$exp the expiry of its latest write, which
// applies to the whole value as before. A value stored before the column
// had cells (null cells) reads as the value written whole at c$wt, and
// cells that say no more than that are stored as null (cqlpg.cells_pack),
// which most collections are. A list's elements are keyed by keys that
// sort as the list does, made from the write time of the statement that
// wrote them (migration 0022). Non-frozen user types keep one write time
// for the whole value.

// suffixCells names the cells companion.
const suffixCells = "$cells"

// HasCells reports whether c keeps a cell per element (c$cells): a
// non-frozen list, set or map.
func (c *Column) HasCells() bool {
	return c.Type.IsCollection() && !c.Type.Frozen
}

// IsList reports whether c is a non-frozen list, whose elements are
// keyed by position keys (migration 0022) rather than by themselves.
func (c *Column) IsList() bool { return c.Type.Kind == List && !c.Type.Frozen }

// CellsColumn names c's cells companion, or "" when it has none.
func (c *Column) CellsColumn() string {
	if !c.HasCells() {
		return ""
	}
	return c.PGName + suffixCells
}

// mergeFunc names the function of migration 0022 that merges two
// values of c with their cells (list_merge and its kin).
func (c *Column) mergeFunc() string {
	switch {
	case c.IsList():
		return c.listFunc("merge")
	case c.Type.Kind == Map:
		return "cqlpg.jmap_merge"
	case arrayStorage(c.Type):
		return "cqlpg.set_merge"
	}
	return "cqlpg.jset_merge"
}

// arrayStorage reports whether a collection is stored as an array.
func arrayStorage(t *Type) bool {
	st, err := StorageOf(t)
	return err == nil && st.SQL != "jsonb"
}

// emptyValue is the literal of c's empty value, which a collection
// never stores: it is null.
func (c *Column) emptyValue() string {
	if c.Type.Kind == Map || arrayStorage(c.Type) {
		return "'{}'"
	}
	return "'[]'"
}

// CellsKeysSQL returns the keys (text[]) of the elements of value, an
// expression of a set's or map's storage.
func (c *Column) CellsKeysSQL(value string) string {
	if c.Type.Kind == Set && arrayStorage(c.Type) {
		return "cqlpg.elem_keys(" + value + ")"
	}
	return "cqlpg.jelem_keys(" + value + ")"
}

// cellsBase returns the cells of the column as row alias holds it, names
// quoted by quote: null cells read as the value written whole at its
// write time, and a value that expired (expired, a condition) as deleted
// then.
func (c *Column) cellsBase(alias, expired string, quote func(string) string) string {
	cells, v, wt := alias+"."+quote(c.CellsColumn()), alias+"."+quote(c.PGName), alias+"."+quote(c.WritetimeColumn())
	if c.IsList() {
		return fmt.Sprintf("cqlpg.cells_base(%s(%s, %s, %s), NULL, %[4]s, %[5]s)", c.listFunc("whole"), v, cells, wt, expired)
	}
	return fmt.Sprintf("cqlpg.cells_base(%s, CASE WHEN %[1]s IS NULL THEN %s END, %s, %s)", cells, c.CellsKeysSQL(v), wt, expired)
}

// StoredSQL returns the stored value of row t, as a write reads it: its
// live value and its cells (now: the request's time, epoch seconds).
func (c *Column) StoredSQL(now string, quote func(string) string) (live, cells string) {
	exp := quote(c.ExpiryColumn())
	return fmt.Sprintf("CASE WHEN t.%s IS NULL OR t.%[1]s > %s THEN t.%s END", exp, now, quote(c.PGName)),
		c.cellsBase("t", fmt.Sprintf("t.%s <= %s", exp, now), quote)
}

// CellsMergeSQL returns the SET items of an INSERT ... ON CONFLICT DO
// UPDATE (stored row t) that merge the written value and its cells
// (excluded) into the stored ones: the union of the cells, less what
// deleted (the row's deletion time) shadows, and the value of the
// elements they keep live; the write time is the newer, the expiry the
// written one's when it is no older. now is the request's time in epoch
// seconds; quote quotes a name for the statement.
func (c *Column) CellsMergeSQL(deleted, now string, quote func(string) string) []string {
	return c.MergeChangeSQL("", deleted, now, quote)
}

// MergeChangeSQL is CellsMergeSQL for a change computed from the stored
// row: delta, a FROM item aliased d with columns v and cells
// (ListDeltaSQL), or "" for the written value.
func (c *Column) MergeChangeSQL(delta, deleted, now string, quote func(string) string) []string {
	v, wt, exp, cells := quote(c.PGName), quote(c.WritetimeColumn()), quote(c.ExpiryColumn()), quote(c.CellsColumn())
	live, base := c.StoredSQL(now, quote)
	arriving, from := "d.v, d.cells", delta+", "
	if delta == "" {
		arriving, from = "excluded."+v+", "+c.cellsBase("excluded", "false", quote), ""
	}
	arrives := fmt.Sprintf("excluded.%s > coalesce(%s, -9223372036854775807 - 1)", wt, deleted)
	newWt := fmt.Sprintf("CASE WHEN %[2]s THEN GREATEST(t.%[1]s, excluded.%[1]s) ELSE t.%[1]s END", wt, arrives)
	return []string{
		fmt.Sprintf("(%s, %s) = (SELECT x.v, x.cells FROM %s%s(%s, %s, %s, %s, %s) AS x)",
			v, cells, from, c.mergeFunc(), live, base, arriving, deleted, newWt),
		fmt.Sprintf("%s = %s", wt, newWt),
		fmt.Sprintf("%[1]s = CASE WHEN %[2]s AND excluded.%[3]s >= coalesce(t.%[3]s, excluded.%[3]s) THEN excluded.%[1]s ELSE t.%[1]s END",
			exp, arrives, wt),
	}
}

// CellsDeltaSQL returns, for the VALUES of a write, the column's live
// value and its cells: the elements of value (an expression of the
// column's storage, or NULL) written at wt, the keys of removed (text[],
// or NULL) removed at wt, and the whole value deleted at cleared (or
// NULL). A null wt writes nothing. removed is "NULL" when nothing is
// removed and value holds each element once: value is then the new
// row's value as it is.
func (c *Column) CellsDeltaSQL(value, removed, wt, cleared string) (live, cells string) {
	if c.IsList() {
		if removed == "NULL" {
			return c.ListWholeSQL(value, wt, wt)
		}
		return c.ListNewSQL(c.ListDeltaSQL(value, c.ListKeysSQL(value, wt, false), removed, wt, cleared), wt)
	}
	delta := fmt.Sprintf("cqlpg.cells_delta(%s, %s, %s, %s)", c.CellsKeysSQL(value), removed, wt, cleared)
	cells = fmt.Sprintf("cqlpg.cells_pack(%s, %s)", delta, wt)
	if removed == "NULL" {
		return fmt.Sprintf("CASE WHEN %s IS NOT NULL THEN NULLIF(%s, %s) END", wt, value, c.emptyValue()), cells
	}
	return fmt.Sprintf("(SELECT x.v FROM %s(NULL, NULL, %s, %s, NULL, %s) AS x)", c.mergeFunc(), value, delta, wt), cells
}

// CellsClearedSQL returns the column's value and cells once a deletion at
// del has applied to row alias: the elements no newer than it dropped.
// The caller clears the write time and expiry when no newer than del.
func (c *Column) CellsClearedSQL(alias, del string, quote func(string) string) (value, cells string) {
	base := c.cellsBase(alias, "false", quote)
	v, cs, wt := alias+"."+quote(c.PGName), alias+"."+quote(c.CellsColumn()), alias+"."+quote(c.WritetimeColumn())
	// A value written whole after the deletion keeps every element.
	keeps := fmt.Sprintf("%s IS NULL OR (%s IS NULL AND %s > %[1]s)", del, cs, wt)
	merge := fmt.Sprintf("FROM %s(%s, %s, NULL, NULL, %s, CASE WHEN %s <= %[4]s THEN NULL ELSE %[5]s END) AS x",
		c.mergeFunc(), v, base, del, wt)
	return fmt.Sprintf("CASE WHEN %s THEN %s ELSE (SELECT x.v %s) END", keeps, v, merge),
		fmt.Sprintf("CASE WHEN %s THEN %s ELSE (SELECT x.cells %s) END", keeps, cs, merge)
}

// cellsMergeItems are the SET items of repair's merge (MergeSQL) for the
// column: the union of both replicas' cells, less what the merged
// deletion time del shadows; the value of the elements they keep live;
// the newer write time, and the expiry of the side that has it (the
// later expiry on a tie). A value that has expired is deleted at its
// write time, as the sweeper would record it. Replicas that agree keep
// what they hold.
func (c *Column) cellsMergeItems(del string) []string {
	v, wt, exp, cells := Quote(c.PGName), Quote(c.WritetimeColumn()), Quote(c.ExpiryColumn()), Quote(c.CellsColumn())
	now := "extract(epoch FROM statement_timestamp())::integer"
	expired := func(a string) string { return fmt.Sprintf("coalesce(%s.%s <= %s, false)", a, exp, now) }
	live := func(a string) string { return fmt.Sprintf("CASE WHEN NOT %s THEN %s.%s END", expired(a), a, v) }
	tb, eb := c.cellsBase("t", expired("t"), Quote), c.cellsBase("excluded", expired("excluded"), Quote)
	newer := fmt.Sprintf("GREATEST(t.%s, excluded.%[1]s)", wt)
	newWt := fmt.Sprintf("CASE WHEN %s <= %s THEN NULL ELSE %[1]s END", newer, del)
	same := fmt.Sprintf("(t.%[1]s, t.%[2]s, t.%[3]s, t.%[4]s) IS NOT DISTINCT FROM (excluded.%[1]s, excluded.%[2]s, excluded.%[3]s, excluded.%[4]s)",
		v, cells, wt, exp)
	return []string{
		// The filters are one-time: the merge runs only where the
		// replicas differ.
		fmt.Sprintf("(%[1]s, %[2]s) = (SELECT t.%[1]s, t.%[2]s WHERE %[3]s UNION ALL SELECT x.v, x.cells "+
			"FROM %[4]s(%[5]s, %[6]s, %[7]s, %[8]s, %[9]s, %[10]s) AS x WHERE NOT %[3]s)", v, cells, same, c.mergeFunc(), live("t"), tb, live("excluded"), eb, del, newWt),
		fmt.Sprintf("%s = %s", wt, newWt),
		fmt.Sprintf("%[1]s = CASE WHEN %[3]s <= %[4]s THEN NULL WHEN excluded.%[2]s > t.%[2]s OR t.%[2]s IS NULL THEN excluded.%[1]s "+
			"WHEN excluded.%[2]s < t.%[2]s OR excluded.%[2]s IS NULL THEN t.%[1]s ELSE GREATEST(t.%[1]s, excluded.%[1]s) END", exp, wt, newer, del),
	}
}

// cellsSwept is the sweeper's SET item for the cells of a value that
// expired (expired, a condition on row alias): the tombstone deletes
// every element at the value's write time. Otherwise the removals and
// the collection's deletion written before the purge cutoff ($2) go, as
// Cassandra purges tombstones past gc_grace.
func (c *Column) cellsSwept(alias, expired string) string {
	cells, wt := qual(alias, c.CellsColumn()), qual(alias, c.WritetimeColumn())
	return fmt.Sprintf("%s = CASE WHEN %s THEN cqlpg.cells_merge(%s, jsonb_build_object('c', %s), NULL) "+
		"WHEN cqlpg.cells_purgeable(%[3]s, $2) THEN cqlpg.cells_purge(%[3]s, $2) ELSE %[3]s END",
		Quote(c.CellsColumn()), expired, cells, wt)
}

// ListFunc names the array or jsonb variant of a list function of
// migration 0022 (list_keys_of, list_merge, ...).
func (c *Column) ListFunc(name string) string { return c.listFunc(name) }

// listFunc names the array or jsonb variant of a list function.
func (c *Column) listFunc(name string) string {
	if arrayStorage(c.Type) {
		return "cqlpg.list_" + name
	}
	return "cqlpg.jlist_" + name
}

// ListKeysSQL returns the keys (text[]) of items, a list value, appended
// (or prepended) by a write whose elements are named at clock time wt.
func (c *Column) ListKeysSQL(items, wt string, prepend bool) string {
	n := "cardinality(" + items + ")"
	if !arrayStorage(c.Type) {
		n = "jsonb_array_length(" + items + ")"
	}
	return fmt.Sprintf("cqlpg.list_keys(%s, %s, md5(%s::text), %t)", wt, n, items, prepend)
}

// ListDeltaSQL returns the FROM item (aliased d, columns v and cells) of
// a list change: items keyed by keys written at wt, the keys removed
// removed at wt, the list deleted at cleared (each an expression, or
// NULL).
func (c *Column) ListDeltaSQL(items, keys, removed, wt, cleared string) string {
	return fmt.Sprintf("%s(%s, %s, %s, %s, %s) AS d", c.listFunc("delta"), items, keys, removed, wt, cleared)
}

// ListWholeSQL returns a new row's list written whole, value and cells:
// value (an expression of the column's storage) written at wt, its
// elements named at keyTime; the cells are what list_merge would pack
// them to ({"k": keyTime}, null when keyTime is wt, the list deleted at
// wt for a null value), without computing them.
func (c *Column) ListWholeSQL(value, wt, keyTime string) (live, cells string) {
	n := "cardinality(" + value + ")"
	if !arrayStorage(c.Type) {
		n = "jsonb_array_length(" + value + ")"
	}
	return fmt.Sprintf("CASE WHEN %s IS NOT NULL THEN NULLIF(%s, %s) END", wt, value, c.emptyValue()),
		fmt.Sprintf("CASE WHEN %[1]s IS NULL THEN NULL WHEN %[2]s IS NULL THEN jsonb_build_object('c', %[1]s) "+
			"WHEN %[3]s = 0 OR %[4]s = %[1]s THEN NULL ELSE jsonb_build_object('k', %[4]s) END", wt, value, n, keyTime)
}

// ListAddedSQL returns a new row's list made by one append or prepend,
// value and cells: items (an expression of the column's storage) keyed
// by keys, written at wt.
func (c *Column) ListAddedSQL(items, keys, wt string) (live, cells string) {
	return fmt.Sprintf("CASE WHEN %s IS NOT NULL THEN NULLIF(%s, %s) END", wt, items, c.emptyValue()),
		fmt.Sprintf("cqlpg.cells_delta(%s, NULL, %s, NULL)", keys, wt)
}

// ListNewSQL returns a new row's list, value and cells, from its change
// (a FROM item, ListDeltaSQL).
func (c *Column) ListNewSQL(delta, wt string) (value, cells string) {
	merge := fmt.Sprintf("FROM %s, %s(NULL, NULL, d.v, d.cells, NULL, %s) AS x", delta, c.listFunc("merge"), wt)
	return "(SELECT x.v " + merge + ")", "(SELECT x.cells " + merge + ")"
}
