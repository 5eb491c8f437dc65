package gateway_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"github.com/jackc/pgx/v5"

	"github.com/cqlpg/cqlpg/gateway"
	"github.com/cqlpg/cqlpg/gateway/cluster"
	"github.com/cqlpg/cqlpg/gateway/repair"
	"github.com/cqlpg/cqlpg/sharding"
	"github.com/cqlpg/cqlpg/sharding/localpg"
)

// The failure tests run a gateway on three PostgreSQL servers of their
// own, with RF=3 keyspaces, and kill, pause and restart those servers
// under load.

// failureCluster is a gateway on three shards a test may break.
type failureCluster struct {
	clusters []*localpg.Cluster
	gw       *gateway.Server
}

func startFailureCluster(t *testing.T) *failureCluster {
	t.Helper()
	return startFailureClusterWith(t, nil)
}

// startFailureClusterWith is startFailureCluster with a change to the
// gateway's configuration.
func startFailureClusterWith(t *testing.T, change func(*gateway.Config)) *failureCluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// Commits must survive a killed server: synchronous_commit stays on.
	// (fsync off loses nothing when only processes die.)
	clusters := tempShards(t, 3, localpg.Options{
		Settings: map[string]string{"fsync": "off", "full_page_writes": "off"}})
	cfg := gateway.Config{Listen: "127.0.0.1:0", Log: testLogger(), RequestTimeout: 4 * time.Second,
		WriteTimeout: time.Second, ReadTimeout: time.Second, RangeTimeout: 2 * time.Second}
	for _, c := range clusters {
		cfg.Shards = append(cfg.Shards, cluster.ShardConfig{URL: c.URL()})
	}
	if change != nil {
		change(&cfg)
	}
	s, err := gateway.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve()
	t.Cleanup(func() {
		for _, c := range clusters {
			c.Resume()
		}
		s.Shutdown(context.Background())
	})
	return &failureCluster{clusters: clusters, gw: s}
}

// shardDigest returns a digest of every row of a table as one shard holds
// it, bookkeeping columns included.
func (fc *failureCluster) shardDigest(t *testing.T, shard int, table string) string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, fc.clusters[shard].URL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	var sum *string
	if err := conn.QueryRow(ctx, "SELECT count(*), md5(string_agg(t::text, ',' ORDER BY t::text)) FROM "+table+" t").
		Scan(&n, &sum); err != nil {
		t.Fatal(err)
	}
	if sum == nil {
		return "0 rows"
	}
	return fmt.Sprintf("%d rows %s", n, *sum)
}

// pendingHints counts the hints every shard holds.
func (fc *failureCluster) pendingHints(t *testing.T) int {
	t.Helper()
	ctx := context.Background()
	total := 0
	for _, c := range fc.clusters {
		conn, err := pgx.Connect(ctx, c.URL())
		if err != nil {
			return -1
		}
		var n int
		err = conn.QueryRow(ctx, "SELECT count(*) FROM cqlpg.hints").Scan(&n)
		conn.Close(ctx)
		if err != nil {
			return -1
		}
		total += n
	}
	return total
}

// ack is a write a client had acknowledged.
type ack struct{ k, c, v int }

