package gateway_test

import (
	"bytes"
	"context"
	"os"
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

// TestAuthPasswordsOffShards runs a gateway with authentication on a
// shard that logs every statement with its parameters, and sets and uses
// passwords every way a client can: CREATE and ALTER ROLE and USER, a
// prepared CREATE ROLE, logins right and wrong, a traced CREATE ROLE, a
// role DDL with an error. Afterwards no password is in the shard's log,
// in system_traces, in the gateway's log or in its statement cache; a
// hash made by the shards' pgcrypto, as earlier gateways stored them,
// still logs in.
func TestAuthPasswordsOffShards(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	clusters := tempShards(t, 1, localpg.Options{Settings: map[string]string{
		"log_statement": "all", "log_min_duration_statement": "0",
		"log_parameter_max_length": "-1", "log_parameter_max_length_on_error": "-1"}})
	pg := clusters[0]
	const superPassword = "pw-super-Wd6"
	secrets := []string{superPassword, "pw-created-Rt4", "pw-altered-Pf8", "pw-user-Ce3", "pw-user-altered-Ys5",
		"pw-prepared-Lk4", "pw-wrong-Jn7", "pw-traced-Ob2", "pw-error-Gu9"}
	s, logs := startLoggedGateway(t, func(c *gateway.Config) {
		c.Shards = []cluster.ShardConfig{{URL: pg.URL()}}
		c.SlowQuery = time.Nanosecond
		c.Auth = gateway.AuthConfig{Enabled: true, SuperuserPassword: superPassword, PasswordCost: 4}
	})

	// A role whose hash the shard's pgcrypto made, with the shard's
	// logging off for that one session.
	conn, err := pgx.Connect(ctx, pg.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, q := range []string{"SET log_statement = 'none'", "SET log_min_duration_statement = -1",
		"INSERT INTO cqlpg.roles (role, is_superuser, can_login, member_of, salted_hash) VALUES ('legacy', false, true, '{}', cqlpg.password_hash('pw-legacy-Zm1'))",
		"RESET log_statement", "RESET log_min_duration_statement"} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}

	super := loginSession(t, s, "cassandra", superPassword)
	exec(t, super,
		"CREATE ROLE alice WITH PASSWORD = '"+secrets[1]+"' AND LOGIN = true",
		"ALTER ROLE alice WITH PASSWORD = '"+secrets[2]+"'",
		"CREATE USER bob WITH PASSWORD '"+secrets[3]+"' NOSUPERUSER",
		"ALTER USER bob WITH PASSWORD '"+secrets[4]+"'")
	// Prepared, then executed by its id.
	raw := dialAuthRaw(t, s)
	raw.send(1, &message.Startup{Options: map[string]string{"CQL_VERSION": "3.0.0"}})
	raw.receive()
	raw.send(2, &message.AuthResponse{Token: []byte("\x00cassandra\x00" + superPassword)})
	if m := raw.receive(); m.GetOpCode() != primitive.OpCodeAuthSuccess {
		t.Fatalf("raw login: %v", m)
	}
	raw.send(3, &message.Prepare{Query: "CREATE ROLE carol WITH PASSWORD = '" + secrets[5] + "' AND LOGIN = true"})
	prepared, ok := raw.receive().(*message.PreparedResult)
	if !ok {
		t.Fatal("PREPARE of CREATE ROLE was not answered PREPARED")
	}
	raw.send(4, &message.Execute{QueryId: prepared.PreparedQueryId, Options: &message.QueryOptions{Consistency: primitive.ConsistencyLevelOne}})
	if m := raw.receive(); m.GetOpCode() != primitive.OpCodeResult {
		t.Fatalf("EXECUTE of the prepared CREATE ROLE: %v", m)
	}
	// A traced role statement, and one the gateway refuses.
	var trace bytes.Buffer
	if err := super.Query("CREATE ROLE dave WITH PASSWORD = '" + secrets[7] + "' AND LOGIN = true").
		Trace(gocql.NewTraceWriter(super, &trace)).Exec(); err != nil {
		t.Fatal(err)
	}
	if err := super.Query("CREATE ROLE alice WITH PASSWORD = '" + secrets[8] + "'").Exec(); err == nil ||
		strings.Contains(err.Error(), secrets[8]) {
		t.Errorf("CREATE ROLE of an existing role: %v", err)
	}

	for _, l := range []struct{ user, password string }{{"alice", secrets[2]}, {"bob", secrets[4]}, {"carol", secrets[5]},
		{"dave", secrets[7]}, {"legacy", "pw-legacy-Zm1"}} {
		loginSession(t, s, l.user, l.password)
	}
	for _, l := range []struct{ user, password string }{{"alice", secrets[1]}, {"alice", secrets[6]}, {"bob", secrets[6]}, {"legacy", secrets[6]}} {
		requireLoginError(t, loginError(s, l.user, l.password), "Provided username "+l.user+" and/or password are incorrect")
	}

	var sessions []string
	iter := super.Query("SELECT parameters FROM system_traces.sessions").Iter()
	for params := map[string]string{}; iter.Scan(&params); params = map[string]string{} {
		sessions = append(sessions, params["query"])
	}
	if err := iter.Close(); err != nil {
		t.Fatal(err)
	}
	traces := strings.Join(sessions, "\n") + "\n" + trace.String()
	if !strings.Contains(traces, "CREATE ROLE dave WITH PASSWORD = '*****' AND LOGIN = true") {
		t.Errorf("system_traces lack the traced CREATE ROLE with its password masked:\n%s", traces)
	}
	texts, passwords := s.CachedStatements()
	cached := strings.Join(texts, "\n")
	if len(passwords) > 0 || !strings.Contains(cached, "CREATE ROLE carol WITH PASSWORD = '*****' AND LOGIN = true") {
		t.Errorf("the statement cache holds passwords %q, texts:\n%s", passwords, cached)
	}
	shardLog, err := os.ReadFile(pg.LogFile())
	if err != nil {
		t.Fatal(err)
	}
	// The shard logged the role writes, with their parameters: hashes.
	if !bytes.Contains(shardLog, []byte("cqlpg.roles")) || !bytes.Contains(shardLog, []byte("parameters: $1 = ")) ||
		!bytes.Contains(shardLog, []byte("$2a$04$")) {
		t.Errorf("the shard's log does not show the role statements with their parameters:\n%.3000s", shardLog)
	}
	for where, text := range map[string]string{"the shard's log": string(shardLog), "system_traces": traces,
		"the gateway's log": logs.String(), "the statement cache": cached} {
		for _, p := range secrets {
			if strings.Contains(text, p) {
				t.Errorf("%s holds the password %q", where, p)
			}
		}
	}
}
