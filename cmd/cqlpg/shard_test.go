package main_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"github.com/jackc/pgx/v5"

	"github.com/cqlpg/cqlpg/gateway"
	"github.com/cqlpg/cqlpg/gateway/cluster"
	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/sharding"
	"github.com/cqlpg/cqlpg/sharding/localpg"
)

// TestShardAdd grows a cluster of three shards to four with `cqlpg shard
// add`, under a running load of QUORUM writes and QUORUM reads of
// acknowledged keys at RF 2: no request fails, every acknowledged write is
// there afterwards, and every row is on each of its replicas on the new
// ring, the new shard included.
func TestShardAdd(t *testing.T) {
	bin := buildCqlpg(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	clusters, stop, err := localpg.TempClusters(ctx, 4, localpg.Options{})
	if err != nil {
		t.Fatalf("start PostgreSQL: %v", err)
	}
	t.Cleanup(stop)
	cfg := gateway.Config{Listen: "127.0.0.1:0", Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	for _, c := range clusters[:3] {
		cfg.Shards = append(cfg.Shards, cluster.ShardConfig{URL: c.URL()})
	}
	srv, err := gateway.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve()
	defer srv.Shutdown(context.Background())
	host, port, _ := net.SplitHostPort(srv.Addr().String())
	cc := gocql.NewCluster(host)
	cc.Port, _ = strconv.Atoi(port)
	cc.Timeout = 10 * time.Second
	cc.Consistency = gocql.Quorum
	sess, err := cc.CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	for _, q := range []string{
		"CREATE KEYSPACE grow WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 2}",
		"CREATE TABLE grow.t (k int PRIMARY KEY, v text)",
	} {
		if err := sess.Query(q).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	const preload = 2000
	for k := range preload {
		if err := sess.Query("INSERT INTO grow.t (k, v) VALUES (?, ?)", k, fmt.Sprint(k)).Exec(); err != nil {
			t.Fatal(err)
		}
	}

	// The load: writers of new keys, readers of acknowledged ones.
	var (
		acked    sync.Map
		next     atomic.Int64
		ops      atomic.Int64
		failures = make(chan error, 64)
		done     = make(chan struct{})
		wg       sync.WaitGroup
	)
	next.Store(preload)
	for w := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-done:
					return
				default:
				}
				if w%2 == 0 {
					k := int(next.Add(1))
					if err := sess.Query("INSERT INTO grow.t (k, v) VALUES (?, ?)", k, fmt.Sprint(k)).Exec(); err != nil {
						select {
						case failures <- fmt.Errorf("write %d: %w", k, err):
						default:
						}
						continue
					}
					acked.Store(k, true)
				} else {
					k := i * 7 % preload
					var v string
					if err := sess.Query("SELECT v FROM grow.t WHERE k = ?", k).Scan(&v); err != nil || v != fmt.Sprint(k) {
						select {
						case failures <- fmt.Errorf("read %d: %q, %v", k, v, err):
						default:
						}
					}
				}
				ops.Add(1)
			}
		})
	}

	start := time.Now()
	out, err := exec.Command(bin, "shard", "add", "--shard", clusters[0].URL(), clusters[3].URL()).CombinedOutput()
	took := time.Since(start)
	close(done)
	wg.Wait()
	close(failures)
	if err != nil {
		t.Fatalf("cqlpg shard add: %v\n%s", err, out)
	}
	for err := range failures {
		t.Errorf("during the join: %v", err)
	}
	if !strings.Contains(string(out), "shard3 is a normal member at ring version 3") || !strings.Contains(string(out), "streamed") {
		t.Errorf("the join's progress:\n%s", out)
	}
	t.Logf("joined in %v beside %d requests", took, ops.Load())

	// Every row is on each of its replicas on the new ring.
	conns := make([]*pgx.Conn, 4)
	for i, c := range clusters {
		if conns[i], err = pgx.Connect(ctx, pgschema.GatewayConnString(c.URL())); err != nil {
			t.Fatal(err)
		}
		defer conns[i].Close(ctx)
	}
	members, version, err := pgschema.LoadMembers(ctx, conns[0])
	if err != nil || version != 3 || len(members) != 4 {
		t.Fatalf("members after the join: %+v at version %d, %v", members, version, err)
	}
	var infos []sharding.ShardInfo
	for _, m := range members {
		info := sharding.ShardInfo{HostID: m.HostID, Name: m.Name, DC: m.Datacenter, Rack: m.Rack}
		for _, tok := range m.Tokens {
			info.Tokens = append(info.Tokens, sharding.Token(tok))
		}
		infos = append(infos, info)
	}
	ring, err := sharding.NewRing(infos)
	if err != nil {
		t.Fatal(err)
	}
	placement := ring.Placement(sharding.Replication{Class: sharding.SimpleStrategyClass, Factor: 2})
	held := make([]map[int]bool, 4)
	for i, conn := range conns {
		held[i] = map[int]bool{}
		rows, err := conn.Query(ctx, "SELECT k FROM grow.t")
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var k int
			rows.Scan(&k)
			held[i][k] = true
		}
		if rows.Err() != nil {
			t.Fatal(rows.Err())
		}
	}
	keys := []int{}
	for k := range preload {
		keys = append(keys, k)
	}
	acked.Range(func(k, _ any) bool { keys = append(keys, k.(int)); return true })
	missing := 0
	for _, k := range keys {
		var kb [4]byte
		kb[0], kb[1], kb[2], kb[3] = byte(k>>24), byte(k>>16), byte(k>>8), byte(k)
		for _, r := range placement.Replicas(sharding.KeyToken([][]byte{kb[:]})) {
			if !held[r][k] {
				missing++
				if missing < 5 {
					t.Errorf("key %d is not on its replica %s", k, members[r].Name)
				}
			}
		}
	}
	if missing > 0 || len(held[3]) == 0 {
		t.Fatalf("%d rows missing from their replicas; the new shard holds %d", missing, len(held[3]))
	}

	// Reads see every acknowledged write, and the status shows four.
	for _, k := range keys {
		var v string
		if err := sess.Query("SELECT v FROM grow.t WHERE k = ?", k).Scan(&v); err != nil || v != fmt.Sprint(k) {
			t.Fatalf("after the join, key %d: %q, %v", k, v, err)
		}
	}
	status, err := exec.Command(bin, "shard", "status", "--shard", clusters[1].URL()).CombinedOutput()
	if n := len(regexp.MustCompile(`(?m)^UN\s+shard\d`).FindAll(status, -1)); err != nil || n != 4 {
		t.Errorf("cqlpg shard status after the join (%v):\n%s", err, status)
	}
	t.Logf("%d keys checked on their replicas; the new shard holds %d rows", len(keys), len(held[3]))

	// The same shard again, and a second join while none runs but of a
	// member: refused.
	if out, err := exec.Command(bin, "shard", "add", "--shard", clusters[0].URL(), clusters[3].URL()).CombinedOutput(); err == nil ||
		!strings.Contains(string(out), "already a member") {
		t.Errorf("adding a member again: %v\n%s", err, out)
	}
}
