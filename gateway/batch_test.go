package gateway_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"github.com/jackc/pgx/v5"

	"github.com/cqlpg/cqlpg/gateway"
	"github.com/cqlpg/cqlpg/gateway/cluster"
)

// batchPartitions is how many partitions the multi-partition batches
// write: enough that, whatever tokens the shards drew, they land on every
// shard (all on one shard has a chance of about 3^-29).
const batchPartitions = 30

// startGatewayWith starts a gateway of its own on the shared shards, with
// a configuration change. The caller shuts it down, after closing its
// sessions.
func startGatewayWith(t *testing.T, change func(*gateway.Config)) *gateway.Server {
	t.Helper()
	cfg := gateway.Config{Listen: "127.0.0.1:0", Log: testLogger()}
	for _, u := range shardURLs {
		cfg.Shards = append(cfg.Shards, cluster.ShardConfig{URL: u})
	}
	change(&cfg)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := gateway.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve()
	return s
}

// batchlogRecords counts the records in every shard's batch log.
func batchlogRecords(t *testing.T) int {
	t.Helper()
	ctx := context.Background()
	n := 0
	for _, u := range shardURLs {
		conn, err := pgx.Connect(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		var c int
		err = conn.QueryRow(ctx, "SELECT count(*) FROM cqlpg.batchlog").Scan(&c)
		conn.Close(ctx)
		if err != nil {
			t.Fatal(err)
		}
		n += c
	}
	return n
}

// eventually polls cond for up to ten seconds.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after 10s", what)
		}
	}
}

// rowCount counts a query's rows.
func rowCount(t *testing.T, sess *gocql.Session, query string, args ...any) int {
	t.Helper()
	rows, err := queryRows(sess.Query(query, args...))
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return len(rows)
}

func createBatchKeyspace(t *testing.T, sess *gocql.Session, ks string) {
	t.Helper()
	exec(t, sess,
		"CREATE KEYSPACE "+ks+" WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE "+ks+".t (k int, c int, v int, PRIMARY KEY (k, c))",
		"CREATE TABLE "+ks+".u (k int PRIMARY KEY, v text)",
		"CREATE TABLE "+ks+".l (k int, c int, v int, l list<int>, PRIMARY KEY (k, c))",
		"CREATE TABLE "+ks+".ctr (k int PRIMARY KEY, n counter)")
}

// TestBatchKinds checks which batches go through the batch log: LOGGED
// ones that write several partitions on several shards, and no others,
// and that every kind applies in full; the log is empty afterwards.
func TestBatchKinds(t *testing.T) {
	g := startGatewayWith(t, func(*gateway.Config) {})
	t.Cleanup(func() { g.Shutdown(context.Background()) }) // after the session closes
	sess := sessionOn(t, g, "")
	createBatchKeyspace(t, sess, "bkinds")

	spread := func(kind gocql.BatchType, c int) {
		t.Helper()
		b := sess.NewBatch(kind)
		for k := range batchPartitions {
			b.Query("INSERT INTO bkinds.t (k, c, v) VALUES (?, ?, ?)", k, c, k)
		}
		b.Query("INSERT INTO bkinds.u (k, v) VALUES (?, ?)", c, "x")
		if err := sess.ExecuteBatch(b); err != nil {
			t.Fatal(err)
		}
	}
	spread(gocql.LoggedBatch, 1)
	if n := g.BatchlogWrites(); n != 1 {
		t.Fatalf("logged batch over %d partitions: %d batch log writes, want 1", batchPartitions, n)
	}
	var stmt strings.Builder
	stmt.WriteString("BEGIN BATCH ")
	for k := range batchPartitions {
		fmt.Fprintf(&stmt, "INSERT INTO bkinds.t (k, c, v) VALUES (%d, 2, 1); ", k)
	}
	stmt.WriteString("APPLY BATCH")
	exec(t, sess, stmt.String())
	if n := g.BatchlogWrites(); n != 2 {
		t.Fatalf("logged BATCH statement: %d batch log writes, want 2", n)
	}

	// One partition, even of two tables' rows, is never logged.
	exec(t, sess, "BEGIN BATCH INSERT INTO bkinds.t (k, c, v) VALUES (500, 10, 1); INSERT INTO bkinds.t (k, c, v) VALUES (500, 11, 2); "+
		"INSERT INTO bkinds.l (k, c, v) VALUES (500, 1, 1) APPLY BATCH")
	spread(gocql.UnloggedBatch, 3)
	b := sess.NewBatch(gocql.CounterBatch)
	for k := range batchPartitions {
		b.Query("UPDATE bkinds.ctr SET n = n + ? WHERE k = ?", int64(k), k)
	}
	b.Query("UPDATE bkinds.ctr SET n = n + 100 WHERE k = 1")
	if err := sess.ExecuteBatch(b); err != nil {
		t.Fatal(err)
	}
	if n := g.BatchlogWrites(); n != 2 {
		t.Fatalf("single-partition, unlogged and counter batches: %d batch log writes in all, want 2", n)
	}

	for _, tc := range []struct {
		query string
		want  int
	}{
		{"SELECT k FROM bkinds.t WHERE c = 1 ALLOW FILTERING", batchPartitions},
		{"SELECT k FROM bkinds.t WHERE c = 2 ALLOW FILTERING", batchPartitions},
		{"SELECT k FROM bkinds.t WHERE c = 3 ALLOW FILTERING", batchPartitions},
		{"SELECT k FROM bkinds.u", 2},
		{"SELECT c FROM bkinds.t WHERE k = 500", 2},
		{"SELECT c FROM bkinds.l WHERE k = 500", 1},
		{"SELECT k FROM bkinds.ctr", batchPartitions},
	} {
		if n := rowCount(t, sess, tc.query); n != tc.want {
			t.Errorf("%s: %d rows, want %d", tc.query, n, tc.want)
		}
	}
	// A counter written twice in one batch adds both deltas.
	if got := ints(t, sess, "SELECT n FROM bkinds.ctr WHERE k IN (1, 29)"); !slices.Equal(got, []int{101, 29}) {
		t.Errorf("counters after the counter batch: %v, want [101 29]", got)
	}
	eventually(t, "batch log emptied", func() bool { return batchlogRecords(t) == 0 })
}

