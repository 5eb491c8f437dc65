package main_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cqlpg/cqlpg/gateway"
	"github.com/cqlpg/cqlpg/gateway/cluster"
)

// The seed documents' examples, with the output cqlsh prints for them.
var execSeeds = []struct{ setup, query, want string }{
	{
		"CREATE TABLE cycling.cyclist_name ( id UUID PRIMARY KEY, lastname text, firstname text );" +
			"INSERT INTO cycling.cyclist_name (id, lastname, firstname) VALUES (41d01b63-244e-435d-bd6d-5dc8a0addb8c, 'A', 'J');",
		"SELECT token(id), id, lastname, firstname FROM cyclist_name;", `
 system.token(id)     | id                                   | lastname | firstname
----------------------+--------------------------------------+----------+-----------
 -2767158835560740559 | 41d01b63-244e-435d-bd6d-5dc8a0addb8c |        A |         J

(1 rows)
`,
	},
	{
		`CREATE TABLE cycling.rank_by_year_and_name (
race_year int,
race_name text,
cyclist_name text,
rank int,
PRIMARY KEY ((race_year, race_name), rank)
);
INSERT INTO cycling.rank_by_year_and_name (race_year, race_name, cyclist_name, rank) VALUES (2000, '1', 'A', 1);`,
		"SELECT token(race_year, race_name), race_year, race_name, cyclist_name, rank from rank_by_year_and_name;", `
 system.token(race_year, race_name) | race_year | race_name | cyclist_name | rank
------------------------------------+-----------+-----------+--------------+------
                -108427357362698080 |      2000 |         1 |            A |    1

(1 rows)
`,
	},
	{
		`CREATE TABLE cycling.cyclist_category (
category text,
points int,
id UUID,
lastname text,
PRIMARY KEY (category, points)
) WITH CLUSTERING ORDER BY (points DESC);
INSERT INTO cycling.cyclist_category (category, points, id, lastname) VALUES ('best', 1, 41d01b63-244e-435d-bd6d-5dc8a0addb8c, 'J');`,
		"SELECT token(category), category, points, id, lastname from cyclist_category;", `
 system.token(category) | category | points | id                                   | lastname
------------------------+----------+--------+--------------------------------------+----------
    8664726657035972693 |     best |      1 | 41d01b63-244e-435d-bd6d-5dc8a0addb8c |        J

(1 rows)
`,
	},
	{
		"", " SELECT token(points), category, points, id, lastname from cyclist_category;", `
 system.token(points) | category | points | id                                   | lastname
----------------------+----------+--------+--------------------------------------+----------
 -4069959284402364209 |     best |      1 | 41d01b63-244e-435d-bd6d-5dc8a0addb8c |        J

(1 rows)
`,
	},
}

// runExec runs cqlpg exec with args.
func runExec(t *testing.T, bin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return runCqlpg(bin, append([]string{"exec"}, args...)...)
}

