package translate

import (
	"fmt"
	"strings"
)

// RoleOptions are the options of CREATE and ALTER ROLE (and USER); nil
// means not given.
type RoleOptions struct {
	Password       *string
	HashedPassword *string
	Login          *bool
	Superuser      *bool
	// Options is set when OPTIONS = {...} was given, which Cassandra's
	// role manager, and so cqlpg, supports for no role.
	Options bool
	// Datacenters is set when ACCESS TO [ALL] DATACENTERS was given.
	// Cassandra's default network authorizer lets every role reach every
	// datacenter whatever it says, and so does cqlpg.
	Datacenters bool
	// order lists the options given, by Cassandra's option names, for the
	// errors that name the first one refused.
	order []string
}

// Given lists the options given by Cassandra's names (PASSWORD,
// HASHED_PASSWORD, LOGIN, SUPERUSER, OPTIONS), in statement order.
func (o *RoleOptions) Given() []string { return o.order }

// empty reports whether no option was given.
func (o *RoleOptions) empty() bool { return len(o.order) == 0 && !o.Datacenters }

// CreateRoleStmt is CREATE ROLE, or CREATE USER when User is set.
type CreateRoleStmt struct {
	Name        string
	IfNotExists bool
	User        bool
	Options     RoleOptions
}

// AlterRoleStmt is ALTER ROLE, or ALTER USER when User is set.
type AlterRoleStmt struct {
	Name    string
	User    bool
	Options RoleOptions
}

// DropRoleStmt is DROP ROLE, or DROP USER when User is set.
type DropRoleStmt struct {
	Name     string
	IfExists bool
	User     bool
}

// GrantRoleStmt is GRANT role TO grantee, or REVOKE role FROM grantee.
type GrantRoleStmt struct {
	Role, Grantee string
	Revoke        bool
}

// ListRolesStmt is LIST ROLES [OF role] [NORECURSIVE], or LIST USERS.
type ListRolesStmt struct {
	Of          string
	NoRecursive bool
	Users       bool
}

// PermissionsOp says what a permission statement does.
type PermissionsOp uint8

// Permission statements.
const (
	GrantPermissions PermissionsOp = iota
	RevokePermissions
	ListPermissions
)

// PermissionsStmt is GRANT or REVOKE of permissions on a resource, or
// LIST of them. A table's Keyspace may be empty (the session's); Resource
// is nil for LIST without ON, and Role empty for LIST without OF.
type PermissionsStmt struct {
	Op          PermissionsOp
	Permissions Permissions
	Resource    *Resource
	Role        string
	NoRecursive bool
}

func (*CreateRoleStmt) statement()  {}
func (*AlterRoleStmt) statement()   {}
func (*DropRoleStmt) statement()    {}
func (*GrantRoleStmt) statement()   {}
func (*ListRolesStmt) statement()   {}
func (*PermissionsStmt) statement() {}

// roleName parses a role's name: an identifier (lower-cased unless
// quoted) or a string, kept as written.
//
//	roleName := IDENT | QUOTED_NAME | STRING_LITERAL
func (p *parser) roleName() (string, error) {
	switch p.tok.kind {
	case tokString:
		name := p.tok.text
		p.next()
		return name, nil
	case tokMarker:
		return "", &SyntaxError{Msg: "Bind variables cannot be used for role names"}
	}
	return p.ident()
}

// username parses the name of CREATE, ALTER and DROP USER, which keeps
// the case of an unquoted identifier, as Cassandra's legacy syntax does.
//
//	username := IDENT | STRING_LITERAL
func (p *parser) username() (string, error) {
	switch p.tok.kind {
	case tokIdent:
		raw := p.tok.raw
		if _, err := p.ident(); err != nil {
			return "", err
		}
		return raw, nil
	case tokString:
		name := p.tok.text
		p.next()
		return name, nil
	case tokQuotedIdent:
		return "", &SyntaxError{Msg: "Quoted strings are are not supported for user names and USER is deprecated, please use ROLE"}
	}
	return "", p.unexpected("")
}

