package pgschema

// Covers is the condition that the deletion record of alias x (a row of
// t's deletions table) covers the row of alias y, which has the main
// table's token, partition key and sort columns: the bulk loader checks
// staged rows against recorded deletions as a gateway write does.
func (t *Table) Covers(x, y string) string { return t.covers(x, y) }