// TestBatchReplay kills a gateway in the middle of a logged batch, after
// it logged the batch and applied it on one shard only, and checks that
// another gateway on the same shards replays the batch log and completes
// the batch, at the batch's timestamp.
func TestBatchReplay(t *testing.T) {
	dying := startGatewayWith(t, func(c *gateway.Config) { c.BatchlogTimeout = time.Hour })
	dead := false
	t.Cleanup(func() {
		if !dead {
			dying.Shutdown(context.Background())
		}
	})
	cfg := clusterConfig(dying, "")
	cfg.RetryPolicy = &gocql.SimpleRetryPolicy{NumRetries: 0}
	sess, err := cfg.CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sess.Close)
	createBatchKeyspace(t, sess, "breplay")
	dying.DropBatchParts(func(shard int) bool { return shard != 0 })
	b := sess.NewBatch(gocql.LoggedBatch)
	for k := range batchPartitions {
		b.Query("INSERT INTO breplay.t (k, c, v) VALUES (?, ?, ?)", k, 1, k)
	}
	b.Query("UPDATE breplay.u SET v = ? WHERE k = ?", "x", 1)
	err = sess.ExecuteBatch(b)
	var timeout *gocql.RequestErrWriteTimeout
	if !errors.As(err, &timeout) || timeout.WriteType != "BATCH" {
		t.Fatalf("half-applied logged batch: got %v, want a write timeout of type BATCH", err)
	}
	partial := rowCount(t, sess, "SELECT k FROM breplay.t")
	if partial == 0 || partial == batchPartitions {
		t.Fatalf("rows after the half-applied batch: %d, want some of %d", partial, batchPartitions)
	}
	if n := batchlogRecords(t); n != 2 {
		t.Fatalf("batch log records: %d, want 2 copies", n)
	}
	sess.Close()
	dead = true
	if err := dying.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}

	g := startGatewayWith(t, func(c *gateway.Config) {
		c.BatchlogTimeout, c.BatchlogInterval = 100*time.Millisecond, 100*time.Millisecond
	})
	t.Cleanup(func() { g.Shutdown(context.Background()) })
	sess = sessionOn(t, g, "breplay")
	eventually(t, "batch replayed", func() bool { return rowCount(t, sess, "SELECT k FROM t") == batchPartitions })
	if got, err := queryRows(sess.Query("SELECT v FROM u WHERE k = 1")); err != nil || !slices.Equal(got, []string{"x"}) {
		t.Fatalf("u after replay: %v %v", got, err)
	}
	times, err := queryRows(sess.Query("SELECT writetime(v) FROM t"))
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(times)
	if len(slices.Compact(times)) != 1 {
		t.Fatalf("write times after replay: %v, want one", times)
	}
	eventually(t, "batch log emptied", func() bool { return batchlogRecords(t) == 0 })
	if n := g.BatchlogReplays("applied"); n != 1 {
		t.Fatalf("replays: %d, want 1", n)
	}
}

