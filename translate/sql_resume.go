package translate

import (
	"strings"

	sq "github.com/Masterminds/squirrel"

	"github.com/cqlpg/cqlpg/pgschema"
)

// positionColumn is one column of the key index as a query reads it, and
// the parameter holding its value at a page's position.
type positionColumn struct {
	name  string
	desc  bool
	param Param
}

// afterSQL is the condition that a row of alias comes strictly after the
// position where the previous page ended, in the order the query reads
// rows, on the clustering columns' sort columns (DESC where the clustering
// order says so, flipped for a reversed query) inside the position's
// partition, and in a scan on token and partition key first; a scan that
// does not resume inside the partition (ResumeScanInside) compares
// partitions only, as does the row of a partition holding only static
// data.
//
// Columns read in the same direction compare as one row value, which the
// key index takes as a bound; where the direction changes the condition
// nests: after (a, b) then c DESC is
//
//	(a, b) >= (x, y) AND ((a, b) > (x, y) OR c < z)
//
// where Postgres bounds the index by (a, b) only. A null value past the
// clustering prefix a position holds makes every row inside that prefix
// compare null, so the condition reads what follows the whole prefix.
func (s *Select) afterSQL(alias string, scan, clustering bool) sq.Sqlizer {
	t := s.Table
	var cols []positionColumn
	if scan {
		cols = append(cols, positionColumn{qcol(alias, pgschema.TokenColumn), false, Param{Kind: ParamToken}})
		for i, c := range t.PartitionKey {
			cols = append(cols, positionColumn{qcol(alias, c.PGName), false,
				Param{Kind: ParamKey, Key: i, Column: c, Element: -1}})
		}
	}
	if clustering {
		for j, slot := range s.PositionSlots {
			c := s.Slots[slot].Column
			p := Param{Kind: ParamAfter, Key: j, Column: c, Element: -1}
			if c.OrderColumn() != "" {
				p.Form = FormOrderKey
			}
			cols = append(cols, positionColumn{qcol(alias, c.SortColumn()), c.Desc != s.Reversed, p})
		}
	}
	var runs [][]positionColumn
	for i, c := range cols {
		if i > 0 && c.desc == cols[i-1].desc {
			runs[len(runs)-1] = append(runs[len(runs)-1], c)
			continue
		}
		runs = append(runs, []positionColumn{c})
	}
	return afterRuns(runs)
}

// resumesInside reports whether one statement can resume a scan inside
// the position's partition: when every clustering column a position
// records is read ascending, as token and partition key are, one row
// value over them all bounds the key index. Otherwise the bound would
// stop at the partition key and Postgres would filter the partition's rows
// up to the position.
func (s *Select) resumesInside() bool {
	for _, slot := range s.PositionSlots {
		if s.Slots[slot].Column.Desc != s.Reversed {
			return false
		}
	}
	return true
}

// afterRuns is the condition that a row comes after the position on runs
// of columns, each run read in one direction.
func afterRuns(runs [][]positionColumn) sq.Sqlizer {
	if len(runs) == 1 {
		return compareRun(runs[0], ">")
	}
	return sq.And{compareRun(runs[0], ">="), sq.Or{compareRun(runs[0], ">"), afterRuns(runs[1:])}}
}

// compareRun compares a run of columns with the position's values; op is
// the operator for a run read in ascending order.
func compareRun(run []positionColumn, op string) sq.Sqlizer {
	if run[0].desc {
		op = strings.Replace(op, ">", "<", 1)
	}
	names := make([]string, len(run))
	marks := make([]string, len(run))
	params := make([]Param, len(run))
	for i, c := range run {
		names[i], marks[i], params[i] = c.name, "?", c.param
	}
	if len(run) == 1 {
		return expr(names[0]+" "+op+" ?", params...)
	}
	return expr("("+strings.Join(names, ", ")+") "+op+" ("+strings.Join(marks, ", ")+")", params...)
}
