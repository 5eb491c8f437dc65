package gateway_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"github.com/jackc/pgx/v5"
)

// Rows written with plain SQL on the shards, read back through CQL. The
// keyspaces replicate to every shard, so a row written on each shard is
// where the gateway looks for it.

// psqlAll runs statements on every shard, as an operator writing to
// every replica does, failing the test on error.
func psqlAll(t *testing.T, stmts ...string) {
	t.Helper()
	ctx := context.Background()
	for _, url := range shardURLs {
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range stmts {
			if _, err := conn.Exec(ctx, s); err != nil {
				conn.Close(ctx)
				t.Fatalf("%s: %v", s, err)
			}
		}
		conn.Close(ctx)
	}
}

func sqlwKeyspace(t *testing.T, sess *gocql.Session, ks string) {
	t.Helper()
	exec(t, sess, fmt.Sprintf("CREATE KEYSPACE %s WITH replication = {'class': 'SimpleStrategy', 'replication_factor': %d}",
		ks, len(shardURLs)))
}

// TestSQLWritesTokens checks that rows inserted with SQL get the token
// Cassandra gives their keys (reference vectors), and that CQL finds them
// by key.
func TestSQLWritesTokens(t *testing.T) {
	sess := session(t, "")
	sqlwKeyspace(t, sess, "sqlw_tokens")
	exec(t, sess,
		"CREATE TABLE sqlw_tokens.by_int (k int PRIMARY KEY, v text)",
		"CREATE TABLE sqlw_tokens.by_text (k text PRIMARY KEY, v text)",
		"CREATE TABLE sqlw_tokens.by_uuid (k uuid PRIMARY KEY, v text)",
		"CREATE TABLE sqlw_tokens.composite (a int, b text, v text, PRIMARY KEY ((a, b)))")
	psqlAll(t,
		"INSERT INTO sqlw_tokens.by_int (k, v) VALUES (1, 'one')",
		"INSERT INTO sqlw_tokens.by_text (k, v) VALUES ('best', 'text')",
		"INSERT INTO sqlw_tokens.by_uuid (k, v) VALUES ('41d01b63-244e-435d-bd6d-5dc8a0addb8c', 'uuid')",
		"INSERT INTO sqlw_tokens.composite (a, b, v) VALUES (2000, '1', 'composite')")
	for _, tc := range []struct {
		query string
		arg   any
		want  int64
		value string
	}{
		{"SELECT token(k), v FROM sqlw_tokens.by_int WHERE k = ?", 1, -4069959284402364209, "one"},
		{"SELECT token(k), v FROM sqlw_tokens.by_text WHERE k = ?", "best", 8664726657035972693, "text"},
		{"SELECT token(k), v FROM sqlw_tokens.by_uuid WHERE k = ?", mustUUID(t, "41d01b63-244e-435d-bd6d-5dc8a0addb8c"),
			-2767158835560740559, "uuid"},
		{"SELECT token(a, b), v FROM sqlw_tokens.composite WHERE a = 2000 AND b = ?", "1", -108427357362698080, "composite"},
	} {
		var token int64
		var v string
		if err := sess.Query(tc.query, tc.arg).Scan(&token, &v); err != nil {
			t.Errorf("%s: %v", tc.query, err)
			continue
		}
		if token != tc.want || v != tc.value {
			t.Errorf("%s: token %d, v %q; want %d, %q", tc.query, token, v, tc.want, tc.value)
		}
	}
	// Token-range scans see them too.
	var n int
	if err := sess.Query("SELECT count(*) FROM sqlw_tokens.by_int WHERE token(k) = ?", -4069959284402364209).Scan(&n); err != nil || n != 1 {
		t.Errorf("token(k) = -4069959284402364209: %d rows, %v", n, err)
	}
}

