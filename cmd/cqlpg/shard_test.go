package main_test

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/sharding"
	"github.com/gocql/gocql"
	"github.com/jackc/pgx/v5"
)

// The topology tests change the ring under a running load of QUORUM
// writes and QUORUM reads of acknowledged keys, on two gateways (elastic),
// and check that no request failed, that every acknowledged write is on
// each of its replicas on the new ring, and, after cqlpg cleanup, on no
// other shard.

// TestShardAdd grows a cluster of three shards to four with `cqlpg shard
// add` at RF 2, then cleans up.
func TestShardAdd(t *testing.T) {
	e := startElastic(t, 4, 3, 2, 2000)
	// What streaming must carry besides plain rows: clustering rows,
	// static rows, collections, expiring cells, row and range deletions;
	// the repair at the end compares them cell by cell on the new ring.
	for _, q := range []string{
		"CREATE TABLE elastic.rich (p int, c int, s text STATIC, l list<int>, m map<text, int>, v text, PRIMARY KEY (p, c)) WITH CLUSTERING ORDER BY (c DESC)",
	} {
		if err := e.sessions[0].Query(q).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	for p := range 60 {
		for c := range 5 {
			if err := e.sessions[0].Query("INSERT INTO elastic.rich (p, c, s, l, m, v) VALUES (?, ?, ?, [1, 2], {'a': 1}, 'x') USING TTL 86400",
				p, c, fmt.Sprint("static", p)).Exec(); err != nil {
				t.Fatal(err)
			}
		}
		for _, q := range []string{
			"UPDATE elastic.rich SET l = l + [3], m['b'] = 2 WHERE p = ? AND c = 0",
			"DELETE FROM elastic.rich WHERE p = ? AND c = 1",
			"DELETE FROM elastic.rich WHERE p = ? AND c > 2",
		} {
			if err := e.sessions[0].Query(q, p).Exec(); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Lightweight transactions leave each partition's Paxos state on its
	// replicas.
	for k := range 50 {
		if err := e.sessions[0].Query("INSERT INTO elastic.t (k, v) VALUES (?, 'lwt') IF NOT EXISTS", -1-k).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	// Counters: increments keep coming during the join; each replica of
	// each counter must end with exactly the increments acknowledged.
	if err := e.sessions[0].Query("CREATE TABLE elastic.c (k int PRIMARY KEY, n counter)").Exec(); err != nil {
		t.Fatal(err)
	}
	var (
		counted   = make([]int64, 40)
		uncertain = make([]bool, 40)
		countMu   sync.Mutex
		stopCount = make(chan struct{})
		counting  sync.WaitGroup
	)
	for w := range 2 {
		counting.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stopCount:
					return
				default:
				}
				k := (i*3 + w) % len(counted)
				err := e.sessions[w].Query("UPDATE elastic.c SET n = n + 1 WHERE k = ?", k).Exec()
				countMu.Lock()
				if err == nil {
					counted[k]++
				} else {
					uncertain[k] = true
					t.Errorf("increment of counter %d: %v", k, err)
				}
				countMu.Unlock()
				time.Sleep(2 * time.Millisecond)
			}
		})
	}
	var out string
	e.underLoad("shard add", func() { out = e.cqlpg("shard", "add", "--shard", e.pg[0].URL(), e.pg[3].URL()) })
	close(stopCount)
	counting.Wait()
	if !strings.Contains(out, "copied") {
		t.Errorf("the join did not copy counters:\n%s", out)
	}
	// Every gateway's /metrics shows the join's streaming, done.
	for g := range e.servers {
		total, ok1 := e.metric(g, `cqlpg_topology_stream_ranges{operation="shard add"}`)
		done, ok2 := e.metric(g, `cqlpg_topology_stream_ranges_done{operation="shard add"}`)
		rows, ok3 := e.metric(g, `cqlpg_topology_stream_rows{operation="shard add"}`)
		moving, ok4 := e.metric(g, "cqlpg_topology_moving")
		if !ok1 || !ok2 || !ok3 || !ok4 || total == 0 || done != total || rows == 0 || moving != 0 {
			t.Errorf("gateway %d's /metrics: ranges %v of %v, rows %v, moving %v", g, done, total, rows, moving)
		}
	}
	// The new shard holds the Paxos state of the partitions it gained, each
	// with the latest commit an old replica holds.
	commits := func(i int) map[string]int64 {
		conn, err := pgx.Connect(e.ctx, e.pg[i].URL())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(e.ctx)
		out := map[string]int64{}
		rows, _ := conn.Query(e.ctx, "SELECT table_id::text || encode(key, 'hex'), committed FROM cqlpg.paxos WHERE committed IS NOT NULL")
		var k string
		var b int64
		if _, err := pgx.ForEachRow(rows, []any{&k, &b}, func() error { out[k] = b; return nil }); err != nil {
			t.Fatal(err)
		}
		return out
	}
	joined := commits(3)
	for i := range 3 {
		for k, b := range commits(i) {
			if c, ok := joined[k]; ok && c < b {
				t.Errorf("partition %s: last commit %d on shard%d, %d on the new shard", k, b, i, c)
			}
		}
	}
	if len(joined) < 10 {
		t.Errorf("the new shard holds the Paxos state of %d partitions, want about half of the 50", len(joined))
	}
	if !strings.Contains(out, "shard3 is a normal member at ring version 4") || !strings.Contains(out, "streamed") {
		t.Errorf("the join's progress:\n%s", out)
	}
	t.Logf("%s", lastLine(out, " ranges, "))
	members := e.check(0, false)
	// Drivers see the new ring's tokens: system.local's and system.peers'
	// together are the ring's.
	var want []string
	for _, m := range members {
		for _, tok := range m.Tokens {
			want = append(want, strconv.FormatInt(tok, 10))
		}
	}
	slices.Sort(want)
	for g := range e.gateways {
		sess := e.sessionOn(g)
		var got, toks []string
		if err := sess.Query("SELECT tokens FROM system.local").Scan(&toks); err != nil {
			t.Fatal(err)
		}
		got = append(got, toks...)
		iter := sess.Query("SELECT tokens FROM system.peers").Iter()
		for iter.Scan(&toks) {
			got = append(got, toks...)
		}
		if err := iter.Close(); err != nil {
			t.Fatal(err)
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("gateway %d: system.local and system.peers show %d tokens, want the ring's %d", g, len(got), len(want))
		}
	}
	status := e.cqlpg("shard", "status", "--shard", e.pg[1].URL())
	if n := len(regexp.MustCompile(`(?m)^UN\s+shard\d`).FindAllString(status, -1)); n != 4 {
		t.Errorf("cqlpg shard status after the join:\n%s", status)
	}
	e.underLoad("cleanup", func() { out = e.cqlpg("cleanup", "--shard", e.pg[2].URL(), "elastic") })
	// Every replica of each counter holds exactly what was acknowledged,
	// and, after the cleanup, no other shard holds it.
	rf2 := sharding.Replication{Class: sharding.SimpleStrategyClass, Factor: 2}
	var infos []sharding.ShardInfo
	for _, m := range members {
		infos = append(infos, sharding.ShardInfo{HostID: m.HostID, Name: m.Name, Tokens: m.RingTokens()})
	}
	ring, err := sharding.NewRing(infos)
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range members {
		held := e.counters(m)
		for k, want := range counted {
			replica := slices.Contains(ring.Placement(rf2).Replicas(sharding.KeyToken([][]byte{{byte(k >> 24), byte(k >> 16), byte(k >> 8), byte(k)}})), i)
			got, ok := held[k]
			switch {
			case uncertain[k]:
			case replica && got != want:
				t.Errorf("counter %d on its replica %s: %d, want the %d increments acknowledged", k, m.Name, got, want)
			case !replica && ok:
				t.Errorf("counter %d is still on %s, not a replica, after the cleanup", k, m.Name)
			}
		}
	}
	t.Logf("%s", lastLine(out, "cleanup deleted"))
	e.check(3, true)
	e.repairFindsNothing()

	// The same shard again: refused.
	e.refused("already a member", "shard", "add", "--shard", e.pg[0].URL(), e.pg[3].URL())
}

