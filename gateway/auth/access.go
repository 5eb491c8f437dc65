package auth

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/translate"
)

// Access is what a role may do, as the catalog said when it was
// loaded: the roles it holds and the permissions they were granted. It is
// immutable, and shared by every connection logged in as the role until it
// expires or a change through this gateway makes it stale.
type Access struct {
	Role string
	// Super is set when the role or one it holds is a superuser.
	Super bool
	// roles is the role and every role it holds, through grants of grants,
	// sorted.
	roles []string
	// Perms holds the permissions granted to any of roles, by resource;
	// those on data resources are in tables, keyspaces and allKeyspaces
	// too, for the check every statement makes.
	Perms        map[translate.Resource]translate.Permissions
	tables       map[[2]string]translate.Permissions
	keyspaces    map[string]translate.Permissions
	allKeyspaces translate.Permissions
	generation   uint64
	expires      time.Time
}

// accessEntry holds a role's cached access; its mutex lets one request
// reload it while the others wait for the result.
type accessEntry struct {
	mu  sync.Mutex
	cur atomic.Pointer[Access]
}

// fresh reports whether a cached access may still be used.
func (acc *Access) fresh(generation uint64, now time.Time) bool {
	return acc != nil && acc.generation == generation && now.Before(acc.expires)
}

// entry returns a role's cache entry.
func (a *Authenticator) entry(role string) *accessEntry {
	v, ok := a.access.Load(role)
	if !ok {
		v, _ = a.access.LoadOrStore(role, &accessEntry{})
	}
	return v.(*accessEntry)
}

// accessOf returns a role's access, from its cache entry unless it expired
// or roles changed through this gateway since it was loaded. Only a reload
// costs a round trip, or anything but a few loads.
func (a *Authenticator) accessOf(role string, e *accessEntry, now time.Time) (*Access, error) {
	// The generation is read before loading: a change while the load runs
	// leaves the result stale, and the next request loads again.
	gen := a.generation.Load()
	if acc := e.cur.Load(); acc.fresh(gen, now) {
		return acc, nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if acc := e.cur.Load(); acc.fresh(gen, time.Now()) {
		return acc, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), a.requestTimeout)
	defer cancel()
	acc, err := a.loadAccess(ctx, role, gen)
	if err != nil {
		a.log.Error("cannot read a role's permissions", "role", role, "err", err)
		return nil, &translate.UnauthorizedError{Msg: "Unable to perform authorization of permissions: no shard could read the roles"}
	}
	e.cur.Store(acc)
	return acc, nil
}

// loadAccess reads a role's access from the first shard that answers.
func (a *Authenticator) loadAccess(ctx context.Context, role string, gen uint64) (*Access, error) {
	var roles []*pgschema.Role
	var grants []pgschema.Grant
	err := a.Read(ctx, func(q pgschema.Querier) error {
		var err error
		roles, grants, err = pgschema.LoadAccess(ctx, q, role)
		return err
	})
	if err != nil {
		return nil, err
	}
	acc := &Access{Role: role, Perms: map[translate.Resource]translate.Permissions{},
		tables: map[[2]string]translate.Permissions{}, keyspaces: map[string]translate.Permissions{},
		generation: gen, expires: time.Now().Add(a.cfg.PermissionsValidity)}
	// A role dropped since a connection logged in as it holds nothing:
	// the connection may do nothing any more.
	for _, r := range roles {
		acc.Super = acc.Super || r.Super
		acc.roles = append(acc.roles, r.Name)
	}
	slices.Sort(acc.roles)
	for _, g := range grants {
		res, ok := translate.ResourceNamed(g.Resource)
		if !ok {
			continue
		}
		var ps translate.Permissions
		for _, name := range g.Permissions {
			ps |= translate.PermissionNamed(name)
		}
		acc.Perms[res] |= ps
		switch res.Kind {
		case translate.TableResource:
			acc.tables[[2]string{res.Keyspace, res.Name}] |= ps
		case translate.KeyspaceResource:
			acc.keyspaces[res.Keyspace] |= ps
		case translate.AllKeyspacesResource:
			acc.allKeyspaces |= ps
		}
	}
	return acc, nil
}

// MaySelect reports whether role may read t's rows: always without
// authentication (a nil receiver).
func (a *Authenticator) MaySelect(role string, t *pgschema.Table) bool {
	if a == nil {
		return true
	}
	acc, err := a.accessOf(role, a.entry(role), time.Now())
	return err == nil && acc.ensureTable(translate.PermSelect, t) == nil
}

// SessionAccess returns the access of the role a connection logged in as.
func (a *Authenticator) SessionAccess(c any, now time.Time) (*Access, error) {
	v, ok := a.sessions.Load(c)
	if !ok || v.(*authSession).role == "" {
		return nil, &translate.UnauthorizedError{Msg: "You have not logged in"}
	}
	sess := v.(*authSession)
	return a.accessOf(sess.role, sess.access, now)
}

// Has reports whether the role holds permission p on res or on one of its
// parents; a superuser holds every permission.
func (acc *Access) Has(p translate.Permissions, res translate.Resource) bool {
	switch {
	case acc.Super:
		return true
	case res.Kind == translate.TableResource:
		return acc.tables[[2]string{res.Keyspace, res.Name}]&p != 0 || acc.keyspaces[res.Keyspace]&p != 0 ||
			acc.allKeyspaces&p != 0
	case res.Kind == translate.KeyspaceResource:
		return acc.keyspaces[res.Keyspace]&p != 0 || acc.allKeyspaces&p != 0
	}
	for {
		if acc.Perms[res]&p != 0 {
			return true
		}
		parent, ok := res.Parent()
		if !ok {
			return false
		}
		res = parent
	}
}

