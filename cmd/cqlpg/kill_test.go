package main_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"github.com/jackc/pgx/v5"

	"github.com/cqlpg/cqlpg/sharding/localpg"
)

// onlySession is a gocql session on one `cqlpg serve`, which does not
// follow the other gateways the shards list (a killed one among them).
func (p *serveProcess) onlySession(t *testing.T) *gocql.Session {
	t.Helper()
	cfg := gocql.NewCluster("127.0.0.1")
	cfg.Port = p.cqlPort
	cfg.Timeout = 10 * time.Second
	cfg.HostFilter = gocql.HostFilterFunc(func(h *gocql.HostInfo) bool { return h.Port() == p.cqlPort })
	sess, err := cfg.CreateSession()
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, p.output.String())
	}
	t.Cleanup(sess.Close)
	return sess
}

// killedBatch is a LOGGED batch sent to the killed gateway: its rows
// (k, c) and whether it was acknowledged.
type killedBatch struct {
	id    int
	rows  [][2]int
	acked bool
}

// TestServeKilledDuringWrites kills `cqlpg serve` with SIGKILL while
// clients write at QUORUM and send LOGGED batches of several partitions,
// then starts another on the same shards. Once it has replayed the batch
// log, every acknowledged write is there, and every LOGGED batch,
// acknowledged or not, is there whole or not at all.
func TestServeKilledDuringWrites(t *testing.T) {
	bin := buildCqlpg(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	clusters, stop, err := localpg.TempClusters(ctx, 3, localpg.Options{})
	if err != nil {
		t.Fatalf("start PostgreSQL: %v", err)
	}
	t.Cleanup(stop)
	// A request timeout of 2 s makes batch log records abandoned after
	// 4 s, twice it.
	args := []string{"--request-timeout", "2s"}
	for _, c := range clusters {
		args = append(args, "--shard", c.URL())
	}
	first := startServeWith(t, bin, args...)
	sess := first.onlySession(t)
	for _, q := range []string{
		"CREATE KEYSPACE killed WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}",
		"CREATE TABLE killed.t (k int, c int, v int, PRIMARY KEY (k, c))",
	} {
		if err := sess.Query(q).Exec(); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}

	var (
		mu      sync.Mutex
		acked   = map[[2]int]int{} // plain writes acknowledged: (k, c) → v
		batches []*killedBatch
		killed  atomic.Bool
		nextID  atomic.Int64
		wg      sync.WaitGroup
	)
	for w := range 4 {
		wg.Go(func() {
			for seq := 1; ; seq++ {
				k, c := rand.IntN(100), w*1_000_000+seq
				err := sess.Query("INSERT INTO killed.t (k, c, v) VALUES (?, ?, ?)", k, c, seq).Consistency(gocql.Quorum).Exec()
				if err != nil {
					if killed.Load() {
						return
					}
					t.Errorf("write before the kill: %v", err)
					return
				}
				mu.Lock()
				acked[[2]int{k, c}] = seq
				mu.Unlock()
			}
		})
	}
	for range 3 {
		wg.Go(func() {
			for {
				b := &killedBatch{id: int(nextID.Add(1))}
				batch := sess.NewBatch(gocql.LoggedBatch)
				batch.SetConsistency(gocql.Quorum)
				for j, k := range rand.Perm(100)[:4] {
					// Batches write negative clustering keys, their own.
					c := -(b.id*10 + j)
					b.rows = append(b.rows, [2]int{k, c})
					batch.Query("INSERT INTO killed.t (k, c, v) VALUES (?, ?, ?)", k, c, b.id)
				}
				mu.Lock()
				batches = append(batches, b)
				mu.Unlock()
				err := sess.ExecuteBatch(batch)
				if err != nil {
					if killed.Load() {
						return
					}
					t.Errorf("batch before the kill: %v", err)
					return
				}
				mu.Lock()
				b.acked = true
				mu.Unlock()
			}
		})
	}
	time.Sleep(2 * time.Second)
	killed.Store(true)
	if err := first.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-first.done
	wg.Wait()
	sess.Close()
	if t.Failed() {
		return
	}

	// Another gateway on the same shards replays what the killed one left
	// in the batch log.
	second := startServeWith(t, bin, args...)
	defer second.stop(t)
	restarted := time.Now()
	for _, c := range clusters {
		conn, err := pgx.Connect(ctx, c.URL())
		if err != nil {
			t.Fatal(err)
		}
		for {
			var n int
			if err := conn.QueryRow(ctx, "SELECT count(*) FROM cqlpg.batchlog").Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n == 0 {
				break
			}
			if time.Since(restarted) > time.Minute {
				t.Fatalf("%d batch log records left a minute after the restart", n)
			}
			time.Sleep(100 * time.Millisecond)
		}
		conn.Close(ctx)
	}
	replayed := time.Since(restarted)

	stored := map[[2]int]int{}
	read := second.onlySession(t)
	iter := read.Query("SELECT k, c, v FROM killed.t").Consistency(gocql.All).PageSize(5000).Iter()
	var k, c, v int
	for iter.Scan(&k, &c, &v) {
		stored[[2]int{k, c}] = v
	}
	if err := iter.Close(); err != nil {
		t.Fatal(err)
	}
	for key, want := range acked {
		if got, ok := stored[key]; !ok || got != want {
			t.Errorf("acknowledged write %v = %d lost (found %d, %v)", key, want, got, ok)
		}
	}
	whole, none, ackedBatches := 0, 0, 0
	for _, b := range batches {
		present := 0
		for _, r := range b.rows {
			if got, ok := stored[r]; ok && got == b.id {
				present++
			}
		}
		switch {
		case present == len(b.rows):
			whole++
		case present == 0 && !b.acked:
			none++
		default:
			t.Errorf("LOGGED batch %d (acknowledged %v): %d of its %d rows", b.id, b.acked, present, len(b.rows))
		}
		if b.acked {
			ackedBatches++
		}
	}
	t.Logf("%d writes and %d of %d LOGGED batches acknowledged before SIGKILL; after the restart the batch log was empty in %v; "+
		"%d batches whole, %d absent (all unacknowledged)", len(acked), ackedBatches, len(batches),
		replayed.Round(time.Millisecond), whole, none)
	if len(acked) == 0 || ackedBatches == 0 {
		t.Error(fmt.Sprintf("too little was written before the kill: %d writes, %d batches", len(acked), ackedBatches))
	}
}