// TestExecSeeds runs the seed documents' statements with cqlpg exec and
// compares the output with what the seeds show cqlsh printing.
func TestExecSeeds(t *testing.T) {
	e := sharedBulkEnv(t)
	bin := buildCqlpg(t)
	host := []string{"--host", e.addr}
	if out, errOut, code := runExec(t, bin, append(host, "-e",
		"CREATE KEYSPACE IF NOT EXISTS cycling WITH replication = {'class':'SimpleStrategy', 'replication_factor' : 1};")...); code != 0 || out != "" {
		t.Fatalf("create keyspace: exit %d, %q %q", code, out, errOut)
	}
	for _, s := range execSeeds {
		if s.setup != "" {
			if out, errOut, code := runExec(t, bin, append(host, "-e", s.setup)...); code != 0 || out != "" {
				t.Fatalf("%s: exit %d, %q %q", s.setup, code, out, errOut)
			}
		}
		out, errOut, code := runExec(t, bin, append(host, "-e", "USE cycling; "+s.query)...)
		if code != 0 || out != s.want {
			t.Errorf("%s: exit %d, stderr %q, output\n%s\nwant\n%s", s.query, code, errOut, out, s.want)
		}
	}

	// Errors: -e stops at the first, exit status 2.
	out, errOut, code := runExec(t, bin, append(host, "-e", "SELECT * FROM cycling.nope; SELECT 1 FROM cycling.cyclist_name")...)
	want := `<stdin>:1:InvalidRequest: Error from server: code=2200 [Invalid query] message="table nope does not exist"` + "\n"
	if code != 2 || out != "" || !strings.EqualFold(errOut, want) {
		t.Errorf("error: exit %d, %q, stderr %q, want %q", code, out, errOut, want)
	}
	_, errOut, code = runExec(t, bin, append(host, "-e", "SELEC 1")...)
	if code != 2 || !strings.HasPrefix(errOut, "<stdin>:1:SyntaxException: Error from server: code=2000 [Syntax error in CQL query] message=") {
		t.Errorf("syntax error: exit %d, stderr %q", code, errOut)
	}

	// -f goes on after an error, and fails at the end.
	file := filepath.Join(t.TempDir(), "script.cql")
	script := `USE cycling;
-- the first query fails; the second runs
SELECT * FROM nope;
SELECT lastname, firstname /* names */ FROM cyclist_name
  WHERE id = 41d01b63-244e-435d-bd6d-5dc8a0addb8c;
`
	if err := os.WriteFile(file, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = runExec(t, bin, append(host, "-f", file)...)
	wantOut := "\n lastname | firstname\n----------+-----------\n        A |         J\n\n(1 rows)\n"
	if code != 2 || out != wantOut || !strings.HasPrefix(errOut, file+":3:InvalidRequest: Error from server: code=2200 [Invalid query] message=") {
		t.Errorf("-f: exit %d, output %q, stderr %q", code, out, errOut)
	}

	// DESCRIBE prints the statement as text.
	out, errOut, code = runExec(t, bin, append(host, "-e", "DESCRIBE TABLE cycling.cyclist_name")...)
	if code != 0 || !strings.HasPrefix(out, "\nCREATE TABLE cycling.cyclist_name (\n    id uuid PRIMARY KEY,") || !strings.HasSuffix(out, ";\n\n") {
		t.Errorf("describe: exit %d, %q, stderr %q", code, out, errOut)
	}
	out, _, code = runExec(t, bin, append(host, "-e", "DESCRIBE TABLES")...)
	if code != 0 || !strings.Contains(out, "cyclist_category  cyclist_name  rank_by_year_and_name") {
		t.Errorf("describe tables: exit %d, %q", code, out)
	}

	// Values of other types print in cqlsh's forms; no rows print a footer.
	out, errOut, code = runExec(t, bin, append(host, "-e", "CREATE TABLE cycling.types (k int PRIMARY KEY, l list<text>, m map<text, int>, "+
		"ts timestamp, b boolean, d double, bl blob, n int, ve vector<float, 2>); INSERT INTO cycling.types (k, l, m, ts, b, d, bl, ve) VALUES "+
		"(1, ['a', 'it''s'], {'x': 1}, '2024-01-02 03:04:05.678+0000', true, 0.5, 0xff, [1.5, -2]); "+
		"SELECT * FROM cycling.types; SELECT * FROM cycling.types WHERE k = 2")...)
	wantTypes := `
 k | b    | bl   | d   | l              | m        | n    | ts                              | ve
---+------+------+-----+----------------+----------+------+---------------------------------+-----------
 1 | True | 0xff | 0.5 | ['a', 'it''s'] | {'x': 1} | null | 2024-01-02 03:04:05.678000+0000 | [1.5, -2]

(1 rows)

 k | b | bl | d | l | m | n | ts | ve
---+---+----+---+---+---+---+----+----

(0 rows)
`
	if code != 0 || out != wantTypes {
		t.Errorf("types: exit %d, stderr %q, output\n%s\nwant\n%s", code, errOut, out, wantTypes)
	}
}

// TestExecSchemaFile feeds a Cassandra 4.1 cluster's DESCRIBE output to
// cqlpg exec -f, as a migration does, and checks that DESCRIBE then gives
// back the same schema, options that mean nothing on Postgres included.
func TestExecSchemaFile(t *testing.T) {
	e := sharedBulkEnv(t)
	bin := buildCqlpg(t)
	host := []string{"--host", e.addr}
	schema := filepath.Join("..", "..", "gateway", "testdata", "describe", "cassandra41.cql")
	want, err := os.ReadFile(schema)
	if err != nil {
		t.Fatal(err)
	}
	if out, errOut, code := runExec(t, bin, append(host, "-f", schema)...); code != 0 || out != "" {
		t.Fatalf("exec -f: exit %d, output %q, stderr %q", code, out, errOut)
	}
	out, errOut, code := runExec(t, bin, append(host, "-e", "DESCRIBE KEYSPACE shop")...)
	if code != 0 || strings.TrimSpace(out) != strings.TrimSpace(string(want)) {
		t.Errorf("DESCRIBE after exec -f: exit %d, stderr %q, output\n%s\nwant\n%s", code, errOut, out, want)
	}
}

// TestExecAuth logs in to a gateway that requires authentication.
func TestExecAuth(t *testing.T) {
	e := sharedBulkEnv(t)
	bin := buildCqlpg(t)
	ctx := context.Background()
	cfg := gateway.Config{Listen: "127.0.0.1:0", Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Auth: gateway.AuthConfig{Enabled: true, SuperuserPassword: "cassandra"}}
	for _, u := range e.urls {
		cfg.Shards = append(cfg.Shards, cluster.ShardConfig{URL: u})
	}
	srv, err := gateway.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve()
	defer srv.Shutdown(context.Background())
	host := []string{"--host", srv.Addr().String()}
	out, errOut, code := runExec(t, bin, append(host, "-u", "cassandra", "-p", "cassandra", "-e",
		"CREATE KEYSPACE IF NOT EXISTS authks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}; "+
			"CREATE TABLE IF NOT EXISTS authks.t (k int PRIMARY KEY, v text); INSERT INTO authks.t (k, v) VALUES (1, 'one'); "+
			"SELECT * FROM authks.t")...)
	want := "\n k | v\n---+-----\n 1 | one\n\n(1 rows)\n"
	if code != 0 || out != want {
		t.Errorf("exit %d, stderr %q, output %q, want %q", code, errOut, out, want)
	}
	_, errOut, code = runExec(t, bin, append(host, "-u", "cassandra", "-p", "wrong", "-e", "SELECT * FROM system.local")...)
	if code != 1 || !strings.HasPrefix(errOut, "Connection error: ") {
		t.Errorf("wrong password: exit %d, stderr %q", code, errOut)
	}
}
