package pgschema_test

import (
	"cmp"
	"context"
	"reflect"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/cqlpg/cqlpg/pgschema"
)

// TestAuthLoginHash stores roles with and without password hashes and
// reads back what a login check needs. The gateway checks the password
// against the hash (gateway/auth): no password reaches a shard.
func TestAuthLoginHash(t *testing.T) {
	conn := connect(t)
	ctx := context.Background()
	// One of bcrypt's published test vectors: U*U at cost 5.
	vector := "$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW"
	roles := []struct {
		role *pgschema.Role
		hash *string
	}{
		{&pgschema.Role{Name: "pw_login", Login: true}, &vector},
		{&pgschema.Role{Name: "pw_nologin"}, &vector},
		{&pgschema.Role{Name: "pw_none", Login: true}, nil},
	}
	err := inTx(t, conn, func(tx pgx.Tx) error {
		for _, r := range roles {
			if _, err := pgschema.CreateRole(ctx, tx, r.role, r.hash); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, r := range roles {
			inTx(t, conn, func(tx pgx.Tx) error {
				_, err := pgschema.DropRole(ctx, tx, r.role.Name, "roles/"+r.role.Name)
				return err
			})
		}
	})
	for _, tc := range []struct {
		role, hash   string
		login, found bool
	}{
		{"pw_login", vector, true, true},
		{"pw_nologin", vector, false, true},
		{"pw_none", "", true, true},
		{"pw_missing", "", false, false},
	} {
		hash, login, found, err := pgschema.LoginHash(ctx, conn, tc.role)
		if err != nil || hash != tc.hash || login != tc.login || found != tc.found {
			t.Errorf("%s: hash %q login %t found %t %v, want %q %t %t", tc.role, hash, login, found, err, tc.hash, tc.login, tc.found)
		}
	}
}

func TestAuthGrants(t *testing.T) {
	conn := connect(t)
	ctx := context.Background()
	run := func(f func(tx pgx.Tx) error) {
		t.Helper()
		if err := inTx(t, conn, f); err != nil {
			t.Fatal(err)
		}
	}
	grants := func(roles ...string) []pgschema.Grant {
		t.Helper()
		out, err := pgschema.LoadGrants(ctx, conn, roles, "")
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	run(func(tx pgx.Tx) error {
		for _, r := range []string{"g_user", "g_group", "g_top"} {
			if _, err := pgschema.CreateRole(ctx, tx, &pgschema.Role{Name: r}, nil); err != nil {
				return err
			}
		}
		for _, g := range [][2]string{{"g_group", "g_user"}, {"g_top", "g_group"}, {"g_top", "g_group"}} {
			if err := pgschema.GrantRole(ctx, tx, g[0], g[1]); err != nil {
				return err
			}
		}
		for _, g := range []pgschema.Grant{
			{Role: "g_user", Resource: "data/gks", Permissions: []string{"SELECT"}},
			{Role: "g_user", Resource: "data/gks", Permissions: []string{"MODIFY", "SELECT"}},
			{Role: "g_user", Resource: "data/gks/t", Permissions: []string{"ALTER"}},
			{Role: "g_top", Resource: "data/gks2/t", Permissions: []string{"DROP"}},
			{Role: "g_top", Resource: "roles/g_user", Permissions: []string{"ALTER", "DROP"}},
		} {
			if err := pgschema.GrantPermissions(ctx, tx, g.Role, g.Resource, g.Permissions); err != nil {
				return err
			}
		}
		return nil
	})
	t.Cleanup(func() {
		run(func(tx pgx.Tx) error {
			for _, r := range []string{"g_user", "g_group", "g_top"} {
				if _, err := pgschema.DropRole(ctx, tx, r, "roles/"+r); err != nil {
					return err
				}
			}
			return nil
		})
	})
	want := []pgschema.Grant{
		{Role: "g_user", Resource: "data/gks", Permissions: []string{"MODIFY", "SELECT"}},
		{Role: "g_user", Resource: "data/gks/t", Permissions: []string{"ALTER"}},
	}
	if got := sortGrants(grants("g_user")); !reflect.DeepEqual(got, want) {
		t.Errorf("grants of g_user: %v, want %v", got, want)
	}

	// A role holds itself and what was granted to what it holds; a grant
	// made twice counts once.
	roles, held, err := pgschema.LoadAccess(ctx, conn, "g_user")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range roles {
		names = append(names, r.Name)
	}
	slices.Sort(names)
	if !reflect.DeepEqual(names, []string{"g_group", "g_top", "g_user"}) {
		t.Errorf("g_user holds %q", names)
	}
	if len(held) != 4 {
		t.Errorf("g_user's access has %d grants, want 4: %v", len(held), held)
	}

	// Revoking the last permission removes the row; dropping a keyspace
	// takes the grants on it and on its tables, and nothing else.
	run(func(tx pgx.Tx) error {
		if err := pgschema.RevokePermissions(ctx, tx, "g_user", "data/gks/t", []string{"ALTER", "SELECT"}); err != nil {
			return err
		}
		return pgschema.RevokePermissions(ctx, tx, "g_user", "data/gks", []string{"SELECT"})
	})
	want = []pgschema.Grant{{Role: "g_user", Resource: "data/gks", Permissions: []string{"MODIFY"}}}
	if got := sortGrants(grants("g_user")); !reflect.DeepEqual(got, want) {
		t.Errorf("after revoking: %v, want %v", got, want)
	}
	run(func(tx pgx.Tx) error {
		if err := pgschema.GrantPermissions(ctx, tx, "g_user", "data/gks2", []string{"CREATE"}); err != nil {
			return err
		}
		return pgschema.RevokeAllOn(ctx, tx, []string{"data/gks2", "functions/gks2"}, []string{"data/gks2"})
	})
	want = []pgschema.Grant{{Role: "g_top", Resource: "roles/g_user", Permissions: []string{"ALTER", "DROP"}}}
	if got := sortGrants(grants("g_top")); !reflect.DeepEqual(got, want) {
		t.Errorf("after dropping keyspace gks2: %v, want %v", got, want)
	}

	// Dropping a role ends its memberships and the grants on it.
	run(func(tx pgx.Tx) error {
		ok, err := pgschema.DropRole(ctx, tx, "g_user", "roles/g_user")
		if err == nil && !ok {
			t.Error("DropRole of an existing role reports it missing")
		}
		return err
	})
	if got := grants("g_top"); len(got) != 0 {
		t.Errorf("grants on a dropped role remain: %v", got)
	}
	all, err := pgschema.LoadRoles(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range all {
		if r.Name == "g_user" || (r.Name == "g_group" && len(r.MemberOf) != 1) {
			t.Errorf("after dropping g_user: %+v", r)
		}
	}
}

func sortGrants(gs []pgschema.Grant) []pgschema.Grant {
	slices.SortFunc(gs, func(a, b pgschema.Grant) int {
		return cmp.Or(cmp.Compare(a.Role, b.Role), cmp.Compare(a.Resource, b.Resource))
	})
	return gs
}
