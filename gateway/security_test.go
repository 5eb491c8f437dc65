package gateway_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
	"github.com/gocql/gocql"
	"github.com/jackc/pgx/v5"

	"github.com/cqlpg/cqlpg/gateway"
	"github.com/cqlpg/cqlpg/gateway/cluster"
	"github.com/cqlpg/cqlpg/sharding/localpg"
)

// leaks lists what a client must never see in an error: connection
// strings, credentials and the SQL the gateway runs on its shards.
var leaks = []string{"postgres://", "postgresql://", "password", "host=", "user=", "dbname=", "SELECT", "INSERT", "UPDATE ", "DELETE ", "$1"}

// requireNoLeak fails when a client-visible error message holds a leak.
func requireNoLeak(t *testing.T, what string, err error, secrets ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: succeeded, want an error", what)
	}
	msg := err.Error()
	for _, l := range append(leaks, secrets...) {
		if strings.Contains(msg, l) {
			t.Errorf("%s: the client saw %q in %q", what, l, msg)
		}
	}
}

// TestSecurityShardErrors provokes shard errors of three kinds behind a
// gateway's back: a table dropped on the shard, the shard's password
// changed (its connections then killed), and the shard stopped. The
// client's errors name none of the shard's connection string,
// credentials or SQL; the log has the detail, and never the password.
func TestSecurityShardErrors(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	clusters := tempShards(t, 1, localpg.Options{})
	pg := clusters[0]
	// Connections over TCP must give a password; the socket stays open
	// to the test.
	const password, newPassword = "shard-secret-Kx7", "shard-secret-Zq9"
	hba := filepath.Join(pg.Dir(), "pg_hba.conf")
	if err := os.WriteFile(hba, []byte("local all all trust\nhost all all 127.0.0.1/32 scram-sha-256\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	admin := func(sql string) {
		t.Helper()
		conn, err := pgx.Connect(ctx, pg.URL())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	admin(fmt.Sprintf("ALTER ROLE %s PASSWORD '%s'", localpg.Superuser, password))
	admin("SELECT pg_reload_conf()")
	url := fmt.Sprintf("postgres://%s:%s@127.0.0.1:%d/%s?sslmode=disable", localpg.Superuser, password, pg.Port(), pg.Database())

	s, logs := startLoggedGateway(t, func(c *gateway.Config) {
		c.Shards = []cluster.ShardConfig{{URL: url}}
		c.RequestTimeout, c.WriteTimeout, c.ReadTimeout = 3*time.Second, time.Second, time.Second
	})
	sess := sessionOn(t, s, "")
	exec(t, sess, "CREATE KEYSPACE sec WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE sec.dropped (k int PRIMARY KEY, v int)", "CREATE TABLE sec.kept (k int PRIMARY KEY, v int)",
		"INSERT INTO sec.dropped (k, v) VALUES (1, 1)", "INSERT INTO sec.kept (k, v) VALUES (1, 1)")
	var v int
	if err := sess.Query("SELECT v FROM sec.dropped WHERE k = ?", 1).Scan(&v); err != nil {
		t.Fatal(err)
	}

	// A table dropped on the shard: its statements fail there.
	conn, err := pgx.Connect(ctx, pg.URL())
	if err != nil {
		t.Fatal(err)
	}
	var ident string
	if err := conn.QueryRow(ctx, `SELECT format('%I.%I', table_schema, table_name) FROM information_schema.tables
		WHERE table_name = 'dropped'`).Scan(&ident); err != nil {
		t.Fatalf("find the table on the shard: %v", err)
	}
	// Set as the gateway's own DDL sets it, past the guard against DDL
	// run outside cqlpg (migration 0012).
	if _, err := conn.Exec(ctx, "SET cqlpg.ddl = 'on'; DROP TABLE "+ident+" CASCADE"); err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)
	requireNoLeak(t, "INSERT into a dropped table", sess.Query("INSERT INTO sec.dropped (k, v) VALUES (2, 2)").Exec(), password)
	requireNoLeak(t, "SELECT of a dropped table", sess.Query("SELECT v FROM sec.dropped WHERE k = 1").Exec(), password)
	requireNoLeak(t, "prepared SELECT of a dropped table",
		sess.Query("SELECT v FROM sec.dropped WHERE k = ?", 1).Consistency(gocql.One).Exec(), password)
	requireNoLeak(t, "prepared INSERT into a dropped table",
		sess.Query("INSERT INTO sec.dropped (k, v) VALUES (?, ?)", 3, 3).Exec(), password)
	if out := logs.String(); !strings.Contains(out, "42P01") {
		t.Errorf("the log lacks the shard's error (SQLSTATE 42P01):\n%.3000s", out)
	}

	// The shard's password changes and its connections are killed: the
	// gateway cannot log in to it again.
	admin(fmt.Sprintf("ALTER ROLE %s PASSWORD '%s'", localpg.Superuser, newPassword))
	admin("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND backend_type = 'client backend'")
	for i := range 5 {
		requireNoLeak(t, "INSERT with the shard refusing the password",
			sess.Query("INSERT INTO sec.kept (k, v) VALUES (?, ?)", 10+i, i).Exec(), password, newPassword)
		requireNoLeak(t, "SELECT with the shard refusing the password",
			sess.Query("SELECT v FROM sec.kept WHERE k = 1").Exec(), password, newPassword)
	}
	// The shard's pool tries it again every 200 ms and logs why it cannot.
	deadline := time.Now().Add(3 * time.Second)
	for !strings.Contains(logs.String(), "password authentication failed") && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if out := logs.String(); !strings.Contains(out, "password authentication failed") {
		t.Errorf("the log lacks why the shard refused the gateway:\n%.3000s", out)
	}

	// The shard stops.
	if err := pg.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		requireNoLeak(t, "INSERT with the shard down",
			sess.Query("INSERT INTO sec.kept (k, v) VALUES (?, ?)", 20+i, i).Exec(), password, newPassword)
		requireNoLeak(t, "prepared SELECT with the shard down",
			sess.Query("SELECT v FROM sec.kept WHERE k = ?", 1).Exec(), password, newPassword)
	}

	out := logs.String()
	for _, p := range []string{password, newPassword} {
		if strings.Contains(out, p) {
			t.Errorf("the log holds the shard's password %q:\n%s", p, out)
		}
	}
}

