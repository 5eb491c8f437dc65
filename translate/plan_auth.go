package translate

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/cqlpg/cqlpg/pgschema"
)

// Auth is a role or permission statement: CREATE, ALTER and DROP ROLE or
// USER, GRANT and REVOKE of roles and permissions, and the LISTs. Its
// checks that need the roles (whether one exists, what the session may
// do) are the gateway's, which runs it against the catalog's roles.
type Auth struct {
	Metadata
	// Statement is the parsed statement.
	Statement Statement
	// Resource is a permission statement's resource, a table's keyspace
	// resolved; nil for LIST without ON and for the role statements.
	Resource *Resource
}

// RoleOptions returns the options a CREATE or ALTER ROLE (or USER) sets,
// nil for the other statements.
func (a *Auth) RoleOptions() *RoleOptions {
	switch s := a.Statement.(type) {
	case *CreateRoleStmt:
		return &s.Options
	case *AlterRoleStmt:
		return &s.Options
	}
	return nil
}

// The result columns of the LISTs, in Cassandra's pseudo-tables of
// system_auth.
var (
	authText        = pgschema.Scalar(pgschema.Text)
	authBoolean     = pgschema.Scalar(pgschema.Boolean)
	rolesColumns    = authColumns("roles", "role", "super", "login", "options", "datacenters")
	usersColumns    = authColumns("users", "name", "super", "datacenters")
	permissionsCols = authColumns("permissions", "role", "username", "resource", "permission")
)

func authColumns(table string, names ...string) []ColumnSpec {
	specs := make([]ColumnSpec, len(names))
	for i, n := range names {
		typ := authText
		switch n {
		case "super", "login":
			typ = authBoolean
		case "options":
			typ = pgschema.NewMap(authText, authText, false)
		}
		specs[i] = ColumnSpec{Keyspace: "system_auth", Table: table, Name: n, Type: typ}
	}
	return specs
}

// bcryptHash matches the hashes Cassandra's bcrypt library accepts: its
// $2a$ form (or the older $2$), two digits of cost, 22 characters of salt
// and 31 of hash.
var bcryptHash = regexp.MustCompile(`^\$2a?\$[0-9]{2}\$[./A-Za-z0-9]{53}$`)

// roleManager is the class Cassandra names in errors about role options.
const roleManager = "org.apache.cassandra.auth.CassandraRoleManager"

// checkRoleOptions applies the checks of Cassandra's RoleOptions.validate
// that do not depend on how the gateway runs.
func checkRoleOptions(o *RoleOptions) error {
	if o.Options {
		return invalidf("%s doesn't support OPTIONS", roleManager)
	}
	if o.Password != nil && o.HashedPassword != nil {
		return invalidf("Options 'password' and 'hashed password' are mutually exclusive")
	}
	if o.HashedPassword != nil && !bcryptHash.MatchString(*o.HashedPassword) {
		return invalidf("Invalid hashed password value. Please use jBcrypt.")
	}
	return nil
}

func (p *planner) planAuth(stmt Statement) (Plan, error) {
	a := &Auth{Statement: stmt}
	switch s := stmt.(type) {
	case *CreateRoleStmt:
		if err := checkRoleOptions(&s.Options); err != nil {
			return nil, err
		}
		if s.Name == "" {
			return nil, invalidf("Role name can't be an empty string")
		}
	case *AlterRoleStmt:
		if err := checkRoleOptions(&s.Options); err != nil {
			return nil, err
		}
		if s.Options.empty() {
			return nil, invalidf("ALTER [ROLE|USER] can't be empty")
		}
	case *ListRolesStmt:
		a.Result = slices.Clone(rolesColumns)
		if s.Users {
			a.Result = slices.Clone(usersColumns)
		}
	case *PermissionsStmt:
		if s.Op == ListPermissions {
			a.Result = slices.Clone(permissionsCols)
		}
		if s.Resource != nil {
			r := *s.Resource
			if r.Kind == TableResource || r.Kind == FunctionResource {
				ks, err := p.keyspaceName(r.Keyspace)
				if err != nil {
					return nil, err
				}
				r.Keyspace = ks
			}
			a.Resource = &r
		}
	}
	return a, nil
}

// String renders the statement with its names resolved, passwords left
// out, for logs and tests.
func (a *Auth) String() string {
	var b strings.Builder
	switch s := a.Statement.(type) {
	case *CreateRoleStmt:
		fmt.Fprintf(&b, "CREATE %s %q", roleOrUser(s.User), s.Name)
		if s.IfNotExists {
			b.WriteString(" IF NOT EXISTS")
		}
		writeRoleOptions(&b, &s.Options)
	case *AlterRoleStmt:
		fmt.Fprintf(&b, "ALTER %s %q", roleOrUser(s.User), s.Name)
		writeRoleOptions(&b, &s.Options)
	case *DropRoleStmt:
		fmt.Fprintf(&b, "DROP %s %q", roleOrUser(s.User), s.Name)
		if s.IfExists {
			b.WriteString(" IF EXISTS")
		}
	case *GrantRoleStmt:
		if s.Revoke {
			fmt.Fprintf(&b, "REVOKE %q FROM %q", s.Role, s.Grantee)
		} else {
			fmt.Fprintf(&b, "GRANT %q TO %q", s.Role, s.Grantee)
		}
	case *ListRolesStmt:
		if s.Users {
			b.WriteString("LIST USERS")
			break
		}
		b.WriteString("LIST ROLES")
		if s.Of != "" {
			fmt.Fprintf(&b, " OF %q", s.Of)
		}
		if s.NoRecursive {
			b.WriteString(" NORECURSIVE")
		}
	case *PermissionsStmt:
		b.WriteString([...]string{"GRANT ", "REVOKE ", "LIST "}[s.Op])
		b.WriteString(strings.Join(s.Permissions.Names(), ","))
		if a.Resource != nil {
			fmt.Fprintf(&b, " ON %s (%s)", a.Resource, a.Resource.StoredName())
		}
		switch {
		case s.Op == GrantPermissions:
			fmt.Fprintf(&b, " TO %q", s.Role)
		case s.Op == RevokePermissions:
			fmt.Fprintf(&b, " FROM %q", s.Role)
		case s.Role != "":
			fmt.Fprintf(&b, " OF %q", s.Role)
		}
		if s.NoRecursive {
			b.WriteString(" NORECURSIVE")
		}
	}
	return b.String()
}

func roleOrUser(user bool) string {
	if user {
		return "USER"
	}
	return "ROLE"
}

func writeRoleOptions(b *strings.Builder, o *RoleOptions) {
	for _, name := range o.order {
		switch name {
		case "LOGIN":
			fmt.Fprintf(b, " LOGIN=%t", *o.Login)
		case "SUPERUSER":
			fmt.Fprintf(b, " SUPERUSER=%t", *o.Superuser)
		default:
			b.WriteString(" " + name)
		}
	}
	if o.Datacenters {
		b.WriteString(" ACCESS")
	}
}
