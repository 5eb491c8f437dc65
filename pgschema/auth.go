package pgschema

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"
)

// Role is a CQL role as the catalog keeps it (cqlpg.roles, Cassandra's
// system_auth.roles).
type Role struct {
	Name     string
	Super    bool
	Login    bool
	MemberOf []string
}

// Grant is the permissions one role holds on one resource, by Cassandra's
// resource and permission names (cqlpg.role_permissions).
type Grant struct {
	Role        string
	Resource    string
	Permissions []string
}

// LoginHash reads what checking a role's login needs: its password hash
// (empty when it has none) and whether it may log in; found is false
// when there is no such role. The password is checked by the gateway, so
// that it never reaches a shard.
func LoginHash(ctx context.Context, q Querier, role string) (hash string, login, found bool, err error) {
	var h *string
	err = q.QueryRow(ctx, `SELECT can_login, salted_hash FROM cqlpg.roles WHERE role = $1`, role).Scan(&login, &h)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", false, false, nil
	}
	if err != nil {
		return "", false, false, fmt.Errorf("read role %s: %w", role, err)
	}
	if h != nil {
		hash = *h
	}
	return hash, login, true, nil
}

// LoadRoles reads every role, sorted by name.
func LoadRoles(ctx context.Context, q Querier) ([]*Role, error) {
	rows, err := q.Query(ctx, `SELECT role, is_superuser, can_login, member_of FROM cqlpg.roles ORDER BY role COLLATE "C"`)
	if err != nil {
		return nil, fmt.Errorf("read roles: %w", err)
	}
	var out []*Role
	for rows.Next() {
		r := &Role{}
		if err := rows.Scan(&r.Name, &r.Super, &r.Login, &r.MemberOf); err != nil {
			return nil, fmt.Errorf("read roles: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read roles: %w", err)
	}
	return out, nil
}

// LoadAccess reads what authorizing a role needs in one round trip: the
// roles it holds, itself included and following grants of grants, and the
// permissions each of them was granted. A role that does not exist holds
// nothing.
func LoadAccess(ctx context.Context, q Querier, role string) ([]*Role, []Grant, error) {
	rows, err := q.Query(ctx, `WITH RECURSIVE granted(role) AS (
			SELECT $1::text
			UNION
			SELECT m FROM granted g JOIN cqlpg.roles r ON r.role = g.role CROSS JOIN unnest(r.member_of) m
		)
		SELECT r.role, r.is_superuser, r.can_login, r.member_of, p.resource, p.permissions
		FROM granted g JOIN cqlpg.roles r ON r.role = g.role
		LEFT JOIN cqlpg.role_permissions p ON p.role = r.role`, role)
	if err != nil {
		return nil, nil, fmt.Errorf("read role %s: %w", role, err)
	}
	var roles []*Role
	var grants []Grant
	for rows.Next() {
		r := &Role{}
		var resource *string
		var perms []string
		if err := rows.Scan(&r.Name, &r.Super, &r.Login, &r.MemberOf, &resource, &perms); err != nil {
			return nil, nil, fmt.Errorf("read role %s: %w", role, err)
		}
		if !slices.ContainsFunc(roles, func(o *Role) bool { return o.Name == r.Name }) {
			roles = append(roles, r)
		}
		if resource != nil {
			grants = append(grants, Grant{Role: r.Name, Resource: *resource, Permissions: perms})
		}
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("read role %s: %w", role, err)
	}
	return roles, grants, nil
}

// LoadGrants reads the permissions granted, to the roles given or, with
// none, to every role; on one resource, or with resource empty on all.
func LoadGrants(ctx context.Context, q Querier, roles []string, resource string) ([]Grant, error) {
	rows, err := q.Query(ctx, `SELECT role, resource, permissions FROM cqlpg.role_permissions
		WHERE (coalesce(cardinality($1::text[]), 0) = 0 OR role = ANY($1)) AND ($2 = '' OR resource = $2)`, roles, resource)
	if err != nil {
		return nil, fmt.Errorf("read permissions: %w", err)
	}
	var out []Grant
	for rows.Next() {
		var g Grant
		if err := rows.Scan(&g.Role, &g.Resource, &g.Permissions); err != nil {
			return nil, fmt.Errorf("read permissions: %w", err)
		}
		out = append(out, g)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read permissions: %w", err)
	}
	return out, nil
}

// LockRoles takes the shard's lock on roles and permissions for the rest
// of the transaction, so that role changes from several gateways apply in
// one order on every shard.
func LockRoles(ctx context.Context, tx Querier) error {
	_, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('cqlpg.roles'))`)
	return err
}

// CreateRole adds a role unless one of that name exists, and reports
// whether it did. hash is the bcrypt hash of its password, or nil.
func CreateRole(ctx context.Context, tx Querier, r *Role, hash *string) (bool, error) {
	tag, err := tx.Exec(ctx, `INSERT INTO cqlpg.roles (role, is_superuser, can_login, salted_hash)
		VALUES ($1, $2, $3, $4) ON CONFLICT (role) DO NOTHING`, r.Name, r.Super, r.Login, hash)
	if err != nil {
		return false, fmt.Errorf("create role %s: %w", r.Name, err)
	}
	return tag.RowsAffected() == 1, nil
}

// HasRoles reports whether any role exists.
func HasRoles(ctx context.Context, q Querier) (bool, error) {
	var found bool
	if err := q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM cqlpg.roles)`).Scan(&found); err != nil {
		return false, fmt.Errorf("read roles: %w", err)
	}
	return found, nil
}

