package gateway_test

import (
	"context"
	"log/slog"
	"slices"
	"strings"
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

// TestMembersInCatalog checks that the ring is the cluster's, not each
// gateway's flags': a gateway restarted with a shard more than the cluster
// has (the way a new user tries to grow it) leaves that shard out and
// says so, so that no row becomes unreachable; a gateway given one
// member's URL reaches the others; and every member records the same
// members, which cqlpg.ring shows whole.
func TestMembersInCatalog(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	clusters, stop, err := localpg.TempClusters(ctx, 3, localpg.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	start := func(urls ...string) (*gateway.Server, *lockedBuffer) {
		t.Helper()
		logs := &lockedBuffer{}
		cfg := gateway.Config{Listen: "127.0.0.1:0", Log: slog.New(slog.NewTextHandler(logs, nil))}
		for _, u := range urls {
			cfg.Shards = append(cfg.Shards, cluster.ShardConfig{URL: u})
		}
		s, err := gateway.New(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		go s.Serve()
		return s, logs
	}
	const rows = 2000
	readAll := func(s *gateway.Server, what string) {
		t.Helper()
		sess := sessionOn(t, s, "")
		defer sess.Close()
		for k := range rows {
			var v int
			if err := sess.Query("SELECT v FROM grow.t WHERE k = ?", k).Consistency(gocql.One).Scan(&v); err != nil || v != k {
				t.Fatalf("%s: row %d: %d, %v", what, k, v, err)
			}
		}
	}

	// Two shards, 2,000 rows at RF=1.
	first, _ := start(clusters[0].URL(), clusters[1].URL())
	sess := sessionOn(t, first, "")
	exec(t, sess, "CREATE KEYSPACE grow WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE grow.t (k int PRIMARY KEY, v int)")
	for k := range rows {
		if err := sess.Query("INSERT INTO grow.t (k, v) VALUES (?, ?)", k, k).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	sess.Close()
	first.Shutdown(ctx)

	// Restarted with a third shard, which is not a member.
	grown, logs := start(clusters[0].URL(), clusters[1].URL(), clusters[2].URL())
	readAll(grown, "with a third --shard")
	if out := logs.String(); !strings.Contains(out, "not a member of the cluster") || !strings.Contains(out, "cqlpg shard add") {
		t.Errorf("no word in the log of the shard left out:\n%.2000s", out)
	}
	grown.Shutdown(ctx)

	// One member's URL reaches the whole cluster.
	one, logs := start(clusters[1].URL())
	readAll(one, "given the second shard alone")
	if out := logs.String(); !strings.Contains(out, "reaching a member that was not given") {
		t.Errorf("no word in the log of the member found through the catalog:\n%.2000s", out)
	}
	one.Shutdown(ctx)

	// Both members record both; the third records none, and holds none of
	// the keyspace's tables.
	var ring [][]int64
	for i, c := range clusters {
		conn, err := pgx.Connect(ctx, pgschema.GatewayConnString(c.URL()))
		if err != nil {
			t.Fatal(err)
		}
		ms, version, err := pgschema.LoadMembers(ctx, conn)
		if err != nil {
			t.Fatal(err)
		}
		var ranges int
		if err := conn.QueryRow(ctx, "SELECT count(*) FROM cqlpg.ring").Scan(&ranges); err != nil {
			t.Fatal(err)
		}
		var tables bool
		if err := conn.QueryRow(ctx, "SELECT to_regclass('grow.t') IS NOT NULL").Scan(&tables); err != nil {
			t.Fatal(err)
		}
		conn.Close(ctx)
		if i == 2 {
			if len(ms) != 0 || ranges != 0 || tables {
				t.Errorf("the shard that is not a member: %d members, %d ranges, table %v; want none", len(ms), ranges, tables)
			}
			continue
		}
		if len(ms) != 2 || version != 1 || ms[0].Name != "shard0" || ms[1].Name != "shard1" {
			t.Fatalf("shard %d records %d members at version %d: %+v", i, len(ms), version, ms)
		}
		if ranges != len(ms[0].Tokens)+len(ms[1].Tokens) {
			t.Errorf("shard %d: cqlpg.ring has %d ranges for %d tokens", i, ranges, len(ms[0].Tokens)+len(ms[1].Tokens))
		}
		if strings.Contains(ms[0].Address, "password") || ms[0].State != pgschema.MemberNormal {
			t.Errorf("shard %d records member %+v", i, ms[0])
		}
		ring = append(ring, append(ms[0].Tokens, ms[1].Tokens...))
	}
	if len(ring) == 2 && !equalInts(ring[0], ring[1]) {
		t.Error("the two members record different rings")
	}
}

func equalInts(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestRingFollowed changes the members a running gateway serves, as the
// join of a shard does, and checks that the gateway follows within a
// second, without a restart: with the new shard joining, writes of the
// tokens it will own reach it too; once it is normal, reads of those
// tokens go to it.
func TestRingFollowed(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	clusters, stop, err := localpg.TempClusters(ctx, 3, localpg.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	cfg := gateway.Config{Listen: "127.0.0.1:0", Log: testLogger()}
	for _, c := range clusters[:2] {
		cfg.Shards = append(cfg.Shards, cluster.ShardConfig{URL: c.URL()})
	}
	gw, err := gateway.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	go gw.Serve()
	defer gw.Shutdown(context.Background())
	sess := sessionOn(t, gw, "")
	defer sess.Close()
	exec(t, sess, "CREATE KEYSPACE follow WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE follow.t (k int PRIMARY KEY, v int)")

	// The third shard takes the catalog and tokens, and joins.
	tool, err := gateway.OpenCluster(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer tool.Close()
	if err := tool.CopyCatalog(ctx, clusters[2].URL()); err != nil {
		t.Fatal(err)
	}
	conns := make([]*pgx.Conn, 3)
	for i, c := range clusters {
		if conns[i], err = pgx.Connect(ctx, pgschema.GatewayConnString(c.URL())); err != nil {
			t.Fatal(err)
		}
		defer conns[i].Close(ctx)
	}
	members, version, err := pgschema.LoadMembers(ctx, conns[0])
	if err != nil || version != 1 || len(members) != 2 {
		t.Fatalf("members %+v at version %d: %v", members, version, err)
	}
	var existing [][]sharding.Token
	for _, m := range members {
		var toks []sharding.Token
		for _, tok := range m.Tokens {
			toks = append(toks, sharding.Token(tok))
		}
		existing = append(existing, toks)
	}
	addr, err := pgschema.MemberAddress(clusters[2].URL())
	if err != nil {
		t.Fatal(err)
	}
	joiner := pgschema.Member{HostID: [16]byte{0xaa, 0x40, 2: 1}, Name: "shard2", Address: addr, Datacenter: "datacenter1",
		Rack: "rack1", State: pgschema.MemberJoining, Position: 2}
	for _, tok := range sharding.AllocateTokens(existing, 16, 7) {
		joiner.Tokens = append(joiner.Tokens, int64(tok))
	}
	setMembers := func(ms []pgschema.Member, version int64) {
		t.Helper()
		for _, conn := range conns {
			if err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
				_, err := pgschema.SaveMembers(ctx, tx, ms, version)
				return err
			}); err != nil {
				t.Fatal(err)
			}
		}
		start := time.Now()
		for gw.RingVersion() != version {
			if time.Since(start) > 5*time.Second {
				t.Fatalf("the gateway serves ring version %d, %v after version %d was recorded", gw.RingVersion(), time.Since(start), version)
			}
			time.Sleep(10 * time.Millisecond)
		}
		if d := time.Since(start); d > 1500*time.Millisecond {
			t.Errorf("the gateway took %v to follow ring version %d", d, version)
		}
	}
	// A schema change the gateway runs right after the join is recorded,
	// before it follows the new ring, reaches the joining shard too.
	for _, conn := range conns {
		if err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			_, err := pgschema.SaveMembers(ctx, tx, append(slices.Clone(members), joiner), 2)
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	exec(t, sess, "CREATE TABLE follow.during (k int PRIMARY KEY, v int)")
	var during int
	if err := conns[2].QueryRow(ctx, `SELECT count(*) FROM cqlpg.tables WHERE keyspace_name = 'follow' AND table_name = 'during'`).Scan(&during); err != nil || during != 1 {
		t.Errorf("the joining shard has %d tables follow.during (%v) after a CREATE TABLE run as it joined", during, err)
	}
	setMembers(append(slices.Clone(members), joiner), 2)

	// Joining: the writes of its future tokens reach it too.
	for k := range 300 {
		if err := sess.Query("INSERT INTO follow.t (k, v) VALUES (?, ?)", k, k).Consistency(gocql.One).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	var onJoiner []int
	rows, err := conns[2].Query(ctx, `SELECT k FROM follow.t ORDER BY k`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var k int
		if err := rows.Scan(&k); err != nil {
			t.Fatal(err)
		}
		onJoiner = append(onJoiner, k)
	}
	if rows.Err() != nil || len(onJoiner) == 0 || len(onJoiner) == 300 {
		t.Fatalf("the joining shard holds %d of 300 rows written while it joined (%v)", len(onJoiner), rows.Err())
	}

	// Normal: its tokens are read from it. With the old owners' copies
	// deleted behind the gateway's back, the rows are still found.
	joiner.State = pgschema.MemberNormal
	setMembers(append(slices.Clone(members), joiner), 3)
	for _, conn := range conns[:2] {
		if _, err := conn.Exec(ctx, `DELETE FROM follow.t WHERE k = ANY($1)`, onJoiner); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range onJoiner {
		var v int
		if err := sess.Query("SELECT v FROM follow.t WHERE k = ?", k).Consistency(gocql.One).Scan(&v); err != nil || v != k {
			t.Fatalf("key %d, owned by the new shard: %d, %v", k, v, err)
		}
	}
}
