package gateway_test

import (
	"context"
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
)

// TestViewsUnderFailure moves rows between view keys from six clients on
// two gateways, with updates, cell and row deletions and expiring writes,
// while a shard is killed and restarted. Base and view partitions have
// two replicas of three shards, so most view updates cross shards. Once
// the load stops and hints and view logs are empty, the view holds
// exactly the rows its base defines, read at ALL.
func TestViewsUnderFailure(t *testing.T) {
	fc := startFailureClusterWith(t, func(c *gateway.Config) { c.WriteTimeout = 2 * time.Second })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg := gateway.Config{Listen: "127.0.0.1:0", Log: testLogger(), RequestTimeout: 4 * time.Second,
		WriteTimeout: 2 * time.Second, ReadTimeout: time.Second, RangeTimeout: 2 * time.Second}
	for _, c := range fc.clusters {
		cfg.Shards = append(cfg.Shards, cluster.ShardConfig{URL: c.URL()})
	}
	second, err := gateway.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	go second.Serve()
	t.Cleanup(func() { second.Shutdown(context.Background()) })

	sess := sessionOn(t, fc.gw, "")
	exec(t, sess, "CREATE KEYSPACE vf WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 2}",
		"CREATE TABLE vf.t (k int, c int, v int, w int, PRIMARY KEY (k, c))",
		"CREATE MATERIALIZED VIEW vf.by_v AS SELECT * FROM vf.t WHERE v IS NOT NULL AND k IS NOT NULL AND c IS NOT NULL PRIMARY KEY (v, k, c)",
		"CREATE MATERIALIZED VIEW vf.by_c AS SELECT k, c FROM vf.t WHERE k IS NOT NULL AND c IS NOT NULL PRIMARY KEY (c, k)")
	sessions := []*gocql.Session{sess, sessionOn(t, second, "")}

	var stop atomic.Bool
	var writes, failed atomic.Int64
	var workers sync.WaitGroup
	for w := range 6 {
		s := sessions[w%2]
		workers.Go(func() {
			for !stop.Load() {
				k, c, v := rand.IntN(20), rand.IntN(5), rand.IntN(8)
				var q *gocql.Query
				switch r := rand.IntN(20); {
				case r < 12:
					q = s.Query("UPDATE vf.t SET v = ?, w = ? WHERE k = ? AND c = ?", v, w, k, c)
				case r < 14:
					q = s.Query("INSERT INTO vf.t (k, c, v) VALUES (?, ?, ?) USING TTL 2", k, c, v)
				case r < 16:
					q = s.Query("DELETE v FROM vf.t WHERE k = ? AND c = ?", k, c)
				case r < 18:
					q = s.Query("DELETE FROM vf.t WHERE k = ? AND c = ?", k, c)
				default:
					q = s.Query("UPDATE vf.t SET w = ? WHERE k = ? AND c = ?", v, k, c)
				}
				if err := q.Consistency(gocql.One).Exec(); err != nil {
					failed.Add(1)
					continue
				}
				writes.Add(1)
			}
		})
	}
	time.Sleep(1500 * time.Millisecond)
	const victim = 2
	if err := fc.clusters[victim].Kill(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	if err := fc.clusters[victim].Restart(context.Background()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	stop.Store(true)
	workers.Wait()
	t.Logf("%d writes acknowledged, %d failed", writes.Load(), failed.Load())
	if writes.Load() < 200 {
		t.Fatalf("only %d writes", writes.Load())
	}

	// Quiet: no hint and no view update left anywhere.
	deadline := time.Now().Add(45 * time.Second)
	for {
		pending := 0
		for _, c := range fc.clusters {
			conn, err := pgx.Connect(context.Background(), c.URL())
			if err != nil {
				pending++
				continue
			}
			var n int
			if err := conn.QueryRow(context.Background(), "SELECT (SELECT count(*) FROM cqlpg.hints) + (SELECT count(*) FROM cqlpg.view_log)").Scan(&n); err != nil {
				n = 1
			}
			conn.Close(context.Background())
			pending += n
		}
		if pending == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d hints and view updates still pending after 45 s", pending)
		}
		time.Sleep(200 * time.Millisecond)
	}

	// Each replica, read in SQL before any read through the gateway can
	// repair it: every base row on two shards alike, every view row its
	// base defines on two shards, and no other.
	live := func(col string) string {
		return fmt.Sprintf(`CASE WHEN "%[1]s" IS NOT NULL AND ("%[1]s$exp" IS NULL OR "%[1]s$exp" > extract(epoch from now())) THEN "%[1]s"::text ELSE 'null' END`, col)
	}
	marker := `("_row_wt" IS NOT NULL AND ("_row_exp" IS NULL OR "_row_exp" > extract(epoch from now())))`
	replicaRows := map[string]map[string]int{}
	for _, q := range []struct{ name, sql string }{
		{"base", fmt.Sprintf(`SELECT %s || ':' || k || ':' || c || ':' || %s FROM vf.t WHERE %s OR %s <> 'null' OR %s <> 'null'`,
			live("v"), live("w"), marker, live("v"), live("w"))},
		{"by_v", fmt.Sprintf(`SELECT v || ':' || k || ':' || c || ':' || %s FROM vf.by_v WHERE %s`, live("w"), marker)},
		{"by_c", fmt.Sprintf(`SELECT c || ':' || k FROM vf.by_c WHERE %s OR cqlpg.view_cells_live("_base_cells", extract(epoch from now())::integer)`, marker)},
	} {
		replicaRows[q.name] = map[string]int{}
		for _, c := range fc.clusters {
			conn, err := pgx.Connect(context.Background(), c.URL())
			if err != nil {
				t.Fatal(err)
			}
			rows, _ := conn.Query(context.Background(), q.sql)
			var r string
			_, err = pgx.ForEachRow(rows, []any{&r}, func() error { replicaRows[q.name][r]++; return nil })
			conn.Close(context.Background())
			if err != nil {
				t.Fatalf("%s: %v", q.name, err)
			}
		}
	}
	wantReplicas := map[string]map[string]int{"by_v": {}, "by_c": {}}
	for r, n := range replicaRows["base"] {
		if n != 2 {
			t.Errorf("base row %s on %d shards", r, n)
		}
		parts := strings.Split(r, ":")
		if parts[0] != "null" {
			wantReplicas["by_v"][r] = 2
		}
		wantReplicas["by_c"][parts[2]+":"+parts[1]] = 2
	}
	for _, view := range []string{"by_v", "by_c"} {
		for r, n := range replicaRows[view] {
			if wantReplicas[view][r] != n {
				t.Errorf("%s row %s on %d shards, want %d", view, r, n, wantReplicas[view][r])
			}
		}
		for r, n := range wantReplicas[view] {
			if replicaRows[view][r] == 0 {
				t.Errorf("%s row %s on no shard, want %d", view, r, n)
			}
		}
	}

	// Rows read at ALL, each as its columns joined by ':', nulls as "null".
	all := func(q string, n int) []string {
		t.Helper()
		iter := sess.Query(q).Consistency(gocql.All).Iter()
		var out []string
		vals := make([]*int, n)
		dest := make([]any, n)
		for i := range vals {
			dest[i] = &vals[i]
		}
		for iter.Scan(dest...) {
			row := ""
			for i, v := range vals {
				if i > 0 {
					row += ":"
				}
				if v == nil {
					row += "null"
				} else {
					row += fmt.Sprint(*v)
				}
			}
			out = append(out, row)
		}
		if err := iter.Close(); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		slices.Sort(out)
		return out
	}
	// What the base defines: its rows with a v, by (v, k, c); every row by
	// (c, k).
	base := all("SELECT v, k, c, w FROM vf.t", 4)
	var wantByV, wantByC []string
	for _, r := range base {
		var k, c int
		var v, w string
		fmt.Sscanf(strings.ReplaceAll(r, ":", " "), "%s %d %d %s", &v, &k, &c, &w)
		if v != "null" {
			wantByV = append(wantByV, r)
		}
		wantByC = append(wantByC, fmt.Sprintf("%d:%d", c, k))
	}
	slices.Sort(wantByV)
	slices.Sort(wantByC)
	byV := all("SELECT v, k, c, w FROM vf.by_v", 4)
	if !slices.Equal(byV, wantByV) {
		t.Errorf("by_v holds %d rows, the base defines %d; differences: %q", len(byV), len(wantByV), firstDiff(byV, wantByV))
	}
	byC := all("SELECT c, k FROM vf.by_c", 2)
	if !slices.Equal(byC, wantByC) {
		t.Errorf("by_c holds %d rows, the base defines %d; differences: %q", len(byC), len(wantByC), firstDiff(byC, wantByC))
	}
	t.Logf("base %d rows, by_v %d, by_c %d", len(base), len(byV), len(byC))
}

// firstDiff returns the first few rows in one sorted list and not in the
// other, each marked with the side it is on.
func firstDiff(got, want []string) []string {
	var out []string
	for _, g := range got {
		if !slices.Contains(want, g) && len(out) < 5 {
			out = append(out, "+"+g)
		}
	}
	for _, w := range want {
		if !slices.Contains(got, w) && len(out) < 10 {
			out = append(out, "-"+w)
		}
	}
	return out
}
