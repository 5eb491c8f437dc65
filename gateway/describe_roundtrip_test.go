package gateway_test

import (
	"os"
	"strings"
	"testing"
)

// fixtureStatements splits a DESCRIBE output, as cqlsh prints it, into its
// statements: each ends with a semicolon at the end of a line.
func fixtureStatements(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	var cur strings.Builder
	for _, line := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(line) == "" && cur.Len() == 0 {
			continue
		}
		cur.WriteString(line)
		cur.WriteByte('\n')
		if strings.HasSuffix(strings.TrimSpace(line), ";") {
			out = append(out, strings.TrimSpace(cur.String()))
			cur.Reset()
		}
	}
	if strings.TrimSpace(cur.String()) != "" {
		t.Fatalf("%s ends without a semicolon: %q", path, cur.String())
	}
	return out
}

// TestDescribeRoundTrip feeds the DESCRIBE KEYSPACE output of a Cassandra
// 4.1 cluster, statement by statement, through gocql, and checks that
// DESCRIBE KEYSPACE then gives back the same statements: keyspace, types,
// tables with every table option (those meaning nothing on Postgres are
// kept as given) and indexes. It checks DESCRIBE TABLE, TYPE and INDEX
// against the fixture's statements too. The output matches the fixture
// exactly, white space included; the fixture has no materialized view,
// which cqlpg does not have.
func TestDescribeRoundTrip(t *testing.T) {
	stmts := fixtureStatements(t, "testdata/describe/cassandra41.cql")
	sess := session(t, "")
	exec(t, sess, "DROP KEYSPACE IF EXISTS shop")
	for _, s := range stmts {
		exec(t, sess, s)
	}

	rows := describeRows(t, sess, "DESCRIBE KEYSPACE shop", "keyspace_name", "type", "name", "create_statement")
	if len(rows) != len(stmts) {
		t.Errorf("DESCRIBE KEYSPACE gives %d statements, the fixture %d", len(rows), len(stmts))
	}
	t.Logf("DESCRIBE KEYSPACE shop: %d statements", len(rows))
	byName := map[string]string{}
	for i, r := range rows {
		f := strings.SplitN(r, " | ", 4)
		byName[f[1]+" "+f[2]] = f[3]
		if i < len(stmts) && f[3] != stmts[i] {
			t.Errorf("statement %d (%s %s):\n%s\nfixture:\n%s", i, f[1], f[2], f[3], stmts[i])
		}
	}

	for _, tc := range []struct{ cql, key string }{
		{"DESCRIBE TYPE shop.customer_profile", "type customer_profile"},
		{"DESCRIBE INDEX shop.events_by_day_attributes_idx", "index events_by_day_attributes_idx"},
		{"DESCRIBE ONLY KEYSPACE shop", "keyspace shop"},
	} {
		got := describeRows(t, sess, tc.cql, "keyspace_name", "type", "name", "create_statement")
		if len(got) != 1 || !strings.HasSuffix(got[0], " | "+byName[tc.key]) {
			t.Errorf("%s: %q", tc.cql, got)
		}
	}
	// DESCRIBE TABLE gives the table and its indexes.
	got := describeRows(t, sess, "DESCRIBE TABLE shop.events_by_day", "keyspace_name", "type", "name", "create_statement")
	if len(got) != 3 || !strings.HasSuffix(got[0], " | "+byName["table events_by_day"]) ||
		!strings.HasSuffix(got[1], " | "+byName["index events_by_day_attributes_idx"]) ||
		!strings.HasSuffix(got[2], " | "+byName["index events_by_day_kind_idx"]) {
		t.Errorf("DESCRIBE TABLE shop.events_by_day: %q", got)
	}

	// Dropping everything and running DESCRIBE's output again gives the
	// same schema once more.
	var again []string
	for _, r := range rows {
		again = append(again, strings.SplitN(r, " | ", 4)[3])
	}
	exec(t, sess, "DROP KEYSPACE shop")
	for _, s := range again {
		exec(t, sess, s)
	}
	rows2 := describeRows(t, sess, "DESCRIBE KEYSPACE shop", "keyspace_name", "type", "name", "create_statement")
	if strings.Join(rows2, "\n") != strings.Join(rows, "\n") {
		t.Errorf("DESCRIBE after replaying DESCRIBE differs:\n%s\nbefore:\n%s", strings.Join(rows2, "\n"), strings.Join(rows, "\n"))
	}
}