// TestSecurityTLSVersions checks that a TLS listener refuses TLS 1.0 and
// 1.1 even when its configuration would allow them, and accepts 1.2 and
// 1.3.
func TestSecurityTLSVersions(t *testing.T) {
	// Let the library's own default allow the old versions, so that only
	// the gateway refuses them.
	t.Setenv("GODEBUG", "tls10server=1")
	pki := newTestPKI(t)
	cert, err := tls.LoadX509KeyPair(pki.serverCert, pki.serverKey)
	if err != nil {
		t.Fatal(err)
	}
	built, err := gateway.TLSConfig(pki.serverCert, pki.serverKey, "")
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]*tls.Config{
		"TLSConfig":                        built,
		"a configuration allowing TLS 1.0": {Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS10},
	} {
		s := startGatewayWith(t, func(c *gateway.Config) { c.TLS = tc })
		for _, v := range []struct {
			version uint16
			name    string
			ok      bool
		}{{tls.VersionTLS10, "1.0", false}, {tls.VersionTLS11, "1.1", false}, {tls.VersionTLS12, "1.2", true}, {tls.VersionTLS13, "1.3", true}} {
			d := &net.Dialer{Timeout: 5 * time.Second}
			conn, err := tls.DialWithDialer(d, "tcp", s.Addr().String(), &tls.Config{RootCAs: pki.pool, ServerName: "127.0.0.1",
				InsecureSkipVerify: true, MinVersion: v.version, MaxVersion: v.version})
			if err == nil {
				conn.Close()
			}
			switch {
			case v.ok && err != nil:
				t.Errorf("%s: a TLS %s client: %v", name, v.name, err)
			case !v.ok && err == nil:
				t.Errorf("%s: a TLS %s client was served", name, v.name)
			}
		}
		s.Shutdown(context.Background())
	}
}

