package pgschema

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// CopySchema makes the shard of tx hold schema s as the gateway's own DDL
// left it on the shards s was read from: every user keyspace, user type,
// table and secondary index, with their catalog entries, each table's
// dropped columns with their cells set aside as DropColumns sets them
// aside, and s's version. It is how a shard joining a cluster gets the
// cluster's schema; tx must hold the schema lock and run with cqlpg.ddl
// on, as a schema change does, so that the layout it leaves is recorded.
func CopySchema(ctx context.Context, tx Querier, s *Schema) error {
	for _, ks := range s.Keyspaces() {
		if ks.Virtual || IsSystemKeyspace(ks.Name) {
			continue
		}
		if _, err := CreateKeyspace(ctx, tx, ks, false); err != nil {
			return fmt.Errorf("keyspace %s: %w", ks.Name, err)
		}
		for _, typ := range ks.SortedTypes() {
			if _, err := CreateType(ctx, tx, typ, false); err != nil {
				return fmt.Errorf("type %s.%s: %w", ks.Name, typ.Name, err)
			}
		}
		if err := copyFunctions(ctx, tx, ks); err != nil {
			return err
		}
		for _, t := range ks.SortedTables() {
			if t.IsView() {
				continue // after its base, below
			}
			if err := copyTable(ctx, tx, ks, t); err != nil {
				return fmt.Errorf("table %s.%s: %w", ks.Name, t.Name, err)
			}
		}
		for _, t := range ks.SortedTables() {
			if !t.IsView() || ks.Tables[t.View.Base] == nil {
				continue
			}
			if err := copyView(ctx, tx, ks, t); err != nil {
				return fmt.Errorf("materialized view %s.%s: %w", ks.Name, t.Name, err)
			}
		}
	}
	return SetVersion(ctx, tx, s.Version)
}

// copyTable creates t as its history left it: created with the columns
// dropped since, which are then dropped at their drop times, and its
// indexes. A column dropped and added back has its cells back: only its
// drop is recorded.
func copyTable(ctx context.Context, tx Querier, ks *Keyspace, t *Table) error {
	all, err := droppedColumns(ks, t)
	if err != nil {
		return err
	}
	var dropped, back []droppedColumn
	for _, d := range all {
		if t.Column(d.col.Name) != nil {
			back = append(back, d)
		} else {
			dropped = append(dropped, d)
		}
	}
	created := t
	if len(dropped) > 0 {
		cols := make([]*Column, 0, len(t.Columns)+len(dropped))
		for _, c := range t.Columns {
			cols = append(cols, c.clone())
		}
		for _, d := range dropped {
			cols = append(cols, d.col)
		}
		created = NewTable(t.Keyspace, t.Name, t.ID, cols, t.Options)
	}
	if _, err := CreateTable(ctx, tx, created, false); err != nil {
		return err
	}
	for len(dropped) > 0 {
		// The columns dropped at one time go together, as one ALTER
		// TABLE dropped them.
		at := dropped[0].at
		var cols []*Column
		for len(dropped) > 0 && dropped[0].at.Equal(at) {
			cols, dropped = append(cols, dropped[0].col), dropped[1:]
		}
		if err := DropColumns(ctx, tx, t, cols, at); err != nil {
			return err
		}
	}
	for _, d := range back {
		if err := recordDropped(ctx, tx, t, d.col, d.at); err != nil {
			return err
		}
	}
	for _, idx := range t.SortedIndexes() {
		c := t.Column(indexedColumn(idx.Target()))
		if c == nil {
			return fmt.Errorf("index %s: no column for target %q", idx.Name, idx.Target())
		}
		if _, err := CreateIndex(ctx, tx, t, idx, c, false); err != nil {
			return err
		}
	}
	return nil
}

// clone returns a copy of c, for a table built from it (NewTable sets
// its Index).
func (c *Column) clone() *Column {
	cc := *c
	return &cc
}

// droppedColumn is a column dropped from a table, rebuilt from the
// catalog's record of it.
type droppedColumn struct {
	col *Column
	at  time.Time
}

