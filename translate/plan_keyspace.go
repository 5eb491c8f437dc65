package translate

import (
	"strconv"
	"strings"

	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/sharding"
)

func (p *planner) planCreateKeyspace(s *CreateKeyspaceStmt) (Plan, error) {
	if !validName.MatchString(s.Name) {
		return nil, invalidf("Keyspace name must not be empty, more than 48 characters long, or contain non-alphanumeric-underscore characters (got \"%s\")", s.Name)
	}
	if pgschema.IsSystemKeyspace(strings.ToLower(s.Name)) {
		return nil, &UnauthorizedError{Msg: "Cannot create keyspace " + s.Name + ": system keyspaces are managed by cqlpg"}
	}
	if err := p.unloadable("keyspace", s.Name, ""); err != nil {
		return nil, err
	}
	k := &pgschema.Keyspace{Name: s.Name, DurableWrites: true, PGSchema: pgschema.PGSchemaName(s.Name)}
	if err := keyspaceSettings(k, s.Properties, true); err != nil {
		return nil, err
	}
	return &SchemaChange{Statement: s, Change: "CREATED", Target: "KEYSPACE", Keyspace: s.Name, NewKeyspace: k}, nil
}

func (p *planner) planAlterKeyspace(s *AlterKeyspaceStmt) (Plan, error) {
	if pgschema.IsSystemKeyspace(s.Name) {
		return nil, &UnauthorizedError{Msg: "Cannot alter system keyspace " + s.Name}
	}
	old := p.schema.Keyspace(s.Name)
	if old == nil {
		if err := p.unloadable("keyspace", s.Name, ""); err != nil {
			return nil, err
		}
		if s.IfExists {
			return &Noop{}, nil
		}
		return nil, invalidf("Keyspace '%s' doesn't exist", s.Name)
	}
	k := *old
	if err := keyspaceSettings(&k, s.Properties, false); err != nil {
		return nil, err
	}
	return &SchemaChange{Statement: s, Change: "UPDATED", Target: "KEYSPACE", Keyspace: s.Name, NewKeyspace: &k}, nil
}

// keyspaceSettings applies a keyspace's WITH properties to k; CREATE must
// give the replication.
func keyspaceSettings(k *pgschema.Keyspace, props []Property, requireReplication bool) error {
	var replication map[string]string
	for _, prop := range props {
		switch prop.Name {
		case "replication":
			m, ok := prop.Value.(*Collection)
			if !ok || (m.Kind != MapLiteral && len(m.Elems) > 0) {
				return &SyntaxError{Pos: prop.Pos, Msg: "Invalid value for property 'replication'. It should be a map."}
			}
			replication = map[string]string{}
			for i, key := range m.Elems {
				kl, ok1 := key.(*Literal)
				vl, ok2 := m.Values[i].(*Literal)
				if !ok1 || !ok2 {
					return &SyntaxError{Pos: prop.Pos, Msg: "Invalid value for property 'replication'. It should be a map of constants."}
				}
				if _, dup := replication[kl.Text]; dup {
					return &SyntaxError{Msg: "Multiple definition for property " + kl.Text}
				}
				replication[kl.Text] = vl.Text
			}
		case "durable_writes":
			l, ok := prop.Value.(*Literal)
			if !ok {
				return &SyntaxError{Pos: prop.Pos, Msg: "Invalid value for property 'durable_writes'"}
			}
			b, err := strconv.ParseBool(l.Text)
			if err != nil {
				return &SyntaxError{Pos: prop.Pos, Msg: "Invalid boolean value " + l.Text + " for 'durable_writes'"}
			}
			k.DurableWrites = b
		default:
			return &SyntaxError{Msg: "Unknown property '" + prop.Name + "'"} // raised after parsing, with no position
		}
	}
	if replication == nil {
		if requireReplication {
			return &ConfigError{Msg: "Missing mandatory option 'replication'"}
		}
		return nil
	}
	rep, err := sharding.ParseReplication(k.Name, replication)
	if err != nil {
		return &ConfigError{Msg: err.Error()}
	}
	k.Replication = rep
	return nil
}