// CreateFirstRole adds a role if there is no role at all yet, as the
// default superuser is, and reports whether it did.
func CreateFirstRole(ctx context.Context, tx Querier, r *Role, hash string) (bool, error) {
	tag, err := tx.Exec(ctx, `INSERT INTO cqlpg.roles (role, is_superuser, can_login, salted_hash)
		SELECT $1, $2, $3, $4 WHERE NOT EXISTS (SELECT 1 FROM cqlpg.roles) ON CONFLICT (role) DO NOTHING`,
		r.Name, r.Super, r.Login, hash)
	if err != nil {
		return false, fmt.Errorf("create role %s: %w", r.Name, err)
	}
	return tag.RowsAffected() == 1, nil
}

// AlterRole changes the options given (nil ones stay) and reports whether
// the role exists.
func AlterRole(ctx context.Context, tx Querier, name string, super, login *bool, hash *string) (bool, error) {
	tag, err := tx.Exec(ctx, `UPDATE cqlpg.roles SET is_superuser = coalesce($2, is_superuser),
		can_login = coalesce($3, can_login), salted_hash = coalesce($4, salted_hash) WHERE role = $1`,
		name, super, login, hash)
	if err != nil {
		return false, fmt.Errorf("alter role %s: %w", name, err)
	}
	return tag.RowsAffected() == 1, nil
}

// DropRole removes a role, its memberships both ways, the permissions it
// holds and those held on it (resource, roles/NAME), and reports whether
// it existed.
func DropRole(ctx context.Context, tx Querier, name, resource string) (bool, error) {
	tag, err := tx.Exec(ctx, `DELETE FROM cqlpg.roles WHERE role = $1`, name)
	if err != nil {
		return false, fmt.Errorf("drop role %s: %w", name, err)
	}
	if _, err := tx.Exec(ctx, `UPDATE cqlpg.roles SET member_of = array_remove(member_of, $1) WHERE $1 = ANY(member_of)`,
		name); err != nil {
		return false, fmt.Errorf("drop role %s: %w", name, err)
	}
	if _, err := tx.Exec(ctx, `DELETE FROM cqlpg.role_permissions WHERE role = $1 OR resource = $2`, name, resource); err != nil {
		return false, fmt.Errorf("drop role %s: %w", name, err)
	}
	return tag.RowsAffected() == 1, nil
}

// GrantRole makes grantee a member of role.
func GrantRole(ctx context.Context, tx Querier, role, grantee string) error {
	_, err := tx.Exec(ctx, `UPDATE cqlpg.roles SET member_of = array_append(member_of, $1)
		WHERE role = $2 AND NOT $1 = ANY(member_of)`, role, grantee)
	if err != nil {
		return fmt.Errorf("grant role %s to %s: %w", role, grantee, err)
	}
	return nil
}

// RevokeRole ends revokee's membership of role.
func RevokeRole(ctx context.Context, tx Querier, role, revokee string) error {
	_, err := tx.Exec(ctx, `UPDATE cqlpg.roles SET member_of = array_remove(member_of, $1) WHERE role = $2`, role, revokee)
	if err != nil {
		return fmt.Errorf("revoke role %s from %s: %w", role, revokee, err)
	}
	return nil
}

// GrantPermissions adds permissions to those role holds on resource.
func GrantPermissions(ctx context.Context, tx Querier, role, resource string, perms []string) error {
	_, err := tx.Exec(ctx, `INSERT INTO cqlpg.role_permissions AS p (role, resource, permissions) VALUES ($1, $2, $3)
		ON CONFLICT (role, resource) DO UPDATE SET permissions =
			ARRAY(SELECT unnest(p.permissions) UNION SELECT unnest(excluded.permissions) ORDER BY 1)`,
		role, resource, perms)
	if err != nil {
		return fmt.Errorf("grant permissions on %s to %s: %w", resource, role, err)
	}
	return nil
}

// RevokePermissions removes permissions from those role holds on
// resource, and the row once none is left.
func RevokePermissions(ctx context.Context, tx Querier, role, resource string, perms []string) error {
	if _, err := tx.Exec(ctx, `UPDATE cqlpg.role_permissions SET permissions =
			ARRAY(SELECT unnest(permissions) EXCEPT SELECT unnest($3::text[]) ORDER BY 1)
		WHERE role = $1 AND resource = $2`, role, resource, perms); err != nil {
		return fmt.Errorf("revoke permissions on %s from %s: %w", resource, role, err)
	}
	if _, err := tx.Exec(ctx, `DELETE FROM cqlpg.role_permissions
		WHERE role = $1 AND resource = $2 AND cardinality(permissions) = 0`, role, resource); err != nil {
		return fmt.Errorf("revoke permissions on %s from %s: %w", resource, role, err)
	}
	return nil
}

// RevokeAllOn removes every permission held on the resources named, and,
// for each prefix given, on every resource under it (prefix/...): what a
// dropped keyspace or table leaves behind.
func RevokeAllOn(ctx context.Context, tx Querier, resources, prefixes []string) error {
	_, err := tx.Exec(ctx, `DELETE FROM cqlpg.role_permissions
		WHERE resource = ANY($1) OR EXISTS (SELECT 1 FROM unnest($2::text[]) p WHERE starts_with(resource, p || '/'))`,
		resources, prefixes)
	if err != nil {
		return fmt.Errorf("revoke permissions on %v: %w", resources, err)
	}
	return nil
}