// TestFailureShardKilledUnderQuorum kills one shard's server during a
// mixed QUORUM load: every QUORUM operation succeeds and reads what was
// acknowledged, ALL gets Unavailable once the gateway sees the shard
// down, and after a restart, hints and repair the three shards hold the
// same data, with every acknowledged write.
func TestFailureShardKilledUnderQuorum(t *testing.T) {
	// Replicas get 2 s rather than 1: the test is of what the levels
	// guarantee, and under a full test run's load the replica a read
	// turns to after the killed one once took longer than a second.
	fc := startFailureClusterWith(t, func(c *gateway.Config) { c.ReadTimeout, c.WriteTimeout = 2*time.Second, 2*time.Second })
	sess := sessionOn(t, fc.gw, "")
	exec(t, sess, "CREATE KEYSPACE fk WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}",
		"CREATE TABLE fk.t (k int, c int, v int, PRIMARY KEY (k, c))")

	var (
		mu      sync.Mutex
		acked   []ack
		stop    atomic.Bool
		ops     atomic.Int64
		workers sync.WaitGroup
	)
	for w := range 6 {
		workers.Go(func() {
			for seq := 0; !stop.Load(); seq++ {
				a := ack{k: rand.IntN(40), c: w*1_000_000 + seq, v: seq}
				if err := sess.Query("INSERT INTO fk.t (k, c, v) VALUES (?, ?, ?)", a.k, a.c, a.v).Exec(); err != nil {
					t.Errorf("QUORUM write: %v", err)
					return
				}
				mu.Lock()
				acked = append(acked, a)
				prev := acked[rand.IntN(len(acked))]
				mu.Unlock()
				var v int
				if err := sess.Query("SELECT v FROM fk.t WHERE k = ? AND c = ?", prev.k, prev.c).Scan(&v); err != nil || v != prev.v {
					t.Errorf("QUORUM read of an acknowledged write %v: %d, %v", prev, v, err)
					return
				}
				ops.Add(2)
			}
		})
	}
	time.Sleep(time.Second)
	const victim = 1
	if err := fc.clusters[victim].Kill(); err != nil {
		t.Fatal(err)
	}
	killedAt := ops.Load()
	time.Sleep(2 * time.Second)

	// ALL: Unavailable, once a failure has shown the shard down.
	all := gocql.All
	deadline := time.Now().Add(5 * time.Second)
	var unavailable *gocql.RequestErrUnavailable
	for {
		err := sess.Query("INSERT INTO fk.t (k, c, v) VALUES (1, -1, 0)").Consistency(all).Exec()
		if errors.As(err, &unavailable) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("ALL write with a shard down: %v, want Unavailable", err)
		}
	}
	for range 5 {
		err := sess.Query("INSERT INTO fk.t (k, c, v) VALUES (1, -1, 0)").Consistency(all).Exec()
		if !errors.As(err, &unavailable) || unavailable.Required != 3 || unavailable.Alive != 2 || unavailable.Consistency != all {
			t.Fatalf("ALL write: %v, want Unavailable required 3 alive 2", err)
		}
		var v int
		err = sess.Query("SELECT v FROM fk.t WHERE k = 1 AND c = -1").Consistency(all).Scan(&v)
		if !errors.As(err, &unavailable) || unavailable.Required != 3 || unavailable.Alive != 2 {
			t.Fatalf("ALL read: %v, want Unavailable required 3 alive 2", err)
		}
	}
	stop.Store(true)
	workers.Wait()
	if t.Failed() {
		return
	}
	t.Logf("%d QUORUM operations, %d after the kill; %d hints, %d read repairs",
		ops.Load(), ops.Load()-killedAt, fc.gw.HintsWritten(), fc.gw.ReadRepairs())
	if fc.gw.HintsWritten() == 0 {
		t.Error("no hint stored for the writes the killed shard missed")
	}

	// Back up: hints replay, repair finishes, the shards agree.
	ctx := context.Background()
	restarted := time.Now()
	if err := fc.clusters[victim].Restart(ctx); err != nil {
		t.Fatal(err)
	}
	for fc.pendingHints(t) != 0 {
		if time.Since(restarted) > 30*time.Second {
			t.Fatalf("hints not replayed after 30 s: %d left", fc.pendingHints(t))
		}
		time.Sleep(50 * time.Millisecond)
	}
	hinted := time.Since(restarted)
	if _, err := fc.gw.Repair(ctx, repair.Options{Keyspace: "fk", Table: "t"}); err != nil {
		t.Fatal(err)
	}
	agreed := time.Since(restarted)
	want := fc.shardDigest(t, 0, "fk.t")
	for shard := 1; shard < 3; shard++ {
		if got := fc.shardDigest(t, shard, "fk.t"); got != want {
			t.Errorf("shard %d holds %s, shard 0 %s", shard, got, want)
		}
	}
	t.Logf("restart to hints replayed %v, to full agreement %v", hinted.Round(time.Millisecond), agreed.Round(time.Millisecond))

	// Every acknowledged write, on every shard.
	for shard := range 3 {
		conn, err := pgx.Connect(ctx, fc.clusters[shard].URL())
		if err != nil {
			t.Fatal(err)
		}
		stored := map[[2]int]int{}
		rows, _ := conn.Query(ctx, "SELECT k, c, v FROM fk.t")
		var k, c, v int
		_, err = pgx.ForEachRow(rows, []any{&k, &c, &v}, func() error { stored[[2]int{k, c}] = v; return nil })
		conn.Close(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range acked {
			if got, ok := stored[[2]int{a.k, a.c}]; !ok || got != a.v {
				t.Fatalf("shard %d lost acknowledged write %v", shard, a)
			}
		}
	}
}

