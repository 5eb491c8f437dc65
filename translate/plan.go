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
	// Computed lists the values computed at each execution, in order;
	// value i takes index len(Variables)+i.
	Computed []Computation
	// Functions are the user-defined functions and aggregates the
	// statement calls, on which its role needs EXECUTE.
	Functions []Resource
}

// Computation is a value computed at execution from other values.
type Computation interface {
	// Compute returns the value, or unset.
	Compute(b *Bound, ctx *EvalContext) (v []byte, unset bool, err error)
}

// Meta implements Plan.
func (m *Metadata) Meta() *Metadata { return m }

// Value is one value of a statement: a bind marker's value, a constant
// serialized at planning time, or a value computed at execution (a function
// call, or a collection literal holding markers), which takes a slot after
// the markers' (see Metadata.Computed).
type Value struct {
	// Marker is the index of the bind variable or computed value, or -1
	// for a constant.
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

// SchemaChange is a DDL statement: what to change, checked against the
// schema, and what SCHEMA_CHANGE reports of it (Change CREATED, UPDATED or
// DROPPED; Target KEYSPACE, TABLE or TYPE; the keyspace and object names).
type SchemaChange struct {
	Metadata
	// Statement is the parsed DDL, which says what to apply.
	Statement Statement
	Change    string
	Target    string
	Keyspace  string
	Name      string
	// Keyspace and Table are what CREATE or ALTER makes; OldTable is the
	// table an ALTER TABLE started from.
	NewKeyspace *pgschema.Keyspace
	NewTable    *pgschema.Table
	OldTable    *pgschema.Table
	// Columns are the columns ALTER TABLE adds or drops; Renames maps old
	// column names to the renamed columns.
	Columns []*pgschema.Column
	Renames map[string]*pgschema.Column
	// DropTime is ALTER TABLE ... DROP's USING TIMESTAMP, in
	// microseconds; nil drops at the statement's time.
	DropTime *int64
	// NewType is what CREATE or ALTER TYPE makes. FieldRenames maps old
	// field names to new ones, and TypeUsers lists the columns of that
	// type, in the tables of UserTables, whose values must follow.
	NewType      *pgschema.Type
	FieldRenames map[string]string
	TypeUsers    []*pgschema.Column
	UserTables   []*pgschema.Table
	// Index and IndexColumn are what CREATE INDEX makes.
	Index       *pgschema.Index
	IndexColumn *pgschema.Column
	// Views are, for CREATE and DROP MATERIALIZED VIEW and ALTER TABLE
	// RENAME, the views of the base table (OldTable) once the change is
	// made; for ALTER TABLE ADD, the views that gain the added columns,
	// as they become.
	Views []*pgschema.Table
	// Warnings go to the client with the answer.
	Warnings []string
	// Args are the argument types of the function or aggregate a change
	// makes or drops, as its schema event names them; NewFunction and
	// NewAggregate are what it makes, or drops.
	Args         []string
	NewFunction  *pgschema.Function
	NewAggregate *pgschema.Aggregate
}

// Noop is a statement that has nothing to do, such as ALTER ... IF EXISTS
// of something that does not exist; it answers VOID.
type Noop struct{ Metadata }

// Truncate empties a table on every shard.
type Truncate struct {
	Metadata
	Table *pgschema.Table
	// Views are the table's materialized views, emptied with it.
	Views []*pgschema.Table
}

// Batch is a batch of writes sharing one timestamp.
type Batch struct {
	Metadata
	Kind      BatchKind
	Timestamp *Value
	Writes    []*Write
}
