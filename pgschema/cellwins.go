package pgschema

import "fmt"

// CellNames are the columns of one cell, and of its row's newest deletion
// time, each already quoted for the statement at hand: Empty is "" when
// the cell's type has no empty flag.
type CellNames struct {
	Value, Writetime, Expiry, Empty, Deleted string
	// Exact is the exact companion (exact.go), "" when there is none.
	Exact string
}

// WinsSQL is the condition under which a written cell replaces the stored
// one in an INSERT ... ON CONFLICT DO UPDATE whose stored row is aliased
// t, by Cassandra's reconciliation (cqlpg.cell_wins, migration 0001).
// sortKey formats a value column as the bytes ties are broken on
// (Storage.SortKey). The empty value is stored as null beside a true
// flag: it is no tombstone, and sorts before every other value.
func (n CellNames) WinsSQL(sortKey string) string {
	v := n.Value
	key := func(alias string) string { return fmt.Sprintf(sortKey, alias+"."+v) }
	if n.Exact != "" {
		// The companion holds CQL bytes, as the sort key gives them.
		key = func(alias string) string {
			return fmt.Sprintf("COALESCE(%s.%s, %s)", alias, n.Exact, fmt.Sprintf(sortKey, alias+"."+v))
		}
	}
	isNull := func(alias string) string { return alias + "." + v + " IS NULL" }
	if n.Empty != "" {
		value := key
		key = func(alias string) string {
			return fmt.Sprintf("CASE WHEN %s.%s THEN ''::bytea ELSE %s END", alias, n.Empty, value(alias))
		}
		isNull = func(alias string) string {
			return fmt.Sprintf("(%[1]s.%[2]s IS NULL AND %[1]s.%[3]s IS NOT TRUE)", alias, v, n.Empty)
		}
	}
	return fmt.Sprintf("cqlpg.cell_wins(excluded.%[2]s, excluded.%[3]s, %[4]s, %[5]s, "+
		"t.%[2]s, t.%[3]s, %[6]s, %[7]s, t.%[8]s)", v, n.Writetime, n.Expiry, isNull("excluded"), key("excluded"),
		isNull("t"), key("t"), n.Deleted)
}

// MarkerWinsSQL is WinsSQL for the row marker, whose write time and
// expiry columns are wt and exp and deletion time column deleted (all
// quoted): a marker has no value, so only the times decide.
func MarkerWinsSQL(wt, exp, deleted string) string {
	return fmt.Sprintf("cqlpg.cell_wins(excluded.%[1]s, excluded.%[2]s, false, NULL, t.%[1]s, t.%[2]s, false, NULL, t.%[3]s)",
		wt, exp, deleted)
}
