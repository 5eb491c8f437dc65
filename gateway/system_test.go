package gateway_test

import (
	"context"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlpg/cqlpg/gateway"
	"github.com/cqlpg/cqlpg/gateway/cluster"
)

func schemaVersion(t *testing.T, sess *gocql.Session) gocql.UUID {
	t.Helper()
	var v gocql.UUID
	if err := sess.Query("SELECT schema_version FROM system.local WHERE key = 'local'").Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestSchemaVersionChangesOnDDL(t *testing.T) {
	sess := session(t, "")
	seen := map[gocql.UUID]bool{schemaVersion(t, sess): true}
	for _, ddl := range []string{
		"CREATE KEYSPACE versions WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE versions.t (k int PRIMARY KEY)",
		"DROP TABLE versions.t",
		"DROP KEYSPACE versions",
	} {
		exec(t, sess, ddl)
		v := schemaVersion(t, sess)
		if seen[v] {
			t.Errorf("schema version %v unchanged after %s", v, ddl)
		}
		seen[v] = true
	}
	// A no-op keeps the version.
	before := schemaVersion(t, sess)
	exec(t, sess, "DROP KEYSPACE IF EXISTS versions")
	if after := schemaVersion(t, sess); after != before {
		t.Errorf("schema version changed by a no-op: %v -> %v", before, after)
	}
}

func TestSystemTables(t *testing.T) {
	waitAlone(t)
	sess := session(t, "")
	exec(t, sess,
		"CREATE KEYSPACE systab WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 1}",
		"CREATE TABLE systab.t (a int, b text, c timestamp, d double, PRIMARY KEY ((a, b), c)) WITH CLUSTERING ORDER BY (c DESC) AND comment = 'hello'")

	var repl map[string]string
	var durable bool
	if err := sess.Query("SELECT durable_writes, replication FROM system_schema.keyspaces WHERE keyspace_name = ?", "systab").
		Scan(&durable, &repl); err != nil {
		t.Fatal(err)
	}
	if !durable || repl["class"] != "org.apache.cassandra.locator.NetworkTopologyStrategy" || repl["datacenter1"] != "1" {
		t.Errorf("keyspace row: %v %v", durable, repl)
	}

	iter := sess.Query(`SELECT table_name, column_name, clustering_order, type, kind, position
		FROM system_schema.columns WHERE keyspace_name = ?`, "systab").Iter()
	var got []string
	var table, column, order, typ, kind string
	var pos int
	for iter.Scan(&table, &column, &order, &typ, &kind, &pos) {
		got = append(got, strings.Join([]string{table, column, order, typ, kind, strconv.Itoa(pos)}, " "))
	}
	if err := iter.Close(); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"t a none int partition_key 0",
		"t b none text partition_key 1",
		"t c desc timestamp clustering 0",
		"t d none double regular -1",
	}
	if !slices.Equal(got, want) {
		t.Errorf("columns:\n got %q\nwant %q", got, want)
	}

	var comment string
	var rrc, dcrrc float64
	if err := sess.Query(`SELECT comment, read_repair_chance, dclocal_read_repair_chance FROM system_schema.tables
		WHERE keyspace_name = 'systab' AND table_name = 't'`).Scan(&comment, &rrc, &dcrrc); err != nil {
		t.Fatal(err)
	}
	if comment != "hello" || rrc != 0 || dcrrc != 0 {
		t.Errorf("table row: %q %v %v", comment, rrc, dcrrc)
	}

	for _, q := range []string{
		"SELECT * FROM system.peers_v2", "SELECT * FROM system.peers",
		"SELECT * FROM system_schema.views WHERE keyspace_name = 'systab'",
		"SELECT * FROM system_schema.functions WHERE keyspace_name = 'systab'",
		"SELECT * FROM system_schema.aggregates WHERE keyspace_name = 'systab'",
		"SELECT * FROM system_schema.indexes WHERE keyspace_name = 'systab'", "SELECT * FROM system_schema.triggers",
		"SELECT * FROM system_schema.types WHERE keyspace_name = 'systab'",
	} {
		n := 0
		iter := sess.Query(q).Iter()
		for iter.Scan() {
			n++
		}
		if err := iter.Close(); err != nil || n != 0 {
			t.Errorf("%s: %d rows, %v", q, n, err)
		}
	}

	var tokens []string
	var partitioner, release string
	if err := sess.Query("SELECT tokens, partitioner, release_version FROM system.local WHERE key = 'local'").
		Scan(&tokens, &partitioner, &release); err != nil {
		t.Fatal(err)
	}
	if len(tokens) != 48 || partitioner != "org.apache.cassandra.dht.Murmur3Partitioner" || !strings.HasPrefix(release, "4.1.") {
		t.Errorf("system.local: %d tokens, %q, %q", len(tokens), partitioner, release)
	}
}

// TestRestart stops a gateway and starts another on the same shards: the
// schema and the data are still there, and the ring is the same.
func TestRestart(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	first, err := startGateway(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sess := sessionOn(t, first, "")
	exec(t, sess,
		"CREATE KEYSPACE restart WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 2}",
		"CREATE TABLE restart.t (k text, c int, v text, PRIMARY KEY (k, c))",
		"INSERT INTO restart.t (k, c, v) VALUES ('a', 1, 'one')",
		"INSERT INTO restart.t (k, c, v) VALUES ('b', 2, 'two')")
	tokensBefore := ringSeen(t, sess)
	sess.Close()
	if err := first.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}

	second, err := startGateway(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Shutdown(context.Background())
	sess = sessionOn(t, second, "restart")
	var v string
	if err := sess.Query("SELECT v FROM t WHERE k = 'b' AND c = 2").Scan(&v); err != nil || v != "two" {
		t.Fatalf("after restart: %q %v", v, err)
	}
	tokensAfter := ringSeen(t, sess)
	if !slices.Equal(tokensBefore, tokensAfter) {
		t.Error("the ring changed across a restart")
	}
}

func TestHTTP(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg := gateway.Config{Listen: "127.0.0.1:0", HTTP: "127.0.0.1:0", Log: testLogger()}
	for _, u := range shardURLs {
		cfg.Shards = append(cfg.Shards, cluster.ShardConfig{URL: u})
	}
	s, err := gateway.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown(context.Background())
	base := "http://" + s.HTTPAddr().String()
	get := func(path string) (int, string) {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if code, _ := get("/readyz"); code != http.StatusServiceUnavailable {
		t.Errorf("readyz before Serve: %d", code)
	}
	go s.Serve()
	deadline := time.Now().Add(5 * time.Second)
	for {
		code, _ := get("/readyz")
		if code == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("readyz never became ready: %d", code)
		}
		time.Sleep(20 * time.Millisecond)
	}
	sess := sessionOn(t, s, "")
	exec(t, sess, "SELECT * FROM system.local")
	if _, body := get("/metrics"); !strings.Contains(body, `cqlpg_requests_total{opcode="EXECUTE"}`) ||
		!strings.Contains(body, "cqlpg_connections") {
		t.Errorf("metrics lack request counters:\n%s", body)
	}
}