// TestAuthBeforeLogin checks that with authentication on, no request but
// OPTIONS and STARTUP is served before STARTUP, and none but AUTH_RESPONSE
// after it until the login succeeds, each refused with Cassandra's
// protocol error.
func TestAuthBeforeLogin(t *testing.T) {
	s := startAuthGateway(t, nil)
	// A statement prepared by a connection that logged in, for EXECUTE.
	super := dialAuthRaw(t, s)
	super.send(1, &message.Startup{Options: map[string]string{"CQL_VERSION": "3.0.0"}})
	super.receive()
	super.send(2, &message.AuthResponse{Token: []byte("\x00cassandra\x00" + authSuperuserPassword)})
	if m, ok := super.receive().(*message.AuthSuccess); !ok {
		t.Fatalf("login: %v", m)
	}
	super.send(3, &message.Prepare{Query: "SELECT key FROM system.local WHERE key = ?"})
	prep, ok := super.receive().(*message.PreparedResult)
	if !ok {
		t.Fatal("PREPARE not answered by a prepared result")
	}
	one := &message.QueryOptions{Consistency: primitive.ConsistencyLevelOne,
		PositionalValues: []*primitive.Value{primitive.NewValue([]byte("local"))}}
	requests := []struct {
		msg  message.Message
		name string
	}{
		{&message.Query{Query: "SELECT key FROM system.local", Options: &message.QueryOptions{Consistency: primitive.ConsistencyLevelOne}}, "QUERY"},
		{&message.Prepare{Query: "SELECT key FROM system.local"}, "PREPARE"},
		{&message.Execute{QueryId: prep.PreparedQueryId, Options: one}, "EXECUTE"},
		{&message.Register{EventTypes: []primitive.EventType{primitive.EventTypeSchemaChange}}, "REGISTER"},
		{&message.Batch{Type: primitive.BatchTypeLogged, Consistency: primitive.ConsistencyLevelOne,
			Children: []*message.BatchChild{{Query: "INSERT INTO system.local (key) VALUES ('x')"}}}, "BATCH"},
	}
	c := dialAuthRaw(t, s)
	for _, r := range requests {
		c.send(1, r.msg)
		perr, ok := c.receive().(*message.ProtocolError)
		if want := "Unexpected message " + r.name + ", expecting STARTUP or OPTIONS"; !ok || perr.ErrorMessage != want {
			t.Errorf("%s before STARTUP: %v, want protocol error %q", r.name, perr, want)
		}
	}
	c = dialAuthRaw(t, s)
	c.send(1, &message.Options{})
	if _, ok := c.receive().(*message.Supported); !ok {
		t.Fatal("OPTIONS before STARTUP not answered by SUPPORTED")
	}
	c.send(2, &message.Startup{Options: map[string]string{"CQL_VERSION": "3.0.0"}})
	if _, ok := c.receive().(*message.Authenticate); !ok {
		t.Fatal("STARTUP not answered by AUTHENTICATE")
	}
	for i, r := range requests {
		c.send(int16(3+i), r.msg)
		perr, ok := c.receive().(*message.ProtocolError)
		if want := "Unexpected message " + r.name + ", expecting SASL_RESPONSE"; !ok || perr.ErrorMessage != want {
			t.Errorf("%s before login: %v, want protocol error %q", r.name, perr, want)
		}
	}
}

