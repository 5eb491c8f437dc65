package pgschema

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/cqlpg/cqlpg/sharding"
)

// ColumnKind is a column's role in its table, named as system_schema names it.
type ColumnKind uint8

// The column kinds, in the order SELECT * lists them.
const (
	PartitionKey ColumnKind = iota
	Clustering
	Static
	Regular
)

// String returns the kind as system_schema.columns.kind shows it.
func (k ColumnKind) String() string {
	return [...]string{"partition_key", "clustering", "static", "regular"}[k]
}

// ParseColumnKind reads a kind written by String.
func ParseColumnKind(s string) (ColumnKind, bool) {
	for k := PartitionKey; k <= Regular; k++ {
		if k.String() == s {
			return k, true
		}
	}
	return 0, false
}

// Column is one CQL column and the Postgres columns that hold it.
type Column struct {
	Name string
	Type *Type
	Kind ColumnKind
	// Position is the column's place within its key part; -1 for static
	// and regular columns, as in system_schema.
	Position int
	// Desc is set on clustering columns ordered DESC.
	Desc bool
	// PGName is the Postgres column holding the value. Regular and static
	// columns also have PGName+"$wt" (write time, µs) and PGName+"$exp"
	// (expiry, seconds since the epoch) beside it.
	PGName string
	// Index is the column's place in Table.Columns.
	Index int
	// Legacy marks a column created before exact companions (exact.go):
	// it has none, nor, as a date or decimal key, an order key.
	Legacy bool
	// KeyLimit is, for a key column, the longest stored value its table's
	// key index holds as it is (exact.go).
	KeyLimit int
}

// IsKey reports whether c is part of the primary key.
func (c *Column) IsKey() bool { return c.Kind <= Clustering }

// ClusteringOrder returns the order as system_schema.columns shows it.
func (c *Column) ClusteringOrder() string {
	switch {
	case c.Kind != Clustering:
		return "none"
	case c.Desc:
		return "desc"
	}
	return "asc"
}

// OrderColumn names the Postgres column holding a clustering column's
// order key (orderkey.go), or is "" when the value itself sorts as
// Cassandra sorts it.
func (c *Column) OrderColumn() string {
	switch {
	case c.Kind == Clustering && !c.Legacy && exactKind(c.Type.Kind):
		// Every date and decimal has an order key; not every one a
		// natural value.
	case c.Kind != Clustering || !NeedsOrderKey(c.Type):
		return ""
	}
	return c.PGName + suffixOrder
}

// SortColumn names the Postgres column that identifies and orders a key
// column's values: its order key if it has one, else its value.
func (c *Column) SortColumn() string {
	if o := c.OrderColumn(); o != "" {
		return o
	}
	return c.PGName
}

// WritetimeColumn names the Postgres column holding c's write time.
func (c *Column) WritetimeColumn() string { return c.PGName + suffixWritetime }

// ExpiryColumn names the Postgres column holding c's expiry.
func (c *Column) ExpiryColumn() string { return c.PGName + suffixExpiry }

// storedColumns names the Postgres columns that hold the column's cells: its
// value, write time and expiry, the empty-value flag of the types that
// have one, and the exact and cells companions of those that have them.
func (c *Column) storedColumns() []string {
	names := []string{c.PGName, c.WritetimeColumn(), c.ExpiryColumn()}
	if e := c.EmptyColumn(); e != "" {
		names = append(names, e)
	}
	if x := c.ExactColumn(); x != "" {
		names = append(names, x)
	}
	if cells := c.CellsColumn(); cells != "" {
		names = append(names, cells)
	}
	return names
}

// Bookkeeping columns present in every table. They are never CQL columns:
// PGColumnName renames a CQL column that would take one of these names.
const (
	// TokenColumn holds the partition's Murmur3 token.
	TokenColumn = "_token"
	// RowWritetimeColumn and RowExpiryColumn hold the row marker that
	// INSERT writes: a row with a live marker exists even when all its
	// regular columns are null.
	RowWritetimeColumn = "_row_wt"
	RowExpiryColumn    = "_row_exp"
	// DeletedColumn holds the newest row deletion's timestamp; writes
	// older than it do not apply.
	DeletedColumn = "_del_wt"
)

var systemColumns = map[string]bool{
	TokenColumn: true, RowWritetimeColumn: true, RowExpiryColumn: true, DeletedColumn: true,
	PrefixColumn: true, LoInclColumn: true, HiInclColumn: true,
}

// Table is a CQL table and the Postgres table that stores it. Tables are
// immutable once built.
type Table struct {
	Keyspace string
	Name     string
	ID       [16]byte
	// Columns lists every column in the order SELECT * returns them:
	// partition key, clustering columns, then static and regular columns
	// each sorted by name.
	Columns      []*Column
	PartitionKey []*Column
	Clustering   []*Column
	byName       map[string]*Column
	// Options holds the table options (comment, default_time_to_live,
	// ...) as CQL text literals keyed by option name.
	Options map[string]string
	// PGSchema and PGName locate the Postgres table; Virtual tables have
	// none and are answered by the gateway.
	PGSchema, PGName string
	Virtual          bool
	// Indexes are the table's secondary indexes, by name.
	Indexes []*Index
	// Dropped lists the columns dropped from the table.
	Dropped []DroppedColumn
	// View is set when the table is a materialized view (views.go).
	View *View
}

// Index is a secondary index: a Postgres index on the indexed column (or
// on a collection's keys, values or entries).
type Index struct {
	Name string
	// Kind is COMPOSITES for a built-in index and CUSTOM for one created
	// with USING, as system_schema.indexes shows it.
	Kind string
	// Options hold "target" (the column, or keys(c), values(c),
	// entries(c), full(c)) and, for custom indexes, "class_name" and the
	// WITH OPTIONS entries.
	Options map[string]string
}

