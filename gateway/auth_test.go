package gateway_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/frame"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
	"github.com/gocql/gocql"

	"github.com/cqlpg/cqlpg/gateway"
	"github.com/cqlpg/cqlpg/gateway/cluster"
	"github.com/cqlpg/cqlpg/sharding/localpg"
)

// authSuperuserPassword is the default superuser's password on the shared
// shards: the first gateway with authentication on creates the role with
// it, and every later one finds the role there.
const authSuperuserPassword = "auth test superuser"

// CQL error codes the authentication tests expect.
const (
	errBadCredentials = 0x0100
	errUnauthorized   = 0x2100
	errInvalid        = 0x2200
)

// startAuthGateway starts a gateway with authentication on, on the shared
// shards, and shuts it down when the test ends.
func startAuthGateway(tb testing.TB, change func(*gateway.AuthConfig)) *gateway.Server {
	tb.Helper()
	cfg := gateway.Config{Listen: "127.0.0.1:0", Log: testLogger(),
		Auth: gateway.AuthConfig{Enabled: true, SuperuserPassword: authSuperuserPassword}}
	for _, u := range shardURLs {
		cfg.Shards = append(cfg.Shards, cluster.ShardConfig{URL: u})
	}
	if change != nil {
		change(&cfg.Auth)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := gateway.New(ctx, cfg)
	if err != nil {
		tb.Fatal(err)
	}
	go s.Serve()
	tb.Cleanup(func() { s.Shutdown(context.Background()) })
	return s
}

// loginConfig is an unmodified gocql configuration logging in with the
// driver's PasswordAuthenticator.
func loginConfig(s *gateway.Server, user, password string) *gocql.ClusterConfig {
	cfg := clusterConfig(s, "")
	cfg.Authenticator = gocql.PasswordAuthenticator{Username: user, Password: password}
	return cfg
}

// loginSession opens a session logged in as user.
func loginSession(t *testing.T, s *gateway.Server, user, password string) *gocql.Session {
	t.Helper()
	sess, err := loginConfig(s, user, password).CreateSession()
	if err != nil {
		t.Fatalf("log in as %s: %v", user, err)
	}
	t.Cleanup(sess.Close)
	return sess
}

// loginError returns why a login fails, or nil.
func loginError(s *gateway.Server, user, password string) error {
	sess, err := loginConfig(s, user, password).CreateSession()
	if err == nil {
		sess.Close()
	}
	return err
}

// superSession is a session of the default superuser.
func superSession(t *testing.T, s *gateway.Server) *gocql.Session {
	t.Helper()
	return loginSession(t, s, "cassandra", authSuperuserPassword)
}

// rowStrings reads every row of a query, each value formatted with %v.
func rowStrings(t *testing.T, sess *gocql.Session, query string) [][]string {
	t.Helper()
	iter := sess.Query(query).Iter()
	var out [][]string
	for {
		row := map[string]any{}
		if !iter.MapScan(row) {
			break
		}
		var vals []string
		for _, c := range iter.Columns() {
			vals = append(vals, fmt.Sprint(row[c.Name]))
		}
		out = append(out, vals)
	}
	if err := iter.Close(); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return out
}

// rowsOf keeps the rows whose first value is one of names.
func rowsOf(rows [][]string, names ...string) [][]string {
	var out [][]string
	for _, r := range rows {
		if slices.Contains(names, r[0]) {
			out = append(out, r)
		}
	}
	return out
}

// requireLoginError checks the error of a failed login.
func requireLoginError(t *testing.T, err error, msg string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), msg) {
		t.Fatalf("login error %v, want one saying %q", err, msg)
	}
}

