package pgschema

import (
	"fmt"
	"strings"
)

// Expired data is invisible to reads at once; the sweeper removes it from
// Postgres later, in small batches. A batch is one statement over a range
// of the table's heap blocks that locks at most a given number of rows
// needing work (skipping rows that writers hold), then, on each row, still
// holding its lock and checking its condition again:
//
//   - deletes it when it holds nothing live (no live marker, no live cell)
//     and its newest write or deletion time is older than the table's
//     gc_grace_seconds, as Cassandra purges tombstones after gc_grace;
//   - else turns its expired cells into tombstones (value and empty flag
//     null, expiry null, write time kept), as Cassandra's compaction turns
//     expired cells into tombstones, and drops an expired row marker once
//     its write time is older than gc_grace. An expired marker still
//     shadows older INSERTs, as Cassandra's expired liveness info does
//     until it is purged, so it stays until then.
//
// A write racing with a batch either runs first, and the batch sees its
// cells, or waits for the row lock and then applies to the swept row (or
// to a new row where the batch deleted one). The batch also checks that
// the shard's schema version is the one its SQL was built from, so that a
// column added meanwhile is never ignored.

// SweepPart names one of the Postgres tables holding a CQL table's data.
type SweepPart uint8

// The parts a table can have.
const (
	// SweepRows is the main table: row markers, cells and row deletions.
	SweepRows SweepPart = iota
	// SweepStatic is the companion table of static columns.
	SweepStatic
	// SweepDeletions is the companion table of partition and range
	// deletions, which are purged after gc_grace.
	SweepDeletions
)

// String names the part as logs show it.
func (p SweepPart) String() string {
	return [...]string{"rows", "static", "deletions"}[p]
}

// SweepSQL returns the statement sweeping one batch of a part of t, or ""
// when t has no such part. Its parameters: $1 now (epoch seconds, integer,
// as reads use it), $2 the purge cutoff (µs: data written before it is
// past gc_grace), $3 and $4 the first heap block and the block after the
// last, $5 the most rows to change, $6 the schema version the statement
// was built from. It returns one row: rows locked, rows deleted, cells
// expired, row markers dropped, the table's size in blocks, and whether
// the schema version matched (when it did not, nothing was done).
func (t *Table) SweepSQL(part SweepPart) string {
	var name string
	var kind ColumnKind
	switch part {
	case SweepRows:
		name, kind = t.Ident(), Regular
	case SweepStatic:
		if !t.HasStatic() {
			return ""
		}
		name, kind = t.StaticIdent(), Static
	case SweepDeletions:
		if name = t.DeletionsIdent(); name == "" {
			return ""
		}
	}
	var cols []*Column
	if part != SweepDeletions {
		for _, c := range t.Columns {
			if c.Kind == kind {
				cols = append(cols, c)
			}
		}
	}
	sw := sweep{cols: cols, marker: part == SweepRows, deletions: part == SweepDeletions, baseCells: part == SweepRows && t.HasBaseCells()}

	var b strings.Builder
	fmt.Fprintf(&b, `WITH g AS MATERIALIZED (
    SELECT version = $6::uuid AND $1::integer IS NOT NULL AND $2::bigint IS NOT NULL AS current
    FROM cqlpg.schema_version
),
s AS MATERIALIZED (
    SELECT x.ctid AS id, %s AS purge, %s AS cells, %s AS marker
    FROM %s AS x
    WHERE coalesce((SELECT current FROM g), false)
      AND x.ctid >= format('(%%s,0)', $3::bigint)::tid AND x.ctid < format('(%%s,0)', $4::bigint)::tid
      AND (%s OR %s)
    LIMIT $5 FOR UPDATE OF x SKIP LOCKED
), d AS (
    DELETE FROM %s AS t USING s WHERE t.ctid = s.id AND s.purge AND %s RETURNING 1
)`, sw.purge("x"), sw.cells("x"), sw.markerGone("x"), name, sw.purge("x"), sw.expired("x"), name, sw.purge("t"))
	updated := "0::bigint, 0::bigint"
	if set := sw.set("t"); set != "" {
		fmt.Fprintf(&b, `, u AS (
    UPDATE %s AS t SET %s
    FROM s WHERE t.ctid = s.id AND NOT s.purge AND %s RETURNING s.cells, s.marker
)`, name, set, sw.expired("t"))
		updated = "(SELECT coalesce(sum(cells), 0) FROM u), (SELECT count(*) FROM u WHERE marker)"
	}
	fmt.Fprintf(&b, `
SELECT (SELECT count(*) FROM s), (SELECT count(*) FROM d), %s,
    pg_relation_size(%s::regclass) / current_setting('block_size')::bigint,
    coalesce((SELECT current FROM g), false)`, updated, quoteLiteral(name))
	return b.String()
}

