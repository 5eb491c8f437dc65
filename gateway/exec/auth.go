package exec

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/cqlpg/cqlpg/gateway/auth"
	"github.com/cqlpg/cqlpg/gateway/cqlwire"
	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/translate"
)

// The role and permission statements run as Cassandra's CassandraRoleManager
// and CassandraAuthorizer run them: each checks what the session may do,
// then validates against the roles, then applies on every shard. Their
// messages are Cassandra's, word for word.

// notAnonymous is what every role or permission statement answers without
// authentication, where the session is Cassandra's anonymous user.
const notAnonymous = "You have to be logged in and not anonymous to perform this request"

func unauthorized(format string, args ...any) error {
	return &translate.UnauthorizedError{Msg: fmt.Sprintf(format, args...)}
}

// authStatement runs a role or permission statement.
func (e *Execution) authStatement(ctx context.Context, p *translate.Auth, resp *[]byte) error {
	a := e.env.Auth
	if a == nil {
		return anonymousAuthStatement(p)
	}
	acc, err := a.SessionAccess(e.c, e.Now)
	if err != nil {
		return err
	}
	x := &authExec{a: a, acc: acc, e: e}
	switch s := p.Statement.(type) {
	case *translate.CreateRoleStmt:
		err = x.createRole(ctx, s)
	case *translate.AlterRoleStmt:
		err = x.alterRole(ctx, s)
	case *translate.DropRoleStmt:
		err = x.dropRole(ctx, s)
	case *translate.GrantRoleStmt:
		err = x.grantRole(ctx, s)
	case *translate.ListRolesStmt:
		return x.listRoles(ctx, p, s, resp)
	case *translate.PermissionsStmt:
		if s.Op == translate.ListPermissions {
			return x.listPermissions(ctx, p, s, resp)
		}
		err = x.grantPermissions(ctx, p, s)
	default:
		err = fmt.Errorf("no executor for %T", p.Statement)
	}
	if err != nil {
		return err
	}
	*resp = cqlwire.AppendInt(*resp, cqlwire.ResultVoid)
	return nil
}

// anonymousAuthStatement answers a role or permission statement without
// authentication, as Cassandra does with its default authenticator: the
// checks that come first still apply, then the session is anonymous.
func anonymousAuthStatement(p *translate.Auth) error {
	var opts *translate.RoleOptions
	switch s := p.Statement.(type) {
	case *translate.CreateRoleStmt:
		if *s.Options.Superuser {
			return unauthorized("Only superusers can create a role with superuser status")
		}
		opts = &s.Options
	case *translate.AlterRoleStmt:
		if s.Options.Superuser != nil {
			return unauthorized("Only superusers are allowed to alter superuser status")
		}
		opts = &s.Options
	}
	if opts != nil {
		// Without the password authenticator the role manager takes no
		// password.
		for _, name := range opts.Given() {
			if name == "PASSWORD" || name == "HASHED_PASSWORD" {
				return invalidf("org.apache.cassandra.auth.CassandraRoleManager doesn't support %s", name)
			}
		}
	}
	return unauthorized(notAnonymous)
}

// authExec runs one role or permission statement for a session.
type authExec struct {
	a   *auth.Authenticator
	acc *auth.Access
	e   *Execution
}

// insufficient is the refusal of role statements, which Cassandra words
// more kindly than a missing permission.
func (x *authExec) insufficient() error {
	return unauthorized("User %s does not have sufficient privileges to perform the requested operation", x.acc.Role)
}

// roleGraph is every role, by name, read for one statement.
type roleGraph map[string]*pgschema.Role

func (x *authExec) roles(ctx context.Context) (roleGraph, error) {
	var roles []*pgschema.Role
	err := x.a.Read(ctx, func(q pgschema.Querier) error {
		var err error
		roles, err = pgschema.LoadRoles(ctx, q)
		return err
	})
	if err != nil {
		return nil, err
	}
	g := roleGraph{}
	for _, r := range roles {
		g[r.Name] = r
	}
	return g, nil
}

