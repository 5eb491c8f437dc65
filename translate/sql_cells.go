package translate

import (
	"fmt"
	"strings"

	sq "github.com/Masterminds/squirrel"

	"github.com/cqlpg/cqlpg/pgschema"
)

// A column with a cell per element (pgschema.Column.HasCells) is written
// as a merge: the write's VALUES carry its value and the cells it makes,
// and ON CONFLICT merges them into the stored row (pgschema/cells.go).
// An overwrite deletes the stored value at the write's time less one, as
// Cassandra's does, and a null value deletes it at the write's time;
// additions, removals and sets of an element, entry or field each make a
// part of the delta.

// Markers stand for the parts of a write in the SQL pgschema builds for
// one, until template puts the parts in their place; Postgres text holds
// no NUL, so no name or literal can contain one.
const (
	markValue   = "\x00v"
	markRemoved = "\x00r"
	markTime    = "\x00w"
	markCleared = "\x00c"
	markNow     = "\x00n"
	markKeys    = "\x00k"
	markClock   = "\x00t"
	markA       = "\x00a"
	markB       = "\x00b"
)

// template returns sql with each marker replaced by its part, as often
// as it occurs, in order.
func template(sql string, parts map[string]sq.Sqlizer) sq.Sqlizer {
	var out []any
	for {
		i := strings.IndexByte(sql, 0)
		if i < 0 {
			return sq.ConcatExpr(append(out, sql)...)
		}
		out = append(out, sql[:i], parts[sql[i:i+2]])
		sql = sql[i+2:]
	}
}

// delta is what a write of a column with cells adds and removes.
type delta struct {
	// add is the value added (the column's storage), or nil.
	add sq.Sqlizer
	// removed is the keys removed (text[]), or nil.
	removed sq.Sqlizer
}

// cellsSQL adds a cell of a column with cells to an upsert.
func cellsSQL(c cell, cols *[]string, vals *[]any, set *[]sq.Sqlizer) {
	col := c.column
	writetime := c.stamp(Param{Kind: ParamWritetime, Value: c.value, Cell: true, Element: -1})
	st, _ := pgschema.StorageOf(col.Type) // the planner has checked it
	// A change that adds nothing adds a null of the column's type, which
	// resolves the merge functions' element type.
	parts := map[string]sq.Sqlizer{markTime: expr("?::int8", writetime), markValue: sq.Expr("NULL::" + st.SQL),
		markRemoved: sq.Expr("NULL"), markCleared: sq.Expr("NULL"), markNow: expr("?", Param{Kind: ParamNow}),
		markClock: expr("?::int8", Param{Kind: ParamClock})}
	if col.IsList() && len(c.changes) > 0 {
		listChangesSQL(c, parts, cols, vals, set)
		return
	}
	if len(c.changes) == 0 {
		param := c.stamp(valueParam(col, c.value))
		parts[markValue] = expr("?", param)
		// An overwrite deletes what was there before the write; a null
		// value deletes it at the write's time.
		parts[markCleared] = expr("CASE WHEN ? IS NULL THEN ?::int8 ELSE ?::int8 - 1 END", param, writetime, writetime)
	} else {
		d := changesDelta(col, c.changes)
		if d.add != nil {
			parts[markValue] = d.add
		}
		if d.removed != nil {
			parts[markRemoved] = d.removed
		}
	}
	removed := markRemoved
	if len(c.changes) <= 1 && (len(c.changes) == 0 || c.changes[0].removed == nil) {
		removed = "NULL" // the value written is the new row's
	}
	live, cells := col.CellsDeltaSQL(markValue, removed, markTime, markCleared)
	if col.IsList() {
		// A list's elements are named at the gateway's clock, or at the
		// write's time when older, so that a value written whole is
		// stored as written whole at its time (cells null), as the bulk
		// loader stores it, and elements added later still come after.
		live, cells = col.ListWholeSQL(markValue, markTime, "LEAST("+markTime+", "+markClock+")")
	}
	*cols = append(*cols, quote(col.PGName), quote(col.CellsColumn()), quote(col.WritetimeColumn()), quote(col.ExpiryColumn()))
	*vals = append(*vals, template(live, parts), template(cells, parts), writetime,
		c.stamp(Param{Kind: ParamExpiry, Value: c.value, Cell: true, Element: -1}))
	for _, item := range col.CellsMergeSQL("t."+quote(pgschema.DeletedColumn), markNow, quote) {
		*set = append(*set, template(item, parts))
	}
}

// changesDelta joins a cell's changes into one delta.
func changesDelta(col *pgschema.Column, changes []change) delta {
	var d delta
	for _, ch := range changes {
		if ch.add != nil {
			if d.add == nil {
				d.add = ch.add
			} else {
				empty := "'{}'"
				if col.Type.Kind == pgschema.Set && !arrayStored(col.Type) {
					empty = "'[]'"
				}
				d.add = sq.ConcatExpr("(coalesce(", d.add, ", "+empty+") || coalesce(", ch.add, ", "+empty+"))")
			}
		}
		if ch.removed != nil {
			if d.removed == nil {
				d.removed = ch.removed
			} else {
				d.removed = sq.ConcatExpr("array_cat(", d.removed, ", ", ch.removed, ")")
			}
		}
	}
	return d
}