// TestSQLWritesValues checks values, write times and row existence of
// rows inserted and updated with SQL, static rows included.
func TestSQLWritesValues(t *testing.T) {
	sess := session(t, "")
	sqlwKeyspace(t, sess, "sqlw_values")
	exec(t, sess, "CREATE TABLE sqlw_values.t (k int, c int, s text STATIC, v text, n int, l frozen<list<int>>, PRIMARY KEY (k, c))")
	before := time.Now().UnixMicro()
	psqlAll(t,
		"INSERT INTO sqlw_values.t (k, c, v, l) VALUES (1, 1, 'a', '{3,1}')",
		"INSERT INTO sqlw_values.t (k, c) VALUES (1, 2)",
		`INSERT INTO sqlw_values."t$static" (k, s) VALUES (1, 'static')`)
	after := time.Now().UnixMicro()

	var (
		c      int
		s, v   string
		n      *int
		l      []int
		wt     int64
		nwt    *int64
		cs     []int
		writes []int64
	)
	iter := sess.Query("SELECT c, s, v, n, l, WRITETIME(v), WRITETIME(n) FROM sqlw_values.t WHERE k = 1").Iter()
	for iter.Scan(&c, &s, &v, &n, &l, &wt, &nwt) {
		cs = append(cs, c)
		if c == 1 {
			if s != "static" || v != "a" || n != nil || !slices.Equal(l, []int{3, 1}) || nwt != nil {
				t.Errorf("row 1: s %q, v %q, n %v, l %v, WRITETIME(n) %v", s, v, n, l, nwt)
			}
			writes = append(writes, wt)
		}
	}
	if err := iter.Close(); err != nil {
		t.Fatal(err)
	}
	// The row inserted with its key only exists: INSERT writes the row marker.
	if !slices.Equal(cs, []int{1, 2}) {
		t.Fatalf("rows %v, want [1 2]", cs)
	}
	if len(writes) != 1 || writes[0] < before || writes[0] > after {
		t.Errorf("WRITETIME(v) = %v, want the time of the SQL write, in [%d, %d]", writes, before, after)
	}

	// UPDATE through SQL: the changed cell gets a new write time, the
	// others keep theirs.
	var oldLWT int64
	if err := sess.Query("SELECT WRITETIME(l) FROM sqlw_values.t WHERE k = 1 AND c = 1").Scan(&oldLWT); err != nil {
		t.Fatal(err)
	}
	before = time.Now().UnixMicro()
	psqlAll(t, "UPDATE sqlw_values.t SET v = 'b', n = 7 WHERE k = 1 AND c = 1")
	var lwt int64
	if err := sess.Query("SELECT v, n, WRITETIME(v), WRITETIME(l) FROM sqlw_values.t WHERE k = 1 AND c = 1").Scan(&v, &n, &wt, &lwt); err != nil {
		t.Fatal(err)
	}
	if v != "b" || n == nil || *n != 7 || wt < before || lwt != oldLWT {
		t.Errorf("after UPDATE: v %q, n %v, WRITETIME(v) %d (want >= %d), WRITETIME(l) %d (want %d)", v, n, wt, before, lwt, oldLWT)
	}

	// A cell set to null through SQL is deleted: a row updated through
	// CQL (no row marker) disappears with its last cell.
	exec(t, sess, "UPDATE sqlw_values.t SET v = 'x' WHERE k = 2 AND c = 1")
	psqlAll(t, "UPDATE sqlw_values.t SET v = NULL WHERE k = 2")
	if err := sess.Query("SELECT count(*) FROM sqlw_values.t WHERE k = 2").Scan(&c); err != nil || c != 0 {
		t.Errorf("row with its only cell set to null through SQL: %d rows, %v", c, err)
	}
	// And an older CQL write does not bring the cell back.
	exec(t, sess, fmt.Sprintf("UPDATE sqlw_values.t USING TIMESTAMP %d SET v = 'old' WHERE k = 2 AND c = 1", before-1000000))
	if err := sess.Query("SELECT count(*) FROM sqlw_values.t WHERE k = 2").Scan(&c); err != nil || c != 0 {
		t.Errorf("an older CQL write revived a cell deleted through SQL: %d rows, %v", c, err)
	}
}

