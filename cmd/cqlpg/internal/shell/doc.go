// Package shell runs CQL statements on a gateway and prints their results
// as cqlsh does: rows as a table (names left-aligned, values
// right-aligned, a ----+---- rule, a blank line and "(N rows)"), DESCRIBE
// results as their text, errors as "Name: Error from server: code=...
// [...] message=...". It also splits a script into statements.
package shell
