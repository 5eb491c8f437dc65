package translate

import (
	"slices"
	"strings"

	"github.com/cqlpg/cqlpg/pgschema"
)

// typeKeyspace resolves the keyspace of a type name.
func (p *planner) typeKeyspace(n TableName) (*pgschema.Keyspace, error) {
	ks, err := p.keyspaceName(n.Keyspace)
	if err != nil {
		return nil, err
	}
	if err := p.unloadable("type", ks, n.Name); err != nil {
		return nil, err
	}
	k := p.schema.Keyspace(ks)
	if k == nil {
		return nil, invalidf("Keyspace '%s' doesn't exist", ks)
	}
	if k.Virtual {
		return nil, &UnauthorizedError{Msg: "Cannot change types in system keyspace " + ks}
	}
	return k, nil
}

func (p *planner) planCreateType(s *CreateTypeStmt) (Plan, error) {
	k, err := p.typeKeyspace(s.Name)
	if err != nil {
		return nil, err
	}
	if k.Types[s.Name.Name] != nil {
		if s.IfNotExists {
			return &Noop{}, nil
		}
		return nil, invalidf("A user type with name '%s' already exists", s.Name.Name)
	}
	names := make([]string, len(s.Fields))
	types := make([]*pgschema.Type, len(s.Fields))
	for i, f := range s.Fields {
		for _, prev := range names[:i] {
			if prev == f.Name {
				return nil, invalidf("Duplicate field name %s in type %s", f.Name, pgschema.QuoteIdentifier(s.Name.Name))
			}
		}
		if types[i], err = fieldType(k, f.Type); err != nil {
			return nil, err
		}
		names[i] = f.Name
	}
	udt := pgschema.NewUDT(k.Name, s.Name.Name, names, types, false)
	return &SchemaChange{Statement: s, Change: "CREATED", Target: "TYPE", Keyspace: k.Name, Name: s.Name.Name, NewType: udt}, nil
}

// fieldType resolves a user type field's type: counters are refused and
// nested user types must be frozen.
func fieldType(k *pgschema.Keyspace, t *pgschema.Type) (*pgschema.Type, error) {
	typ, err := resolveType(k, t)
	if err != nil {
		return nil, err
	}
	if typ.IsCounter() {
		return nil, invalidf("A user type cannot contain counters")
	}
	if typ.Kind == pgschema.UDT && !typ.Frozen {
		return nil, invalidf("A user type cannot contain non-frozen UDTs")
	}
	return typ, nil
}

func (p *planner) planAlterType(s *AlterTypeStmt) (Plan, error) {
	k, err := p.typeKeyspace(s.Name)
	if err != nil {
		return nil, err
	}
	old := k.Types[s.Name.Name]
	if old == nil {
		if s.IfExists {
			return &Noop{}, nil
		}
		return nil, invalidf("Type %s.%s doesn't exist", k.Name, s.Name.Name)
	}
	fields := append([]string(nil), old.Fields...)
	types := append([]*pgschema.Type(nil), old.Elem...)
	change := &SchemaChange{Statement: s, Change: "UPDATED", Target: "TYPE", Keyspace: k.Name, Name: old.Name}
	if s.Add != nil {
		for _, f := range fields {
			if f == s.Add.Name {
				if s.IfField {
					return &Noop{}, nil
				}
				return nil, invalidf("Cannot add field %s to type %s: a field with name %s already exists",
					f, qualifiedTypeName(old), f)
			}
		}
		typ, err := fieldType(k, s.Add.Type)
		if err != nil {
			return nil, err
		}
		if usesType(typ, old.Name) {
			return nil, invalidf("Cannot add new field %s of type %s to user type %s as it would create a circular reference",
				s.Add.Name, s.Add.Type, qualifiedTypeName(old))
		}
		if tables := keyTablesUsing(k, old.Name); len(tables) > 0 {
			return nil, invalidf("Cannot add new field %s of type %s to user type %s as the type is being used in partition key by the following tables: %s",
				s.Add.Name, s.Add.Type, qualifiedTypeName(old), strings.Join(tables, ", "))
		}
		fields, types = append(fields, s.Add.Name), append(types, typ)
	}
	if len(s.Renames) > 0 {
		change.FieldRenames = map[string]string{}
		for _, r := range s.Renames {
			i := indexOf(fields, r[0])
			if i < 0 {
				if s.IfField {
					continue
				}
				return nil, invalidf("Unkown field %s in user type %s", r[0], qualifiedTypeName(old))
			}
			fields[i] = r[1]
			change.FieldRenames[r[0]] = r[1]
		}
		for i, f := range fields {
			if indexOf(fields[:i], f) >= 0 {
				// Cassandra's text names the keyspace where it means the type.
				return nil, invalidf("Duplicate field name %s in type %s", f, pgschema.QuoteIdentifier(k.Name))
			}
		}
		if err := p.typeUsers(k, old, change); err != nil {
			return nil, err
		}
	}
	change.NewType = pgschema.NewUDT(k.Name, old.Name, fields, types, false)
	return change, nil
}

