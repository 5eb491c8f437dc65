package translate

import "github.com/cqlpg/cqlpg/pgschema"

// Property is one WITH option: a constant or a map literal.
type Property struct {
	Name  string
	Value Term
	Pos   Pos
}

// CreateKeyspaceStmt is CREATE KEYSPACE.
type CreateKeyspaceStmt struct {
	Name        string
	IfNotExists bool
	Properties  []Property
}

// ColumnDef is a column in CREATE TABLE or ALTER TABLE ADD, or a field of
// a user type.
type ColumnDef struct {
	Name   string
	Type   *pgschema.Type
	Static bool
	Pos    Pos
}

// CreateTableStmt is CREATE TABLE.
type CreateTableStmt struct {
	Table           TableName
	IfNotExists     bool
	Columns         []ColumnDef
	PartitionKey    []string
	Clustering      []string
	ClusteringOrder []Ordering
	CompactStorage  bool
	Properties      []Property
}

// DropKind says what a DROP statement drops.
type DropKind uint8

// Drop kinds.
const (
	DropKeyspace DropKind = iota
	DropTable
	DropType
	DropIndex
	DropView
)

// DropStmt is DROP KEYSPACE, TABLE, TYPE, INDEX or MATERIALIZED VIEW. Name is empty for a
// keyspace; Keyspace may be empty for the others (the session's).
type DropStmt struct {
	Kind     DropKind
	Keyspace string
	Name     string
	IfExists bool
}

// AlterKeyspaceStmt is ALTER KEYSPACE.
type AlterKeyspaceStmt struct {
	Name       string
	IfExists   bool
	Properties []Property
}

// AlterTableOp says what ALTER TABLE does.
type AlterTableOp uint8

// ALTER TABLE operations.
const (
	AlterAdd AlterTableOp = iota
	AlterDrop
	AlterRename
	AlterWith
)

// AlterTableStmt is ALTER TABLE: ADD columns, DROP columns, RENAME key
// columns, or WITH options.
type AlterTableStmt struct {
	Table    TableName
	IfExists bool
	Op       AlterTableOp
	// IfColumn is ADD IF NOT EXISTS, DROP IF EXISTS or RENAME IF EXISTS.
	IfColumn   bool
	Add        []ColumnDef
	Drop       []string
	Renames    [][2]string
	Properties []Property
	// Timestamp is DROP's USING TIMESTAMP, if given.
	Timestamp Term
}

// CreateTypeStmt is CREATE TYPE.
type CreateTypeStmt struct {
	Name        TableName
	IfNotExists bool
	Fields      []ColumnDef
}

// AlterTypeStmt is ALTER TYPE: ADD a field or RENAME fields.
type AlterTypeStmt struct {
	Name     TableName
	IfExists bool
	IfField  bool
	Add      *ColumnDef
	Renames  [][2]string
}

// IndexTarget says what an index covers: a column's value, or a
// collection's keys, values or entries, or a frozen collection whole.
type IndexTarget uint8

// Index targets.
const (
	IndexSimple IndexTarget = iota
	IndexKeys
	IndexValues
	IndexEntries
	IndexFull
)

// CreateIndexStmt is CREATE [CUSTOM] INDEX.
type CreateIndexStmt struct {
	Name        string
	IfNotExists bool
	Table       TableName
	Column      string
	Target      IndexTarget
	// Class is a custom index's class (USING '...'), and Options its
	// WITH OPTIONS map.
	Class   string
	Options Term
}

// TruncateStmt is TRUNCATE [TABLE].
type TruncateStmt struct{ Table TableName }

func (*CreateKeyspaceStmt) statement() {}
func (*AlterKeyspaceStmt) statement()  {}
func (*CreateTableStmt) statement()    {}
func (*AlterTableStmt) statement()     {}
func (*CreateTypeStmt) statement()     {}
func (*AlterTypeStmt) statement()      {}
func (*CreateIndexStmt) statement()    {}
func (*TruncateStmt) statement()       {}
func (*DropStmt) statement()           {}

// CreateViewStmt is CREATE MATERIALIZED VIEW. Columns is nil for SELECT *;
// WhereText is the WHERE clause as written, which system_schema.views
// shows.
type CreateViewStmt struct {
	View            TableName
	Base            TableName
	IfNotExists     bool
	Columns         []Selector
	Where           []Relation
	WhereText       string
	PartitionKey    []string
	Clustering      []string
	ClusteringOrder []Ordering
	Properties      []Property
}

// AlterViewStmt is ALTER MATERIALIZED VIEW ... WITH options.
type AlterViewStmt struct {
	View       TableName
	IfExists   bool
	Properties []Property
}

func (*CreateViewStmt) statement() {}
func (*AlterViewStmt) statement()  {}

// FunctionArg is an argument of CREATE FUNCTION, or a type of CREATE
// AGGREGATE or DROP FUNCTION: its name (none for the last two), its type,
// and the type as written, which messages and schema events show.
type FunctionArg struct {
	Name string
	Type *pgschema.Type
	Text string
}

// CreateFunctionStmt is CREATE FUNCTION.
type CreateFunctionStmt struct {
	Name                   TableName
	OrReplace, IfNotExists bool
	Args                   []FunctionArg
	CalledOnNullInput      bool
	Returns                FunctionArg
	Language, Body         string
}

// CreateAggregateStmt is CREATE AGGREGATE. InitCond is nil without
// INITCOND.
type CreateAggregateStmt struct {
	Name                   TableName
	OrReplace, IfNotExists bool
	Args                   []FunctionArg
	StateFunc, FinalFunc   string
	StateType              FunctionArg
	InitCond               Term
}

// DropFunctionStmt is DROP FUNCTION or DROP AGGREGATE, with the argument
// types when given (ArgsGiven).
type DropFunctionStmt struct {
	Aggregate bool
	Name      TableName
	IfExists  bool
	ArgsGiven bool
	Args      []FunctionArg
}

func (*CreateFunctionStmt) statement()  {}
func (*CreateAggregateStmt) statement() {}
func (*DropFunctionStmt) statement()    {}
