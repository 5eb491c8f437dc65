package main_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"github.com/jackc/pgx/v5"

	"github.com/cqlpg/cqlpg/gateway"
	"github.com/cqlpg/cqlpg/gateway/cluster"
	"github.com/cqlpg/cqlpg/sharding/localpg"
)

// TestRepairAndRingCommands runs `cqlpg repair`, `cqlpg ring` and `cqlpg
// shard status` on three shards a gateway has written to: repair brings a
// replica that lost rows level with the others, printing its progress on
// stderr, ring prints the shards, their tokens and ownership, and shard
// status the members as nodetool status does, given one shard's URL.
func TestRepairAndRingCommands(t *testing.T) {
	bin := buildCqlpg(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	clusters, stop, err := localpg.TempClusters(ctx, 3, localpg.Options{})
	if err != nil {
		t.Fatalf("start PostgreSQL: %v", err)
	}
	t.Cleanup(stop)
	cfg := gateway.Config{Listen: "127.0.0.1:0", Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	var args []string
	for _, c := range clusters {
		cfg.Shards = append(cfg.Shards, cluster.ShardConfig{URL: c.URL()})
		args = append(args, "--shard", c.URL())
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
	sess, err := cc.CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	for _, q := range []string{
		"CREATE KEYSPACE rk WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}",
		"CREATE TABLE rk.t (k int, c int, v text, PRIMARY KEY (k, c))",
	} {
		if err := sess.Query(q).Exec(); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	b := sess.NewBatch(gocql.UnloggedBatch)
	for k := range 300 {
		b.Query("INSERT INTO rk.t (k, c, v) VALUES (?, ?, ?)", k/3, k%3, strconv.Itoa(k))
	}
	if err := sess.ExecuteBatch(b); err != nil {
		t.Fatal(err)
	}
	dump := func(url string) []string { return shardRows(t, url, "rk.t") }
	conn, err := pgx.Connect(ctx, clusters[1].URL())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "DELETE FROM rk.t WHERE k % 4 = 0"); err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)
	if slices.Equal(dump(clusters[0].URL()), dump(clusters[1].URL())) {
		t.Fatal("the replicas agree before the repair")
	}

	stdout, stderr, code := runCqlpg(bin, append(append([]string{"repair"}, args...), "rk.t")...)
	if code != 0 {
		t.Fatalf("cqlpg repair: exit %d\n%s%s", code, stdout, stderr)
	}
	// Not a terminal: plain progress lines, the last one complete.
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if !regexp.MustCompile(`^ranges 48/48 100%, \d+ differed, 75 rows moved, rk\.t$`).MatchString(lines[len(lines)-1]) {
		t.Errorf("progress on stderr:\n%s", stderr)
	}
	if !regexp.MustCompile(`^repaired rk\.t: 1 tables, 48 token ranges, \d+ differed, 75 rows moved, in .+\n$`).MatchString(stdout) {
		t.Errorf("summary: %q", stdout)
	}
	want := dump(clusters[0].URL())
	for _, c := range clusters[1:] {
		if got := dump(c.URL()); !slices.Equal(got, want) {
			t.Errorf("replicas differ after the repair: %d rows against %d", len(got), len(want))
		}
	}

	// Names that do not exist are refused.
	out, err := exec.Command(bin, append(append([]string{"repair"}, args...), "nope")...).CombinedOutput()
	if code := exitCode(err); code != 1 || !strings.Contains(string(out), "keyspace nope does not exist") {
		t.Errorf("repair of a missing keyspace: exit %d, %s", code, out)
	}
	if out, err := exec.Command(bin, "repair", "a.b.c").CombinedOutput(); exitCode(err) != 2 {
		t.Errorf("repair a.b.c: exit %d, %s", exitCode(err), out)
	}

	// The ring: three shards of 16 tokens that own the whole ring.
	out, err = exec.Command(bin, append([]string{"ring"}, args...)...).Output()
	if err != nil {
		t.Fatalf("cqlpg ring: %v", err)
	}
	shardLine := regexp.MustCompile(`(?m)^(shard\d)\s+[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\s+datacenter1\s+rack1\s+16\s+(\d+\.\d\d)%$`)
	shards := shardLine.FindAllStringSubmatch(string(out), -1)
	total := 0.0
	for _, m := range shards {
		f, _ := strconv.ParseFloat(m[2], 64)
		total += f
	}
	if len(shards) != 3 || total < 99.9 || total > 100.1 {
		t.Errorf("ring: %d shards owning %.2f%%:\n%s", len(shards), total, out)
	}
	if n := len(regexp.MustCompile(`(?m)^\s*-?\d+\s+shard\d\s+\d+\.\d\d%`).FindAllString(string(out), -1)); n != 48 {
		t.Errorf("ring lists %d tokens, want 48:\n%s", n, out)
	}

	// The members as nodetool status shows them, through one shard's URL:
	// up and normal, with their data, tokens and share; with the
	// keyspace, each replicates all of it (RF 3 on three shards).
	for _, tc := range []struct {
		args []string
		owns string
	}{
		{[]string{"shard", "status", "--shard", clusters[1].URL()}, `\d+\.\d%`},
		{[]string{"shard", "status", "--shard", clusters[1].URL(), "rk"}, `100\.0%`},
	} {
		out, err := exec.Command(bin, tc.args...).CombinedOutput()
		if err != nil {
			t.Fatalf("cqlpg %s: %v\n%s", strings.Join(tc.args[:2], " "), err, out)
		}
		line := regexp.MustCompile(`(?m)^UN\s+shard\d\s+\d+\.\d [KM]iB\s+16\s+` + tc.owns +
			`\s+[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\s+rack1$`)
		if n := len(line.FindAllString(string(out), -1)); n != 3 || !strings.Contains(string(out), "Datacenter: datacenter1") ||
			!strings.Contains(string(out), "Ring version 1") {
			t.Errorf("cqlpg %v: %d shard lines, want 3:\n%s", tc.args[2:], n, out)
		}
	}
	if out, err := exec.Command(bin, "shard", "status", "--shard", clusters[0].URL(), "nope").CombinedOutput(); exitCode(err) != 1 ||
		!strings.Contains(string(out), "keyspace nope does not exist") {
		t.Errorf("shard status of a missing keyspace: exit %d, %s", exitCode(err), out)
	}
}

func exitCode(err error) int {
	if err == nil {
		return 0
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	return -1
}
