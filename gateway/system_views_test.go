package gateway_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/cqlpg/cqlpg/gateway"
)

// TestSystemViews reads Cassandra 4's virtual tables: system_views.clients
// lists this gateway's connections with their driver and request count,
// and system_views.settings the gateway's settings with no secret; a
// table that does not exist answers Cassandra's error.
func TestSystemViews(t *testing.T) {
	// The shards' connection strings carry a password (trust
	// authentication ignores it), which the settings must not show.
	const secret = "s3cret-x"
	s, _ := startLoggedGateway(t, func(c *gateway.Config) {
		for i := range c.Shards {
			c.Shards[i].URL += " password=" + secret
		}
	})
	sess := sessionOn(t, s, "")
	exec(t, sess, "SELECT * FROM system.local")
	rows := rowStrings(t, sess, "SELECT address, port, connection_stage, protocol_version, request_count, driver_name FROM system_views.clients")
	if len(rows) == 0 {
		t.Fatal("system_views.clients lists no connection")
	}
	for _, r := range rows {
		if r[0] != "127.0.0.1" || r[2] != "ready" || r[3] != "4" || r[4] == "0" {
			t.Errorf("client row %v", r)
		}
	}
	settings := map[string]string{}
	for _, r := range rowStrings(t, sess, "SELECT name, value FROM system_views.settings") {
		settings[r[0]] = r[1]
	}
	for name, want := range map[string]string{"batch_size_fail_threshold": "50KiB", "authenticator": "AllowAllAuthenticator",
		"read_request_timeout": "5000ms"} {
		if settings[name] != want {
			t.Errorf("setting %s = %q, want %q", name, settings[name], want)
		}
	}
	if shard := settings["cqlpg_shard_0"]; !strings.Contains(shard, "password=*****") {
		t.Errorf("setting cqlpg_shard_0 = %q, want the shard's connection string with its password masked", shard)
	}
	for name, v := range settings {
		if strings.Contains(v, secret) {
			t.Errorf("setting %s shows a password: %s", name, v)
		}
	}
	if got := rowStrings(t, sess, "SELECT keyspace_name FROM system_virtual_schema.keyspaces"); !slices.ContainsFunc(got,
		func(r []string) bool { return r[0] == "system_views" }) {
		t.Errorf("system_virtual_schema.keyspaces: %v", got)
	}
	if got := rowStrings(t, sess, "SELECT keyspace_name FROM system_schema.keyspaces"); slices.ContainsFunc(got,
		func(r []string) bool { return r[0] == "system_views" }) {
		t.Errorf("system_schema.keyspaces lists the virtual keyspace system_views: %v", got)
	}
	requireCQLError(t, sess.Query("SELECT * FROM system_views.nope").Exec(), 0x2200, "table nope does not exist")
	requireCQLError(t, sess.Query("SELECT * FROM system.nope").Exec(), 0x2200, "table nope does not exist")
}

// TestSystemAuthTables reads system_auth's tables as a superuser (roles
// with their bcrypt hashes, memberships, permissions), and is refused them
// as another role, as Cassandra refuses.
func TestSystemAuthTables(t *testing.T) {
	s := startAuthGateway(t, nil)
	super := superSession(t, s)
	exec(t, super, "CREATE ROLE IF NOT EXISTS sys_reader WITH PASSWORD = 'pw1' AND LOGIN = true",
		"CREATE ROLE IF NOT EXISTS sys_group", "GRANT sys_group TO sys_reader",
		"CREATE KEYSPACE IF NOT EXISTS sys_auth_ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"GRANT SELECT ON KEYSPACE sys_auth_ks TO sys_group")
	t.Cleanup(func() {
		exec(t, super, "DROP ROLE IF EXISTS sys_reader", "DROP ROLE IF EXISTS sys_group", "DROP KEYSPACE IF EXISTS sys_auth_ks")
	})
	roles := rowStrings(t, super, "SELECT role, can_login, is_superuser, salted_hash FROM system_auth.roles")
	found := false
	for _, r := range roles {
		if r[0] == "cassandra" {
			found = true
			if r[1] != "true" || r[2] != "true" || !strings.HasPrefix(r[3], "$2a$10$") {
				t.Errorf("role cassandra: %v", r)
			}
		}
	}
	if !found {
		t.Errorf("system_auth.roles has no cassandra: %v", roles)
	}
	if got := rowStrings(t, super, "SELECT role, member FROM system_auth.role_members WHERE role = 'sys_group'"); !slices.EqualFunc(got,
		[][]string{{"sys_group", "sys_reader"}}, slices.Equal) {
		t.Errorf("role_members: %v", got)
	}
	if got := rowStrings(t, super, "SELECT resource, permissions FROM system_auth.role_permissions WHERE role = 'sys_group'"); len(got) != 1 ||
		got[0][0] != "data/sys_auth_ks" || got[0][1] != "[SELECT]" {
		t.Errorf("role_permissions: %v", got)
	}
	reader := loginSession(t, s, "sys_reader", "pw1")
	requireCQLError(t, reader.Query("SELECT * FROM system_auth.roles").Exec(), 0x2100,
		"User sys_reader has no SELECT permission on <table system_auth.roles> or any of its parents")
}