func TestAuthLogin(t *testing.T) {
	s := startAuthGateway(t, nil)
	sess := superSession(t, s)
	var version string
	if err := sess.Query("SELECT release_version FROM system.local").Scan(&version); err != nil {
		t.Fatal(err)
	}

	requireLoginError(t, loginError(s, "cassandra", "wrong"), "Provided username cassandra and/or password are incorrect")
	requireLoginError(t, loginError(s, "nobody", "x"), "Provided username nobody and/or password are incorrect")
	cfg := clusterConfig(s, "")
	if sess, err := cfg.CreateSession(); err == nil {
		sess.Close()
		t.Fatal("a session without credentials was accepted")
	} else {
		requireLoginError(t, err, `authentication required (using "org.apache.cassandra.auth.PasswordAuthenticator")`)
	}

	exec(t, sess,
		"CREATE ROLE login_nologin WITH PASSWORD = 'pw'",
		`CREATE ROLE "Login_Mixed" WITH PASSWORD = 'mixed pw' AND LOGIN = true`,
		"CREATE ROLE login_pw WITH PASSWORD = 'first' AND LOGIN = true")
	requireLoginError(t, loginError(s, "login_nologin", "pw"), "login_nologin is not permitted to log in")
	loginSession(t, s, "Login_Mixed", "mixed pw")
	requireLoginError(t, loginError(s, "login_mixed", "mixed pw"), "Provided username login_mixed and/or password are incorrect")

	// A changed password applies at once on the gateway that changed it,
	// although the old one was verified a moment ago.
	loginSession(t, s, "login_pw", "first")
	exec(t, sess, "ALTER ROLE login_pw WITH PASSWORD = 'second'")
	requireLoginError(t, loginError(s, "login_pw", "first"), "Provided username login_pw and/or password are incorrect")
	loginSession(t, s, "login_pw", "second")
	exec(t, sess, "ALTER ROLE login_pw WITH LOGIN = false")
	requireLoginError(t, loginError(s, "login_pw", "second"), "login_pw is not permitted to log in")

	// A hash made elsewhere logs in with its password: one of bcrypt's
	// published test vectors, the hash of U*U at cost 5.
	exec(t, sess, "CREATE ROLE login_hashed WITH LOGIN = true AND HASHED PASSWORD = '$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW'")
	loginSession(t, s, "login_hashed", "U*U")
	requireLoginError(t, loginError(s, "login_hashed", "U*V"), "Provided username login_hashed and/or password are incorrect")

	for _, r := range []string{"login_nologin", `"Login_Mixed"`, "login_pw", "login_hashed"} {
		exec(t, sess, "DROP ROLE "+r)
	}
}

