package pgschema

import "sort"

// builtin holds the virtual system keyspaces, shared by every Schema.
var builtin = systemKeyspaces()

// Schema is one immutable snapshot of the CQL schema: the user keyspaces
// read from the catalog plus the virtual system keyspaces. A request
// resolves every name against a single snapshot.
type Schema struct {
	// Version changes with every schema change; it is what
	// system.local.schema_version shows.
	Version   [16]byte
	keyspaces map[string]*Keyspace
}

// NewSchema returns a snapshot of the given user keyspaces.
func NewSchema(version [16]byte, user map[string]*Keyspace) *Schema {
	all := make(map[string]*Keyspace, len(user)+len(builtin))
	for n, k := range builtin {
		all[n] = k
	}
	for n, k := range user {
		all[n] = k
	}
	return &Schema{Version: version, keyspaces: all}
}

// Keyspace returns the named keyspace, or nil.
func (s *Schema) Keyspace(name string) *Keyspace { return s.keyspaces[name] }

// Table returns the named table, or nil.
func (s *Schema) Table(keyspace, name string) *Table {
	if k := s.keyspaces[keyspace]; k != nil {
		return k.Tables[name]
	}
	return nil
}

// Keyspaces returns every keyspace, system ones included, sorted by name.
func (s *Schema) Keyspaces() []*Keyspace {
	out := make([]*Keyspace, 0, len(s.keyspaces))
	for _, k := range s.keyspaces {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