// sweep builds the conditions of one part's batch.
type sweep struct {
	cols      []*Column // regular or static columns
	marker    bool      // the part has row markers
	deletions bool      // the part is a deletions table
	baseCells bool      // the part is a view's rows with BaseCellsColumn
}

// qual qualifies a column with a table alias.
func qual(alias, name string) string { return alias + "." + Quote(name) }

// live is the condition for a row to hold something live, as reads see it.
func (s sweep) live(a string) string {
	var or []string
	if s.marker {
		or = append(or, fmt.Sprintf("(%s IS NOT NULL AND (%[2]s IS NULL OR %[2]s > $1))",
			qual(a, RowWritetimeColumn), qual(a, RowExpiryColumn)))
	}
	if s.baseCells {
		or = append(or, fmt.Sprintf("cqlpg.view_cells_live(%s, $1)", qual(a, BaseCellsColumn)))
	}
	for _, c := range s.cols {
		holds := qual(a, c.PGName) + " IS NOT NULL"
		if e := c.EmptyColumn(); e != "" {
			holds = fmt.Sprintf("(%s OR %s IS TRUE)", holds, qual(a, e))
		}
		or = append(or, fmt.Sprintf("(%s AND (%[2]s IS NULL OR %[2]s > $1))", holds, qual(a, c.ExpiryColumn())))
	}
	if len(or) == 0 {
		return "false"
	}
	return "(" + strings.Join(or, " OR ") + ")"
}

// purge is the condition for deleting a row: nothing live, and nothing
// written or deleted since the cutoff.
func (s sweep) purge(a string) string {
	if s.deletions {
		return fmt.Sprintf("(%s < $2)", qual(a, DeletedColumn))
	}
	times := []string{qual(a, DeletedColumn)}
	if s.marker {
		times = append(times, qual(a, RowWritetimeColumn))
	}
	for _, c := range s.cols {
		times = append(times, qual(a, c.WritetimeColumn()))
	}
	return fmt.Sprintf("(NOT %s AND coalesce(GREATEST(%s) < $2, true))", s.live(a), strings.Join(times, ", "))
}

// markerGone is the condition for dropping a row's expired marker.
func (s sweep) markerGone(a string) string {
	if !s.marker {
		return "false"
	}
	return fmt.Sprintf("(%s <= $1 AND %s < $2)", qual(a, RowExpiryColumn), qual(a, RowWritetimeColumn))
}

// expired is the condition for a row to have cells or a marker to sweep,
// or a collection's removals past gc_grace to purge.
func (s sweep) expired(a string) string {
	or := []string{s.markerGone(a)}
	for _, c := range s.cols {
		or = append(or, fmt.Sprintf("%s <= $1", qual(a, c.ExpiryColumn())))
		if cells := c.CellsColumn(); cells != "" {
			or = append(or, fmt.Sprintf("cqlpg.cells_purgeable(%s, $2)", qual(a, cells)))
		}
	}
	return "(" + strings.Join(or, " OR ") + ")"
}

// cells counts a row's expired cells.
func (s sweep) cells(a string) string {
	if len(s.cols) == 0 {
		return "0"
	}
	var sum []string
	for _, c := range s.cols {
		sum = append(sum, fmt.Sprintf("(CASE WHEN %s <= $1 THEN 1 ELSE 0 END)", qual(a, c.ExpiryColumn())))
	}
	return "(" + strings.Join(sum, " + ") + ")"
}

// set returns the SET items that turn expired cells into tombstones and
// drop an expired marker past gc_grace; every item reads the row as it
// was.
func (s sweep) set(a string) string {
	var items []string
	clear := func(cond string, cols ...string) {
		for _, c := range cols {
			items = append(items, fmt.Sprintf("%s = CASE WHEN %s THEN NULL ELSE %s END", Quote(c), cond, qual(a, c)))
		}
	}
	if s.marker {
		clear(s.markerGone(a), RowWritetimeColumn, RowExpiryColumn)
	}
	for _, c := range s.cols {
		cond := qual(a, c.ExpiryColumn()) + " <= $1"
		clear(cond, c.PGName, c.ExpiryColumn())
		if e := c.EmptyColumn(); e != "" {
			clear(cond, e)
		}
		if x := c.ExactColumn(); x != "" {
			clear(cond, x)
		}
		if cells := c.CellsColumn(); cells != "" {
			// The tombstone deletes every element, at the write time.
			items = append(items, c.cellsSwept(a, cond))
		}
	}
	return strings.Join(items, ", ")
}
