package pgschema

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

// A table with clustering columns keeps its partition and range
// deletions in a companion table, <t>$deletions: one row per deleted
// partition, clustering prefix or slice, with the deletion's timestamp.
// A deletion also marks the rows that exist when it runs (_del_wt); the
// record is for rows written later with an older timestamp, which it
// shadows as Cassandra's range tombstones do. A write reads the newest
// deletion covering its row in the same statement.
//
// Columns: _token and the partition key; _prefix, the number of leading
// clustering columns fixed by = (ck$1, ck$2... hold their values, in the
// form the main table's sort columns hold them); a slice of the next
// clustering column between ck$N$lo and ck$N$hi (null for an open end),
// inclusive per _lo_incl and _hi_incl; and _del_wt.
const (
	PrefixColumn    = "_prefix"
	LoInclColumn    = "_lo_incl"
	HiInclColumn    = "_hi_incl"
	deletionsSuffix = "$deletions"
)

// DeletionsPGName names the table's deletions companion table.
func (t *Table) DeletionsPGName() string { return t.PGName + deletionsSuffix }

// DeletionsIdent returns the quoted name of the deletions table, or "" for
// a table without clustering columns, whose deletions are row deletions.
func (t *Table) DeletionsIdent() string {
	if len(t.Clustering) == 0 {
		return ""
	}
	return pgx.Identifier{t.PGSchema, t.DeletionsPGName()}.Sanitize()
}

// Relations returns the quoted names of the Postgres tables that hold the
// table's data, each with a token column: the table, its static companion
// and its deletions companion, when it has them.
func (t *Table) Relations() []string {
	out := []string{t.Ident()}
	if t.HasStatic() {
		out = append(out, t.StaticIdent())
	}
	if d := t.DeletionsIdent(); d != "" {
		out = append(out, d)
	}
	return out
}

// DeletionLockSQL returns the statement a partition or range deletion,
// or a merge bringing deletions, runs first in its transaction. A write
// creating a row finds the deletions covering it in its statement's
// snapshot, and a deletion marks the rows in its own: run side by side,
// neither would see the other, and the row would escape the deletion
// for good. SHARE ROW EXCLUSIVE waits for the writes to the table in
// progress (ROW EXCLUSIVE, which Postgres takes before a statement's
// snapshot) and holds new ones until the deletion commits, so that each
// sees the other; deletions of one table take their turns. LOCK runs in
// a DO block: at top level Postgres wants an explicit transaction block,
// which a pipeline's implicit transaction is not; the lock lasts to the
// transaction's end all the same.
func (t *Table) DeletionLockSQL() string {
	return "DO " + quoteLiteral("BEGIN LOCK TABLE "+t.Ident()+" IN SHARE ROW EXCLUSIVE MODE; END")
}

// DeletionColumn names the deletions table's column holding clustering
// column i's value (bound "" ), or a slice's "lo" or "hi" bound.
func DeletionColumn(i int, bound string) string {
	name := "ck$" + strconv.Itoa(i+1)
	if bound != "" {
		name += "$" + bound
	}
	return name
}

// sortType is the Postgres type of a key column's sort column.
func sortType(c *Column) string {
	if c.OrderColumn() != "" {
		return "bytea"
	}
	st, _ := StorageOf(c.Type)
	return st.SQL
}

func (t *Table) createDeletionsSQL() []string {
	if len(t.Clustering) == 0 {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE TABLE %s (\n    %s bigint NOT NULL", t.DeletionsIdent(), Quote(TokenColumn))
	key := []string{Quote(TokenColumn)}
	for _, c := range t.PartitionKey {
		b.WriteString(",\n    " + columnDDL(c))
		key = append(key, Quote(c.PGName))
	}
	fmt.Fprintf(&b, ",\n    %s smallint NOT NULL", Quote(PrefixColumn))
	key = append(key, Quote(PrefixColumn))
	for i, c := range t.Clustering {
		typ := sortType(c)
		for _, bound := range []string{"", "lo", "hi"} {
			fmt.Fprintf(&b, ",\n    %s %s", Quote(DeletionColumn(i, bound)), typ)
			key = append(key, Quote(DeletionColumn(i, bound)))
		}
	}
	fmt.Fprintf(&b, ",\n    %s boolean NOT NULL,\n    %s boolean NOT NULL,\n    %s bigint NOT NULL\n)",
		Quote(LoInclColumn), Quote(HiInclColumn), Quote(DeletedColumn))
	key = append(key, Quote(LoInclColumn), Quote(HiInclColumn))
	index := Quote(t.DeletionsPGName() + "$key")
	return []string{
		b.String(),
		fmt.Sprintf("CREATE UNIQUE INDEX %s ON %s (%s) NULLS NOT DISTINCT", index, t.DeletionsIdent(), strings.Join(key, ", ")),
		fmt.Sprintf("COMMENT ON TABLE %s IS %s", t.DeletionsIdent(),
			quoteLiteral("Partition and range deletions of "+t.QualifiedName()+": "+PrefixColumn+
				" leading clustering columns fixed (ck$N), then a slice of the next one (ck$N$lo to ck$N$hi); "+
				"writes no newer than "+DeletedColumn+" to rows they cover do not apply.")),
	}
}
