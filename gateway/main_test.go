package gateway_test

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlpg/cqlpg/gateway"
	"github.com/cqlpg/cqlpg/gateway/cluster"
	"github.com/cqlpg/cqlpg/sharding/localpg"
)

// The package's integration tests share three throwaway PostgreSQL
// clusters and one gateway, started once here. Tests that need a gateway
// of their own start it on the same shards.
var (
	shardURLs []string
	gw        *gateway.Server
)

func TestMain(m *testing.M) {
	flag.Parse()
	// A fuzzing worker runs only its fuzz target, which needs no cluster;
	// starting three clusters in every worker would only slow fuzzing down.
	if f := flag.Lookup("test.fuzzworker"); f != nil && f.Value.String() == "true" {
		os.Exit(m.Run())
	}
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	clusters, stop, err := localpg.TempClusters(ctx, 3, localpg.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "start PostgreSQL:", err)
		return 1
	}
	defer stop()
	for _, c := range clusters {
		shardURLs = append(shardURLs, c.URL())
	}
	if gw, err = startGateway(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "start gateway:", err)
		return 1
	}
	defer gw.Shutdown(context.Background())
	return m.Run()
}

// startGateway starts a gateway on the shared shards, on a free port.
func startGateway(ctx context.Context) (*gateway.Server, error) {
	cfg := gateway.Config{Listen: "127.0.0.1:0", Log: testLogger()}
	for _, u := range shardURLs {
		cfg.Shards = append(cfg.Shards, cluster.ShardConfig{URL: u})
	}
	s, err := gateway.New(ctx, cfg)
	if err != nil {
		return nil, err
	}
	go s.Serve()
	return s, nil
}

func testLogger() *slog.Logger {
	if os.Getenv("CQLPG_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// clusterConfig returns an unmodified gocql configuration for a gateway,
// with the driver's defaults except for the address.
func clusterConfig(s *gateway.Server, keyspace string) *gocql.ClusterConfig {
	host, port, _ := net.SplitHostPort(s.Addr().String())
	cfg := gocql.NewCluster(host)
	cfg.Port, _ = strconv.Atoi(port)
	cfg.Keyspace = keyspace
	cfg.Timeout = 10 * time.Second
	cfg.ConnectTimeout = 10 * time.Second
	// The driver finds every gateway on the shards in system.peers; a
	// test talks to the one it names, whose hooks and metrics it checks.
	cfg.HostFilter = gocql.HostFilterFunc(func(h *gocql.HostInfo) bool {
		return h.Port() == cfg.Port && h.ConnectAddress().String() == host
	})
	return cfg
}

// session opens a gocql session on the shared gateway.
func session(t testing.TB, keyspace string) *gocql.Session {
	t.Helper()
	return sessionOn(t, gw, keyspace)
}

// sessionAll is a session that writes and reads at ALL, for tests that
// look at the shards directly afterwards: at the default QUORUM the
// answer may come before the last replica's write has landed.
func sessionAll(t testing.TB, keyspace string) *gocql.Session {
	t.Helper()
	sess := session(t, keyspace)
	sess.SetConsistency(gocql.All)
	return sess
}

func sessionOn(t testing.TB, s *gateway.Server, keyspace string) *gocql.Session {
	t.Helper()
	sess, err := clusterConfig(s, keyspace).CreateSession()
	if err != nil {
		t.Fatalf("connect gocql: %v", err)
	}
	t.Cleanup(sess.Close)
	return sess
}

// exec runs statements through gocql, failing the test on error.
func exec(t testing.TB, sess *gocql.Session, stmts ...string) {
	t.Helper()
	for _, s := range stmts {
		if err := sess.Query(s).Exec(); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// waitAlone waits until the shared gateway lists no other gateway, as
// after tests that started and stopped gateways of their own: one killed
// counts as alive until its registration times out.
func waitAlone(t *testing.T) {
	t.Helper()
	sess := session(t, "")
	deadline := time.Now().Add(20 * time.Second)
	for {
		var n int
		if err := sess.Query("SELECT count(*) FROM system.peers").Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the shared gateway still lists %d other gateways", n)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// tempShards starts n throwaway PostgreSQL clusters for one test, stopped
// when it ends.
func tempShards(t testing.TB, n int, opts localpg.Options) []*localpg.Cluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	clusters, stop, err := localpg.TempClusters(ctx, n, opts)
	if err != nil {
		t.Fatalf("start PostgreSQL: %v", err)
	}
	t.Cleanup(stop)
	return clusters
}