func TestAuthRoleStatements(t *testing.T) {
	s := startAuthGateway(t, nil)
	sess := superSession(t, s)
	exec(t, sess,
		"CREATE ROLE rs_user WITH PASSWORD = 'pw' AND LOGIN = true AND SUPERUSER = false",
		"CREATE ROLE IF NOT EXISTS rs_user",
		"CREATE ROLE rs_group",
		"CREATE ROLE rs_outer WITH SUPERUSER = true",
		"GRANT rs_group TO rs_user",
		"GRANT rs_outer TO rs_group")
	t.Cleanup(func() {
		for _, r := range []string{"rs_user", "rs_group", "rs_outer", "rs_child", `"Rs_Legacy"`} {
			sess.Query("DROP ROLE IF EXISTS " + r).Exec()
		}
	})

	for _, tc := range []struct {
		cql  string
		code int
		msg  string
	}{
		{"CREATE ROLE rs_user", errInvalid, "rs_user already exists"},
		{"GRANT rs_group TO rs_user", errInvalid, "rs_user is a member of rs_group"},
		{"GRANT rs_user TO rs_outer", errInvalid, "rs_user is a member of rs_outer"},
		{"REVOKE rs_outer FROM rs_user", errInvalid, "rs_user is not a member of rs_outer"},
		{"GRANT rs_group TO rs_nobody", errInvalid, "rs_nobody doesn't exist"},
		{"DROP ROLE rs_nobody", errInvalid, "rs_nobody doesn't exist"},
		{"ALTER ROLE rs_nobody WITH LOGIN = true", errInvalid, "rs_nobody doesn't exist"},
		{"DROP ROLE cassandra", errInvalid, "Cannot DROP primary role for current login"},
		{"ALTER ROLE cassandra WITH SUPERUSER = false", errUnauthorized,
			"You aren't allowed to alter your own superuser status or that of a role granted to you"},
		{"LIST ROLES OF rs_nobody", errInvalid, "<role rs_nobody> doesn't exist"},
		{"CREATE ROLE rs_x WITH OPTIONS = {'a': 'b'}", errInvalid, "org.apache.cassandra.auth.CassandraRoleManager doesn't support OPTIONS"},
	} {
		requireCQLError(t, sess.Query(tc.cql).Exec(), tc.code, tc.msg)
	}
	exec(t, sess, "DROP ROLE IF EXISTS rs_nobody")

	// LIST ROLES lists every role to a superuser, with Cassandra's columns.
	iter := sess.Query("LIST ROLES").Iter()
	var cols []string
	for _, c := range iter.Columns() {
		cols = append(cols, c.Keyspace+"."+c.Table+"."+c.Name+" "+c.TypeInfo.Type().String())
	}
	iter.Close()
	wantCols := []string{"system_auth.roles.role varchar", "system_auth.roles.super boolean", "system_auth.roles.login boolean",
		"system_auth.roles.options map", "system_auth.roles.datacenters varchar"}
	if !reflect.DeepEqual(cols, wantCols) {
		t.Errorf("LIST ROLES columns %q, want %q", cols, wantCols)
	}
	checkRows(t, sess, "LIST ROLES", []string{"cassandra", "rs_group", "rs_outer", "rs_user"}, [][]string{
		{"cassandra", "true", "true", "map[]", "ALL"},
		{"rs_group", "false", "false", "map[]", "ALL"},
		{"rs_outer", "true", "false", "map[]", "ALL"},
		{"rs_user", "false", "true", "map[]", "ALL"},
	})
	checkRows(t, sess, "LIST ROLES OF rs_user", nil, [][]string{
		{"rs_group", "false", "false", "map[]", "ALL"},
		{"rs_outer", "true", "false", "map[]", "ALL"},
		{"rs_user", "false", "true", "map[]", "ALL"},
	})
	checkRows(t, sess, "LIST ROLES OF rs_user NORECURSIVE", nil, [][]string{
		{"rs_group", "false", "false", "map[]", "ALL"},
		{"rs_user", "false", "true", "map[]", "ALL"},
	})
	// LIST USERS: the roles that may log in, super when they hold a
	// superuser role.
	exec(t, sess, "CREATE USER Rs_Legacy WITH PASSWORD 'legacy' NOSUPERUSER")
	checkRows(t, sess, "LIST USERS", []string{"cassandra", "rs_user", "Rs_Legacy", "rs_group"}, [][]string{
		{"Rs_Legacy", "false", "ALL"},
		{"cassandra", "true", "ALL"},
		{"rs_user", "true", "ALL"},
	})
	loginSession(t, s, "Rs_Legacy", "legacy")
	exec(t, sess, "ALTER USER Rs_Legacy WITH PASSWORD 'changed'", "REVOKE rs_outer FROM rs_group")
	loginSession(t, s, "Rs_Legacy", "changed")
	exec(t, sess, "DROP USER Rs_Legacy")

	// A role without superuser status manages only what it was granted.
	user := loginSession(t, s, "rs_user", "pw")
	for _, tc := range []struct {
		cql  string
		code int
		msg  string
	}{
		{"CREATE ROLE rs_child", errUnauthorized, "User rs_user does not have sufficient privileges to perform the requested operation"},
		{"DROP ROLE rs_group", errUnauthorized, "User rs_user does not have sufficient privileges to perform the requested operation"},
		{"GRANT rs_group TO rs_user", errUnauthorized, "User rs_user does not have sufficient privileges to perform the requested operation"},
		{"ALTER ROLE rs_user WITH LOGIN = false", errUnauthorized, "You aren't allowed to alter LOGIN"},
		{"ALTER ROLE rs_user WITH SUPERUSER = true", errUnauthorized,
			"You aren't allowed to alter your own superuser status or that of a role granted to you"},
		{"ALTER ROLE rs_outer WITH SUPERUSER = false", errUnauthorized, "Only superusers are allowed to alter superuser status"},
		{"LIST ROLES OF cassandra", errUnauthorized, "You are not authorized to view roles granted to cassandra "},
		{"LIST ALL PERMISSIONS", errUnauthorized, "You are not authorized to view everyone's permissions"},
		{"LIST ALL PERMISSIONS OF cassandra", errUnauthorized, "You are not authorized to view cassandra's permissions"},
		{"DROP ROLE rs_outer", errUnauthorized, "User rs_user does not have sufficient privileges to perform the requested operation"},
	} {
		requireCQLError(t, user.Query(tc.cql).Exec(), tc.code, tc.msg)
	}
	// Its own password it may change, and see its own roles.
	exec(t, user, "ALTER ROLE rs_user WITH PASSWORD = 'pw'")
	checkRows(t, user, "LIST ROLES", nil, [][]string{
		{"rs_group", "false", "false", "map[]", "ALL"},
		{"rs_user", "false", "true", "map[]", "ALL"},
	})
	checkRows(t, user, "LIST ROLES OF rs_group", nil, [][]string{{"rs_group", "false", "false", "map[]", "ALL"}})

	// Given CREATE on all roles, it creates roles, and may alter, drop and
	// grant those it created, but not make superusers.
	exec(t, sess, "GRANT CREATE ON ALL ROLES TO rs_user")
	requireCQLError(t, user.Query("CREATE ROLE rs_child WITH SUPERUSER = true").Exec(), errUnauthorized,
		"Only superusers can create a role with superuser status")
	exec(t, user, "CREATE ROLE rs_child WITH LOGIN = false", "ALTER ROLE rs_child WITH LOGIN = true", "GRANT rs_child TO rs_group")
	checkRows(t, user, "LIST ALL PERMISSIONS OF rs_user", nil, [][]string{
		{"rs_user", "rs_user", "<all roles>", "CREATE"},
		{"rs_user", "rs_user", "<role rs_child>", "ALTER"},
		{"rs_user", "rs_user", "<role rs_child>", "DROP"},
		{"rs_user", "rs_user", "<role rs_child>", "AUTHORIZE"},
	})
	exec(t, user, "DROP ROLE rs_child")
	// Dropping a role takes the permissions on it along.
	checkRows(t, sess, "LIST ALL PERMISSIONS OF rs_user", nil, [][]string{{"rs_user", "rs_user", "<all roles>", "CREATE"}})
	checkRows(t, sess, "LIST ROLES OF rs_user", nil, [][]string{
		{"rs_group", "false", "false", "map[]", "ALL"},
		{"rs_user", "false", "true", "map[]", "ALL"},
	})
	// A superuser role of it may drop only a superuser.
	exec(t, sess, "GRANT DROP ON ROLE rs_outer TO rs_user")
	requireCQLError(t, user.Query("DROP ROLE rs_outer").Exec(), errUnauthorized, "Only superusers can drop a role with superuser status")
}

