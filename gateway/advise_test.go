package gateway_test

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlpg/cqlpg/gateway"
	"github.com/cqlpg/cqlpg/gateway/advise"
)

// fill writes n rows with a write per row, batched by partition.
func fill(t *testing.T, sess *gocql.Session, insert string, n int, args func(i int) []any) {
	t.Helper()
	batch := sess.NewBatch(gocql.UnloggedBatch)
	for i := range n {
		batch.Query(insert, args(i)...)
		if batch.Size() == 200 || i == n-1 {
			if err := sess.ExecuteBatch(batch); err != nil {
				t.Fatal(err)
			}
			batch = sess.NewBatch(gocql.UnloggedBatch)
		}
	}
}

// TestAdvisor builds tables that each break one of the seeds' rules, and
// one that follows them, and checks what the advisor finds: the right
// finding with its evidence on each, none on the good one.
func TestAdvisor(t *testing.T) {
	sess := session(t, "")
	exec(t, sess, "DROP KEYSPACE IF EXISTS adv",
		"CREATE KEYSPACE adv WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE adv.by_status (status text, id int, note text, PRIMARY KEY (status, id))",
		"CREATE TABLE adv.skewed (k int, c int, v text, PRIMARY KEY (k, c))",
		"CREATE TABLE adv.counted (id bigint PRIMARY KEY, v text)",
		"CREATE TABLE adv.deleted (k int, c int, v text, PRIMARY KEY (k, c))",
		"CREATE TABLE adv.good (id uuid PRIMARY KEY, v text)",
		"CREATE TABLE adv.expiring (k int, c int, v text, PRIMARY KEY (k, c))",
		"CREATE TABLE adv.indexed (id uuid PRIMARY KEY, grp int, v text)",
		"CREATE INDEX ON adv.indexed (grp)")
	statuses := []string{"new", "paid", "shipped"}
	fill(t, sess, "INSERT INTO adv.by_status (status, id, note) VALUES (?, ?, 'some order')", 30000,
		func(i int) []any { return []any{statuses[i%3], i} })
	// Half the rows in partition 0, the rest over 500 partitions; one
	// partition of some 250 KB.
	fill(t, sess, "INSERT INTO adv.skewed (k, c, v) VALUES (?, ?, '"+strings.Repeat("x", 100)+"')", 5000,
		func(i int) []any {
			if i%2 == 0 {
				return []any{0, i}
			}
			return []any{1 + i%500, i}
		})
	fill(t, sess, "INSERT INTO adv.counted (id, v) VALUES (?, 'v')", 5000, func(i int) []any { return []any{int64(i + 1)} })
	fill(t, sess, "INSERT INTO adv.deleted (k, c, v) VALUES (?, ?, 'v')", 3000, func(i int) []any { return []any{i % 300, i} })
	fill(t, sess, "DELETE FROM adv.deleted WHERE k = ? AND c = ?", 3000, func(i int) []any {
		if i%3 == 0 {
			return []any{i % 300, i + 1} // a row never written: a deletion all the same
		}
		return []any{i % 300, i}
	})
	fill(t, sess, "INSERT INTO adv.good (id, v) VALUES (?, 'v')", 3000, func(int) []any { return []any{gocql.TimeUUID()} })
	// An index on a column of 10 values over 1,000 rows: each lookup
	// matches 100 rows, one of which says 'rare'.
	fill(t, sess, "INSERT INTO adv.indexed (id, grp, v) VALUES (?, ?, ?)", 1000, func(i int) []any {
		v := "common"
		if i < 10 {
			v = "rare"
		}
		return []any{gocql.TimeUUID(), i % 10, v}
	})
	// Rows that expire at once and wait for the sweeper.
	fill(t, sess, "INSERT INTO adv.expiring (k, c, v) VALUES (?, ?, 'v') USING TTL 1", 2000, func(i int) []any { return []any{i % 100, i} })
	time.Sleep(2100 * time.Millisecond)
	// A partition sliced away one range at a time: 150 range deletions.
	fill(t, sess, "DELETE FROM adv.deleted WHERE k = 1000 AND c > ? AND c < ?", 150, func(i int) []any { return []any{i * 10, i*10 + 5} })

	rep, err := advise.Run(context.Background(), gw.Cluster(), advise.Options{Keyspace: "adv", PartitionWarn: 100 << 10, PartitionLimit: 10 << 20})
	if err != nil {
		t.Fatal(err)
	}
	found := map[string][]advise.Finding{}
	for _, f := range rep.Findings {
		found[f.Table] = append(found[f.Table], f)
		t.Logf("%s %s %s: %s", f.Table, f.Kind, f.Severity, f.Evidence)
	}
	if len(rep.Skipped) > 0 {
		t.Errorf("skipped: %q", rep.Skipped)
	}
	has := func(table, kind, evidence string) {
		t.Helper()
		if !slices.ContainsFunc(found[table], func(f advise.Finding) bool {
			return f.Kind == kind && strings.Contains(f.Evidence, evidence) && f.Rule != "" && f.Advice != ""
		}) {
			t.Errorf("%s: no %s finding with evidence %q: %+v", table, kind, evidence, found[table])
		}
	}
	has("by_status", advise.KindFewKeys, "in 3 distinct partitions")
	has("skewed", advise.KindHotKey, "holds 50% of the table's rows")
	has("skewed", advise.KindLargePartition, "largest partitions, estimated from Postgres statistics: token ")
	has("counted", advise.KindMonotonicKey, "partition key id is an integer that grows with the rows written")
	has("deleted", advise.KindTombstones, "of the rows sampled are deletions holding nothing live")
	has("deleted", advise.KindTombstones, "partitions holding the most partition and range deletions: token ")
	has("expiring", advise.KindExpiredWaiting, "100% of the rows sampled expired and wait for the sweeper")
	for _, table := range []string{"good", "indexed"} {
		if f := found[table]; len(f) > 0 {
			t.Errorf("%s, which follows the rules, has findings: %+v", table, f)
		}
	}
	// Measured rather than estimated: partition 0 of skewed holds 2,500
	// rows.
	exact, err := advise.Run(context.Background(), gw.Cluster(), advise.Options{Keyspace: "adv", Table: "skewed",
		PartitionWarn: 100 << 10, Exact: true})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(exact.Findings, func(f advise.Finding) bool {
		return f.Kind == advise.KindLargePartition && strings.Contains(f.Evidence, "largest partitions, measured: token ") &&
			strings.Contains(f.Evidence, "(50% of the table's rows)")
	}) {
		t.Errorf("exact sizes: %+v", exact.Findings)
	}

	// The web view shows the same findings, and the gateway's metrics
	// count them by kind.
	s := uiGateway(t, func(c *gateway.Config) { c.AdviseInterval = 200 * time.Millisecond })
	us := sessionOn(t, s, "")
	// A hot key under load: half of 6,000 reads ask for one partition.
	exec(t, us, "CREATE TABLE adv.hotread (id int PRIMARY KEY, v text)")
	fill(t, us, "INSERT INTO adv.hotread (id, v) VALUES (?, 'v')", 1000, func(i int) []any { return []any{i} })
	var v string
	for i := range 6000 {
		id := 7
		if i%2 == 1 {
			id = i % 1000
		}
		if err := us.Query("SELECT v FROM adv.hotread WHERE id = ?", id).Scan(&v); err != nil {
			t.Fatal(err)
		}
	}
	// A query that filters, prepared and run 20 times.
	for range 20 {
		if err := us.Query("SELECT id FROM adv.hotread WHERE v = ? ALLOW FILTERING", "none").Exec(); err != nil {
			t.Fatal(err)
		}
	}
	// Queries through the index: one that filters the 100 rows a lookup
	// matches down to one, one that returns them all.
	for i := range 10 {
		if err := us.Query("SELECT id FROM adv.indexed WHERE grp = ? AND v = 'rare' ALLOW FILTERING", i).Exec(); err != nil {
			t.Fatal(err)
		}
		if err := us.Query("SELECT id FROM adv.indexed WHERE grp = ?", i).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		metrics := uiPage(t, s, "/metrics")
		if regexp.MustCompile(`(?m)^cqlpg_advisor_findings\{kind="few_partition_keys"\} [1-9]`).MatchString(metrics) &&
			regexp.MustCompile(`(?m)^cqlpg_advisor_findings\{kind="monotonic_key"\} [1-9]`).MatchString(metrics) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no advisor counts in the metrics after 10 s:\n%s", grepLines(metrics, "cqlpg_advisor"))
		}
	}
	page := uiPage(t, s, "/ui/advice?ks=adv&warn_mb=0.09765625")
	for _, want := range []string{`data-kind="few_partition_keys" data-table="adv.by_status"`, `data-kind="hot_partition_key" data-table="adv.skewed"`,
		`data-kind="monotonic_key" data-table="adv.counted"`, `data-kind="tombstone_heavy" data-table="adv.deleted"`,
		`data-kind="large_partition" data-table="adv.skewed"`, `data-kind="hot_partition_traffic" data-table="adv.hotread"`,
		`data-kind="filtering_query" data-table="adv.hotread"`, `data-kind="filtering_query" data-table="adv.indexed"`,
		`data-kind="index_query" data-table="adv.indexed"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the advice page lacks %s", want)
		}
	}
	// The rows an index lookup reads, from the column's statistics.
	for _, want := range []string{
		"WHERE grp = ? AND v = &#39;rare&#39; ALLOW FILTERING&#34;: 10 executions (",
		"1.0 rows returned each, through index indexed_grp_idx, whose lookups match about 100 rows: 100 rows read per row returned",
		"100.0 rows returned each, through index indexed_grp_idx, whose lookups match about 100 rows: 1 rows read per row returned"} {
		if !strings.Contains(page, want) {
			t.Errorf("the advice page lacks %q:\n%s", want, grepLines(page, "indexed"))
		}
	}
	if strings.Contains(page, `data-table="adv.good"`) {
		t.Error("the advice page has findings on the good table")
	}
	if rep.Tables != 7 {
		t.Errorf("%d tables looked at, want 7", rep.Tables)
	}
	t.Logf("advisor pass over %d tables: %v", rep.Tables, rep.Took)
}

// BenchmarkAdvisorForeground measures what an advisor pass costs the
// requests that run meanwhile: the p99 of point reads at 8 clients for 3
// seconds, alone and while the advisor runs passes back to back over a
// keyspace of 200,000 rows, at the background pass's duty of 0.1:
//
//	go test ./gateway -run '^$' -bench AdvisorForeground -benchtime 1x
func BenchmarkAdvisorForeground(b *testing.B) {
	sess := session(b, "")
	exec(b, sess, "CREATE KEYSPACE IF NOT EXISTS advbench WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE IF NOT EXISTS advbench.t (k int, c int, v text, PRIMARY KEY (k, c))")
	var have int
	if err := sess.Query("SELECT count(*) FROM advbench.t").Scan(&have); err != nil {
		b.Fatal(err)
	}
	if have < 200000 {
		for k := range 2000 {
			batch := sess.NewBatch(gocql.UnloggedBatch)
			for c := range 100 {
				batch.Query("INSERT INTO advbench.t (k, c, v) VALUES (?, ?, 'some value')", k, c)
			}
			if err := sess.ExecuteBatch(batch); err != nil {
				b.Fatal(err)
			}
		}
	}
	p99 := func(withAdvisor bool) time.Duration {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		passes := 0
		done := make(chan struct{})
		if withAdvisor {
			go func() {
				defer close(done)
				for ctx.Err() == nil {
					if _, err := advise.Run(ctx, gw.Cluster(), advise.Options{Keyspace: "advbench", Duty: 0.1}); err == nil {
						passes++
					}
				}
			}()
		} else {
			close(done)
		}
		var mu sync.Mutex
		var lat []time.Duration
		var wg sync.WaitGroup
		stop := time.Now().Add(3 * time.Second)
		for w := range 8 {
			wg.Go(func() {
				var v string
				for i := 0; time.Now().Before(stop); i++ {
					start := time.Now()
					if err := sess.Query("SELECT v FROM advbench.t WHERE k = ? AND c = ?", (w*7919+i)%2000, i%100).Scan(&v); err != nil {
						b.Error(err)
						return
					}
					d := time.Since(start)
					mu.Lock()
					lat = append(lat, d)
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		cancel()
		<-done
		slices.Sort(lat)
		b.Logf("advisor %v: %d reads, %d passes, p50 %v, p99 %v", withAdvisor, len(lat), passes, lat[len(lat)/2], lat[len(lat)*99/100])
		return lat[len(lat)*99/100]
	}
	for range b.N {
		alone, during := p99(false), p99(true)
		b.ReportMetric(float64(alone.Microseconds()), "p99-alone-µs")
		b.ReportMetric(float64(during.Microseconds()), "p99-during-µs")
	}
}