// TestBatchTimestamp checks that every write of a batch gets the batch's
// one timestamp, even when each statement is bound separately and the
// client sends no timestamp; a statement's own USING TIMESTAMP stays.
func TestBatchTimestamp(t *testing.T) {
	cfg := clusterConfig(gw, "")
	cfg.DefaultTimestamp = false
	sess, err := cfg.CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	createBatchKeyspace(t, sess, "bts")
	for _, kind := range []gocql.BatchType{gocql.LoggedBatch, gocql.UnloggedBatch} {
		exec(t, sess, "TRUNCATE bts.t", "TRUNCATE bts.u", "TRUNCATE bts.l")
		b := sess.NewBatch(kind)
		for k := range batchPartitions {
			b.Query("INSERT INTO bts.t (k, c, v) VALUES (?, ?, ?)", k, 1, k)
			b.Query("UPDATE bts.u SET v = ? WHERE k = ?", "x", k)
		}
		b.Query("INSERT INTO bts.l (k, c, v) VALUES (1, 1, 1) USING TIMESTAMP 5")
		if err := sess.ExecuteBatch(b); err != nil {
			t.Fatal(err)
		}
		times, err := queryRows(sess.Query("SELECT writetime(v) FROM bts.t"))
		if err != nil {
			t.Fatal(err)
		}
		more, err := queryRows(sess.Query("SELECT writetime(v) FROM bts.u"))
		if err != nil {
			t.Fatal(err)
		}
		times = append(times, more...)
		slices.Sort(times)
		if len(times) != 2*batchPartitions || len(slices.Compact(times)) != 1 {
			t.Fatalf("kind %d: write times %v, want one for %d cells", kind, slices.Compact(times), 2*batchPartitions)
		}
		if got := ints(t, sess, "SELECT writetime(v) FROM bts.l WHERE k = 1"); !slices.Equal(got, []int{5}) {
			t.Fatalf("USING TIMESTAMP in a batch: %v", got)
		}
	}
}

// TestBatchTies checks that writes of one batch meet at one timestamp and
// reconcile by Cassandra's rules whatever their order: a row deletion
// wins over an insert of the row, a tombstone over a value, and of two
// values the greater.
func TestBatchTies(t *testing.T) {
	cfg := clusterConfig(gw, "")
	cfg.DefaultTimestamp = false
	sess, err := cfg.CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	createBatchKeyspace(t, sess, "bties")
	cases := []struct {
		name  string
		stmts []string
		want  []string
	}{
		{"delete then insert", []string{"DELETE FROM bties.t WHERE k = 1 AND c = 1", "INSERT INTO bties.t (k, c, v) VALUES (1, 1, 1)"}, nil},
		{"insert then delete", []string{"INSERT INTO bties.t (k, c, v) VALUES (1, 1, 1)", "DELETE FROM bties.t WHERE k = 1 AND c = 1"}, nil},
		{"greater value second", []string{"UPDATE bties.t SET v = 1 WHERE k = 1 AND c = 1", "UPDATE bties.t SET v = 2 WHERE k = 1 AND c = 1"}, []string{"2"}},
		{"greater value first", []string{"UPDATE bties.t SET v = 2 WHERE k = 1 AND c = 1", "UPDATE bties.t SET v = 1 WHERE k = 1 AND c = 1"}, []string{"2"}},
		{"null then value", []string{"INSERT INTO bties.t (k, c, v) VALUES (1, 1, null)", "UPDATE bties.t SET v = 5 WHERE k = 1 AND c = 1"}, []string{"null"}},
		{"value then null", []string{"UPDATE bties.t SET v = 5 WHERE k = 1 AND c = 1", "INSERT INTO bties.t (k, c, v) VALUES (1, 1, null)"}, []string{"null"}},
	}
	for _, tc := range cases {
		for _, kind := range []gocql.BatchType{gocql.LoggedBatch, gocql.UnloggedBatch} {
			t.Run(fmt.Sprintf("%s/message/%d", tc.name, kind), func(t *testing.T) {
				exec(t, sess, "TRUNCATE bties.t")
				b := sess.NewBatch(kind)
				for _, s := range tc.stmts {
					b.Query(s)
				}
				// Another partition makes the logged batch a logged one.
				b.Query("INSERT INTO bties.t (k, c, v) VALUES (2, 1, 1)")
				if err := sess.ExecuteBatch(b); err != nil {
					t.Fatal(err)
				}
				if got, err := queryRows(sess.Query("SELECT v FROM bties.t WHERE k = 1")); err != nil || !slices.Equal(got, tc.want) {
					t.Fatalf("got %q %v, want %q", got, err, tc.want)
				}
			})
		}
		t.Run(tc.name+"/statement", func(t *testing.T) {
			exec(t, sess, "TRUNCATE bties.t", "BEGIN BATCH "+strings.Join(tc.stmts, "; ")+" APPLY BATCH")
			if got, err := queryRows(sess.Query("SELECT v FROM bties.t WHERE k = 1")); err != nil || !slices.Equal(got, tc.want) {
				t.Fatalf("got %q %v, want %q", got, err, tc.want)
			}
		})
	}
}