// checkRows runs a LIST and compares its rows (those whose first value is
// one of names, when given) with want.
func checkRows(t *testing.T, sess *gocql.Session, query string, names []string, want [][]string) {
	t.Helper()
	got := rowStrings(t, sess, query)
	if names != nil {
		got = rowsOf(got, names...)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s:\ngot  %q\nwant %q", query, got, want)
	}
}

func TestAuthPermissions(t *testing.T) {
	s := startAuthGateway(t, nil)
	sess := superSession(t, s)
	exec(t, sess,
		"CREATE KEYSPACE authks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE authks.t (k int PRIMARY KEY, v int)",
		"INSERT INTO authks.t (k, v) VALUES (1, 10)",
		"CREATE ROLE perm_user WITH PASSWORD = 'pw' AND LOGIN = true",
		"CREATE ROLE perm_writers")
	t.Cleanup(func() {
		for _, q := range []string{"DROP KEYSPACE IF EXISTS authks", "DROP KEYSPACE IF EXISTS perm_userks",
			"DROP ROLE IF EXISTS perm_user", "DROP ROLE IF EXISTS perm_writers"} {
			sess.Query(q).Exec()
		}
	})
	user := loginSession(t, s, "perm_user", "pw")
	denied := func(cql, perm, resource string) {
		t.Helper()
		requireCQLError(t, user.Query(cql).Exec(), errUnauthorized,
			fmt.Sprintf("User perm_user has no %s permission on %s or any of its parents", perm, resource))
	}

	// Every role reads the system tables drivers read; the rest needs
	// permissions.
	for _, q := range []string{"SELECT * FROM system.local", "SELECT * FROM system.peers", "SELECT * FROM system_schema.tables"} {
		if err := user.Query(q).Exec(); err != nil {
			t.Errorf("%s: %v", q, err)
		}
	}
	denied("SELECT * FROM authks.t", "SELECT", "<table authks.t>")
	denied("INSERT INTO authks.t (k, v) VALUES (2, 20)", "MODIFY", "<table authks.t>")
	denied("TRUNCATE authks.t", "MODIFY", "<table authks.t>")
	denied("CREATE TABLE authks.t2 (k int PRIMARY KEY)", "CREATE", "<keyspace authks>")
	denied("ALTER TABLE authks.t ADD w int", "ALTER", "<table authks.t>")
	denied("DROP TABLE authks.t", "DROP", "<table authks.t>")
	denied("CREATE INDEX ON authks.t (v)", "ALTER", "<table authks.t>")
	denied("CREATE KEYSPACE perm_userks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE", "<all keyspaces>")
	denied("DROP KEYSPACE authks", "DROP", "<keyspace authks>")
	denied("GRANT SELECT ON KEYSPACE authks TO perm_user", "AUTHORIZE", "<keyspace authks>")

	// Granted on the keyspace, SELECT covers its tables, for statements
	// prepared before the grant too; revoked, it no longer does.
	prepared := user.Query("SELECT v FROM authks.t WHERE k = ?", 1)
	var v int
	if err := prepared.Scan(&v); err == nil {
		t.Fatal("SELECT before GRANT was allowed")
	}
	exec(t, sess, "GRANT SELECT ON KEYSPACE authks TO perm_user")
	if err := prepared.Scan(&v); err != nil || v != 10 {
		t.Fatalf("SELECT after GRANT: %d, %v", v, err)
	}
	exec(t, sess, "REVOKE SELECT ON KEYSPACE authks FROM perm_user")
	if err := prepared.Scan(&v); err == nil {
		t.Fatal("SELECT after REVOKE was allowed")
	} else {
		requireCQLError(t, err, errUnauthorized, "User perm_user has no SELECT permission on <table authks.t> or any of its parents")
	}

	// Permissions of a role granted to the user count as its own.
	exec(t, sess, "GRANT MODIFY ON KEYSPACE authks TO perm_writers", "GRANT perm_writers TO perm_user")
	exec(t, user, "INSERT INTO authks.t (k, v) VALUES (2, 20)",
		"BEGIN BATCH INSERT INTO authks.t (k, v) VALUES (3, 30); DELETE FROM authks.t WHERE k = 3; APPLY BATCH")
	// A conditional write reads too.
	denied("UPDATE authks.t SET v = 21 WHERE k = 2 IF v = 20", "SELECT", "<table authks.t>")
	exec(t, sess, "GRANT SELECT ON authks.t TO perm_user")
	exec(t, user, "UPDATE authks.t SET v = 21 WHERE k = 2 IF v = 20", "TRUNCATE authks.t")

	checkRows(t, sess, "LIST ALL PERMISSIONS OF perm_user", nil, [][]string{
		{"perm_user", "perm_user", "<table authks.t>", "SELECT"},
		{"perm_writers", "perm_writers", "<keyspace authks>", "MODIFY"},
	})
	checkRows(t, sess, "LIST MODIFY ON authks.t OF perm_user", nil, [][]string{
		{"perm_writers", "perm_writers", "<keyspace authks>", "MODIFY"},
	})
	checkRows(t, sess, "LIST MODIFY ON authks.t OF perm_user NORECURSIVE", nil, nil)

	// The creator of a keyspace or table gets every permission on it, and
	// dropping it takes them away.
	exec(t, sess, "GRANT CREATE ON KEYSPACE authks TO perm_user", "GRANT CREATE ON ALL KEYSPACES TO perm_user")
	exec(t, user, "CREATE TABLE authks.mine (k int PRIMARY KEY, v int)", "INSERT INTO authks.mine (k, v) VALUES (1, 1)",
		"CREATE KEYSPACE perm_userks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE perm_userks.x (k int PRIMARY KEY)")
	checkRows(t, user, "LIST ALL PERMISSIONS OF perm_user", []string{"perm_user"}, [][]string{
		{"perm_user", "perm_user", "<all keyspaces>", "CREATE"},
		{"perm_user", "perm_user", "<keyspace authks>", "CREATE"},
		{"perm_user", "perm_user", "<table authks.mine>", "ALTER"},
		{"perm_user", "perm_user", "<table authks.mine>", "DROP"},
		{"perm_user", "perm_user", "<table authks.mine>", "SELECT"},
		{"perm_user", "perm_user", "<table authks.mine>", "MODIFY"},
		{"perm_user", "perm_user", "<table authks.mine>", "AUTHORIZE"},
		{"perm_user", "perm_user", "<table authks.t>", "SELECT"},
		{"perm_user", "perm_user", "<keyspace perm_userks>", "CREATE"},
		{"perm_user", "perm_user", "<keyspace perm_userks>", "ALTER"},
		{"perm_user", "perm_user", "<keyspace perm_userks>", "DROP"},
		{"perm_user", "perm_user", "<keyspace perm_userks>", "SELECT"},
		{"perm_user", "perm_user", "<keyspace perm_userks>", "MODIFY"},
		{"perm_user", "perm_user", "<keyspace perm_userks>", "AUTHORIZE"},
		{"perm_user", "perm_user", "<table perm_userks.x>", "ALTER"},
		{"perm_user", "perm_user", "<table perm_userks.x>", "DROP"},
		{"perm_user", "perm_user", "<table perm_userks.x>", "SELECT"},
		{"perm_user", "perm_user", "<table perm_userks.x>", "MODIFY"},
		{"perm_user", "perm_user", "<table perm_userks.x>", "AUTHORIZE"},
		{"perm_user", "perm_user", "<all functions in perm_userks>", "CREATE"},
		{"perm_user", "perm_user", "<all functions in perm_userks>", "ALTER"},
		{"perm_user", "perm_user", "<all functions in perm_userks>", "DROP"},
		{"perm_user", "perm_user", "<all functions in perm_userks>", "AUTHORIZE"},
		{"perm_user", "perm_user", "<all functions in perm_userks>", "EXECUTE"},
	})
	// Holding AUTHORIZE and the permission, it may grant it on.
	exec(t, user, "GRANT SELECT ON authks.mine TO perm_writers", "DROP TABLE authks.mine", "DROP KEYSPACE perm_userks")
	checkRows(t, user, "LIST ALL PERMISSIONS OF perm_user", []string{"perm_user", "perm_writers"}, [][]string{
		{"perm_user", "perm_user", "<all keyspaces>", "CREATE"},
		{"perm_user", "perm_user", "<keyspace authks>", "CREATE"},
		{"perm_user", "perm_user", "<table authks.t>", "SELECT"},
		{"perm_writers", "perm_writers", "<keyspace authks>", "MODIFY"},
	})

	for _, tc := range []struct {
		cql  string
		code int
		msg  string
	}{
		{"GRANT SELECT ON KEYSPACE perm_nosuch TO perm_user", errInvalid, "Resource <keyspace perm_nosuch> doesn't exist"},
		{"GRANT SELECT ON authks.nosuch TO perm_user", errInvalid, "Resource <table authks.nosuch> doesn't exist"},
		{"GRANT SELECT ON KEYSPACE authks TO perm_nosuch", errInvalid, "Role perm_nosuch doesn't exist"},
		{"LIST ALL ON KEYSPACE perm_nosuch", errInvalid, "<keyspace perm_nosuch> doesn't exist"},
		{"LIST ALL OF perm_nosuch", errInvalid, "<role perm_nosuch> doesn't exist"},
		{"GRANT DESCRIBE ON KEYSPACE authks TO perm_user", 0x2000, "Resource type DataResource does not support any of the requested permissions"},
	} {
		requireCQLError(t, sess.Query(tc.cql).Exec(), tc.code, tc.msg)
	}
	// Everything revoked, nothing is allowed any more.
	exec(t, sess, "REVOKE ALL ON authks.t FROM perm_user", "REVOKE perm_writers FROM perm_user")
	denied("SELECT * FROM authks.t", "SELECT", "<table authks.t>")
	denied("INSERT INTO authks.t (k, v) VALUES (2, 20)", "MODIFY", "<table authks.t>")
}