// TestAuthBruteForce checks that failed logins are limited per client
// address: past the limit, logins from the address are refused without
// their password being checked, a right one included, while another
// address logs in; once the window has passed the address may log in.
func TestAuthBruteForce(t *testing.T) {
	// Long enough for three failed bcrypt checks and a new connection on
	// a loaded machine: under 3 s, the window once ended before the
	// fourth login.
	const window = 8 * time.Second
	s := startAuthGateway(t, func(c *gateway.AuthConfig) {
		c.MaxFailedLogins, c.FailedLoginWindow = 3, window
	})
	login := func(c *authRaw, stream int16, password string) message.Message {
		c.send(stream, &message.AuthResponse{Token: []byte("\x00cassandra\x00" + password)})
		return c.receive()
	}
	c := dialAuthRaw(t, s)
	c.send(1, &message.Startup{Options: map[string]string{"CQL_VERSION": "3.0.0"}})
	c.receive()
	var windowEnds time.Time // at the latest: the window starts as the first failure is counted
	for i := range 3 {
		m := login(c, int16(2+i), "guess")
		if i == 0 {
			windowEnds = time.Now().Add(window)
		}
		if aerr, ok := m.(*message.AuthenticationError); !ok || aerr.ErrorMessage != "Provided username cassandra and/or password are incorrect" {
			t.Fatalf("failed login %d: %v", i+1, m)
		}
	}
	// The right password, on a new connection from the same address.
	other := dialAuthRaw(t, s)
	other.send(1, &message.Startup{Options: map[string]string{"CQL_VERSION": "3.0.0"}})
	other.receive()
	for _, conn := range []*authRaw{c, other} {
		m := login(conn, 9, authSuperuserPassword)
		if aerr, ok := m.(*message.AuthenticationError); !ok ||
			!strings.HasPrefix(aerr.ErrorMessage, "Unable to perform authentication for cassandra: too many failed login attempts from 127.0.0.1") {
			t.Fatalf("login past the limit: %v, want it refused", m)
		}
	}
	// Another address is not limited.
	cfg := loginConfig(s, "cassandra", authSuperuserPassword)
	cfg.Dialer = &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}, Timeout: 5 * time.Second}
	sess, err := cfg.CreateSession()
	if err != nil {
		t.Fatalf("login from another address: %v", err)
	}
	sess.Close()
	time.Sleep(time.Until(windowEnds.Add(100 * time.Millisecond)))
	if m := login(other, 10, authSuperuserPassword); m.GetOpCode() != primitive.OpCodeAuthSuccess {
		t.Fatalf("login once the window passed: %v", m)
	}
}

// TestAuthPasswordsNeverLogged changes role passwords and logs in, right
// and wrong, with every request logged as slow: no password appears in
// the log, and the roles' passwords are stored as bcrypt hashes.
func TestAuthPasswordsNeverLogged(t *testing.T) {
	s, logs := startLoggedGateway(t, func(c *gateway.Config) {
		c.SlowQuery = time.Nanosecond
		c.Auth = gateway.AuthConfig{Enabled: true, SuperuserPassword: authSuperuserPassword}
	})
	secrets := []string{"pw-created-Vb3", "pw-altered-Nm8", "pw-user-Qa2", "pw-wrong-Hj5"}
	super := superSession(t, s)
	exec(t, super, "DROP ROLE IF EXISTS leaky", "DROP ROLE IF EXISTS leaky_user",
		"CREATE ROLE leaky WITH PASSWORD = '"+secrets[0]+"' AND LOGIN = true",
		"ALTER ROLE leaky WITH PASSWORD = '"+secrets[1]+"'",
		"CREATE USER leaky_user WITH PASSWORD '"+secrets[2]+"' NOSUPERUSER")
	requireLoginError(t, loginError(s, "leaky", secrets[3]), "Provided username leaky and/or password are incorrect")
	requireLoginError(t, loginError(s, "leaky", secrets[0]), "Provided username leaky and/or password are incorrect")
	loginSession(t, s, "leaky", secrets[1])

	out := logs.String()
	if !strings.Contains(out, "slow request") || !strings.Contains(out, "CREATE ROLE leaky WITH PASSWORD = '*****'") {
		t.Errorf("the slow-request log lacks CREATE ROLE with its password masked:\n%.4000s", out)
	}
	for _, p := range append(secrets, authSuperuserPassword) {
		if strings.Contains(out, p) {
			t.Errorf("the log holds the password %q", p)
		}
	}
	conn, err := pgx.Connect(context.Background(), shardURLs[0])
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var hash string
	if err := conn.QueryRow(context.Background(), "SELECT salted_hash FROM cqlpg.roles WHERE role = 'leaky'").Scan(&hash); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(hash, "$2a$") && !strings.HasPrefix(hash, "$2b$") || strings.Contains(hash, secrets[1]) {
		t.Errorf("the role's password is stored as %q, want a bcrypt hash", hash)
	}
}