// TestBatchAllOrNothing checks that a batch that fails applies nothing:
// when a statement's values are refused before anything is sent, and
// when a shard refuses a write of a single-partition batch, whose writes
// run in one transaction.
func TestBatchAllOrNothing(t *testing.T) {
	sess := session(t, "")
	createBatchKeyspace(t, sess, "bnone")
	b := sess.NewBatch(gocql.LoggedBatch)
	for k := range batchPartitions {
		b.Query("INSERT INTO bnone.t (k, c, v) VALUES (?, ?, ?)", k, 1, k)
	}
	b.Query("INSERT INTO bnone.u (k, v) VALUES (?, ?)", 1, []byte{0xff})
	if err := sess.ExecuteBatch(b); err == nil {
		t.Fatal("batch with an invalid value: no error")
	}
	if n := rowCount(t, sess, "SELECT k FROM bnone.t"); n != 0 {
		t.Fatalf("rows after a refused batch: %d, want 0", n)
	}

	// Setting a list element needs the list to exist; the shard finds out
	// after it wrote the partition's other rows.
	b = sess.NewBatch(gocql.LoggedBatch)
	for c := range 5 {
		b.Query("INSERT INTO bnone.l (k, c, v) VALUES (?, ?, ?)", 7, c, c)
	}
	b.Query("UPDATE bnone.l SET l[0] = 1 WHERE k = 7 AND c = 99")
	var re gocql.RequestError
	if err := sess.ExecuteBatch(b); !errors.As(err, &re) || re.Code() != 0x2200 {
		t.Fatalf("batch setting an element of a missing list: got %v, want an invalid request", err)
	}
	if n := rowCount(t, sess, "SELECT c FROM bnone.l WHERE k = 7"); n != 0 {
		t.Fatalf("rows of the partition after its batch failed: %d, want 0", n)
	}
}

// BenchmarkBatch measures batches of ten single-row inserts: into ten
// partitions, LOGGED (through the batch log) and UNLOGGED, and into one
// partition.
func BenchmarkBatch(b *testing.B) {
	sess := session(b, "")
	exec(b, sess,
		"CREATE KEYSPACE IF NOT EXISTS bbench WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE IF NOT EXISTS bbench.t (k int, c int, v int, PRIMARY KEY (k, c))")
	for _, bc := range []struct {
		name       string
		kind       gocql.BatchType
		partitions int
	}{
		{"logged-10-partitions", gocql.LoggedBatch, 10},
		{"unlogged-10-partitions", gocql.UnloggedBatch, 10},
		{"logged-1-partition", gocql.LoggedBatch, 1},
	} {
		b.Run(bc.name, func(b *testing.B) {
			i := 0
			for b.Loop() {
				batch := sess.NewBatch(bc.kind)
				for j := range 10 {
					batch.Query("INSERT INTO bbench.t (k, c, v) VALUES (?, ?, ?)", j%bc.partitions, i, j)
				}
				if err := sess.ExecuteBatch(batch); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

// TestBatchTooLarge refuses a batch over several partitions whose values
// pass batch_size_fail_threshold (50 KiB), as Cassandra does, and lets
// one of the same size on a single partition through.
func TestBatchTooLarge(t *testing.T) {
	sess := session(t, "")
	exec(t, sess, "CREATE KEYSPACE IF NOT EXISTS bigbatch WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE IF NOT EXISTS bigbatch.t (k int, c int, v text, PRIMARY KEY (k, c))")
	t.Cleanup(func() { exec(t, sess, "DROP KEYSPACE IF EXISTS bigbatch") })
	value := strings.Repeat("x", 20<<10)
	batch := func(partitions int) error {
		b := sess.NewBatch(gocql.UnloggedBatch)
		for i := range 3 {
			b.Query("INSERT INTO bigbatch.t (k, c, v) VALUES (?, ?, ?)", i%partitions, i, value)
		}
		return sess.ExecuteBatch(b)
	}
	requireCQLError(t, batch(2), 0x2200, "Batch too large")
	if n := rowCount(t, sess, "SELECT * FROM bigbatch.t"); n != 0 {
		t.Errorf("a refused batch wrote %d rows", n)
	}
	if err := batch(1); err != nil {
		t.Fatalf("a batch of the same size on one partition: %v", err)
	}
	wantRows(t, sess.Query("SELECT k, c FROM bigbatch.t"), "", "0 | 0", "0 | 1", "0 | 2")
	for _, r := range rowStrings(t, sess, "SELECT v FROM bigbatch.t") {
		if r[0] != value {
			t.Errorf("a value of the batch read back with %d bytes, want %d", len(r[0]), len(value))
		}
	}
}
