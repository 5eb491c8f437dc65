package gateway_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/gocql/gocql"
	"github.com/jackc/pgx/v5"

	"github.com/cqlpg/cqlpg/sharding"
)

// requireCQLError checks that err is the CQL error with the given code and
// exact message.
func requireCQLError(t *testing.T, err error, code int, msg string) {
	t.Helper()
	var re gocql.RequestError
	if !errors.As(err, &re) {
		t.Fatalf("got %v, want CQL error 0x%04x %q", err, code, msg)
	}
	if re.Code() != code || re.Message() != msg {
		t.Fatalf("got error 0x%04x %q, want 0x%04x %q", re.Code(), re.Message(), code, msg)
	}
}

// ints reads a single int column of every row.
func ints(t *testing.T, sess *gocql.Session, query string, args ...any) []int {
	t.Helper()
	var out []int
	iter := sess.Query(query, args...).Iter()
	var v int
	for iter.Scan(&v) {
		out = append(out, v)
	}
	if err := iter.Close(); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return out
}

func TestUpdateAndDelete(t *testing.T) {
	sess := session(t, "")
	exec(t, sess,
		"CREATE KEYSPACE dml WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 2}",
		"CREATE TABLE dml.t (k int, c int, v int, w text, PRIMARY KEY (k, c))")
	exec(t, sess, "INSERT INTO dml.t (k, c, v) VALUES (1, 1, 10)")
	if err := sess.Query("UPDATE dml.t SET v = ?, w = ? WHERE k = ? AND c = ?", 11, "x", 1, 1).Exec(); err != nil {
		t.Fatal(err)
	}
	var v int
	var w string
	if err := sess.Query("SELECT v, w FROM dml.t WHERE k = 1 AND c = 1").Scan(&v, &w); err != nil || v != 11 || w != "x" {
		t.Fatalf("after UPDATE: %d %q %v", v, w, err)
	}

	// UPDATE creates rows; a row it created lives only while a cell does.
	exec(t, sess, "UPDATE dml.t SET v = 20 WHERE k = 2 AND c = 1")
	if got := ints(t, sess, "SELECT v FROM dml.t WHERE k = 2"); !slices.Equal(got, []int{20}) {
		t.Fatalf("row created by UPDATE: %v", got)
	}
	exec(t, sess, "DELETE v FROM dml.t WHERE k = 2 AND c = 1")
	if got := ints(t, sess, "SELECT c FROM dml.t WHERE k = 2"); len(got) != 0 {
		t.Fatalf("row without live cells still visible: %v", got)
	}

	// A row INSERT created survives with all its regular columns null.
	exec(t, sess, "UPDATE dml.t SET v = null, w = null WHERE k = 1 AND c = 1")
	if got := ints(t, sess, "SELECT c FROM dml.t WHERE k = 1"); !slices.Equal(got, []int{1}) {
		t.Fatalf("inserted row lost with its cells: %v", got)
	}

	exec(t, sess, "DELETE FROM dml.t WHERE k = 1 AND c = 1")
	if got := ints(t, sess, "SELECT c FROM dml.t WHERE k = 1"); len(got) != 0 {
		t.Fatalf("deleted row still visible: %v", got)
	}

	// Last write wins by timestamp: an older write does not override.
	exec(t, sess,
		"INSERT INTO dml.t (k, c, v) VALUES (3, 1, 1) USING TIMESTAMP 2000",
		"INSERT INTO dml.t (k, c, v) VALUES (3, 1, 2) USING TIMESTAMP 1000",
		"DELETE FROM dml.t USING TIMESTAMP 1500 WHERE k = 3 AND c = 1")
	if got := ints(t, sess, "SELECT v FROM dml.t WHERE k = 3"); !slices.Equal(got, []int{1}) {
		t.Fatalf("older write or delete won: %v", got)
	}
	// A write older than a deletion does not bring the row back.
	exec(t, sess,
		"DELETE FROM dml.t USING TIMESTAMP 1500 WHERE k = 4 AND c = 1",
		"INSERT INTO dml.t (k, c, v) VALUES (4, 1, 5) USING TIMESTAMP 1000")
	if got := ints(t, sess, "SELECT v FROM dml.t WHERE k = 4"); len(got) != 0 {
		t.Fatalf("write older than the deletion revived the row: %v", got)
	}

	err := sess.Query("UPDATE dml.t SET v = 1 WHERE k = 1").Exec()
	requireCQLError(t, err, 0x2200, "Some clustering keys are missing: c")
	err = sess.Query("DELETE FROM dml.t WHERE k > 1 AND c = 1").Exec()
	requireCQLError(t, err, 0x2200, "Only EQ and IN relation are supported on the partition key (unless you use the token() function) for DELETE statements")
}