// createRole parses CREATE ROLE and CREATE USER.
//
//	createRole := CREATE ROLE (IF NOT EXISTS)? roleName (WITH roleOptions)?
//	createUser := CREATE USER (IF NOT EXISTS)? username (WITH userPassword)? (SUPERUSER | NOSUPERUSER)?
func (p *parser) createRole() (Statement, error) {
	p.next()
	cr := &CreateRoleStmt{User: p.isKeyword("user")}
	p.next()
	var err error
	if cr.IfNotExists, err = p.ifNotExists(); err != nil {
		return nil, err
	}
	if cr.User {
		if cr.Name, err = p.username(); err != nil {
			return nil, err
		}
		login := true
		cr.Options.Login = &login
		cr.Options.order = append(cr.Options.order, "LOGIN")
		if err := p.userOptions(&cr.Options); err != nil {
			return nil, err
		}
		if cr.Options.Superuser == nil {
			super := false
			cr.Options.Superuser = &super
			cr.Options.order = append(cr.Options.order, "SUPERUSER")
		}
		return cr, nil
	}
	if cr.Name, err = p.roleName(); err != nil {
		return nil, err
	}
	if p.acceptKeyword("with") {
		if err := p.roleOptions(&cr.Options); err != nil {
			return nil, err
		}
	}
	// Unset, both default to false, as options given.
	off := false
	if cr.Options.Login == nil {
		cr.Options.Login = &off
		cr.Options.order = append(cr.Options.order, "LOGIN")
	}
	if cr.Options.Superuser == nil {
		cr.Options.Superuser = &off
		cr.Options.order = append(cr.Options.order, "SUPERUSER")
	}
	return cr, nil
}

// alterRole parses ALTER ROLE and ALTER USER.
//
//	alterRole := ALTER ROLE roleName (WITH roleOptions)?
//	alterUser := ALTER USER username (WITH userPassword)? (SUPERUSER | NOSUPERUSER)?
func (p *parser) alterRole() (Statement, error) {
	p.next()
	ar := &AlterRoleStmt{User: p.isKeyword("user")}
	p.next()
	var err error
	if ar.User {
		if ar.Name, err = p.username(); err != nil {
			return nil, err
		}
		return ar, p.userOptions(&ar.Options)
	}
	if ar.Name, err = p.roleName(); err != nil {
		return nil, err
	}
	if p.acceptKeyword("with") {
		err = p.roleOptions(&ar.Options)
	}
	return ar, err
}

// userOptions parses the legacy options of CREATE and ALTER USER.
//
//	userOptions := (WITH userPassword)? (SUPERUSER | NOSUPERUSER)?
//	userPassword := PASSWORD STRING_LITERAL | HASHED PASSWORD STRING_LITERAL
func (p *parser) userOptions(o *RoleOptions) error {
	if p.acceptKeyword("with") {
		hashed := p.acceptKeyword("hashed")
		if err := p.expectKeyword("password"); err != nil {
			return err
		}
		pw, err := p.stringLiteral()
		if err != nil {
			return err
		}
		if hashed {
			o.HashedPassword = &pw
			o.order = append(o.order, "HASHED_PASSWORD")
		} else {
			o.Password = &pw
			o.order = append(o.order, "PASSWORD")
		}
	}
	if p.isKeyword("superuser") || p.isKeyword("nosuperuser") {
		super := p.isKeyword("superuser")
		p.next()
		o.Superuser = &super
		o.order = append(o.order, "SUPERUSER")
	}
	return nil
}

// roleOptions parses the options of CREATE and ALTER ROLE.
//
//	roleOptions := roleOption (AND roleOption)*
//	roleOption := PASSWORD '=' STRING_LITERAL | HASHED PASSWORD '=' STRING_LITERAL
//	            | OPTIONS '=' mapLiteral | SUPERUSER '=' BOOLEAN | LOGIN '=' BOOLEAN
//	            | ACCESS TO ALL DATACENTERS
//	            | ACCESS TO DATACENTERS '{' STRING_LITERAL (',' STRING_LITERAL)* '}'
func (p *parser) roleOptions(o *RoleOptions) error {
	for {
		if err := p.roleOption(o); err != nil {
			return err
		}
		if !p.acceptKeyword("and") {
			return nil
		}
	}
}

func (p *parser) roleOption(o *RoleOptions) error {
	name := ""
	switch {
	case p.acceptKeyword("password"):
		name = "PASSWORD"
	case p.acceptKeyword("hashed"):
		if err := p.expectKeyword("password"); err != nil {
			return err
		}
		name = "HASHED_PASSWORD"
	case p.acceptKeyword("options"):
		name = "OPTIONS"
	case p.acceptKeyword("superuser"):
		name = "SUPERUSER"
	case p.acceptKeyword("login"):
		name = "LOGIN"
	case p.acceptKeyword("access"):
		return p.datacenters(o)
	default:
		return p.unexpected("")
	}
	if err := p.expectPunct("="); err != nil {
		return err
	}
	for _, given := range o.order {
		if given == name {
			return &SyntaxError{Msg: fmt.Sprintf("Multiple definition for property '%s'", name)}
		}
	}
	o.order = append(o.order, name)
	switch name {
	case "PASSWORD", "HASHED_PASSWORD":
		pw, err := p.stringLiteral()
		if err != nil {
			return err
		}
		if name == "PASSWORD" {
			o.Password = &pw
		} else {
			o.HashedPassword = &pw
		}
	case "OPTIONS":
		if !p.isPunct("{") {
			return p.unexpected("'{'")
		}
		if _, err := p.braceLiteral(); err != nil {
			return err
		}
		o.Options = true
	default:
		if !p.isKeyword("true") && !p.isKeyword("false") {
			return p.unexpected("BOOLEAN")
		}
		b := p.isKeyword("true")
		p.next()
		if name == "LOGIN" {
			o.Login = &b
		} else {
			o.Superuser = &b
		}
	}
	return nil
}

