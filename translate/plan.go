package translate

import (
	"github.com/cqlpg/cqlpg/pgschema"
)

// Plan is a statement ready to run. Plans are data: they name what to
// read or write and carry the SQL built once at planning time; the gateway
// fills in values at execution. A plan is immutable and shared by every
// execution of its prepared statement.
type Plan interface {
	// Meta returns what PREPARED reports about the statement.
	Meta() *Metadata
}

// ColumnSpec names and types one bind variable or result column.
type ColumnSpec struct {
	Keyspace, Table, Name string
	Type                  *pgschema.Type
	// Column is the table column a bind variable is bound to directly,
	// which is what makes it count for pk_indexes; nil otherwise.
	Column *pgschema.Column
}

// Metadata describes a statement's bind variables and result columns.
type Metadata struct {
	Variables []ColumnSpec
	// PKIndexes lists, for each partition key column in order, the index
	// of the variable bound to it, or is empty when some partition key
	// column is not bound by a marker of its own (Cassandra's rule).
	PKIndexes []uint16
	Result    []ColumnSpec
}

// Meta implements Plan.
func (m *Metadata) Meta() *Metadata { return m }

// Value is one value of a statement: a bind marker's value, or a constant
// serialized at planning time.
type Value struct {
	// Marker is the index of the bind variable, or -1 for a constant.
	Marker int
	// Const is the constant's CQL serialization; nil means null.
	Const []byte
}

// constValue returns a constant value.
func constValue(b []byte) Value { return Value{Marker: -1, Const: b} }

// Bound holds the values bound to a statement's markers, in marker order.
// A nil value is null; Unset, when not nil, marks the values the client
// left unset.
type Bound struct {
	Values [][]byte
	Unset  []bool
}

// Get returns a value's bytes and whether it is unset.
func (b *Bound) Get(v Value) (data []byte, unset bool) {
	if v.Marker < 0 {
		return v.Const, false
	}
	if b.Unset != nil && b.Unset[v.Marker] {
		return nil, true
	}
	return b.Values[v.Marker], false
}

// Use switches the connection's keyspace.
type Use struct {
	Metadata
	Keyspace string
}

// SchemaChange is a DDL statement, with what SCHEMA_CHANGE reports.
type SchemaChange struct {
	Metadata
	// Statement is the parsed DDL; the gateway applies it to every shard.
	Statement Statement
	// Keyspace is the keyspace the change applies to; for tables, Table
	// and the built table definition are also set.
	Keyspace string
	Table    string
	// NewKeyspace and NewTable describe what CREATE makes.
	NewKeyspace *pgschema.Keyspace
	NewTable    *pgschema.Table
}

// Batch is a batch of writes sharing one timestamp.
type Batch struct {
	Metadata
	Kind      BatchKind
	Timestamp *Value
	Writes    []*Write
}
