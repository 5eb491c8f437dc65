package translate

import (
	"encoding/binary"
	"math"

	"github.com/cqlpg/cqlpg/pgschema"
)

// checkDeleteConditions refuses a conditional DELETE that does not name
// whole rows by = or IN when it deletes, or tests, regular columns.
func checkDeleteConditions(w *Write, cells []cell, full bool) error {
	c := w.Conditions
	if c == nil || full {
		return nil
	}
	// Deleting whole rows deletes their regular columns.
	regular := len(cells) == 0
	for _, cl := range cells {
		regular = regular || cl.column.Kind == pgschema.Regular
	}
	if regular {
		return invalidf("DELETE statements must restrict all PRIMARY KEY columns with equality relations in order to delete non static columns")
	}
	// IF EXISTS tests no column in particular.
	for _, cond := range c.Conds {
		regular = regular || cond.Column.Kind == pgschema.Regular
	}
	if regular {
		return invalidf("DELETE statements must restrict all PRIMARY KEY columns with equality relations in order to use IF condition on non static columns")
	}
	return nil
}

// checkAttributes applies Cassandra's checks of a write's USING attributes
// and conditions, in its order.
func checkAttributes(w *Write) error {
	t := w.Table
	switch {
	case w.Conditions != nil && t.IsCounter():
		return invalidf("Conditional updates are not supported on counter tables")
	case w.Conditions != nil && w.Timestamp != nil:
		return invalidf("Cannot provide custom timestamp for conditional updates")
	case t.IsCounter() && w.Timestamp != nil:
		return invalidf("Cannot provide custom timestamp for counter updates")
	case t.IsCounter() && w.TTL != nil:
		return invalidf("Cannot provide custom TTL for counter updates")
	}
	return checkTimestamp(w.Timestamp)
}

// checkTimestamp refuses a constant USING TIMESTAMP of math.MinInt64, which
// Cassandra keeps to mean no timestamp.
func checkTimestamp(v *Value) error {
	if v != nil && v.Marker < 0 && len(v.Const) == 8 && int64(binary.BigEndian.Uint64(v.Const)) == math.MinInt64 {
		return invalidf("Out of bound timestamp, must be in [%d, %d]", int64(math.MinInt64+1), int64(math.MaxInt64))
	}
	return nil
}