func TestAuthRawProtocol(t *testing.T) {
	s := startAuthGateway(t, nil)
	c := dialAuthRaw(t, s)
	c.send(1, &message.Options{})
	if _, ok := c.receive().(*message.Supported); !ok {
		t.Fatal("OPTIONS not answered by SUPPORTED")
	}
	c.send(2, &message.Startup{Options: map[string]string{"CQL_VERSION": "3.0.0"}})
	auth, ok := c.receive().(*message.Authenticate)
	if !ok || auth.Authenticator != "org.apache.cassandra.auth.PasswordAuthenticator" {
		t.Fatalf("STARTUP answered by %v, want AUTHENTICATE with the password authenticator", auth)
	}
	// Until the login succeeds, nothing but AUTH_RESPONSE is accepted.
	for _, m := range []struct {
		msg  message.Message
		name string
	}{
		{&message.Query{Query: "SELECT key FROM system.local"}, "QUERY"},
		{&message.Prepare{Query: "SELECT key FROM system.local"}, "PREPARE"},
		{&message.Register{EventTypes: []primitive.EventType{primitive.EventTypeSchemaChange}}, "REGISTER"},
		{&message.Options{}, "OPTIONS"},
	} {
		c.send(3, m.msg)
		perr, ok := c.receive().(*message.ProtocolError)
		if want := "Unexpected message " + m.name + ", expecting SASL_RESPONSE"; !ok || perr.ErrorMessage != want {
			t.Errorf("%s before login: %v, want protocol error %q", m.name, perr, want)
		}
	}
	for _, tc := range []struct {
		token string
		msg   string
	}{
		{"\x00cassandra", "Authentication ID must not be null"},
		{"\x00cassandra\x00", "Password must not be null"},
		{"\x00\x00pw", "Authentication ID must not be null"},
		{"a\x00b\x00c\x00d", `Credential format error: username or password is empty or contains NUL(\0) character`},
		{"\x00cassandra\x00wrong", "Provided username cassandra and/or password are incorrect"},
	} {
		c.send(4, &message.AuthResponse{Token: []byte(tc.token)})
		aerr, ok := c.receive().(*message.AuthenticationError)
		if !ok || aerr.ErrorMessage != tc.msg {
			t.Errorf("token %q: %v, want authentication error %q", tc.token, aerr, tc.msg)
		}
	}
	// The authorization id before the first NUL is ignored, as Cassandra
	// ignores it.
	c.send(5, &message.AuthResponse{Token: []byte("someone\x00cassandra\x00" + authSuperuserPassword)})
	if ok, isOK := c.receive().(*message.AuthSuccess); !isOK || ok.Token != nil {
		t.Fatalf("login answered by %v, want AUTH_SUCCESS without token", ok)
	}
	c.send(6, &message.Query{Query: "SELECT key FROM system.local", Options: &message.QueryOptions{Consistency: primitive.ConsistencyLevelOne}})
	if m, ok := c.receive().(*message.RowsResult); !ok {
		t.Fatalf("QUERY after login answered by %v, want rows", m)
	}
	c.send(7, &message.Startup{Options: map[string]string{"CQL_VERSION": "3.0.0"}})
	if perr, ok := c.receive().(*message.ProtocolError); !ok ||
		perr.ErrorMessage != "Unexpected message STARTUP, the connection is already initialized" {
		t.Errorf("STARTUP after login: %v", perr)
	}
}

