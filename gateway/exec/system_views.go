package exec

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
func (e *Execution) authRows(table string) ([]VirtualRow, error) {
	ctx, cancel := context.WithTimeout(context.Background(), e.env.Config.ReadTimeout)
	defer cancel()
	var rows []VirtualRow
	err := e.env.Cluster.ReadCatalog(ctx, func(q pgschema.Querier) error {
		rows = rows[:0]
		var role, other string
		var login, super bool
		var names []string
		var hash *string
		var sql string
		var scans []any
		var row func() VirtualRow
		switch table {
		case "roles":
			sql = `SELECT role, can_login, is_superuser, member_of, salted_hash FROM cqlpg.roles`
			scans = []any{&role, &login, &super, &names, &hash}
			row = func() VirtualRow {
				r := VirtualRow{"role": TextValue(role), "can_login": BoolValue(login), "is_superuser": BoolValue(super)}
				if len(names) > 0 {
					r["member_of"] = textSetValue(names)
				}
				if hash != nil {
					r["salted_hash"] = TextValue(*hash)
				}
				return r
			}
		case "role_members":
			sql = `SELECT m, r.role FROM cqlpg.roles r, unnest(r.member_of) AS m`
			scans = []any{&role, &other}
			row = func() VirtualRow { return VirtualRow{"role": TextValue(role), "member": TextValue(other)} }
		default:
			sql = `SELECT role, resource, permissions FROM cqlpg.role_permissions`
			scans = []any{&role, &other, &names}
			row = func() VirtualRow {
				slices.Sort(names)
				return VirtualRow{"role": TextValue(role), "resource": TextValue(other), "permissions": textSetValue(names)}
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