// datacenters parses the rest of ACCESS TO [ALL] DATACENTERS.
func (p *parser) datacenters(o *RoleOptions) error {
	if err := p.expectKeyword("to"); err != nil {
		return err
	}
	o.Datacenters = true
	if p.acceptKeyword("all") {
		return p.expectKeyword("datacenters")
	}
	if err := p.expectKeyword("datacenters"); err != nil {
		return err
	}
	if err := p.expectPunct("{"); err != nil {
		return err
	}
	for {
		if _, err := p.stringLiteral(); err != nil {
			return err
		}
		if !p.acceptPunct(",") {
			return p.expectPunct("}")
		}
	}
}

// stringLiteral parses a string constant.
func (p *parser) stringLiteral() (string, error) {
	if p.tok.kind != tokString {
		return "", p.unexpected("STRING_LITERAL")
	}
	s := p.tok.text
	p.next()
	return s, nil
}

// dropRole parses DROP ROLE and DROP USER, after DROP.
//
//	dropRole := DROP ROLE (IF EXISTS)? roleName
//	dropUser := DROP USER (IF EXISTS)? username
func (p *parser) dropRole() (Statement, error) {
	dr := &DropRoleStmt{User: p.isKeyword("user")}
	p.next()
	dr.IfExists = p.ifExists()
	var err error
	if dr.User {
		dr.Name, err = p.username()
	} else {
		dr.Name, err = p.roleName()
	}
	return dr, err
}

// startsPermissions reports whether GRANT or REVOKE names permissions
// rather than a role: a permission's keyword, or ALL not followed by
// TO or FROM (which makes it a role called all).
func (p *parser) startsPermissions() bool {
	if p.tok.kind != tokIdent {
		return false
	}
	if p.tok.text == "all" {
		n := p.peek(1)
		return !(n.kind == tokIdent && (n.text == "to" || n.text == "from"))
	}
	return PermissionNamed(p.tok.text) != 0
}

// grantStatement parses GRANT and REVOKE, of permissions or of a role.
//
//	grant := GRANT permissionOrAll ON resource TO roleName | GRANT roleName TO roleName
//	revoke := REVOKE permissionOrAll ON resource FROM roleName | REVOKE roleName FROM roleName
func (p *parser) grantStatement() (Statement, error) {
	revoke := p.isKeyword("revoke")
	p.next()
	to := "to"
	if revoke {
		to = "from"
	}
	if !p.startsPermissions() {
		gr := &GrantRoleStmt{Revoke: revoke}
		var err error
		if gr.Role, err = p.roleName(); err != nil {
			return nil, err
		}
		if err := p.expectKeyword(to); err != nil {
			return nil, err
		}
		gr.Grantee, err = p.roleName()
		return gr, err
	}
	ps := &PermissionsStmt{Op: GrantPermissions}
	if revoke {
		ps.Op = RevokePermissions
	}
	var err error
	if ps.Permissions, err = p.permissionOrAll(); err != nil {
		return nil, err
	}
	if err := p.expectKeyword("on"); err != nil {
		return nil, err
	}
	if ps.Resource, err = p.resource(); err != nil {
		return nil, err
	}
	if err := p.expectKeyword(to); err != nil {
		return nil, err
	}
	if ps.Role, err = p.roleName(); err != nil {
		return nil, err
	}
	// As Cassandra's parser does, ALL becomes what the resource supports,
	// and naming only permissions it does not support is an error.
	ps.Permissions &= ps.Resource.Applicable()
	if ps.Permissions == 0 {
		return nil, &SyntaxError{Msg: "Resource type " + ps.Resource.typeName() + " does not support any of the requested permissions"}
	}
	return ps, nil
}