// TestShardDecommission shrinks a cluster of four shards to three at RF
// 3: a decommission cut short is rolled back with cqlpg shard abort, and
// another one, cut short while streaming, is resumed by running it again.
// Then no decommission may leave fewer shards than the replication factor.
func TestShardDecommission(t *testing.T) {
	e := startElastic(t, 4, 4, 3, 1500)
	shard := []string{"--shard", e.pg[0].URL()}

	// Cut short and rolled back; another operation meanwhile is refused.
	e.killAfter("is leaving at ring version", append([]string{"shard", "decommission", "--stream-throughput", "100", "shard1"}, shard...)...)
	e.refused("a topology operation is in progress: shard1 leaves", append([]string{"shard", "decommission", "shard2"}, shard...)...)
	e.refused("Not safe to run cleanup", append([]string{"cleanup"}, shard...)...)
	if status := e.cqlpg(append([]string{"shard", "status"}, shard...)...); !regexp.MustCompile(`(?m)^UL\s+shard1`).MatchString(status) ||
		!strings.Contains(status, "in progress: shard1 leaves") {
		t.Errorf("cqlpg shard status while shard1 leaves:\n%s", status)
	}
	if out := e.cqlpg(append([]string{"shard", "abort"}, shard...)...); !strings.Contains(out, "rolled back: shard1 leaves") {
		t.Errorf("cqlpg shard abort:\n%s", out)
	}

	// Cut short by a restart of the leaving shard's PostgreSQL, which
	// sends the ranges, under load (lightweight transactions, which lock
	// a partition on one replica, are left out here: see issue 20).
	var restarted string
	e.underLoad("a decommission the sending shard's restart cuts short", func() {
		restarted = e.restartDuring("streamed 16 of", 1, append([]string{"shard", "decommission", "--stream-throughput", "2000", "shard1"}, shard...)...)
	})
	t.Logf("the decommission the restart met:\n%s", restarted)

	// Lightweight transactions through the decommission: compare-and-set
	// increments from both gateways; each key ends at the number applied.
	if err := e.sessions[0].Query("CREATE TABLE elastic.cas (k int PRIMARY KEY, v int)").Exec(); err != nil {
		t.Fatal(err)
	}
	applied := make([]atomic.Int64, 8)
	for k := range applied {
		if err := e.sessions[0].Query("INSERT INTO elastic.cas (k, v) VALUES (?, 0)", k).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	// A CAS write timeout (contention past cas_contention_timeout, as
	// Cassandra answers it) leaves its write's outcome unknown.
	unknown := make([]atomic.Int64, len(applied))
	stopCAS := make(chan struct{})
	var casWG sync.WaitGroup
	for w := range 2 {
		casWG.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stopCAS:
					return
				default:
				}
				k := (i + w) % len(applied)
				var v int
				if err := e.sessions[w].Query("SELECT v FROM elastic.cas WHERE k = ?", k).Consistency(gocql.Consistency(gocql.Serial)).Scan(&v); err != nil {
					t.Errorf("serial read of %d: %v", k, err)
					continue
				}
				m := map[string]any{}
				ok, err := e.sessions[w].Query("UPDATE elastic.cas SET v = ? WHERE k = ? IF v = ?", v+1, k, v).MapScanCAS(m)
				var wto *gocql.RequestErrWriteTimeout
				if errors.As(err, &wto) && wto.WriteType == "CAS" {
					unknown[k].Add(1)
					continue
				}
				if err != nil {
					t.Errorf("compare-and-set of %d: %v", k, err)
					continue
				}
				if ok {
					applied[k].Add(1)
				}
			}
		})
	}

	// Cut short while streaming, under load, and resumed: once by a
	// restart of the leaving shard's PostgreSQL, which sends the ranges,
	// once by killing the command.
	var out string
	e.underLoad("shard decommission", func() {
		e.killAfter("streamed 16 of", append([]string{"shard", "decommission", "--stream-throughput", "2000", "shard1"}, shard...)...)
		out = e.cqlpg(append([]string{"shard", "decommission", "shard1"}, shard...)...)
	})
	close(stopCAS)
	casWG.Wait()
	if !strings.Contains(out, "resuming the decommission of shard1") || !strings.Contains(out, "shard1 leaves the ring") {
		t.Errorf("the resumed decommission:\n%s", out)
	}
	t.Logf("%s", lastLine(out, "waited up to"))
	for k := range applied {
		var v int64
		if err := e.sessions[0].Query("SELECT v FROM elastic.cas WHERE k = ?", k).Consistency(gocql.Consistency(gocql.Serial)).Scan(&v); err != nil || v < applied[k].Load() || v > applied[k].Load()+unknown[k].Load() {
			t.Errorf("key %d: %d after %d compare-and-sets applied and %d unknown (%v)", k, v, applied[k].Load(), unknown[k].Load(), err)
		}
	}
	t.Logf("%s", lastLine(out, " ranges, "))
	if members := e.check(0, false); len(members) != 3 {
		t.Fatalf("%d members after the decommission", len(members))
	}
	e.cqlpg(append([]string{"cleanup"}, shard...)...)
	e.check(2, true)
	e.repairFindsNothing()

	e.refused("Not enough live nodes to maintain replication factor in keyspace elastic (RF = 3, N = 3). Perform a forceful decommission to ignore.",
		append([]string{"shard", "decommission", "shard2"}, shard...)...)
	e.refused("no member is named shard9", append([]string{"shard", "decommission", "shard9"}, shard...)...)
}