func TestBatches(t *testing.T) {
	sess := session(t, "")
	exec(t, sess,
		"CREATE KEYSPACE batches WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE batches.t (k int, c int, v int, PRIMARY KEY (k, c))",
		"BEGIN BATCH APPLY BATCH",
		"BEGIN UNLOGGED BATCH INSERT INTO batches.t (k, c, v) VALUES (1, 1, 1); INSERT INTO batches.t (k, c, v) VALUES (1, 2, 2); APPLY BATCH")
	b := sess.NewBatch(gocql.LoggedBatch)
	for c := 3; c <= 5; c++ {
		b.Query("INSERT INTO batches.t (k, c, v) VALUES (?, ?, ?)", 1, c, c)
	}
	b.Query("DELETE FROM batches.t WHERE k = ? AND c = ?", 1, 1)
	if err := sess.ExecuteBatch(b); err != nil {
		t.Fatal(err)
	}
	if got := ints(t, sess, "SELECT c FROM batches.t WHERE k = 1"); !slices.Equal(got, []int{2, 3, 4, 5}) {
		t.Fatalf("rows after batches: %v", got)
	}
}

// TestPartitionOrder checks that IN on the partition key reads each
// partition once, in key order, and that scans return partitions in token
// order.
func TestPartitionOrder(t *testing.T) {
	sess := session(t, "")
	exec(t, sess,
		"CREATE KEYSPACE porder WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE porder.t (k int, c int, PRIMARY KEY (k, c)) WITH CLUSTERING ORDER BY (c DESC)")
	for k := 1; k <= 20; k++ {
		for c := 1; c <= 2; c++ {
			if err := sess.Query("INSERT INTO porder.t (k, c) VALUES (?, ?)", k, c).Exec(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if got := ints(t, sess, "SELECT k FROM porder.t WHERE k IN (7, -1, 3, 7, 12)"); !slices.Equal(got, []int{3, 3, 7, 7, 12, 12}) {
		t.Errorf("IN order: %v", got)
	}
	if got := ints(t, sess, "SELECT c FROM porder.t WHERE k IN ?", []int{5, 4}); !slices.Equal(got, []int{2, 1, 2, 1}) {
		t.Errorf("IN ? rows: %v", got)
	}
	type row struct {
		token int64
		k, c  int
	}
	var rows []row
	iter := sess.Query("SELECT token(k), k, c FROM porder.t").Iter()
	var r row
	for iter.Scan(&r.token, &r.k, &r.c) {
		rows = append(rows, r)
	}
	if err := iter.Close(); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 40 {
		t.Fatalf("scan read %d rows, want 40", len(rows))
	}
	for i, r := range rows {
		want := int64(sharding.KeyToken([][]byte{{0, 0, 0, byte(r.k)}}))
		if r.token != want {
			t.Errorf("token(%d) = %d, want %d", r.k, r.token, want)
		}
		if i > 0 && (rows[i-1].token > r.token || rows[i-1].token == r.token && rows[i-1].c < r.c) {
			t.Errorf("row %d out of order: %+v after %+v", i, r, rows[i-1])
		}
	}
	if got := ints(t, sess, "SELECT k FROM porder.t LIMIT 3"); len(got) != 3 || got[0] != rows[0].k {
		t.Errorf("LIMIT 3 on a scan: %v", got)
	}
}

// TestReplicaPlacement checks that every partition is written to the
// shards its keyspace's replication names, and only to them.
func TestReplicaPlacement(t *testing.T) {
	sess := sessionAll(t, "")
	for rf := 1; rf <= 3; rf++ {
		ks := fmt.Sprintf("placed%d", rf)
		exec(t, sess,
			fmt.Sprintf("CREATE KEYSPACE %s WITH replication = {'class': 'SimpleStrategy', 'replication_factor': %d}", ks, rf),
			fmt.Sprintf("CREATE TABLE %s.t (k int PRIMARY KEY, v int)", ks))
		for k := 0; k < 30; k++ {
			if err := sess.Query(fmt.Sprintf("INSERT INTO %s.t (k, v) VALUES (?, ?)", ks), k, k).Exec(); err != nil {
				t.Fatal(err)
			}
		}
		copies := map[int]int{}
		shards := map[int]bool{}
		for i, url := range shardURLs {
			conn, err := pgx.Connect(context.Background(), url)
			if err != nil {
				t.Fatal(err)
			}
			rows, err := conn.Query(context.Background(), fmt.Sprintf(`SELECT k FROM %s.t`, ks))
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var k int
				rows.Scan(&k)
				copies[k]++
				shards[i] = true
			}
			conn.Close(context.Background())
		}
		for k := 0; k < 30; k++ {
			if copies[k] != rf {
				t.Errorf("RF %d: partition %d has %d copies", rf, k, copies[k])
			}
		}
		if rf == 1 && len(shards) < 2 {
			t.Errorf("RF 1: 30 partitions all on one shard")
		}
	}
}

func TestPreparedTokenAware(t *testing.T) {
	exec(t, session(t, ""),
		"CREATE KEYSPACE aware WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE aware.t (a int, b text, c int, v text, PRIMARY KEY ((a, b), c))")
	cfg := clusterConfig(gw, "aware")
	cfg.PoolConfig.HostSelectionPolicy = gocql.TokenAwareHostPolicy(gocql.RoundRobinHostPolicy())
	sess, err := cfg.CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	md, err := sess.KeyspaceMetadata("aware")
	if err != nil {
		t.Fatal(err)
	}
	tbl := md.Tables["t"]
	if tbl == nil || len(tbl.PartitionKey) != 2 || tbl.ClusteringColumns[0].Name != "c" {
		t.Fatalf("table metadata: %+v", tbl)
	}
	for i := range 10 {
		if err := sess.Query("INSERT INTO t (a, b, c, v) VALUES (?, ?, ?, ?)", i, "é", i, "v").Exec(); err != nil {
			t.Fatal(err)
		}
	}
	var tok int64
	if err := sess.Query("SELECT token(a, b) FROM t WHERE a = ? AND b = ?", 3, "é").Scan(&tok); err != nil {
		t.Fatal(err)
	}
	want := int64(sharding.KeyToken([][]byte{{0, 0, 0, 3}, []byte("é")}))
	if tok != want {
		t.Errorf("token = %d, want %d", tok, want)
	}
}

func TestStatementErrors(t *testing.T) {
	sess := session(t, "")
	for _, tc := range []struct {
		query string
		code  int
		msg   string
	}{
		{"SELECT * FRM system.local", 0x2000, "line 1:9 mismatched input 'FRM' expecting K_FROM"},
		{"CREATE KEYSPACE system_schema WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}", 0x2100, ""},
		{"CREATE KEYSPACE bad WITH replication = {'class': 'SimpleStrategy'}", 0x2300, "SimpleStrategy requires a replication_factor strategy option."},
		{"DROP KEYSPACE nokeyspace", 0x2200, "Keyspace 'nokeyspace' doesn't exist"},
		{"DROP TABLE system_schema_nope.t", 0x2200, "Table 'system_schema_nope.t' doesn't exist"},
	} {
		err := sess.Query(tc.query).Exec()
		var re gocql.RequestError
		if !errors.As(err, &re) || re.Code() != tc.code || (tc.msg != "" && re.Message() != tc.msg) {
			t.Errorf("%s: got %v, want 0x%04x %q", tc.query, err, tc.code, tc.msg)
		}
	}
	exec(t, sess, "CREATE KEYSPACE twice WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
	err := sess.Query("CREATE KEYSPACE twice WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}").Exec()
	var exists *gocql.RequestErrAlreadyExists
	if !errors.As(err, &exists) || exists.Keyspace != "twice" || exists.Message() != `Cannot add existing keyspace "twice"` {
		t.Errorf("second CREATE KEYSPACE: %v", err)
	}
	exec(t, sess, "CREATE KEYSPACE IF NOT EXISTS twice WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"DROP KEYSPACE IF EXISTS nokeyspace", "DROP KEYSPACE twice")
}