// granted returns a role and the roles it holds, directly or, when
// recursive, through grants of grants; roles that do not exist are left
// out, as Cassandra's role manager leaves them.
func (g roleGraph) granted(name string, recursive bool) []string {
	seen := map[string]bool{}
	var walk func(n string, depth int)
	walk = func(n string, depth int) {
		r := g[n]
		if r == nil || seen[n] {
			return
		}
		seen[n] = true
		if depth == 0 || recursive {
			for _, m := range r.MemberOf {
				walk(m, depth+1)
			}
		}
	}
	walk(name, 0)
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// super reports whether a role is a superuser or holds one.
func (g roleGraph) super(name string) bool {
	for _, n := range g.granted(name, true) {
		if g[n].Super {
			return true
		}
	}
	return false
}

func roleResource(name string) translate.Resource {
	return translate.Resource{Kind: translate.RoleResource, Name: name}
}

var allRoles = translate.Resource{Kind: translate.AllRolesResource}

// hashPassword returns the hash to store for a statement's password
// option, nil when the statement sets none. Planning hashed the password
// already (sealPassword).
func (x *authExec) hashPassword(_ context.Context, o *translate.RoleOptions) (*string, error) {
	switch {
	case o.HashedPassword != nil:
		return o.HashedPassword, nil
	case o.Password == nil:
		return nil, nil
	}
	hash, err := x.a.HashPassword(*o.Password)
	return &hash, err
}

// sealPassword replaces the password a role statement's plan sets by its
// hash, so that the plan holds no password, and reports whether it did.
// The gateway hashes passwords itself: only hashes reach the shards.
func (v *Env) sealPassword(p translate.Plan) (bool, error) {
	a, ok := p.(*translate.Auth)
	if !ok {
		return false, nil
	}
	o := a.RoleOptions()
	if o == nil || o.Password == nil {
		return false, nil
	}
	hash, err := v.Auth.HashPassword(*o.Password)
	if err != nil {
		return false, err
	}
	o.Password, o.HashedPassword = nil, &hash
	return true, nil
}

func (x *authExec) createRole(ctx context.Context, s *translate.CreateRoleStmt) error {
	if !x.acc.Has(translate.PermCreate, allRoles) {
		return x.insufficient()
	}
	if *s.Options.Superuser && !x.acc.Super {
		return unauthorized("Only superusers can create a role with superuser status")
	}
	g, err := x.roles(ctx)
	if err != nil {
		return err
	}
	if g[s.Name] != nil {
		if s.IfNotExists {
			return nil
		}
		return invalidf("%s already exists", s.Name)
	}
	hash, err := x.hashPassword(ctx, &s.Options)
	if err != nil {
		return err
	}
	role := &pgschema.Role{Name: s.Name, Super: *s.Options.Superuser, Login: *s.Options.Login}
	creator := roleResource(s.Name)
	return x.a.Apply(ctx, func(ctx context.Context, tx pgx.Tx) error {
		created, err := pgschema.CreateRole(ctx, tx, role, hash)
		if err != nil || !created {
			return err
		}
		// The creator may alter, drop and grant the role it made.
		return pgschema.GrantPermissions(ctx, tx, x.acc.Role, creator.StoredName(), creator.Applicable().Names())
	})
}

// alterableOptions are the options a role may change of itself.
var alterableOptions = map[string]bool{"PASSWORD": true, "HASHED_PASSWORD": true}

func (x *authExec) alterRole(ctx context.Context, s *translate.AlterRoleStmt) error {
	o := &s.Options
	if o.Superuser != nil {
		if x.acc.Holds(s.Name) {
			return unauthorized("You aren't allowed to alter your own superuser status or that of a role granted to you")
		}
		if !x.acc.Super {
			return unauthorized("Only superusers are allowed to alter superuser status")
		}
	}
	if !x.acc.Super {
		if s.Name == x.acc.Role {
			for _, name := range o.Given() {
				if !alterableOptions[name] {
					return unauthorized("You aren't allowed to alter %s", name)
				}
			}
		} else if !x.acc.Has(translate.PermAlter, roleResource(s.Name)) {
			return x.insufficient()
		}
	}
	g, err := x.roles(ctx)
	if err != nil {
		return err
	}
	if g[s.Name] == nil {
		return invalidf("%s doesn't exist", s.Name)
	}
	hash, err := x.hashPassword(ctx, o)
	if err != nil {
		return err
	}
	defer x.a.ForgetLogins(s.Name)
	return x.a.Apply(ctx, func(ctx context.Context, tx pgx.Tx) error {
		_, err := pgschema.AlterRole(ctx, tx, s.Name, o.Superuser, o.Login, hash)
		return err
	})
}

func (x *authExec) dropRole(ctx context.Context, s *translate.DropRoleStmt) error {
	if !x.acc.Has(translate.PermDrop, roleResource(s.Name)) {
		return x.insufficient()
	}
	g, err := x.roles(ctx)
	if err != nil {
		return err
	}
	exists := g[s.Name] != nil
	if exists && g.super(s.Name) && !x.acc.Super {
		return unauthorized("Only superusers can drop a role with superuser status")
	}
	if !exists && !s.IfExists {
		return invalidf("%s doesn't exist", s.Name)
	}
	if s.Name == x.acc.Role {
		return invalidf("Cannot DROP primary role for current login")
	}
	if !exists {
		return nil
	}
	defer x.a.ForgetLogins(s.Name)
	return x.a.Apply(ctx, func(ctx context.Context, tx pgx.Tx) error {
		_, err := pgschema.DropRole(ctx, tx, s.Name, roleResource(s.Name).StoredName())
		return err
	})
}

func (x *authExec) grantRole(ctx context.Context, s *translate.GrantRoleStmt) error {
	if !x.acc.Has(translate.PermAuthorize, roleResource(s.Role)) {
		return x.insufficient()
	}
	g, err := x.roles(ctx)
	if err != nil {
		return err
	}
	for _, n := range []string{s.Role, s.Grantee} {
		if g[n] == nil {
			return invalidf("%s doesn't exist", n)
		}
	}
	if s.Revoke {
		if !slices.Contains(g.granted(s.Grantee, false), s.Role) {
			return invalidf("%s is not a member of %s", s.Grantee, s.Role)
		}
		return x.a.Apply(ctx, func(ctx context.Context, tx pgx.Tx) error {
			return pgschema.RevokeRole(ctx, tx, s.Role, s.Grantee)
		})
	}
	// A role may not hold itself, through any chain of grants.
	if slices.Contains(g.granted(s.Grantee, true), s.Role) {
		return invalidf("%s is a member of %s", s.Grantee, s.Role)
	}
	if slices.Contains(g.granted(s.Role, true), s.Grantee) {
		return invalidf("%s is a member of %s", s.Role, s.Grantee)
	}
	return x.a.Apply(ctx, func(ctx context.Context, tx pgx.Tx) error {
		return pgschema.GrantRole(ctx, tx, s.Role, s.Grantee)
	})
}

// listRoles answers LIST ROLES and LIST USERS. A role that may DESCRIBE
// all roles (a superuser does) sees any; the others see their own roles
// and those of the roles they hold.
func (x *authExec) listRoles(ctx context.Context, p *translate.Auth, s *translate.ListRolesStmt, resp *[]byte) error {
	g, err := x.roles(ctx)
	if err != nil {
		return err
	}
	if s.Of != "" && g[s.Of] == nil {
		return invalidf("%s doesn't exist", roleResource(s.Of))
	}
	// LIST USERS lists without following grants, LIST ROLES with unless
	// NORECURSIVE.
	recursive := !s.NoRecursive && !s.Users
	var names []string
	switch {
	case x.acc.Super || x.acc.Perms[allRoles]&translate.PermDescribe != 0:
		if s.Of == "" {
			for n := range g {
				names = append(names, n)
			}
			slices.Sort(names)
		} else {
			names = g.granted(s.Of, recursive)
		}
	case s.Of == "":
		names = g.granted(x.acc.Role, recursive)
	case slices.Contains(g.granted(x.acc.Role, true), s.Of):
		names = g.granted(s.Of, recursive)
	default:
		return unauthorized("You are not authorized to view roles granted to %s ", s.Of)
	}
	var rows [][][]byte
	for _, n := range names {
		r := g[n]
		switch {
		case s.Users && !r.Login:
		case s.Users:
			rows = append(rows, [][]byte{TextValue(n), BoolValue(g.super(n)), TextValue("ALL")})
		default:
			rows = append(rows, [][]byte{TextValue(n), BoolValue(r.Super), BoolValue(r.Login), emptyMap, TextValue("ALL")})
		}
	}
	x.e.appendAuthRows(p, rows, resp)
	return nil
}

// emptyMap is a map with no entry: the options of a role.
var emptyMap = []byte{0, 0, 0, 0}

// appendAuthRows answers a LIST with its rows in one page, or VOID when
// there is none, as Cassandra answers.
func (e *Execution) appendAuthRows(p *translate.Auth, rows [][][]byte, resp *[]byte) {
	if len(rows) == 0 {
		*resp = cqlwire.AppendInt(*resp, cqlwire.ResultVoid)
		return
	}
	*resp = cqlwire.AppendInt(*resp, cqlwire.ResultRows)
	*resp = cqlwire.AppendRowsMetadata(*resp, p.Result, e.params.SkipMetadata(), nil)
	*resp = cqlwire.AppendInt(*resp, int32(len(rows)))
	for _, row := range rows {
		for _, v := range row {
			*resp = cqlwire.AppendBytes(*resp, v)
		}
	}
}

// resourceExists reports whether a resource exists: a role of g, or what
// the schema snapshot holds.
func (x *authExec) resourceExists(g roleGraph, r *translate.Resource) bool {
	if r.Kind == translate.RoleResource {
		return g[r.Name] != nil
	}
	return r.Exists(x.e.schema)
}

// grantPermissions runs GRANT and REVOKE of permissions: the granter must
// hold AUTHORIZE and every permission it grants.
func (x *authExec) grantPermissions(ctx context.Context, p *translate.Auth, s *translate.PermissionsStmt) error {
	res := *p.Resource
	if err := x.acc.Ensure(translate.PermAuthorize, res); err != nil {
		return err
	}
	for _, name := range s.Permissions.Names() {
		if err := x.acc.Ensure(translate.PermissionNamed(name), res); err != nil {
			return err
		}
	}
	g, err := x.roles(ctx)
	if err != nil {
		return err
	}
	if g[s.Role] == nil {
		return invalidf("Role %s doesn't exist", s.Role)
	}
	if !x.resourceExists(g, &res) {
		return invalidf("Resource %s doesn't exist", res)
	}
	perms := s.Permissions.Names()
	return x.a.Apply(ctx, func(ctx context.Context, tx pgx.Tx) error {
		if s.Op == translate.RevokePermissions {
			return pgschema.RevokePermissions(ctx, tx, s.Role, res.StoredName(), perms)
		}
		return pgschema.GrantPermissions(ctx, tx, s.Role, res.StoredName(), perms)
	})
}

// permissionDetail is a row of LIST PERMISSIONS.
type permissionDetail struct {
	role     string
	resource string
	shown    string
	perm     translate.Permissions
}

// listPermissions answers LIST PERMISSIONS: a superuser sees anyone's, a
// role its own and those of the roles it holds. OF a role lists what it
// holds through the roles granted to it too; ON a resource lists its
// parents' too, unless NORECURSIVE.
func (x *authExec) listPermissions(ctx context.Context, p *translate.Auth, s *translate.PermissionsStmt, resp *[]byte) error {
	g, err := x.roles(ctx)
	if err != nil {
		return err
	}
	if p.Resource != nil && !x.resourceExists(g, p.Resource) {
		return invalidf("%s doesn't exist", *p.Resource)
	}
	if s.Role != "" && g[s.Role] == nil {
		return invalidf("%s doesn't exist", roleResource(s.Role))
	}
	if !x.acc.Super && (s.Role == "" || !x.acc.Holds(s.Role)) {
		whose := "everyone"
		if s.Role != "" {
			whose = s.Role
		}
		return unauthorized("You are not authorized to view %s's permissions", whose)
	}
	var roles []string
	if s.Role != "" {
		roles = g.granted(s.Role, true)
	}
	var resources map[string]bool
	if p.Resource != nil {
		resources = map[string]bool{p.Resource.StoredName(): true}
		if !s.NoRecursive {
			for _, r := range p.Resource.Chain() {
				resources[r.StoredName()] = true
			}
		}
	}
	var grants []pgschema.Grant
	err = x.a.Read(ctx, func(q pgschema.Querier) error {
		var err error
		grants, err = pgschema.LoadGrants(ctx, q, roles, "")
		return err
	})
	if err != nil {
		return err
	}
	var details []permissionDetail
	for _, gr := range grants {
		if resources != nil && !resources[gr.Resource] {
			continue
		}
		shown := gr.Resource
		if r, ok := translate.ResourceNamed(gr.Resource); ok {
			shown = r.String()
		}
		for _, name := range gr.Permissions {
			if perm := translate.PermissionNamed(name); perm&s.Permissions != 0 {
				details = append(details, permissionDetail{role: gr.Role, resource: gr.Resource, shown: shown, perm: perm})
			}
		}
	}
	slices.SortFunc(details, func(a, b permissionDetail) int {
		return cmp.Or(cmp.Compare(a.role, b.role), cmp.Compare(a.resource, b.resource), cmp.Compare(a.perm, b.perm))
	})
	rows := make([][][]byte, len(details))
	for i, d := range details {
		rows[i] = [][]byte{TextValue(d.role), TextValue(d.role), TextValue(d.shown), TextValue(d.perm.String())}
	}
	x.e.appendAuthRows(p, rows, resp)
	return nil
}

// authSchemaChange keeps permissions in step with a schema change, in the
// change's own transaction on each shard: the role that creates a keyspace
// or table gets every permission on it, as in Cassandra, and dropping one
// revokes every permission on it, so that one created again under the
// same name starts with none. creator is empty without authentication.
// functionResource is the function or aggregate a change makes or drops.
func functionResource(p *translate.SchemaChange) translate.Resource {
	if p.NewAggregate != nil {
		return translate.FunctionResourceOf(p.Keyspace, p.Name, p.NewAggregate.ArgTypes)
	}
	return translate.FunctionResourceOf(p.Keyspace, p.Name, p.NewFunction.ArgTypes)
}

func authSchemaChange(ctx context.Context, tx pgx.Tx, p *translate.SchemaChange, creator string) error {
	keyspace := translate.Resource{Kind: translate.KeyspaceResource, Keyspace: p.Keyspace}
	functions := translate.Resource{Kind: translate.KeyspaceFunctionsResource, Keyspace: p.Keyspace}
	table := translate.Resource{Kind: translate.TableResource, Keyspace: p.Keyspace, Name: p.Name}
	grant := func(rs ...translate.Resource) error {
		if creator == "" {
			return nil
		}
		for _, r := range rs {
			if err := pgschema.GrantPermissions(ctx, tx, creator, r.StoredName(), r.Applicable().Names()); err != nil {
				return err
			}
		}
		return nil
	}
	switch s := p.Statement.(type) {
	case *translate.CreateKeyspaceStmt:
		return grant(keyspace, functions)
	case *translate.CreateTableStmt:
		return grant(table)
	case *translate.CreateFunctionStmt, *translate.CreateAggregateStmt:
		if p.Change == "CREATED" {
			return grant(functionResource(p))
		}
	case *translate.DropFunctionStmt:
		return pgschema.RevokeAllOn(ctx, tx, []string{functionResource(p).StoredName()}, nil)
	case *translate.DropStmt:
		switch s.Kind {
		case translate.DropKeyspace:
			return pgschema.RevokeAllOn(ctx, tx, []string{keyspace.StoredName(), functions.StoredName()},
				[]string{keyspace.StoredName()})
		case translate.DropTable:
			return pgschema.RevokeAllOn(ctx, tx, []string{table.StoredName()}, nil)
		}
	}
	return nil
}
