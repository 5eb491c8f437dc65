package main_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/cqlpg/cqlpg/gateway"
	"github.com/cqlpg/cqlpg/gateway/cluster"
	"github.com/cqlpg/cqlpg/sharding/localpg"
)

// migrateTarget is a fresh one-shard cqlpg cluster placed in datacenter
// east, with a gateway on it for the checks.
type migrateTarget struct {
	shard string // --shard flag value
	addr  string
}

func startMigrateTarget(t *testing.T) *migrateTarget {
	t.Helper()
	ctx := context.Background()
	clusters, stop, err := localpg.TempClusters(ctx, 1, localpg.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	m := &migrateTarget{shard: "east:r1=" + clusters[0].URL()}
	cfg := gateway.Config{Listen: "127.0.0.1:0", Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Shards: []cluster.ShardConfig{{Datacenter: "east", Rack: "r1", URL: clusters[0].URL()}}}
	srv, err := gateway.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve()
	t.Cleanup(func() { srv.Shutdown(context.Background()) })
	m.addr = srv.Addr().String()
	return m
}

// describe returns DESCRIBE KEYSPACE ks as cqlpg exec prints it.
func describe(t *testing.T, bin, addr, ks string) string {
	t.Helper()
	out, errOut, code := runExec(t, bin, "--host", addr, "-e", "DESCRIBE KEYSPACE "+ks)
	if code != 0 {
		t.Fatalf("DESCRIBE KEYSPACE %s on %s: exit %d, %s", ks, addr, code, errOut)
	}
	return out
}

// TestMigrateSchema imports a keyspace of types that use one another,
// tables with compound keys, descending clustering, static, collection
// and quoted columns, options and indexes from a live cluster (another
// cqlpg), and checks that the target describes it as the origin does,
// with its datacenter mapped; then that every refusal comes before any
// write.
func TestMigrateSchema(t *testing.T) {
	e := sharedBulkEnv(t)
	bin := buildCqlpg(t)
	e.exec(t,
		"CREATE KEYSPACE IF NOT EXISTS migsrc WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 1}",
		"CREATE TYPE IF NOT EXISTS migsrc.phone (kind text, number text)",
		"CREATE TYPE IF NOT EXISTS migsrc.contact (name text, phones frozen<list<frozen<phone>>>)",
		`CREATE TABLE IF NOT EXISTS migsrc.events (tenant int, day date, at timestamp, id uuid, "Kind" text, payload blob,
			tags set<text>, attrs map<text, int>, who frozen<contact>, seen list<timestamp>, owner text STATIC,
			PRIMARY KEY ((tenant, day), at, id))
			WITH CLUSTERING ORDER BY (at DESC, id ASC) AND default_time_to_live = 3600 AND gc_grace_seconds = 7200
			AND comment = 'it''s events'`,
		"CREATE TABLE IF NOT EXISTS migsrc.users (id uuid PRIMARY KEY, email text, age int)",
		"CREATE INDEX IF NOT EXISTS users_email ON migsrc.users (email)",
		"CREATE INDEX IF NOT EXISTS ON migsrc.events (keys(attrs))",
		"CREATE KEYSPACE IF NOT EXISTS migsrc2 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE IF NOT EXISTS migsrc2.t (k int PRIMARY KEY, v int)",
		"CREATE TABLE IF NOT EXISTS migsrc2.u (k int PRIMARY KEY, v int)",
	)
	dst := startMigrateTarget(t)
	migrate := func(args ...string) (string, string, int) {
		return runCqlpg(bin, append([]string{"migrate", "schema", "--origin", e.addr, "--shard", dst.shard}, args...)...)
	}

	// The origin's datacenter is not the target's.
	out, errOut, code := migrate("--keyspaces", "migsrc")
	if code != 1 || !strings.Contains(errOut, "keyspace migsrc is replicated to datacenter datacenter1, which the target does not have "+
		"(its datacenters: east): map it with --dc-map datacenter1=DATACENTER") || !strings.Contains(errOut, "nothing was created") {
		t.Errorf("unmapped datacenter: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	out, errOut, code = migrate("--keyspaces", "migsrc", "--dc-map", "datacenter1=west,dc9=east")
	if code != 1 || !strings.Contains(errOut, "--dc-map datacenter1=west: the target has no datacenter west (its datacenters: east)") ||
		!strings.Contains(errOut, "--dc-map dc9=east: the origin has no datacenter dc9 (its datacenters: datacenter1)") {
		t.Errorf("unknown datacenters: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	// Unreachable, or refusing the login.
	out, errOut, code = runCqlpg(bin, "migrate", "schema", "--origin", "127.0.0.1:1", "--origin-timeout", "1s", "--shard", dst.shard)
	if code != 1 || !strings.Contains(errOut, "origin: cannot connect to 127.0.0.1:1") {
		t.Errorf("unreachable origin: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	// An origin that requires a login: refused with the wrong password,
	// read with the right one.
	ctx := context.Background()
	cfg := gateway.Config{Listen: "127.0.0.1:0", Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Auth: gateway.AuthConfig{Enabled: true, SuperuserPassword: "cassandra"}}
	for _, u := range e.urls {
		cfg.Shards = append(cfg.Shards, cluster.ShardConfig{URL: u})
	}
	authed, err := gateway.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	go authed.Serve()
	defer authed.Shutdown(context.Background())
	for _, tc := range []struct {
		auth, want string
		code       int
	}{
		{"cassandra:wrong", "origin: cannot connect to " + authed.Addr().String(), 1},
		{"", "origin: cannot connect to " + authed.Addr().String(), 1},
		{"cassandra:cassandra", "", 0},
	} {
		out, errOut, code := runCqlpg(bin, "migrate", "schema", "--origin", authed.Addr().String(), "--origin-auth", tc.auth,
			"--keyspaces", "migsrc", "--dc-map", "datacenter1=east", "--dry-run", "--shard", dst.shard)
		if code != tc.code || !strings.Contains(errOut, tc.want) || code == 0 && !strings.Contains(out, "CREATE TABLE migsrc.users") {
			t.Errorf("--origin-auth %q: exit %d, stdout %q, stderr %q", tc.auth, code, out, errOut)
		}
	}
	if out, _, code := runExec(t, bin, "--host", dst.addr, "-e", "DESCRIBE KEYSPACE migsrc"); code == 0 {
		t.Fatalf("refused imports created migsrc:\n%s", out)
	}

	out, errOut, code = migrate("--keyspaces", "migsrc", "--dc-map", "datacenter1=east")
	if code != 0 {
		t.Fatalf("import: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	for _, want := range []string{"created keyspace migsrc\ncreated type migsrc.phone\ncreated type migsrc.contact\n",
		"created table migsrc.events\n", "created index migsrc.events_attrs_idx\n", "created index migsrc.users_email\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("import output lacks %q:\n%s", want, out)
		}
	}
	want := strings.ReplaceAll(describe(t, bin, e.addr, "migsrc"), "'datacenter1': '1'", "'east': '1'")
	if got := describe(t, bin, dst.addr, "migsrc"); got != want {
		t.Errorf("target describes\n%s\norigin (datacenter mapped)\n%s", got, want)
	}
	// Again: everything is there already.
	out, errOut, code = migrate("--keyspaces", "migsrc", "--dc-map", "datacenter1=east")
	if code != 0 || strings.Contains(out, "created") || !strings.Contains(out, "table migsrc.events exists on the target with the same columns and keys") {
		t.Errorf("second import: exit %d, stdout %q, stderr %q", code, out, errOut)
	}

	// A table on both sides with other columns stops the whole import.
	if out, errOut, code := runExec(t, bin, "--host", dst.addr, "-e",
		"CREATE KEYSPACE migsrc2 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}; "+
			"CREATE TABLE migsrc2.t (k int PRIMARY KEY, v text)"); code != 0 {
		t.Fatalf("target table: exit %d, %q %q", code, out, errOut)
	}
	out, errOut, code = migrate("--keyspaces", "migsrc2")
	if code != 1 || !strings.Contains(errOut, "table migsrc2.t exists on the target with other columns or keys "+
		"(origin has v int; target has v text): drop it on the target, or leave keyspace migsrc2 out of --keyspaces") {
		t.Errorf("conflicting table: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if got := describe(t, bin, dst.addr, "migsrc2"); strings.Contains(got, "migsrc2.u") {
		t.Errorf("a refused import created migsrc2.u:\n%s", got)
	}
}
