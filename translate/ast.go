package translate

import "github.com/cqlpg/cqlpg/pgschema"

// Statement is a parsed CQL statement.
type Statement interface{ statement() }

// TableName is a table name, qualified by a keyspace or not.
type TableName struct {
	Keyspace, Name string
	Pos            Pos
}

// Term is a value in a statement: a literal, a bind marker, a function
// call or a collection, tuple or UDT literal.
type Term interface{ term() }

// LiteralKind is the lexical kind of a constant, named as Cassandra's type
// errors name it.
type LiteralKind uint8

// Literal kinds.
const (
	LitString LiteralKind = iota
	LitInteger
	LitFloat
	LitBoolean
	LitUUID
	LitHex
	LitDuration
	LitNull
)

// String returns the kind as Cassandra's messages print it.
func (k LiteralKind) String() string {
	return [...]string{"STRING", "INTEGER", "FLOAT", "BOOLEAN", "UUID", "HEX", "DURATION", "NULL"}[k]
}

// Literal is a constant. Text holds a string's contents or the constant as
// written (NaN and Infinity are FLOATs).
type Literal struct {
	Kind LiteralKind
	Text string
	Pos  Pos
}

// Marker is a bind marker, ? or :name. Index counts markers from 0 in the
// order they appear in the whole statement.
type Marker struct {
	Index int
	Name  string
	Pos   Pos
}

// FunctionCall is a function applied to terms, such as now() or
// token(?).
type FunctionCall struct {
	Name string
	Args []Term
	Pos  Pos
}

// CollectionKind tells list, set and map literals apart.
type CollectionKind uint8

// Collection literal kinds.
const (
	ListLiteral CollectionKind = iota
	SetLiteral
	MapLiteral
)

// Collection is a list [..], set {..} or map {k: v, ..} literal. For maps,
// Elems holds the keys and Values the values.
type Collection struct {
	Kind   CollectionKind
	Elems  []Term
	Values []Term
	Pos    Pos
}

// Tuple is a tuple literal (a, b, ...).
type Tuple struct {
	Elems []Term
	Pos   Pos
}

// UDTLiteral is a user-type literal {field: value, ...}.
type UDTLiteral struct {
	Fields []string
	Values []Term
	Pos    Pos
}

// TypeHint is a term with a type cast in front: (int) ?.
type TypeHint struct {
	Type *pgschema.Type
	Term Term
	Pos  Pos
}

func (*Literal) term()      {}
func (*Marker) term()       {}
func (*FunctionCall) term() {}
func (*Collection) term()   {}
func (*Tuple) term()        {}
func (*UDTLiteral) term()   {}
func (*TypeHint) term()     {}

// Selector is one item of a SELECT clause.
type Selector struct {
	Expr  SelectorExpr
	Alias string
}

// SelectorExpr is what a selector computes.
type SelectorExpr interface{ selector() }

// ColumnSelector selects a column.
type ColumnSelector struct {
	Name string
	Pos  Pos
}

// CallSelector applies a function or aggregate to selectors. Star marks
// COUNT(*).
type CallSelector struct {
	Name string
	Args []SelectorExpr
	Star bool
	Pos  Pos
}

// CastSelector is CAST(expr AS type).
type CastSelector struct {
	Expr SelectorExpr
	Type *pgschema.Type
	Pos  Pos
}

// TermSelector is a constant or bind marker used as a selector.
type TermSelector struct {
	Term Term
	Pos  Pos
}

// FieldSelector selects a field of a UDT: expr.field.
type FieldSelector struct {
	Expr  SelectorExpr
	Field string
	Pos   Pos
}

// ElementSelector selects an element expr[key] or a slice expr[from..to]
// of a collection; a nil bound of a slice is open.
type ElementSelector struct {
	Expr     SelectorExpr
	Key      Term
	Slice    bool
	From, To Term
	Pos      Pos
}

func (*ColumnSelector) selector()  {}
func (*CallSelector) selector()    {}
func (*CastSelector) selector()    {}
func (*TermSelector) selector()    {}
func (*FieldSelector) selector()   {}
func (*ElementSelector) selector() {}

// Operator is a relation's or condition's operator.
type Operator uint8

// Operators.
const (
	OpEQ Operator = iota
	OpNEQ
	OpLT
	OpLTE
	OpGT
	OpGTE
	OpIN
	OpContains
	OpContainsKey
	OpLike
	OpIsNotNull
	// Cassandra 5.0's negations, which only filter.
	OpNotIn
	OpNotContains
	OpNotContainsKey
)