// TestAuthOff checks what role and permission statements answer without
// authentication: Cassandra's anonymous user may run none.
func TestAuthOff(t *testing.T) {
	sess := session(t, "")
	for _, tc := range []struct {
		cql  string
		code int
		msg  string
	}{
		{"CREATE ROLE off_role", errUnauthorized, "You have to be logged in and not anonymous to perform this request"},
		{"CREATE ROLE off_role WITH PASSWORD = 'x' AND LOGIN = true", errInvalid,
			"org.apache.cassandra.auth.CassandraRoleManager doesn't support PASSWORD"},
		{"CREATE ROLE off_role WITH SUPERUSER = true", errUnauthorized, "Only superusers can create a role with superuser status"},
		{"ALTER ROLE off_role WITH LOGIN = true", errUnauthorized, "You have to be logged in and not anonymous to perform this request"},
		{"DROP ROLE off_role", errUnauthorized, "You have to be logged in and not anonymous to perform this request"},
		{"LIST ROLES", errUnauthorized, "You have to be logged in and not anonymous to perform this request"},
		{"LIST USERS", errUnauthorized, "You have to be logged in and not anonymous to perform this request"},
		{"GRANT SELECT ON ALL KEYSPACES TO off_role", errUnauthorized, "You have to be logged in and not anonymous to perform this request"},
		{"LIST ALL PERMISSIONS", errUnauthorized, "You have to be logged in and not anonymous to perform this request"},
		{"CREATE USER off_user WITH PASSWORD 'x'", errInvalid, "org.apache.cassandra.auth.CassandraRoleManager doesn't support PASSWORD"},
	} {
		requireCQLError(t, sess.Query(tc.cql).Exec(), tc.code, tc.msg)
	}
}