// Ensure refuses what the role may not do, in Cassandra's words.
func (acc *Access) Ensure(p translate.Permissions, res translate.Resource) error {
	if acc.Has(p, res) {
		return nil
	}
	return &translate.UnauthorizedError{Msg: fmt.Sprintf("User %s has no %s permission on %s or any of its parents", acc.Role, p, res)}
}

// Holds reports whether the role is, or holds, role r.
func (acc *Access) Holds(r string) bool {
	_, found := slices.BinarySearch(acc.roles, r)
	return found
}

// Authorize checks that a connection's role may run a planned statement,
// before it runs: every statement of a batch, and on every execution of a
// prepared statement, from the cached access, so that the check costs no
// round trip. Role and permission statements check for themselves
// (the gateway's role statements); USE and DESCRIBE need no permission, as in Cassandra.
func (a *Authenticator) Authorize(c any, plan translate.Plan, now time.Time) error {
	if a == nil {
		return nil
	}
	switch plan.(type) {
	case *translate.Auth, *translate.Use, *translate.Describe, *translate.Noop:
		return nil
	}
	acc, err := a.SessionAccess(c, now)
	if err != nil {
		return err
	}
	return acc.authorizePlan(plan)
}

// authorizePlan checks a plan against the role's permissions, as each of
// Cassandra's statements does in its authorize step.
func (acc *Access) authorizePlan(plan translate.Plan) error {
	// Every user function or aggregate the statement calls needs EXECUTE.
	for _, f := range plan.Meta().Functions {
		if err := acc.Ensure(translate.PermExecute, f); err != nil {
			return err
		}
	}
	switch p := plan.(type) {
	case *translate.Select:
		return acc.ensureTable(translate.PermSelect, p.Table)
	case *translate.Write:
		return acc.authorizeWrite(p)
	case *translate.Batch:
		for _, w := range p.Writes {
			if err := acc.authorizeWrite(w); err != nil {
				return err
			}
		}
	case *translate.Truncate:
		return acc.ensureTable(translate.PermModify, p.Table)
	case *translate.SchemaChange:
		perm, res := schemaPermission(p)
		return acc.Ensure(perm, res)
	}
	return nil
}

// authorizeWrite needs MODIFY, and SELECT too for a conditional write,
// which reads.
func (acc *Access) authorizeWrite(w *translate.Write) error {
	if err := acc.ensureTable(translate.PermModify, w.Table); err != nil {
		return err
	}
	if w.Conditions != nil {
		return acc.ensureTable(translate.PermSelect, w.Table)
	}
	return nil
}

// ensureTable checks a permission on a table. Every role may read the
// system tables drivers and tools read at connection: system.local,
// system.peers and system.peers_v2, and the schema tables.
func (acc *Access) ensureTable(p translate.Permissions, t *pgschema.Table) error {
	if p == translate.PermSelect && readableSystemTable(t.Keyspace, t.Name) {
		return nil
	}
	return acc.Ensure(p, translate.Resource{Kind: translate.TableResource, Keyspace: t.Keyspace, Name: t.Name})
}

func readableSystemTable(keyspace, table string) bool {
	switch keyspace {
	case "system_schema", "system_virtual_schema":
		return true
	case "system":
		return table == "local" || table == "peers" || table == "peers_v2"
	}
	return false
}

// changedArgs returns the argument types of the function or aggregate a
// change makes or drops.
func changedArgs(p *translate.SchemaChange) []*pgschema.Type {
	if p.NewAggregate != nil {
		return p.NewAggregate.ArgTypes
	}
	return p.NewFunction.ArgTypes
}

// schemaPermission is the permission a schema change needs and what on:
// CREATE on the keyspace for what a keyspace holds (on all keyspaces for a
// keyspace), ALTER and DROP on what is altered or dropped, ALTER on the
// table for its indexes, as Cassandra's statements ask.
func schemaPermission(p *translate.SchemaChange) (translate.Permissions, translate.Resource) {
	keyspace := translate.Resource{Kind: translate.KeyspaceResource, Keyspace: p.Keyspace}
	table := translate.Resource{Kind: translate.TableResource, Keyspace: p.Keyspace, Name: p.Name}
	switch s := p.Statement.(type) {
	case *translate.CreateKeyspaceStmt:
		return translate.PermCreate, translate.Resource{Kind: translate.AllKeyspacesResource}
	case *translate.AlterKeyspaceStmt:
		return translate.PermAlter, keyspace
	case *translate.CreateTableStmt, *translate.CreateTypeStmt:
		return translate.PermCreate, keyspace
	case *translate.AlterTypeStmt:
		return translate.PermAlter, keyspace
	case *translate.AlterTableStmt, *translate.CreateIndexStmt:
		return translate.PermAlter, table
	case *translate.CreateFunctionStmt, *translate.CreateAggregateStmt:
		if p.Change == "UPDATED" {
			return translate.PermAlter, translate.FunctionResourceOf(p.Keyspace, p.Name, changedArgs(p))
		}
		return translate.PermCreate, translate.Resource{Kind: translate.KeyspaceFunctionsResource, Keyspace: p.Keyspace}
	case *translate.DropFunctionStmt:
		return translate.PermDrop, translate.FunctionResourceOf(p.Keyspace, p.Name, changedArgs(p))
	case *translate.DropStmt:
		switch s.Kind {
		case translate.DropKeyspace, translate.DropType:
			return translate.PermDrop, keyspace
		case translate.DropIndex:
			return translate.PermAlter, table
		}
		return translate.PermDrop, table
	}
	return translate.PermAlter, keyspace
}