// listChangesSQL adds a list changed by appends, prepends, removals and
// sets or deletions by index. A new row takes the appends and prepends;
// an existing one merges the whole change, whose removals and indexes
// name the keys of the stored list's elements.
func listChangesSQL(c cell, parts map[string]sq.Sqlizer, cols *[]string, vals *[]any, set *[]sq.Sqlizer) {
	col := c.column
	live, base := col.StoredSQL(markNow, quote)
	array := arrayStored(col.Type)
	one := "ARRAY[" + markA + "]"
	if !array {
		one = "jsonb_build_array(" + markA + ")"
	}
	var items, keys, removed []sq.Sqlizer // of a new row: items and keys
	var allItems, allKeys []sq.Sqlizer
	for _, ch := range c.changes {
		l := ch.list
		p := map[string]sq.Sqlizer{markA: sq.Expr("NULL"), markB: sq.Expr("NULL"), markTime: parts[markTime], markNow: parts[markNow],
			markClock: parts[markClock]}
		switch {
		case l.index != nil:
			p[markB] = expr("?", *l.index)
			key := template("ARRAY[cqlpg.list_key_at("+base+", "+markB+", "+fmt.Sprint(l.value != nil)+")]", p)
			if l.value == nil {
				removed = append(removed, key)
				continue
			}
			p[markA] = expr("?", *l.value)
			p[markKeys] = key
			allItems = append(allItems, template("CASE WHEN "+markA+" IS NOT NULL THEN "+one+" END", p))
			allKeys = append(allKeys, template("CASE WHEN "+markA+" IS NOT NULL THEN "+markKeys+" END", p))
			removed = append(removed, template("CASE WHEN "+markA+" IS NULL THEN "+markKeys+" END", p))
		case l.remove:
			p[markA] = expr("?", l.items)
			removed = append(removed, template(col.ListFunc("keys_of")+"("+live+", "+base+", "+markA+")", p))
		default:
			p[markA] = expr("?", l.items)
			item, key := template(markA, p), template(col.ListKeysSQL(markA, markClock, l.prepend), p)
			items, keys = append(items, item), append(keys, key)
			allItems, allKeys = append(allItems, item), append(allKeys, key)
		}
	}
	join := func(list []sq.Sqlizer, cat func(a, b sq.Sqlizer) sq.Sqlizer) sq.Sqlizer {
		if len(list) == 0 {
			return sq.Expr("NULL")
		}
		out := list[0]
		for _, x := range list[1:] {
			out = cat(out, x)
		}
		return out
	}
	arrays := func(a, b sq.Sqlizer) sq.Sqlizer { return sq.ConcatExpr("array_cat(", a, ", ", b, ")") }
	values := arrays
	if !array {
		values = func(a, b sq.Sqlizer) sq.Sqlizer {
			return sq.ConcatExpr("(coalesce(", a, ", '[]') || coalesce(", b, ", '[]'))")
		}
	}
	st, _ := pgschema.StorageOf(col.Type) // the planner has checked it
	typed := func(list []sq.Sqlizer) sq.Sqlizer {
		if len(list) == 0 {
			return sq.Expr("NULL::" + st.SQL) // resolves the list functions' element type
		}
		return join(list, values)
	}
	newRow := map[string]sq.Sqlizer{markValue: typed(items), markKeys: join(keys, arrays), markRemoved: sq.Expr("NULL"),
		markTime: parts[markTime], markCleared: sq.Expr("NULL")}
	value, cells := col.ListNewSQL(col.ListDeltaSQL(markValue, markKeys, markRemoved, markTime, markCleared), markTime)
	if len(items) == 1 && len(c.changes) == 1 {
		// One append or prepend: the new row's list is its items.
		value, cells = col.ListAddedSQL(markValue, markKeys, markTime)
	}
	*cols = append(*cols, quote(col.PGName), quote(col.CellsColumn()), quote(col.WritetimeColumn()), quote(col.ExpiryColumn()))
	*vals = append(*vals, template(value, newRow), template(cells, newRow), parts[markTime],
		c.stamp(Param{Kind: ParamExpiry, Value: c.value, Cell: true, Element: -1}))
	whole := map[string]sq.Sqlizer{markValue: typed(allItems), markKeys: join(allKeys, arrays), markRemoved: join(removed, arrays),
		markTime: parts[markTime], markCleared: sq.Expr("NULL"), markNow: parts[markNow]}
	delta := col.ListDeltaSQL(markValue, markKeys, markRemoved, markTime, markCleared)
	for _, item := range col.MergeChangeSQL(delta, "t."+quote(pgschema.DeletedColumn), markNow, quote) {
		*set = append(*set, template(item, whole))
	}
}