// TestSQLWritesReconcile checks that writes through SQL take part in
// Cassandra's last-write-wins with the Postgres clock as their timestamp,
// and that the gateway's own writes are left to it.
func TestSQLWritesReconcile(t *testing.T) {
	sess := session(t, "")
	sqlwKeyspace(t, sess, "sqlw_lww")
	exec(t, sess, "CREATE TABLE sqlw_lww.t (k int PRIMARY KEY, v text, l list<int>)")
	psqlAll(t, "INSERT INTO sqlw_lww.t (k, v) VALUES (1, 'sql')")
	var wt int64
	if err := sess.Query("SELECT WRITETIME(v) FROM sqlw_lww.t WHERE k = 1").Scan(&wt); err != nil {
		t.Fatal(err)
	}
	// An older CQL write loses, a newer one wins.
	exec(t, sess, fmt.Sprintf("UPDATE sqlw_lww.t USING TIMESTAMP %d SET v = 'older' WHERE k = 1", wt-1))
	var v string
	if err := sess.Query("SELECT v FROM sqlw_lww.t WHERE k = 1").Scan(&v); err != nil || v != "sql" {
		t.Errorf("after an older CQL write: v = %q, %v; want the SQL write's value", v, err)
	}
	exec(t, sess, fmt.Sprintf("UPDATE sqlw_lww.t USING TIMESTAMP %d SET v = 'newer' WHERE k = 1", wt+1))
	if err := sess.Query("SELECT v FROM sqlw_lww.t WHERE k = 1").Scan(&v); err != nil || v != "newer" {
		t.Errorf("after a newer CQL write: v = %q, %v", v, err)
	}

	// The gateway's writes keep their own timestamps where a cell changes
	// without its write time changing: a tie won by the greater value, and
	// a collection change older than the cell.
	exec(t, sess,
		"INSERT INTO sqlw_lww.t (k, v) VALUES (2, 'a') USING TIMESTAMP 1000",
		"INSERT INTO sqlw_lww.t (k, v) VALUES (2, 'b') USING TIMESTAMP 1000",
		"UPDATE sqlw_lww.t USING TIMESTAMP 2000 SET l = l + [1] WHERE k = 2",
		"UPDATE sqlw_lww.t USING TIMESTAMP 1500 SET l = l + [2] WHERE k = 2")
	var l []int
	if err := sess.Query("SELECT v, WRITETIME(v), l FROM sqlw_lww.t WHERE k = 2").Scan(&v, &wt, &l); err != nil {
		t.Fatal(err)
	}
	// CQL has no WRITETIME of a non-frozen list; the shard shows it.
	lwt := pgQuery(t, `SELECT "l$wt"::text FROM sqlw_lww.t WHERE k = 2`)
	if v != "b" || wt != 1000 || !slices.Equal(l, []int{1, 2}) || !slices.Equal(lwt, []string{"2000"}) {
		t.Errorf("gateway writes: v %q at %d, l %v at %v; want b at 1000, [1 2] at 2000", v, wt, l, lwt)
	}
}