// TestFailureTwoShardsKilled: with two of three replicas down, QUORUM is
// refused promptly as Unavailable, and ONE still reads and writes.
func TestFailureTwoShardsKilled(t *testing.T) {
	fc := startFailureCluster(t)
	sess := sessionOn(t, fc.gw, "")
	exec(t, sess, "CREATE KEYSPACE f2 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}",
		"CREATE TABLE f2.t (k int PRIMARY KEY, v int)",
		"INSERT INTO f2.t (k, v) VALUES (1, 1)",
		"CREATE KEYSPACE f1 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE f1.t (k int PRIMARY KEY, v int)")
	// A partition of f1 whose one replica will be down.
	anyKey := -1
	for k := 0; anyKey < 0; k++ {
		if replicas, err := fc.gw.PartitionReplicas("f1", "t", binary.BigEndian.AppendUint32(nil, uint32(k))); err != nil {
			t.Fatal(err)
		} else if replicas[0] == 0 {
			anyKey = k
		}
	}
	for _, shard := range []int{0, 2} {
		if err := fc.clusters[shard].Kill(); err != nil {
			t.Fatal(err)
		}
	}
	var unavailable *gocql.RequestErrUnavailable
	for attempt := 0; ; attempt++ {
		start := time.Now()
		err := sess.Query("INSERT INTO f2.t (k, v) VALUES (2, 2)").Exec()
		if took := time.Since(start); took > 1500*time.Millisecond {
			t.Fatalf("QUORUM write took %v with two shards down: %v", took, err)
		}
		if errors.As(err, &unavailable) {
			break
		}
		// The first write may meet the dead shards before they are
		// known down: a write timeout, at once.
		if attempt == 2 {
			t.Fatalf("QUORUM write with two shards down: %v, want Unavailable", err)
		}
	}
	if unavailable.Required != 2 || unavailable.Alive != 1 {
		t.Errorf("Unavailable: required %d alive %d, want 2 and 1", unavailable.Required, unavailable.Alive)
	}
	start := time.Now()
	var v int
	err := sess.Query("SELECT v FROM f2.t WHERE k = 1").Scan(&v)
	if !errors.As(err, &unavailable) || time.Since(start) > time.Second {
		t.Errorf("QUORUM read with two shards down: %v after %v, want Unavailable at once", err, time.Since(start))
	}
	one := gocql.One
	if err := sess.Query("INSERT INTO f2.t (k, v) VALUES (3, 3)").Consistency(one).Exec(); err != nil {
		t.Fatalf("ONE write: %v", err)
	}
	for k, want := range map[int]int{1: 1, 3: 3} {
		if err := sess.Query("SELECT v FROM f2.t WHERE k = ?", k).Consistency(one).Scan(&v); err != nil || v != want {
			t.Errorf("ONE read of %d: %d, %v", k, v, err)
		}
	}
	// ANY: with the partition's only replica down, a hint stands in for
	// the write; the write is not readable until the replica is back.
	if err := sess.Query("INSERT INTO f1.t (k, v) VALUES (?, 7)", anyKey).Consistency(gocql.Any).Exec(); err != nil {
		t.Fatalf("ANY write with every replica down: %v", err)
	}
	err = sess.Query("SELECT v FROM f1.t WHERE k = ?", anyKey).Consistency(one).Scan(&v)
	if !errors.As(err, &unavailable) {
		t.Errorf("ONE read with every replica down: %v, want Unavailable", err)
	}

	// A QUORUM write refused with a timeout may have applied on the live
	// replica, as in Cassandra: k = 2 may be there.
	got := readText(t, sess.Query("SELECT k, v FROM f2.t").Consistency(one))
	if !slices.Contains(got.rows, "1 | 1") || !slices.Contains(got.rows, "3 | 3") {
		t.Errorf("ONE scan: %q", got.rows)
	}

	// Back up: the hint delivers the ANY write.
	ctx := context.Background()
	for _, shard := range []int{0, 2} {
		if err := fc.clusters[shard].Restart(ctx); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		err := sess.Query("SELECT v FROM f1.t WHERE k = ?", anyKey).Consistency(one).Scan(&v)
		if err == nil && v == 7 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("ANY write after its replica came back: %d, %v", v, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestFailureSlowShard: a shard that stops answering makes ALL time out
// with Cassandra's fields, after the configured timeout and no later.
func TestFailureSlowShard(t *testing.T) {
	fc := startFailureCluster(t)
	sess := sessionOn(t, fc.gw, "")
	exec(t, sess, "CREATE KEYSPACE fs WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}",
		"CREATE TABLE fs.t (k int PRIMARY KEY, v int)",
		"INSERT INTO fs.t (k, v) VALUES (1, 1)")
	if err := fc.clusters[1].Pause(); err != nil {
		t.Fatal(err)
	}
	all := gocql.All
	start := time.Now()
	err := sess.Query("INSERT INTO fs.t (k, v) VALUES (1, 2)").Consistency(all).Exec()
	took := time.Since(start)
	var wto *gocql.RequestErrWriteTimeout
	if !errors.As(err, &wto) || wto.Received != 2 || wto.BlockFor != 3 || wto.WriteType != "SIMPLE" || wto.Consistency != all {
		t.Errorf("ALL write to a paused shard: %v, want a SIMPLE write timeout, received 2 of 3", err)
	}
	if took < 900*time.Millisecond || took > 2500*time.Millisecond {
		t.Errorf("ALL write timed out after %v, want the 1 s write timeout", took)
	}
	start = time.Now()
	var v int
	err = sess.Query("SELECT v FROM fs.t WHERE k = 1").Consistency(all).Scan(&v)
	took = time.Since(start)
	var rto *gocql.RequestErrReadTimeout
	if !errors.As(err, &rto) || rto.Received != 2 || rto.BlockFor != 3 || rto.Consistency != all {
		t.Errorf("ALL read from a paused shard: %v, want a read timeout, received 2 of 3", err)
	}
	if took > 2500*time.Millisecond {
		t.Errorf("ALL read timed out after %v, want the 1 s read timeout", took)
	}
	if err := fc.clusters[1].Resume(); err != nil {
		t.Fatal(err)
	}
	// Back: ALL works again, and sees the write that timed out, which
	// applied on the replicas that were up and reached the slow one late.
	deadline := time.Now().Add(10 * time.Second)
	for {
		err = sess.Query("SELECT v FROM fs.t WHERE k = 1").Consistency(all).Scan(&v)
		if err == nil && v == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("ALL read after the shard resumed: %d, %v", v, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// BenchmarkReplicatedWrites measures writes through gocql on the shared
// three-shard gateway at RF=1 and at RF=3 with QUORUM, from parallel
// clients: the price of replication on one machine, where the three
// servers share its cores.
func BenchmarkReplicatedWrites(b *testing.B) {
	sess := sessionOn(b, gw, "")
	for _, rf := range []int{1, 3} {
		ks := fmt.Sprintf("repl_bench_%d", rf)
		exec(b, sess, fmt.Sprintf("CREATE KEYSPACE IF NOT EXISTS %s WITH replication = "+
			"{'class': 'SimpleStrategy', 'replication_factor': %d}", ks, rf),
			"CREATE TABLE IF NOT EXISTS "+ks+".t (k int PRIMARY KEY, v text)")
		var i atomic.Int64
		b.Run(fmt.Sprintf("rf%d-quorum", rf), func(b *testing.B) {
			b.SetParallelism(8)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := sess.Query("INSERT INTO "+ks+".t (k, v) VALUES (?, 'value')", i.Add(1)).Exec(); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}

// TestReadRepair makes one replica newer than the others behind the
// gateway's back: a read at ALL answers the newest value and leaves the
// replicas equal, for a partition read and for a range scan.
func TestReadRepair(t *testing.T) {
	sess := session(t, "")
	exec(t, sess, "CREATE KEYSPACE rr WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}",
		"CREATE TABLE rr.t (k int PRIMARY KEY, v int)")
	// At ALL, so that every replica has the rows before one is changed.
	for k := 1; k <= 2; k++ {
		if err := sess.Query("INSERT INTO rr.t (k, v) VALUES (?, ?)", k, k).Consistency(gocql.All).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	onShard := func(shard int, sql string) []string {
		t.Helper()
		conn, err := pgx.Connect(ctx, shardURLs[shard])
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		rows, _ := conn.Query(ctx, sql)
		out, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	replicas, err := gw.PartitionReplicas("rr", "t", []byte{0, 0, 0, 1})
	if err != nil {
		t.Fatal(err)
	}
	// A plain SQL write is a new cell, newer than the gateway's.
	onShard(replicas[2], "UPDATE rr.t SET v = 10 WHERE k = 1 RETURNING ''")
	onShard(replicas[1], "UPDATE rr.t SET v = 20 WHERE k = 2 RETURNING ''")
	before := gw.ReadRepairs()
	all := gocql.All
	var v int
	if err := sess.Query("SELECT v FROM rr.t WHERE k = 1").Consistency(all).Scan(&v); err != nil || v != 10 {
		t.Fatalf("ALL read of a partition one replica has newer: %d, %v", v, err)
	}
	got := readText(t, sess.Query("SELECT k, v FROM rr.t").Consistency(all))
	if !slices.Equal(got.rows, []string{"1 | 10", "2 | 20"}) && !slices.Equal(got.rows, []string{"2 | 20", "1 | 10"}) {
		t.Fatalf("ALL scan: %q", got.rows)
	}
	if gw.ReadRepairs() < before+2 {
		t.Errorf("%d read repairs, want 2", gw.ReadRepairs()-before)
	}
	want := onShard(0, `SELECT k || ':' || v || ':' || "v$wt" FROM rr.t ORDER BY k`)
	for shard := 1; shard < 3; shard++ {
		if got := onShard(shard, `SELECT k || ':' || v || ':' || "v$wt" FROM rr.t ORDER BY k`); !slices.Equal(got, want) {
			t.Errorf("after read repair shard %d holds %q, shard 0 %q", shard, got, want)
		}
	}
}

// TestConsistencyLevels runs every level against the shared three-shard
// gateway, and checks the levels Cassandra refuses for some statements.
func TestConsistencyLevels(t *testing.T) {
	sess := session(t, "")
	exec(t, sess, "CREATE KEYSPACE cl3 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}",
		"CREATE TABLE cl3.t (k int PRIMARY KEY, v int)",
		"CREATE TABLE cl3.c (k int PRIMARY KEY, n counter)",
		"CREATE KEYSPACE cl1 WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 1}",
		"CREATE TABLE cl1.t (k int PRIMARY KEY, v int)")
	levels := []gocql.Consistency{gocql.Any, gocql.One, gocql.Two, gocql.Three, gocql.Quorum, gocql.All,
		gocql.LocalQuorum, gocql.EachQuorum, gocql.LocalOne}
	for i, level := range levels {
		if err := sess.Query("INSERT INTO cl3.t (k, v) VALUES (?, ?)", i, i).Consistency(level).Exec(); err != nil {
			t.Errorf("%v write: %v", level, err)
		}
		if level == gocql.Any {
			continue
		}
		// A read at the same level sees the write only from a replica
		// that has it: as in Cassandra, only levels that overlap (such as
		// QUORUM and QUORUM) promise that. So the row is first settled
		// on every replica.
		var v int
		if err := sess.Query("SELECT v FROM cl3.t WHERE k = ?", i).Consistency(gocql.All).Scan(&v); err != nil || v != i {
			t.Errorf("ALL read after a %v write: %d, %v", level, v, err)
		}
		if err := sess.Query("SELECT v FROM cl3.t WHERE k = ?", i).Consistency(level).Scan(&v); err != nil || v != i {
			t.Errorf("%v read: %d, %v", level, v, err)
		}
	}
	var unavailable *gocql.RequestErrUnavailable
	err := sess.Query("INSERT INTO cl1.t (k, v) VALUES (1, 1)").Consistency(gocql.Three).Exec()
	if !errors.As(err, &unavailable) || unavailable.Required != 3 || unavailable.Alive != 1 {
		t.Errorf("THREE on one replica: %v, want Unavailable required 3 alive 1", err)
	}
	for _, tc := range []struct {
		q     *gocql.Query
		error string
	}{
		{sess.Query("SELECT v FROM cl3.t WHERE k = 1").Consistency(gocql.Any), "ANY ConsistencyLevel is only supported for writes"},
		{sess.Query("INSERT INTO cl3.t (k, v) VALUES (1, 1)").Consistency(gocql.Consistency(gocql.Serial)), "You must use conditional updates for serializable writes"},
		{sess.Query("UPDATE cl3.c SET n = n + 1 WHERE k = 1").Consistency(gocql.Any), "Consistency level ANY is not yet supported for counter table c"},
		{sess.Query("UPDATE cl3.c SET n = n + 1 WHERE k = 1").Consistency(gocql.Consistency(gocql.LocalSerial)), "Counter operations are inherently non-serializable"},
	} {
		requireCQLError(t, tc.q.Exec(), 0x2200, tc.error)
	}
}

// TestSpeculativeRetry pauses one of three replicas: QUORUM reads that
// asked it ask the third replica once the table's speculative_retry has
// passed (its default, 99p of the replica's latency, and a fixed 20ms),
// instead of waiting for the read timeout (1 s here) and failing, as
// they do with NONE until the gateway gives the paused shard up.
func TestSpeculativeRetry(t *testing.T) {
	fc := startFailureCluster(t)
	sess := sessionOn(t, fc.gw, "")
	tables := map[string]string{"none": "NONE", "p99": "99p", "fixed": "20ms"}
	exec(t, sess, "CREATE KEYSPACE spec WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}")
	const keys = 100
	for table, retry := range tables {
		exec(t, sess, "CREATE TABLE spec."+table+" (k int PRIMARY KEY, v int) WITH speculative_retry = '"+retry+"'")
		for k := range keys {
			if err := sess.Query("INSERT INTO spec."+table+" (k, v) VALUES (?, ?)", k, k).Consistency(gocql.All).Exec(); err != nil {
				t.Fatal(err)
			}
		}
	}
	read := func(table string, k int) (time.Duration, error) {
		start := time.Now()
		var v int
		err := sess.Query("SELECT v FROM spec."+table+" WHERE k = ?", k).Consistency(gocql.Quorum).Scan(&v)
		if err == nil && v != k {
			err = fmt.Errorf("read %d: %d", k, v)
		}
		return time.Since(start), err
	}
	p99 := func(d []time.Duration) time.Duration {
		slices.Sort(d)
		return d[len(d)*99/100]
	}
	// The replicas' latency, for 99p.
	var before []time.Duration
	for i := range 3 * keys {
		d, err := read("p99", i%keys)
		if err != nil {
			t.Fatal(err)
		}
		before = append(before, d)
	}
	t.Logf("p99 of QUORUM reads with every replica up: %v", p99(before))
	// Each table is read with the replica paused from the start: the
	// gateway takes it for down once a cancel it sent goes unanswered,
	// after which no read asks it.
	for _, table := range []string{"none", "p99", "fixed"} {
		if err := fc.clusters[1].Pause(); err != nil {
			t.Fatal(err)
		}
		speculated := fc.gw.SpeculativeReads()
		var during []time.Duration
		timeouts := 0
		for k := range keys {
			d, err := read(table, k)
			var rt *gocql.RequestErrReadTimeout
			switch {
			case errors.As(err, &rt) && table == "none":
				timeouts++
			case err != nil:
				t.Errorf("%s: QUORUM read of %d with a replica paused: %v", table, k, err)
			}
			during = append(during, d)
		}
		n := fc.gw.SpeculativeReads() - speculated
		t.Logf("%s: p99 of %d QUORUM reads with a replica paused %v, %d read timeouts, %d replicas asked speculatively",
			table, len(during), p99(during), timeouts, n)
		switch p := p99(during); {
		case table == "none" && timeouts == 0:
			t.Errorf("none: no read timed out with a replica paused")
		case table != "none" && p > 500*time.Millisecond:
			t.Errorf("%s: p99 %v with a replica paused, want well under the 1 s read timeout", table, p)
		case table != "none" && n == 0:
			t.Errorf("%s: no replica was asked speculatively", table)
		}
		if err := fc.clusters[1].Resume(); err != nil {
			t.Fatal(err)
		}
		waitAllUp(t, sess, "spec."+table)
	}
}

// waitAllUp waits until a read of table at ALL succeeds: every shard is
// taken to be up again.
func waitAllUp(t *testing.T, sess *gocql.Session, table string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		err := sess.Query("SELECT k FROM " + table + " LIMIT 1").Consistency(gocql.All).Exec()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("a read at ALL still fails: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestOverloadedReplicaQueue holds the writes of one of three shards
// behind a lock, with one connection to each shard, and sends more writes
// at ONE than that shard's pool queues (sharding.MaxQueued): those its
// pool refuses are answered Overloaded, with the replica's text, never
// WriteTimeout, and the gateway's own request limits, set high, refuse
// none.
func TestOverloadedReplicaQueue(t *testing.T) {
	fc := startFailureClusterWith(t, func(cfg *gateway.Config) {
		cfg.ShardConns, cfg.MaxRequestsPerConn = 1, 1<<15
	})
	sess := sessionOn(t, fc.gw, "")
	exec(t, sess, "CREATE KEYSPACE queuefull WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE queuefull.t (k int PRIMARY KEY, v int)")
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, fc.clusters[1].URL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `LOCK TABLE queuefull.t IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	// A third of the keys are the locked shard's: more than its queue.
	const writes = 4 * sharding.MaxQueued
	var (
		wg                            sync.WaitGroup
		mu                            sync.Mutex
		replicaFull, limits, timeouts int
	)
	for k := range writes {
		wg.Go(func() {
			err := sess.Query("INSERT INTO queuefull.t (k, v) VALUES (?, ?)", k, k).Consistency(gocql.One).Exec()
			var re gocql.RequestError
			var wt *gocql.RequestErrWriteTimeout
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
			case errors.As(err, &wt):
				timeouts++
			case errors.As(err, &re) && re.Code() == gocql.ErrCodeOverloaded && strings.Contains(re.Message(), "queued for a replica"):
				replicaFull++
			case errors.As(err, &re) && re.Code() == gocql.ErrCodeOverloaded:
				limits++
			default:
				t.Errorf("write %d: %v", k, err)
			}
		})
	}
	wg.Wait()
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d writes: %d answered Overloaded for the replica's full queue, %d WriteTimeout, %d Overloaded by the gateway's limits",
		writes, replicaFull, timeouts, limits)
	if replicaFull == 0 || limits > 0 {
		t.Errorf("want writes refused by the replica's queue and none by the gateway's limits")
	}
}

// TestSharedTransactionLosesNoWrite sends a point read and a write of one
// row while its shard's one connection is held, so that one pipeline
// shares a transaction between them, and has the shard refuse the write
// at commit (a deferred constraint trigger on the table, for the value
// 666). The read must not answer the value its transaction never
// committed, and the write must not be acknowledged: it runs again
// alone, and its error reaches the client.
func TestSharedTransactionLosesNoWrite(t *testing.T) {
	fc := startFailureClusterWith(t, func(cfg *gateway.Config) { cfg.ShardConns = 1 })
	sess := sessionOn(t, fc.gw, "")
	exec(t, sess, "CREATE KEYSPACE sharedtx WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE sharedtx.t (k int PRIMARY KEY, v int)")
	ctx := context.Background()
	var holds []pgx.Tx
	for _, c := range fc.clusters {
		conn, err := pgx.Connect(ctx, c.URL())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		_, err = conn.Exec(ctx, `CREATE FUNCTION public.refuse_666() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN IF NEW.v = 666 THEN RAISE EXCEPTION 'refused at commit'; END IF; RETURN NULL; END $$;
CREATE CONSTRAINT TRIGGER refuse_666 AFTER INSERT OR UPDATE ON sharedtx.t DEFERRABLE INITIALLY DEFERRED
FOR EACH ROW EXECUTE FUNCTION public.refuse_666()`)
		if err != nil {
			t.Fatal(err)
		}
		tx, err := conn.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, "LOCK TABLE sharedtx.t IN ACCESS EXCLUSIVE MODE"); err != nil {
			t.Fatal(err)
		}
		holds = append(holds, tx)
	}
	// The first write holds the connection while the read and the second
	// write queue behind it; once the lock goes, one pipeline takes them.
	results := make(chan error, 3)
	go func() { results <- sess.Query("INSERT INTO sharedtx.t (k, v) VALUES (1, 1)").Exec() }()
	time.Sleep(100 * time.Millisecond)
	var read atomic.Int64
	go func() {
		var v int
		err := sess.Query("SELECT v FROM sharedtx.t WHERE k = 1").Consistency(gocql.One).Scan(&v)
		read.Store(int64(v))
		if errors.Is(err, gocql.ErrNotFound) {
			err = nil
		}
		results <- err
	}()
	lost := make(chan error, 1)
	go func() {
		lost <- sess.Query("INSERT INTO sharedtx.t (k, v) VALUES (1, 666)").Consistency(gocql.One).Exec()
	}()
	time.Sleep(200 * time.Millisecond)
	for _, tx := range holds {
		if err := tx.Rollback(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		if err := <-results; err != nil {
			t.Fatal(err)
		}
	}
	if v := read.Load(); v == 666 {
		t.Error("the read answered a value its transaction did not commit")
	}
	if err := <-lost; err == nil {
		t.Error("the write refused at commit was acknowledged")
	}
	var v int
	if err := sess.Query("SELECT v FROM sharedtx.t WHERE k = 1").Consistency(gocql.One).Scan(&v); err != nil || v != 1 {
		t.Errorf("the row after the writes: %d %v, want 1", v, err)
	}
}

// TestFailureCollectionElementsKept: six clients add elements to the
// sets, maps and lists of a few rows at QUORUM and ONE, and read them back at
// QUORUM (read repair), while one shard is killed and restarted: after
// hints and repair every shard holds every element a client had
// acknowledged, and the shards agree. With one write time per collection,
// merged whole, the newest wins, shards lost acknowledged elements here:
// a replica that missed an addition (its hint pending) took a later one,
// and read repair or repair kept its value.
func TestFailureCollectionElementsKept(t *testing.T) {
	fc := startFailureCluster(t)
	sess := sessionOn(t, fc.gw, "")
	exec(t, sess, "CREATE KEYSPACE fcoll WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}",
		"CREATE TABLE fcoll.t (k int PRIMARY KEY, s set<int>, m map<int, int>, l list<int>)")

	const rows = 4
	var (
		mu      sync.Mutex
		acked   [rows]map[int]bool // element → added to s and l, and to m as a key
		stop    atomic.Bool
		ops     atomic.Int64
		workers sync.WaitGroup
	)
	for k := range acked {
		acked[k] = map[int]bool{}
	}
	for w := range 6 {
		workers.Go(func() {
			level := gocql.Quorum
			if w%2 == 1 {
				level = gocql.One
			}
			for seq := 0; !stop.Load(); seq++ {
				k, e := rand.IntN(rows), w*1_000_000+seq
				err := sess.Query("UPDATE fcoll.t SET s = s + ?, m[?] = ?, l = l + ? WHERE k = ?", []int{e}, e, seq, []int{e}, k).
					Consistency(level).Exec()
				if err != nil {
					// Not acknowledged: the element may or may not be kept.
					continue
				}
				mu.Lock()
				acked[k][e] = true
				mu.Unlock()
				var s []int
				if err := sess.Query("SELECT s FROM fcoll.t WHERE k = ?", k).Scan(&s); err == nil && level == gocql.Quorum && !slices.Contains(s, e) {
					t.Errorf("QUORUM read of row %d lacks element %d, acknowledged at QUORUM", k, e)
				}
				ops.Add(2)
			}
		})
	}
	time.Sleep(500 * time.Millisecond)
	const victim = 2
	if err := fc.clusters[victim].Kill(); err != nil {
		t.Fatal(err)
	}
	killedAt := ops.Load()
	time.Sleep(1500 * time.Millisecond)
	ctx := context.Background()
	if err := fc.clusters[victim].Restart(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	stop.Store(true)
	workers.Wait()
	if t.Failed() {
		return
	}
	elements := 0
	for _, m := range acked {
		elements += len(m)
	}
	t.Logf("%d operations, %d after the kill; %d elements acknowledged; %d hints, %d read repairs",
		ops.Load(), ops.Load()-killedAt, elements, fc.gw.HintsWritten(), fc.gw.ReadRepairs())
	if fc.gw.HintsWritten() == 0 || ops.Load() == killedAt {
		t.Fatal("the kill cost no hint, or no write ran after it: the test did not test")
	}

	deadline := time.Now().Add(30 * time.Second)
	for fc.pendingHints(t) != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("hints not replayed after 30 s: %d left", fc.pendingHints(t))
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := fc.gw.Repair(ctx, repair.Options{Keyspace: "fcoll", Table: "t"}); err != nil {
		t.Fatal(err)
	}
	var urls []string
	for _, c := range fc.clusters {
		urls = append(urls, c.URL())
	}
	replicasAgree(t, urls, "fcoll", "t")

	for shard, url := range urls {
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		r, _ := conn.Query(ctx, "SELECT k, s, m, l FROM fcoll.t")
		var k int
		var s, l []int32
		var m map[string]any
		stored, list := map[int][]int32{}, map[int][]int32{}
		keys := map[int]map[string]any{}
		_, err = pgx.ForEachRow(r, []any{&k, &s, &m, &l}, func() error { stored[k], keys[k], list[k] = s, m, l; return nil })
		conn.Close(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for k, m := range acked {
			for e := range m {
				if _, ok := keys[k][fmt.Sprint(e)]; !slices.Contains(stored[k], int32(e)) || !ok || !slices.Contains(list[k], int32(e)) {
					t.Fatalf("shard %d lost element %d of row %d, acknowledged", shard, e, k)
				}
			}
		}
	}
}
