package translate

import (
	"strings"

	"github.com/cqlpg/cqlpg/pgschema"
)

// Permissions is a set of Cassandra's permissions, one bit each, in
// Cassandra's order (which LIST PERMISSIONS sorts by).
type Permissions uint16

// The permissions of Cassandra 4.1.
const (
	PermCreate Permissions = 1 << iota
	PermAlter
	PermDrop
	PermSelect
	PermModify
	PermAuthorize
	PermDescribe
	PermExecute

	// AllPermissions is ALL [PERMISSIONS] before it is narrowed to what a
	// resource supports.
	AllPermissions = PermExecute<<1 - 1
)

// permissionNames are the permissions' names, bit by bit.
var permissionNames = [...]string{"CREATE", "ALTER", "DROP", "SELECT", "MODIFY", "AUTHORIZE", "DESCRIBE", "EXECUTE"}

// PermissionNamed returns the permission of a name in upper or lower case,
// or 0.
func PermissionNamed(name string) Permissions {
	for i, n := range permissionNames {
		if strings.EqualFold(n, name) {
			return 1 << i
		}
	}
	return 0
}

// Names lists the set's permissions by name, in Cassandra's order.
func (ps Permissions) Names() []string {
	var out []string
	for i, n := range permissionNames {
		if ps&(1<<i) != 0 {
			out = append(out, n)
		}
	}
	return out
}

// String is the permission's name, for a set of one.
func (ps Permissions) String() string { return strings.Join(ps.Names(), ", ") }

// ResourceKind says what a permission applies to.
type ResourceKind uint8

// Resource kinds: Cassandra's data, role, function and JMX resources, of
// which cqlpg has the data and role ones and keeps grants on the others.
const (
	AllKeyspacesResource ResourceKind = iota
	KeyspaceResource
	TableResource
	AllRolesResource
	RoleResource
	AllFunctionsResource
	KeyspaceFunctionsResource
	AllMBeansResource
	// FunctionResource is one function or aggregate: Keyspace, and Name
	// its name and argument types, "f(int, text)".
	FunctionResource
)

// Resource is what permissions are granted on. Keyspace is set for a
// keyspace, a table and a keyspace's functions; Name is a table's or a
// role's name.
type Resource struct {
	Kind     ResourceKind
	Keyspace string
	Name     string
}

// The permissions each kind of resource supports.
var (
	keyspacePermissions = PermCreate | PermAlter | PermDrop | PermSelect | PermModify | PermAuthorize
	tablePermissions    = PermAlter | PermDrop | PermSelect | PermModify | PermAuthorize
	allRolesPermissions = PermCreate | PermAlter | PermDrop | PermAuthorize | PermDescribe
	rolePermissions     = PermAlter | PermDrop | PermAuthorize
	functionPermissions = PermCreate | PermAlter | PermDrop | PermAuthorize | PermExecute
	mbeanPermissions    = PermAuthorize | PermDescribe | PermExecute | PermModify | PermSelect
)

// Applicable returns the permissions the resource supports: what ALL
// grants on it, and everything a superuser holds on it.
func (r Resource) Applicable() Permissions {
	switch r.Kind {
	case AllKeyspacesResource, KeyspaceResource:
		return keyspacePermissions
	case TableResource:
		return tablePermissions
	case AllRolesResource:
		return allRolesPermissions
	case RoleResource:
		return rolePermissions
	case AllFunctionsResource, KeyspaceFunctionsResource:
		return functionPermissions
	case FunctionResource:
		return PermAlter | PermDrop | PermAuthorize | PermExecute
	}
	return mbeanPermissions
}

// typeName is the resource's kind as Cassandra's parser names it in
// errors.
func (r Resource) typeName() string {
	switch r.Kind {
	case AllKeyspacesResource, KeyspaceResource, TableResource:
		return "DataResource"
	case AllRolesResource, RoleResource:
		return "RoleResource"
	case AllFunctionsResource, KeyspaceFunctionsResource, FunctionResource:
		return "FunctionResource"
	}
	return "JMXResource"
}

// Parent returns the resource one level up, if any: a table's keyspace,
// a keyspace's all keyspaces, a role's all roles.
func (r Resource) Parent() (Resource, bool) {
	switch r.Kind {
	case KeyspaceResource:
		return Resource{Kind: AllKeyspacesResource}, true
	case TableResource:
		return Resource{Kind: KeyspaceResource, Keyspace: r.Keyspace}, true
	case RoleResource:
		return Resource{Kind: AllRolesResource}, true
	case KeyspaceFunctionsResource:
		return Resource{Kind: AllFunctionsResource}, true
	case FunctionResource:
		return Resource{Kind: KeyspaceFunctionsResource, Keyspace: r.Keyspace}, true
	}
	return Resource{}, false
}

