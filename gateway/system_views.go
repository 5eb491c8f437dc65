package gateway

import (
	"context"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/cqlpg/cqlpg/pgschema"
)

// authRows answers system_auth's tables from the roles every shard's
// catalog holds, as Cassandra's CassandraRoleManager and
// CassandraAuthorizer keep them: password hashes in their bcrypt form.
// Reading them needs SELECT on them, which superusers hold.
func (e *execution) authRows(table string) ([]virtualRow, error) {
	ctx, cancel := context.WithTimeout(context.Background(), e.env.cfg.ReadTimeout)
	defer cancel()
	var rows []virtualRow
	err := e.env.cluster.ReadCatalog(ctx, func(q pgschema.Querier) error {
		rows = rows[:0]
		var role, other string
		var login, super bool
		var names []string
		var hash *string
		var sql string
		var scans []any
		var row func() virtualRow
		switch table {
		case "roles":
			sql = `SELECT role, can_login, is_superuser, member_of, salted_hash FROM cqlpg.roles`
			scans = []any{&role, &login, &super, &names, &hash}
			row = func() virtualRow {
				r := virtualRow{"role": textValue(role), "can_login": boolValue(login), "is_superuser": boolValue(super)}
				if len(names) > 0 {
					r["member_of"] = textSetValue(names)
				}
				if hash != nil {
					r["salted_hash"] = textValue(*hash)
				}
				return r
			}
		case "role_members":
			sql = `SELECT m, r.role FROM cqlpg.roles r, unnest(r.member_of) AS m`
			scans = []any{&role, &other}
			row = func() virtualRow { return virtualRow{"role": textValue(role), "member": textValue(other)} }
		default:
			sql = `SELECT role, resource, permissions FROM cqlpg.role_permissions`
			scans = []any{&role, &other, &names}
			row = func() virtualRow {
				slices.Sort(names)
				return virtualRow{"role": textValue(role), "resource": textValue(other), "permissions": textSetValue(names)}
			}
		}
		result, err := q.Query(ctx, sql)
		if err != nil {
			return err
		}
		_, err = pgx.ForEachRow(result, scans, func() error {
			rows = append(rows, row())
			return nil
		})
		return err
	})
	return rows, err
}