// droppedColumns rebuilds t's dropped columns, oldest drop first.
func droppedColumns(ks *Keyspace, t *Table) ([]droppedColumn, error) {
	udt := func(name string) (*Type, error) {
		if typ := ks.Types[name]; typ != nil {
			return typ, nil
		}
		return nil, fmt.Errorf("unknown type %s", name)
	}
	var out []droppedColumn
	for _, d := range t.Dropped {
		typ, err := ParseType(d.Type, udt)
		if err != nil {
			return nil, fmt.Errorf("dropped column %s: %w", d.Name, err)
		}
		kind := Regular
		if d.Kind == Static.String() {
			kind = Static
		}
		out = append(out, droppedColumn{col: &Column{Name: d.Name, Type: typ, Kind: kind, Position: -1}, at: d.Dropped})
	}
	slices.SortStableFunc(out, func(a, b droppedColumn) int { return a.at.Compare(b.at) })
	return out, nil
}

// indexedColumn is the column an index target names: c, "C", keys(c),
// values(c), entries(c) or full(c).
func indexedColumn(target string) string {
	for _, f := range []string{"keys(", "values(", "entries(", "full("} {
		if strings.HasPrefix(target, f) && strings.HasSuffix(target, ")") {
			target = target[len(f) : len(target)-1]
			break
		}
	}
	if len(target) >= 2 && target[0] == '"' && target[len(target)-1] == '"' {
		return strings.ReplaceAll(target[1:len(target)-1], `""`, `"`)
	}
	return target
}

// Roles are the roles and permissions a shard holds (ReadRoles), for
// another to take (WriteRoles).
type Roles struct {
	roles []roleRow
	perms []permRow
}

type roleRow struct {
	role         string
	super, login bool
	hash         *string
	memberOf     []string
}

type permRow struct {
	role, resource string
	perms          []string
}

// ReadRoles returns the roles and permissions a shard holds.
func ReadRoles(ctx context.Context, q Querier) (*Roles, error) {
	r := &Roles{}
	rows, err := q.Query(ctx, `SELECT role, is_superuser, can_login, salted_hash, member_of FROM cqlpg.roles ORDER BY role`)
	if err != nil {
		return nil, fmt.Errorf("read roles: %w", err)
	}
	for rows.Next() {
		var x roleRow
		if err := rows.Scan(&x.role, &x.super, &x.login, &x.hash, &x.memberOf); err != nil {
			rows.Close()
			return nil, fmt.Errorf("read roles: %w", err)
		}
		r.roles = append(r.roles, x)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read roles: %w", err)
	}
	rows, err = q.Query(ctx, `SELECT role, resource, permissions FROM cqlpg.role_permissions ORDER BY role, resource`)
	if err != nil {
		return nil, fmt.Errorf("read permissions: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var x permRow
		if err := rows.Scan(&x.role, &x.resource, &x.perms); err != nil {
			return nil, fmt.Errorf("read permissions: %w", err)
		}
		r.perms = append(r.perms, x)
	}
	return r, rows.Err()
}

// WriteRoles replaces the roles and permissions of the shard of tx with r.
func WriteRoles(ctx context.Context, tx Querier, r *Roles) error {
	if _, err := tx.Exec(ctx, `DELETE FROM cqlpg.role_permissions`); err != nil {
		return fmt.Errorf("write roles: %w", err)
	}
	if _, err := tx.Exec(ctx, `DELETE FROM cqlpg.roles`); err != nil {
		return fmt.Errorf("write roles: %w", err)
	}
	for _, x := range r.roles {
		if _, err := tx.Exec(ctx, `INSERT INTO cqlpg.roles (role, is_superuser, can_login, salted_hash, member_of)
			VALUES ($1, $2, $3, $4, $5)`, x.role, x.super, x.login, x.hash, x.memberOf); err != nil {
			return fmt.Errorf("write role %s: %w", x.role, err)
		}
	}
	for _, x := range r.perms {
		if _, err := tx.Exec(ctx, `INSERT INTO cqlpg.role_permissions (role, resource, permissions) VALUES ($1, $2, $3)`,
			x.role, x.resource, x.perms); err != nil {
			return fmt.Errorf("write permissions of %s: %w", x.role, err)
		}
	}
	return nil
}
