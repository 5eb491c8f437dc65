package translate

import (
	"fmt"

	"github.com/cqlpg/cqlpg/pgschema"
)

// Prepare plans a parsed statement for a session whose keyspace is
// keyspace (possibly empty), against one schema snapshot. All of
// Cassandra's checks happen here, before any SQL exists.
func Prepare(parsed *Parsed, keyspace string, schema *pgschema.Schema) (Plan, error) {
	p := &planner{schema: schema, keyspace: keyspace, markers: parsed.MarkerNames,
		vars: make([]ColumnSpec, len(parsed.MarkerNames))}
	plan, err := p.plan(parsed.Statement)
	if err != nil {
		return nil, err
	}
	md := plan.Meta()
	md.Variables, md.Computed, md.Functions = p.vars, p.computed, p.functions
	return plan, nil
}

// planner holds the state of planning one statement.
type planner struct {
	schema   *pgschema.Schema
	keyspace string
	markers  []string
	vars     []ColumnSpec
	computed []Computation
	// functions are the user functions the statement calls (useFunction).
	functions []Resource
}

func (p *planner) plan(stmt Statement) (Plan, error) {
	switch s := stmt.(type) {
	case *SelectStmt:
		return p.planSelect(s)
	case *InsertStmt:
		return p.planInsert(s)
	case *UpdateStmt:
		return p.planUpdate(s)
	case *DeleteStmt:
		return p.planDelete(s)
	case *BatchStmt:
		return p.planBatch(s)
	case *UseStmt:
		return &Use{Keyspace: s.Keyspace}, nil
	case *CreateKeyspaceStmt:
		return p.planCreateKeyspace(s)
	case *CreateTableStmt:
		return p.planCreateTable(s)
	case *AlterKeyspaceStmt:
		return p.planAlterKeyspace(s)
	case *AlterTableStmt:
		return p.planAlterTable(s)
	case *CreateTypeStmt:
		return p.planCreateType(s)
	case *AlterTypeStmt:
		return p.planAlterType(s)
	case *CreateIndexStmt:
		return p.planCreateIndex(s)
	case *CreateViewStmt:
		return p.planCreateView(s)
	case *CreateFunctionStmt:
		return p.planCreateFunction(s)
	case *CreateAggregateStmt:
		return p.planCreateAggregate(s)
	case *DropFunctionStmt:
		return p.planDropFunction(s)
	case *AlterViewStmt:
		return p.planAlterView(s)
	case *TruncateStmt:
		return p.planTruncate(s)
	case *DropStmt:
		return p.planDrop(s)
	case *DescribeStmt:
		return p.planDescribe(s)
	case *CreateRoleStmt, *AlterRoleStmt, *DropRoleStmt, *GrantRoleStmt, *ListRolesStmt, *PermissionsStmt:
		return p.planAuth(s)
	}
	return nil, fmt.Errorf("unsupported statement %T", stmt)
}

// keyspaceName returns the keyspace a statement names, or the session's.
func (p *planner) keyspaceName(ks string) (string, error) {
	if ks != "" {
		return ks, nil
	}
	if p.keyspace == "" {
		return "", invalidf("No keyspace has been specified. USE a keyspace, or explicitly specify keyspace.tablename")
	}
	return p.keyspace, nil
}

// table resolves a table name.
func (p *planner) table(n TableName) (*pgschema.Table, error) {
	ks, err := p.keyspaceName(n.Keyspace)
	if err != nil {
		return nil, err
	}
	if t := p.schema.Table(ks, n.Name); t != nil {
		return t, nil
	}
	if err := p.unloadable("table", ks, n.Name); err != nil {
		return nil, err
	}
	if p.schema.Keyspace(ks) == nil {
		return nil, invalidf("keyspace %s does not exist", ks)
	}
	return nil, invalidf("table %s does not exist", n.Name)
}

// unloadable reports the keyspace ks, or its object name, as the catalog's
// last load left it out (pgschema.Unloadable), or nil; kind is the object's.
func (p *planner) unloadable(kind, ks, name string) error {
	if u := p.schema.UnloadableObject(kind, ks, name); u != nil {
		return u
	}
	return nil
}

// column resolves a column name of t.
func column(t *pgschema.Table, name string) (*pgschema.Column, error) {
	if c := t.Column(name); c != nil {
		return c, nil
	}
	return nil, invalidf("Undefined column name %s in table %s", pgschema.QuoteIdentifier(name), t.QualifiedName())
}

// hintAssignable reports whether a value cast to hint may be assigned to
// a receiver: its values are the receiver's (valueCompatible), or it is
// text going into ascii, which cqlpg has always taken.
func hintAssignable(hint, recv *pgschema.Type) bool {
	return valueCompatible(recv, hint) || hint.Kind == pgschema.Text && recv.Kind == pgschema.Ascii
}

// value plans a term assigned to a receiver: a constant is checked and
// serialized now, a marker gets the receiver's specification.
func (p *planner) value(t Term, recv ColumnSpec) (Value, error) {
	switch v := t.(type) {
	case *Literal:
		b, err := literalValue(v, recv.Type, recv.Name)
		if err != nil {
			return Value{}, err
		}
		return constValue(b), nil
	case *Marker:
		return p.bind(v, recv), nil
	case *TypeHint:
		if !hintAssignable(v.Type, recv.Type) {
			return Value{}, invalidf("Type error: cannot assign result of type %s to %s of type %s", v.Type, recv.Name, recv.Type)
		}
		return p.value(v.Term, recv)
	case *FunctionCall:
		return p.callTerm(v, recv)
	case *Collection:
		return p.collectionTerm(v, recv)
	case *Tuple:
		return p.tupleTerm(v, recv)
	case *UDTLiteral:
		return p.udtTerm(v, recv)
	}
	return Value{}, invalidf("Invalid value for %s of type %s", recv.Name, recv.Type)
}

// bind records a marker's specification and returns its value. A named
// marker still targets its column, so it counts for pk_indexes as in
// Cassandra's VariableSpecifications.add.
func (p *planner) bind(m *Marker, spec ColumnSpec) Value {
	if m.Name != "" {
		spec.Name = m.Name
	}
	p.vars[m.Index] = spec
	return Value{Marker: m.Index}
}

// specOf returns the specification of a value bound to column c.
func specOf(t *pgschema.Table, c *pgschema.Column) ColumnSpec {
	return ColumnSpec{Keyspace: t.Keyspace, Table: t.Name, Name: c.Name, Type: c.Type, Column: c}
}

// pkIndexes applies Cassandra's pk_indexes rule: every partition key column
// must be bound by a marker of its own (the last one wins), or none count.
func pkIndexes(t *pgschema.Table, vars []ColumnSpec) []uint16 {
	out := make([]uint16, len(t.PartitionKey))
	for i, pk := range t.PartitionKey {
		found := false
		for j, v := range vars {
			if v.Column == pk && v.Table == t.Name && v.Keyspace == t.Keyspace {
				out[i], found = uint16(j), true
			}
		}
		if !found {
			return nil
		}
	}
	return out
}