// String returns the operator as CQL writes it.
func (o Operator) String() string {
	return [...]string{"=", "!=", "<", "<=", ">", ">=", "IN", "CONTAINS", "CONTAINS KEY", "LIKE", "IS NOT",
		"NOT IN", "NOT CONTAINS", "NOT CONTAINS KEY"}[o]
}

// Positive returns the operator a negation negates, or o itself.
func (o Operator) Positive() Operator {
	switch o {
	case OpNotIn:
		return OpIN
	case OpNotContains:
		return OpContains
	case OpNotContainsKey:
		return OpContainsKey
	}
	return o
}

// IsSlice reports whether o bounds a range.
func (o Operator) IsSlice() bool { return o >= OpLT && o <= OpGTE }

// RelationKind tells the three shapes of WHERE relations apart.
type RelationKind uint8

// Relation kinds.
const (
	ColumnRelation RelationKind = iota // c op v, or c[k] op v
	TokenRelation                      // token(a, b) op v
	TupleRelation                      // (a, b) op (1, 2)
)

// Relation is one restriction of a WHERE clause. IN lists are in Values;
// IN with a single marker (IN ?) has the marker in Value.
type Relation struct {
	Kind    RelationKind
	Columns []string
	Key     Term // the element of c[k] = v
	Op      Operator
	Value   Term
	Values  []Term
	Pos     Pos
}

// Ordering is one ORDER BY item: a column, ascending or descending, or
// ordered by its similarity to a vector (ANN OF).
type Ordering struct {
	Column string
	Desc   bool
	ANN    Term
	Pos    Pos
}

// SelectStmt is a SELECT statement.
type SelectStmt struct {
	Table             TableName
	JSON, Distinct    bool
	Selectors         []Selector // nil means *
	Where             []Relation
	GroupBy           []string
	OrderBy           []Ordering
	PerPartitionLimit Term
	Limit             Term
	AllowFiltering    bool
}

// Using holds USING TTL and TIMESTAMP; nil terms are absent.
type Using struct {
	TTL, Timestamp Term
}

// InsertStmt is an INSERT statement, with VALUES or JSON.
type InsertStmt struct {
	Table        TableName
	Columns      []string
	Values       []Term
	JSON         Term
	DefaultUnset bool
	IfNotExists  bool
	Using        Using
}

// AssignOp is the kind of an UPDATE assignment.
type AssignOp uint8

// Assignment kinds: c = v, c = c + v, c = c - v, c = v + c.
const (
	AssignSet AssignOp = iota
	AssignAdd
	AssignSub
	AssignPrepend
)

// Assignment is one SET item of an UPDATE. Key is set for m[k] = v and
// Field for u.f = v.
type Assignment struct {
	Column string
	Key    Term
	Field  string
	Op     AssignOp
	Value  Term
	Pos    Pos
}

// Condition is one IF condition of a conditional update or delete.
type Condition struct {
	Column string
	Key    Term
	Field  string
	Op     Operator
	Value  Term
	Values []Term
	Pos    Pos
}

// UpdateStmt is an UPDATE statement.
type UpdateStmt struct {
	Table       TableName
	Using       Using
	Assignments []Assignment
	Where       []Relation
	IfExists    bool
	Conditions  []Condition
}

// Deletion names what a DELETE removes from a row: a column, an element
// c[k], or a UDT field c.f.
type Deletion struct {
	Column string
	Key    Term
	Field  string
	Pos    Pos
}

// DeleteStmt is a DELETE statement; no Columns means whole rows.
type DeleteStmt struct {
	Table      TableName
	Columns    []Deletion
	Using      Using
	Where      []Relation
	IfExists   bool
	Conditions []Condition
}

// BatchKind is LOGGED, UNLOGGED or COUNTER.
type BatchKind uint8

// Batch kinds, with the protocol's numbering.
const (
	LoggedBatch BatchKind = iota
	UnloggedBatch
	CounterBatch
)

// BatchStmt is BEGIN ... BATCH ... APPLY BATCH.
type BatchStmt struct {
	Kind       BatchKind
	Using      Using
	Statements []Statement
}

// UseStmt is USE keyspace.
type UseStmt struct{ Keyspace string }

func (*SelectStmt) statement() {}
func (*InsertStmt) statement() {}
func (*UpdateStmt) statement() {}
func (*DeleteStmt) statement() {}
func (*BatchStmt) statement()  {}
func (*UseStmt) statement()    {}
