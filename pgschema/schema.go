package pgschema

import (
	"fmt"
	"sort"
)

// builtin holds the virtual system keyspaces, shared by every Schema.
var builtin = systemKeyspaces()

// Schema is one immutable snapshot of the CQL schema: the user keyspaces
// read from the catalog plus the virtual system keyspaces. A request
// resolves every name against a single snapshot.
type Schema struct {
	// Version changes with every schema change; it is what
	// system.local.schema_version shows.
	Version    [16]byte
	keyspaces  map[string]*Keyspace
	unloadable unloadable
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

// Unloadable is a catalog object that a load left out of its snapshot:
// its catalog rows do not describe a valid object (an unknown type, a
// strategy that does not parse, say), or it depends on such an object.
// Statements that touch it fail with this error; everything else serves.
type Unloadable struct {
	Kind     string // "keyspace", "type", "table", "function" or "aggregate"
	Keyspace string
	Name     string // empty for a keyspace
	Err      error
}

// Object names the object as CQL does: ks, or ks.name.
func (u *Unloadable) Object() string {
	if u.Name == "" {
		return QuoteIdentifier(u.Keyspace)
	}
	return QuoteIdentifier(u.Keyspace) + "." + QuoteIdentifier(u.Name)
}

func (u *Unloadable) Error() string {
	return fmt.Sprintf("%s %s cannot be loaded from the catalog: %v", u.Kind, u.Object(), u.Err)
}

func (u *Unloadable) Unwrap() error { return u.Err }

// unloadable lists the objects a load left out, in the order found.
type unloadable []*Unloadable

func (l *unloadable) add(kind, keyspace, name string, err error) {
	*l = append(*l, &Unloadable{Kind: kind, Keyspace: keyspace, Name: name, Err: err})
}

// Unloadable returns every object the load of this snapshot left out.
func (s *Schema) Unloadable() []*Unloadable { return s.unloadable }

// UnloadableObject returns why the object of the given kind ("keyspace",
// with name empty, "table" or "type") was left out of this snapshot, or
// nil if it was not: a table or type of an unloadable keyspace reports the
// keyspace. Tables and types have names of their own, so a missing table
// never reports an unloadable type of its name, nor the reverse.
func (s *Schema) UnloadableObject(kind, keyspace, name string) *Unloadable {
	for _, u := range s.unloadable {
		if u.Keyspace == keyspace && (u.Name == "" || u.Kind == kind && u.Name == name) {
			return u
		}
	}
	return nil
}