// typeUsers lists the columns whose stored values name the type's fields,
// so that renamed fields can be rewritten. A type used inside another type
// or a collection is stored nested, which renaming does not reach yet.
func (p *planner) typeUsers(k *pgschema.Keyspace, udt *pgschema.Type, change *SchemaChange) error {
	for _, name := range k.TableNames() {
		t := k.Tables[name]
		for _, c := range t.Columns {
			switch {
			case c.Type.Kind == pgschema.UDT && c.Type.Name == udt.Name:
				change.TypeUsers = append(change.TypeUsers, c)
				change.UserTables = append(change.UserTables, t)
			case usesType(c.Type, udt.Name):
				return invalidf("Cannot rename fields of user type %s: column %s of %s stores it nested, which cqlpg cannot rewrite yet",
					pgschema.QuoteIdentifier(udt.Name), c.Name, t.QualifiedName())
			}
		}
	}
	for _, other := range k.Types {
		if other.Name != udt.Name && usesType(other, udt.Name) {
			return invalidf("Cannot rename fields of user type %s: user type %s nests it, which cqlpg cannot rewrite yet",
				pgschema.QuoteIdentifier(udt.Name), pgschema.QuoteIdentifier(other.Name))
		}
	}
	return nil
}

// qualifiedTypeName is a user type's name as Cassandra's messages show it,
// qualified by its keyspace.
func qualifiedTypeName(t *pgschema.Type) string {
	return pgschema.QuoteIdentifier(t.Keyspace) + "." + pgschema.QuoteIdentifier(t.Name)
}

// keyTablesUsing lists the tables of k whose partition key holds the user
// type name, which Cassandra does not let a new field change.
func keyTablesUsing(k *pgschema.Keyspace, name string) []string {
	var out []string
	for _, tn := range k.TableNames() {
		t := k.Tables[tn]
		for _, c := range t.PartitionKey {
			if usesType(c.Type, name) {
				out = append(out, t.QualifiedName())
				break
			}
		}
	}
	return out
}

// usesType reports whether t is or contains the user type name.
func usesType(t *pgschema.Type, name string) bool {
	return t.Has(func(e *pgschema.Type) bool { return e.Kind == pgschema.UDT && e.Name == name })
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

func (p *planner) planDropType(s *DropStmt, ks string) (Plan, error) {
	k := p.schema.Keyspace(ks)
	udt := (*pgschema.Type)(nil)
	if k != nil {
		udt = k.Types[s.Name]
	}
	if udt == nil {
		if s.IfExists {
			return &Noop{}, nil
		}
		return nil, invalidf("Type '%s.%s' doesn't exist", ks, s.Name)
	}
	var types, tables []string
	for _, other := range k.Types {
		if other.Name != udt.Name && usesType(other, udt.Name) {
			types = append(types, other.Name)
		}
	}
	slices.Sort(types)
	if len(types) > 0 {
		return nil, invalidf("Cannot drop user type '%s.%s' as it is still used by user types %s", ks, s.Name, strings.Join(types, ", "))
	}
	for _, name := range k.TableNames() {
		for _, c := range k.Tables[name].Columns {
			if usesType(c.Type, udt.Name) {
				tables = append(tables, name)
				break
			}
		}
	}
	if len(tables) > 0 {
		return nil, invalidf("Cannot drop user type '%s.%s' as it is still used by tables %s", ks, s.Name, strings.Join(tables, ", "))
	}
	return &SchemaChange{Statement: s, Change: "DROPPED", Target: "TYPE", Keyspace: ks, Name: s.Name}, nil
}