// listStatement parses LIST ROLES, LIST USERS and LIST permissions.
//
//	list := LIST ROLES (OF roleName)? NORECURSIVE?
//	      | LIST USERS
//	      | LIST permissionOrAll (ON resource)? (OF roleName)? NORECURSIVE?
func (p *parser) listStatement() (Statement, error) {
	p.next()
	var err error
	switch {
	case p.acceptKeyword("users"):
		return &ListRolesStmt{Users: true}, nil
	case p.acceptKeyword("roles"):
		lr := &ListRolesStmt{}
		if p.acceptKeyword("of") {
			if lr.Of, err = p.roleName(); err != nil {
				return nil, err
			}
		}
		lr.NoRecursive = p.acceptKeyword("norecursive")
		return lr, nil
	}
	ps := &PermissionsStmt{Op: ListPermissions}
	if ps.Permissions, err = p.permissionOrAll(); err != nil {
		return nil, err
	}
	if p.acceptKeyword("on") {
		if ps.Resource, err = p.resource(); err != nil {
			return nil, err
		}
	}
	if p.acceptKeyword("of") {
		if ps.Role, err = p.roleName(); err != nil {
			return nil, err
		}
	}
	ps.NoRecursive = p.acceptKeyword("norecursive")
	return ps, nil
}

// permissionOrAll parses the permissions of GRANT, REVOKE and LIST.
//
//	permissionOrAll := ALL PERMISSIONS? | permission PERMISSION? (',' permission PERMISSION?)*
//	permission := CREATE | ALTER | DROP | SELECT | MODIFY | AUTHORIZE | DESCRIBE | EXECUTE
func (p *parser) permissionOrAll() (Permissions, error) {
	if p.acceptKeyword("all") {
		p.acceptKeyword("permissions")
		return AllPermissions, nil
	}
	var ps Permissions
	for {
		perm := Permissions(0)
		if p.tok.kind == tokIdent {
			perm = PermissionNamed(p.tok.text)
		}
		if perm == 0 {
			return 0, p.unexpected("")
		}
		p.next()
		p.acceptKeyword("permission")
		ps |= perm
		if !p.acceptPunct(",") {
			return ps, nil
		}
	}
}

// resource parses what permissions are granted on.
//
//	resource := ALL KEYSPACES | KEYSPACE ident | (TABLE | COLUMNFAMILY)? tableName
//	          | ALL ROLES | ROLE roleName
//	          | ALL FUNCTIONS (IN KEYSPACE ident)? | FUNCTION functionName '(' types ')' | ALL MBEANS
func (p *parser) resource() (*Resource, error) {
	if p.isKeyword("all") && p.peek(1).kind == tokIdent {
		switch p.peek(1).text {
		case "keyspaces":
			p.next()
			p.next()
			return &Resource{Kind: AllKeyspacesResource}, nil
		case "roles":
			p.next()
			p.next()
			return &Resource{Kind: AllRolesResource}, nil
		case "mbeans":
			p.next()
			p.next()
			return &Resource{Kind: AllMBeansResource}, nil
		case "functions":
			p.next()
			p.next()
			if !p.acceptKeyword("in") {
				return &Resource{Kind: AllFunctionsResource}, nil
			}
			if err := p.expectKeyword("keyspace"); err != nil {
				return nil, err
			}
			ks, err := p.ident()
			return &Resource{Kind: KeyspaceFunctionsResource, Keyspace: ks}, err
		}
	}
	switch {
	case p.acceptKeyword("keyspace"):
		ks, err := p.ident()
		return &Resource{Kind: KeyspaceResource, Keyspace: ks}, err
	case p.acceptKeyword("function"):
		name, err := p.tableName()
		if err != nil {
			return nil, err
		}
		args, err := p.functionArgs(false)
		if err != nil {
			return nil, err
		}
		types := make([]string, len(args))
		for i, a := range args {
			types[i] = a.Type.String()
		}
		return &Resource{Kind: FunctionResource, Keyspace: name.Keyspace, Name: name.Name + "(" + strings.Join(types, ", ") + ")"}, nil
	case p.isKeyword("role") && p.peek(1).kind != tokEOF && !(p.peek(1).kind == tokIdent && isResourceEnd(p.peek(1).text)):
		p.next()
		name, err := p.roleName()
		return &Resource{Kind: RoleResource, Name: name}, err
	}
	if !p.acceptKeyword("table") {
		p.acceptKeyword("columnfamily")
	}
	t, err := p.tableName()
	return &Resource{Kind: TableResource, Keyspace: t.Keyspace, Name: t.Name}, err
}

// isResourceEnd reports whether a word ends a resource, which tells a
// table called role from ROLE name.
func isResourceEnd(word string) bool { return word == "to" || word == "from" || word == "of" }