// Chain returns the resource and its ancestors, nearest first.
func (r Resource) Chain() []Resource {
	out := []Resource{r}
	for p, ok := r.Parent(); ok; p, ok = p.Parent() {
		out = append(out, p)
	}
	return out
}

// String is the resource as Cassandra's messages show it: <all keyspaces>,
// <keyspace ks>, <table ks.t>, <all roles>, <role r> and so on.
func (r Resource) String() string {
	switch r.Kind {
	case AllKeyspacesResource:
		return "<all keyspaces>"
	case KeyspaceResource:
		return "<keyspace " + r.Keyspace + ">"
	case TableResource:
		return "<table " + r.Keyspace + "." + r.Name + ">"
	case AllRolesResource:
		return "<all roles>"
	case RoleResource:
		return "<role " + r.Name + ">"
	case AllFunctionsResource:
		return "<all functions>"
	case KeyspaceFunctionsResource:
		return "<all functions in " + r.Keyspace + ">"
	case FunctionResource:
		return "<function " + r.Keyspace + "." + r.Name + ">"
	}
	return "<all mbeans>"
}

// StoredName is the resource's name as Cassandra stores grants, which the
// catalog keeps too: data, data/ks, data/ks/t, roles, roles/r, functions,
// functions/ks, mbean.
func (r Resource) StoredName() string {
	switch r.Kind {
	case AllKeyspacesResource:
		return "data"
	case KeyspaceResource:
		return "data/" + r.Keyspace
	case TableResource:
		return "data/" + r.Keyspace + "/" + r.Name
	case AllRolesResource:
		return "roles"
	case RoleResource:
		return "roles/" + r.Name
	case AllFunctionsResource:
		return "functions"
	case KeyspaceFunctionsResource:
		return "functions/" + r.Keyspace
	case FunctionResource:
		name, args, _ := strings.Cut(strings.TrimSuffix(r.Name, ")"), "(")
		return "functions/" + r.Keyspace + "/" + name + "[" + strings.ReplaceAll(args, ", ", "^") + "]"
	}
	return "mbean"
}

// ResourceNamed reads a stored resource name back; ok is false for a name
// cqlpg does not know (a single function or MBean granted in Cassandra).
func ResourceNamed(name string) (r Resource, ok bool) {
	root, rest, nested := strings.Cut(name, "/")
	switch root {
	case "data":
		if !nested {
			return Resource{Kind: AllKeyspacesResource}, true
		}
		if ks, t, isTable := strings.Cut(rest, "/"); isTable {
			return Resource{Kind: TableResource, Keyspace: ks, Name: t}, true
		}
		return Resource{Kind: KeyspaceResource, Keyspace: rest}, true
	case "roles":
		if !nested {
			return Resource{Kind: AllRolesResource}, true
		}
		return Resource{Kind: RoleResource, Name: rest}, true
	case "functions":
		if !nested {
			return Resource{Kind: AllFunctionsResource}, true
		}
		ks, fn, isFunction := strings.Cut(rest, "/")
		if !isFunction {
			return Resource{Kind: KeyspaceFunctionsResource, Keyspace: rest}, true
		}
		if name, args, ok := strings.Cut(strings.TrimSuffix(fn, "]"), "["); ok {
			return Resource{Kind: FunctionResource, Keyspace: ks, Name: name + "(" + strings.ReplaceAll(args, "^", ", ") + ")"}, true
		}
	case "mbean":
		if !nested {
			return Resource{Kind: AllMBeansResource}, true
		}
	}
	return Resource{}, false
}

// Exists reports whether a data or function resource exists in schema;
// roles are the gateway's to check, and the roots always exist.
func (r Resource) Exists(schema *pgschema.Schema) bool {
	switch r.Kind {
	case KeyspaceResource, KeyspaceFunctionsResource:
		return schema.Keyspace(r.Keyspace) != nil
	case TableResource:
		return schema.Table(r.Keyspace, r.Name) != nil
	case FunctionResource:
		k := schema.Keyspace(r.Keyspace)
		if k == nil {
			return false
		}
		for _, f := range k.Functions {
			if FunctionResourceOf(k.Name, f.Name, f.ArgTypes) == r {
				return true
			}
		}
		for _, a := range k.Aggregates {
			if FunctionResourceOf(k.Name, a.Name, a.ArgTypes) == r {
				return true
			}
		}
		return false
	}
	return true
}

// FunctionResourceOf names a function or aggregate as a resource.
func FunctionResourceOf(keyspace, name string, args []*pgschema.Type) Resource {
	types := make([]string, len(args))
	for i, t := range args {
		types[i] = t.String()
	}
	return Resource{Kind: FunctionResource, Keyspace: keyspace, Name: name + "(" + strings.Join(types, ", ") + ")"}
}