// TestSQLWritesDeletes checks the two ways of deleting through SQL: a
// deletion time (_del_wt), which shadows older CQL writes as a CQL DELETE
// does, and a plain DELETE, which leaves no trace.
func TestSQLWritesDeletes(t *testing.T) {
	sess := session(t, "")
	sqlwKeyspace(t, sess, "sqlw_del")
	exec(t, sess, "CREATE TABLE sqlw_del.t (k int, c int, v text, PRIMARY KEY (k, c))")
	exec(t, sess, "INSERT INTO sqlw_del.t (k, c, v) VALUES (1, 1, 'a')", "INSERT INTO sqlw_del.t (k, c, v) VALUES (1, 2, 'b')")
	var wt int64
	if err := sess.Query("SELECT WRITETIME(v) FROM sqlw_del.t WHERE k = 1 AND c = 1").Scan(&wt); err != nil {
		t.Fatal(err)
	}
	psqlAll(t, "UPDATE sqlw_del.t SET _del_wt = cqlpg.now_micros() WHERE k = 1 AND c = 1",
		"DELETE FROM sqlw_del.t WHERE k = 1 AND c = 2")
	count := func() []int {
		var cs []int
		var c int
		iter := sess.Query("SELECT c FROM sqlw_del.t WHERE k = 1").Iter()
		for iter.Scan(&c) {
			cs = append(cs, c)
		}
		if err := iter.Close(); err != nil {
			t.Fatal(err)
		}
		return cs
	}
	if got := count(); len(got) != 0 {
		t.Fatalf("rows %v after deleting both through SQL", got)
	}
	// A CQL write older than the deletion stays shadowed; the row removed
	// outright has nothing to shadow it with.
	exec(t, sess,
		fmt.Sprintf("INSERT INTO sqlw_del.t (k, c, v) VALUES (1, 1, 'late') USING TIMESTAMP %d", wt+1),
		fmt.Sprintf("INSERT INTO sqlw_del.t (k, c, v) VALUES (1, 2, 'late') USING TIMESTAMP %d", wt+1))
	if got := count(); !slices.Equal(got, []int{2}) {
		t.Errorf("rows %v after late writes, want [2]: only the plain DELETE lets an older write back", got)
	}
	// An INSERT through SQL of the deleted row's key takes its place.
	psqlAll(t, "INSERT INTO sqlw_del.t (k, c, v) VALUES (1, 1, 'again')")
	var v string
	if err := sess.Query("SELECT v FROM sqlw_del.t WHERE k = 1 AND c = 1").Scan(&v); err != nil || v != "again" {
		t.Errorf("SQL INSERT over a deleted row: v = %q, %v", v, err)
	}
}

// TestSQLWritesClusteringOrder inserts rows with SQL in random order and
// checks that CQL returns them in Cassandra's order for the clustering
// types that sort through order keys.
func TestSQLWritesClusteringOrder(t *testing.T) {
	sess := session(t, "")
	sqlwKeyspace(t, sess, "sqlw_order")
	r := rand.New(rand.NewPCG(11, 12))
	for _, oc := range clusteringOrders {
		switch oc.typ {
		case "uuid", "timeuuid", "inet", "double", "float":
		default:
			continue
		}
		for _, dir := range []string{"ASC", "DESC"} {
			table := fmt.Sprintf("sqlw_order.%s_%s", oc.name, strings.ToLower(dir))
			exec(t, sess, fmt.Sprintf("CREATE TABLE %s (k int, c %s, i int, PRIMARY KEY (k, c)) WITH CLUSTERING ORDER BY (c %s)",
				table, oc.typ, dir))
			var stmts []string
			for _, i := range r.Perm(len(oc.values)) {
				lit := oc.values[i]
				if !strings.HasPrefix(lit, "'") {
					lit = "'" + lit + "'"
				}
				stmts = append(stmts, fmt.Sprintf("INSERT INTO %s (k, c, i) VALUES (1, %s, %d)", table, lit, i))
			}
			psqlAll(t, stmts...)
			var got []int
			var i int
			iter := sess.Query(fmt.Sprintf("SELECT i FROM %s WHERE k = 1", table)).Iter()
			for iter.Scan(&i) {
				got = append(got, i)
			}
			if err := iter.Close(); err != nil {
				t.Fatal(err)
			}
			want := make([]int, len(oc.values))
			for j := range want {
				want[j] = j
			}
			if dir == "DESC" {
				slices.Reverse(want)
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s %s: rows in order %v, want %v", oc.typ, dir, got, want)
			}
			// A value found through its order key.
			lit := oc.values[1]
			if !strings.HasPrefix(lit, "'") && (oc.typ == "uuid" || oc.typ == "timeuuid") {
				lit = strings.Trim(lit, "'")
			}
			if err := sess.Query(fmt.Sprintf("SELECT i FROM %s WHERE k = 1 AND c = %s", table, lit)).Scan(&i); err != nil || i != 1 {
				t.Errorf("%s: c = %s found i %d, %v", oc.typ, lit, i, err)
			}
		}
	}
}

func mustUUID(t *testing.T, s string) gocql.UUID {
	t.Helper()
	u, err := gocql.ParseUUID(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