// TestShardReplaceRemove replaces a dead shard with a new one, then drops
// another dead one from the ring, at RF 3 on four shards.
func TestShardReplaceRemove(t *testing.T) {
	e := startElastic(t, 5, 4, 3, 1500)
	shard := []string{"--shard", e.pg[0].URL()}
	e.refused("Cannot replace a live node shard1", append([]string{"shard", "replace", "shard1", e.pg[4].URL()}, shard...)...)
	e.refused("shard1 is up: take a live shard out with cqlpg shard decommission shard1",
		append([]string{"shard", "remove", "shard1"}, shard...)...)

	var out string
	e.underLoad("shard replace", func() {
		if err := e.pg[1].Kill(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(500 * time.Millisecond)
		out = e.cqlpg(append([]string{"shard", "replace", "shard1", e.pg[4].URL()}, shard...)...)
	})
	if !strings.Contains(out, "shard4 takes the catalog and the tokens of shard1") || !strings.Contains(out, "shard1 leaves the ring") {
		t.Errorf("the replacement:\n%s", out)
	}
	t.Logf("%s", lastLine(out, " ranges, "))
	e.check(0, false)

	before := e.check(0, false)
	e.underLoad("shard remove", func() {
		if err := e.pg[2].Kill(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		if n := e.hints(before, "shard2"); n == 0 {
			t.Errorf("no hints for shard2, down under load")
		}
		e.refused("shard shard2 is down", append([]string{"shard", "decommission", "shard3"}, shard...)...)
		out = e.cqlpg(append([]string{"shard", "remove", "shard2"}, shard...)...)
	})
	t.Logf("%s", lastLine(out, " ranges, "))
	if members := e.check(0, false); len(members) != 3 {
		t.Fatalf("%d members after the removal", len(members))
	}
	if n := e.hints(before, "shard1", "shard2"); n != 0 {
		t.Errorf("%d hints for shards no longer members", n)
	}
	e.cqlpg(append([]string{"cleanup"}, shard...)...)
	e.check(3, true)
	e.repairFindsNothing()
}

// lastLine returns the last line of out that holds want.
func lastLine(out, want string) string {
	lines := strings.Split(out, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.Contains(lines[i], want) {
			return lines[i]
		}
	}
	return ""
}

// TestAlterReplicationStreams raises a keyspace's replication factor from
// 1 to 3 under load: reads keep the replica that holds the data while the
// gateways stream it to the two new ones (in Cassandra these stay empty
// until a repair), then move to all three, which all hold every row.
func TestAlterReplicationStreams(t *testing.T) {
	e := startElastic(t, 3, 3, 1, 1500)
	shard := []string{"--shard", e.pg[0].URL()}
	conn, err := pgx.Connect(e.ctx, pgschema.GatewayConnString(e.pg[0].URL()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(e.ctx)
	// A topology operation waits for a replication change to end: with
	// one recorded in the catalog (the gateways do not reload it, since
	// the schema version stays), a decommission is refused.
	setFrom := func(from string) {
		for _, pg := range e.pg {
			c, err := pgx.Connect(e.ctx, pgschema.GatewayConnString(pg.URL()))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Exec(e.ctx, "UPDATE cqlpg.keyspaces SET replication_from = "+from+" WHERE keyspace_name = 'elastic'"); err != nil {
				t.Fatal(err)
			}
			c.Close(e.ctx)
		}
	}
	setFrom(`'{"class": "org.apache.cassandra.locator.SimpleStrategy", "replication_factor": "1"}'`)
	e.refused("the replication of keyspace elastic changes", append([]string{"shard", "decommission", "shard2"}, shard...)...)
	setFrom("NULL")

	// Counters, incremented before and through the change, end on each
	// of the three replicas with exactly the increments acknowledged.
	if err := e.sessions[0].Query("CREATE TABLE elastic.c (k int PRIMARY KEY, n counter)").Exec(); err != nil {
		t.Fatal(err)
	}
	counted := make([]atomic.Int64, 20)
	increment := func(w, i int) {
		k := (i*3 + w) % len(counted)
		if err := e.sessions[w%2].Query("UPDATE elastic.c SET n = n + 1 WHERE k = ?", k).Exec(); err != nil {
			t.Errorf("increment of counter %d: %v", k, err)
			return
		}
		counted[k].Add(1)
	}
	for i := range 100 {
		increment(0, i)
	}
	stopCount := make(chan struct{})
	var counting sync.WaitGroup
	for w := range 2 {
		counting.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stopCount:
					return
				default:
				}
				increment(w, i)
				time.Sleep(2 * time.Millisecond)
			}
		})
	}
	e.underLoad("a replication change", func() {
		if err := e.sessions[0].Query("ALTER KEYSPACE elastic WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}").Exec(); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(time.Minute)
		for {
			var streaming bool
			if err := conn.QueryRow(e.ctx, "SELECT replication_from IS NOT NULL FROM cqlpg.keyspaces WHERE keyspace_name = 'elastic'").Scan(&streaming); err != nil {
				t.Fatal(err)
			}
			if !streaming {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the replication change still streams after a minute")
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	close(stopCount)
	counting.Wait()
	e.rf = 3
	for _, m := range e.check(0, false) {
		held := e.counters(m)
		for k := range counted {
			if held[k] != counted[k].Load() {
				t.Errorf("counter %d on %s: %d, want the %d increments acknowledged", k, m.Name, held[k], counted[k].Load())
			}
		}
	}
	e.repairFindsNothing()
}

// TestShardAddInterrupted cuts joins short at RF 3: one rolled back with
// cqlpg shard abort, after which the shard joins again only with --force;
// and one whose new shard's PostgreSQL restarts while it streams, resumed
// by running the command again.
func TestShardAddInterrupted(t *testing.T) {
	e := startElastic(t, 5, 3, 3, 1500)
	shard := []string{"--shard", e.pg[0].URL()}
	e.refused("the new shard", append([]string{"shard", "add", "host=/nonexistent port=1 dbname=none user=none"}, shard...)...)
	// A database that is a cluster of its own (a tool opened on it
	// records it as one) is refused.
	e.cqlpg("shard", "status", "--shard", e.pg[4].URL())
	e.refused("the shard belongs to a cluster (its catalog records the cluster's members)", append([]string{"shard", "add", e.pg[4].URL()}, shard...)...)

	e.killAfter("joins at ring version", append([]string{"shard", "add", "--stream-throughput", "100", e.pg[3].URL()}, shard...)...)
	e.refused("a topology operation is in progress: shard3 joins", append([]string{"shard", "decommission", "shard1"}, shard...)...)
	if out := e.cqlpg(append([]string{"shard", "abort"}, shard...)...); !strings.Contains(out, "rolled back: shard3 joins") {
		t.Errorf("cqlpg shard abort:\n%s", out)
	}
	e.refused("--force", append([]string{"shard", "add", e.pg[3].URL()}, shard...)...)

	var first, second string
	e.underLoad("an interrupted join", func() {
		first = e.restartDuring("streamed 16 of", 3, append([]string{"shard", "add", "--force", "--stream-throughput", "3000", e.pg[3].URL()}, shard...)...)
		second = e.cqlpg(append([]string{"shard", "add", e.pg[3].URL()}, shard...)...)
	})
	t.Logf("the join the restart met:\n%s", first)
	if !strings.Contains(second, "resuming the join of shard3") || !strings.Contains(second, "shard3 is a normal member") {
		t.Errorf("the join run again:\n%s", second)
	}
	e.check(0, false)
	e.cqlpg(append([]string{"cleanup"}, shard...)...)
	e.check(3, true)
}

// lockedBuffer is a buffer a command writes while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