// Target returns what the index covers, as its "target" option says.
func (i *Index) Target() string { return i.Options["target"] }

// SAIClass is the class Cassandra 5.0 records for a storage-attached
// index, whichever of its names created it.
const SAIClass = "org.apache.cassandra.index.sai.StorageAttachedIndex"

// IsSAI reports whether the index is a storage-attached index, which
// answers ranges and combines with others without filtering.
func (i *Index) IsSAI() bool { return i.Kind == "CUSTOM" && i.Options["class_name"] == SAIClass }

// IndexPrefix is how much of a text or blob value a Postgres index on it
// holds: its first 512 characters or bytes. A B-tree entry holds at most
// 2704 bytes, where Cassandra indexes values up to 64 KiB; a lookup
// compares the prefixes through the index, then the whole values.
const IndexPrefix = 512

// PrefixExpr cuts a text or blob SQL expression of a column of type t to
// IndexPrefix, or returns "" for other types, which need no cut.
func PrefixExpr(t *Type, expr string) string {
	switch t.Kind {
	case Text, Ascii:
		return fmt.Sprintf("left(%s, %d)", expr, IndexPrefix)
	case Blob:
		return fmt.Sprintf("substring(%s from 1 for %d)", expr, IndexPrefix)
	}
	return ""
}

// Fold is how a storage-attached index on text matches values, as a SQL
// template of one %s: lower case when it is not case_sensitive, Unicode
// NFC when it normalizes, folded to ASCII with ascii (migration 0027); ""
// when it matches values as they are.
func (i *Index) Fold() string {
	if !i.IsSAI() {
		return ""
	}
	fold := "%s"
	if strings.EqualFold(i.Options["normalize"], "true") {
		fold = "normalize(" + fold + ", NFC)"
	}
	if strings.EqualFold(i.Options["case_sensitive"], "false") {
		fold = "lower(" + fold + ` COLLATE "und-x-icu")`
	}
	if strings.EqualFold(i.Options["ascii"], "true") {
		fold = "cqlpg.ascii_fold(" + fold + ")"
	}
	if fold == "%s" {
		return ""
	}
	return fold
}

// PGName names the Postgres index.
func (i *Index) PGName() string { return i.Name }

// NewTable builds a table from its columns, in any order; key columns carry
// their Position. It fills in Postgres names, ordering and indexes.
func NewTable(keyspace, name string, id [16]byte, cols []*Column, options map[string]string) *Table {
	t := &Table{Keyspace: keyspace, Name: name, ID: id, Options: options, byName: map[string]*Column{},
		PGSchema: PGSchemaName(keyspace), PGName: name}
	t.Columns = append([]*Column(nil), cols...)
	sort.SliceStable(t.Columns, func(i, j int) bool {
		a, b := t.Columns[i], t.Columns[j]
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		if a.IsKey() {
			return a.Position < b.Position
		}
		return a.Name < b.Name // Go compares strings bytewise, as Cassandra does
	})
	for i, c := range t.Columns {
		c.Index = i
		if c.PGName == "" {
			c.PGName = PGColumnName(c.Name)
		}
		if !c.IsKey() {
			c.Position = -1
		}
		t.byName[c.Name] = c
		switch c.Kind {
		case PartitionKey:
			t.PartitionKey = append(t.PartitionKey, c)
		case Clustering:
			t.Clustering = append(t.Clustering, c)
		}
	}
	t.setKeyLimits()
	return t
}

// Column returns the column with the given CQL name, or nil.
func (t *Table) Column(name string) *Column { return t.byName[name] }

// HasStatic reports whether the table has static columns.
func (t *Table) HasStatic() bool { return hasStatic(t.Columns) }

// hasStatic reports whether cols holds a static column.
func hasStatic(cols []*Column) bool {
	return slices.ContainsFunc(cols, func(c *Column) bool { return c.Kind == Static })
}

// IsCounter reports whether the table's regular columns are counters.
func (t *Table) IsCounter() bool {
	for _, c := range t.Columns {
		if !c.IsKey() && c.Type.IsCounter() {
			return true
		}
	}
	return false
}

// QualifiedName returns "ks.table" with each part quoted as CQL needs, the
// form Cassandra's messages use.
func (t *Table) QualifiedName() string {
	return QuoteIdentifier(t.Keyspace) + "." + QuoteIdentifier(t.Name)
}

// KeyColumns returns the partition key and clustering columns in key order.
func (t *Table) KeyColumns() []*Column {
	return t.Columns[:len(t.PartitionKey)+len(t.Clustering)]
}

// Keyspace is a CQL keyspace: a Postgres schema and a replication setting.
type Keyspace struct {
	Name        string
	Replication sharding.Replication
	// ReplicationFrom is set while a change of Replication streams the
	// data to the replicas it gains: reads still use its replicas, and
	// writes also reach those of Replication (Topology.ChangingPlacement).
	ReplicationFrom *sharding.Replication
	DurableWrites   bool
	PGSchema        string
	Tables          map[string]*Table
	Types           map[string]*Type
	// Functions and Aggregates are the keyspace's user-defined ones
	// (functions.go), by name and argument types.
	Functions  []*Function
	Aggregates []*Aggregate
	Virtual    bool
}

// TableNames returns the keyspace's table names, sorted.
func (k *Keyspace) TableNames() []string {
	names := make([]string, 0, len(k.Tables))
	for n := range k.Tables {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// IsSystemKeyspace reports whether name is one of Cassandra's own keyspaces,
// which cqlpg answers itself.
func IsSystemKeyspace(name string) bool {
	switch name {
	case "system", "system_schema", "system_auth", "system_distributed", "system_traces",
		"system_virtual_schema", "system_views":
		return true
	}
	return false
}