// TestAuthDefaultSuperuser starts authentication on shards of its own,
// without roles: the default superuser gets a random password, logged once.
func TestAuthDefaultSuperuser(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	clusters, stop, err := localpg.TempClusters(ctx, 1, localpg.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	start := func(password string) (*gateway.Server, string) {
		t.Helper()
		var log lockedBuffer
		cfg := gateway.Config{Listen: "127.0.0.1:0", Log: slog.New(slog.NewTextHandler(&log, nil)),
			Shards: []cluster.ShardConfig{{URL: clusters[0].URL()}},
			Auth:   gateway.AuthConfig{Enabled: true, SuperuserPassword: password}}
		s, err := gateway.New(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		go s.Serve()
		return s, log.String()
	}
	s, log := start("")
	m := regexp.MustCompile(`role=cassandra password=(\S+)`).FindStringSubmatch(log)
	if m == nil {
		s.Shutdown(ctx)
		t.Fatalf("no generated password in the log:\n%s", log)
	}
	password := m[1]
	if len(password) < 20 {
		t.Errorf("generated password %q is short", password)
	}
	sess, err := loginConfig(s, "cassandra", password).CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	checkRows(t, sess, "LIST USERS", nil, [][]string{{"cassandra", "true", "ALL"}})
	sess.Close()
	s.Shutdown(ctx)

	// Started again, with or without a password, it finds the role and
	// leaves it alone.
	for _, pw := range []string{"", "ignored"} {
		s, log = start(pw)
		if strings.Contains(log, "password=") {
			t.Errorf("a password was logged again:\n%s", log)
		}
		if pw != "" && !strings.Contains(log, "the configured superuser password is not applied") {
			t.Errorf("no notice that the configured password is not applied:\n%s", log)
		}
		requireLoginError(t, loginError(s, "cassandra", "ignored"), "Provided username cassandra and/or password are incorrect")
		if err := loginError(s, "cassandra", password); err != nil {
			t.Error(err)
		}
		s.Shutdown(ctx)
	}
}

// lockedBuffer is a log destination safe for concurrent writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// authRaw talks to a gateway message by message, with the protocol
// library as the independent encoder and decoder.
type authRaw struct {
	t     *testing.T
	nc    net.Conn
	codec frame.Codec
}

func dialAuthRaw(t *testing.T, s *gateway.Server) *authRaw {
	t.Helper()
	nc, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(20 * time.Second))
	return &authRaw{t: t, nc: nc, codec: frame.NewCodec()}
}

func (c *authRaw) send(stream int16, msg message.Message) {
	c.t.Helper()
	if err := c.codec.EncodeFrame(frame.NewFrame(primitive.ProtocolVersion4, stream, msg), c.nc); err != nil {
		c.t.Fatal(err)
	}
}

func (c *authRaw) receive() message.Message {
	c.t.Helper()
	f, err := c.codec.DecodeFrame(c.nc)
	if err != nil {
		c.t.Fatalf("decode response: %v", err)
	}
	return f.Body.Message
}

// pythonAuthReport is what testdata/auth/driver_auth.py prints.
type pythonAuthReport struct {
	ConnectMS       float64  `json:"connect_ms"`
	ProtocolVersion int      `json:"protocol_version"`
	ReleaseVersion  string   `json:"release_version"`
	Roles           []string `json:"roles"`
	Unauthorized    *string  `json:"unauthorized"`
	WrongPassword   *string  `json:"wrong_password"`
}

// TestAuthPythonDriver logs in with the unmodified DataStax Python driver
// and its PlainTextAuthProvider, as cqlsh -u -p does.
func TestAuthPythonDriver(t *testing.T) {
	if err := installPythonDriver(); err != nil {
		t.Fatal(err)
	}
	s := startAuthGateway(t, nil)
	sess := superSession(t, s)
	exec(t, sess,
		"CREATE KEYSPACE IF NOT EXISTS pyauth WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE IF NOT EXISTS pyauth.t (k int PRIMARY KEY)",
		"CREATE ROLE py_user WITH PASSWORD = 'py pw' AND LOGIN = true")
	t.Cleanup(func() {
		sess.Query("DROP ROLE IF EXISTS py_user").Exec()
		sess.Query("DROP KEYSPACE IF EXISTS pyauth").Exec()
	})
	host, port, _ := net.SplitHostPort(s.Addr().String())
	var r pythonAuthReport
	runPython(t, &r, "testdata/auth/driver_auth.py", host, port, "py_user", "py pw", "pyauth.t")
	t.Logf("python driver: logged in in %.1f ms with protocol v%d", r.ConnectMS, r.ProtocolVersion)
	if r.ReleaseVersion == "" || !reflect.DeepEqual(r.Roles, []string{"py_user"}) {
		t.Errorf("release_version %q, LIST ROLES %q, want [py_user]", r.ReleaseVersion, r.Roles)
	}
	wantUnauth := `Error from server: code=2100 [Unauthorized] message="User py_user has no SELECT permission on <table pyauth.t> or any of its parents"`
	if r.Unauthorized == nil || *r.Unauthorized != wantUnauth {
		t.Errorf("SELECT without permission: %v, want %s", r.Unauthorized, wantUnauth)
	}
	wantBad := `message="Provided username py_user and/or password are incorrect"`
	if r.WrongPassword == nil || !strings.Contains(*r.WrongPassword, "AuthenticationFailed") || !strings.Contains(*r.WrongPassword, wantBad) {
		t.Errorf("wrong password: %v, want AuthenticationFailed with %s", r.WrongPassword, wantBad)
	}
}

// BenchmarkAuthLogin measures a connection's handshake, dial to READY or
// AUTH_SUCCESS: without authentication, with a login checked by the
// gateway's bcrypt (cold), and with one remembered from a moment ago.
func BenchmarkAuthLogin(b *testing.B) {
	for _, bc := range []struct {
		name     string
		validity time.Duration
		auth     bool
	}{{"no auth", 0, false}, {"cold", time.Nanosecond, true}, {"cached", time.Hour, true}} {
		b.Run(bc.name, func(b *testing.B) {
			s := gw
			if bc.auth {
				s = startAuthGateway(b, func(c *gateway.AuthConfig) { c.CredentialsValidity = bc.validity })
			}
			codec := frame.NewCodec()
			handshake := func() {
				nc, err := net.Dial("tcp", s.Addr().String())
				if err != nil {
					b.Fatal(err)
				}
				defer nc.Close()
				codec.EncodeFrame(frame.NewFrame(primitive.ProtocolVersion4, 1,
					&message.Startup{Options: map[string]string{"CQL_VERSION": "3.0.0"}}), nc)
				f, err := codec.DecodeFrame(nc)
				if err != nil {
					b.Fatal(err)
				}
				if bc.auth {
					codec.EncodeFrame(frame.NewFrame(primitive.ProtocolVersion4, 2,
						&message.AuthResponse{Token: []byte("\x00cassandra\x00" + authSuperuserPassword)}), nc)
					if f, err = codec.DecodeFrame(nc); err != nil {
						b.Fatal(err)
					}
					if _, ok := f.Body.Message.(*message.AuthSuccess); !ok {
						b.Fatalf("login answered by %v", f.Body.Message)
					}
				}
			}
			// The first login checks the password: the cached case
			// measures the ones after it.
			handshake()
			for b.Loop() {
				handshake()
			}
		})
	}
}

// TestAuthAcrossGateways checks that a grant made through one gateway
// reaches another within its permissions validity, without a restart.
func TestAuthAcrossGateways(t *testing.T) {
	a := startAuthGateway(t, nil)
	b := startAuthGateway(t, func(c *gateway.AuthConfig) { c.PermissionsValidity = 200 * time.Millisecond })
	sess := superSession(t, a)
	exec(t, sess,
		"CREATE KEYSPACE IF NOT EXISTS across WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE IF NOT EXISTS across.t (k int PRIMARY KEY)",
		"CREATE ROLE across_user WITH PASSWORD = 'pw' AND LOGIN = true")
	t.Cleanup(func() {
		sess.Query("DROP ROLE IF EXISTS across_user").Exec()
		sess.Query("DROP KEYSPACE IF EXISTS across").Exec()
	})
	user := loginSession(t, b, "across_user", "pw")
	requireCQLError(t, user.Query("SELECT * FROM across.t").Exec(), errUnauthorized,
		"User across_user has no SELECT permission on <table across.t> or any of its parents")
	exec(t, sess, "GRANT SELECT ON KEYSPACE across TO across_user")
	granted := time.Now()
	for user.Query("SELECT * FROM across.t").Exec() != nil {
		if time.Since(granted) > 5*time.Second {
			t.Fatal("the other gateway still refuses 5 s after the grant")
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("the grant applied on the other gateway after %v", time.Since(granted).Round(time.Millisecond))
}
