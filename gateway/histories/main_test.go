package histories

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"github.com/rs/zerolog"

	"github.com/cqlpg/cqlpg/gateway"
	"github.com/cqlpg/cqlpg/gateway/cluster"
)

var (
	duration   = flag.Duration("histories.duration", 30*time.Second, "how long the workloads run under faults")
	artifacts  = flag.String("histories.artifacts", "", "directory for histories and visualizations (default: a new temporary directory, kept on failure)")
	workloads  = flag.String("histories.workloads", "register,set,bank,monotonic", "workloads to run, comma-separated")
	faults     = flag.String("histories.faults", "", `faults the nemesis injects, comma-separated, or "all" (the default)`)
	bankQuorum = flag.Bool("histories.bank-quorum", true, "also read the bank at QUORUM, which must never see half of a conditional batch")
	seed       = flag.Uint64("histories.seed", 0, "the schedule's random seed (default: from the clock, logged)")
	quorumLWT  = flag.Bool("histories.quorum-lwt", true, "require lightweight transactions to keep succeeding with one shard of three down")
	// child, set when the test binary runs again as a gateway, holds the
	// gateway's settings as JSON (childArgs).
	child = flag.String("histories.gateway", "", "run as a gateway with these settings (JSON), not as tests")
)

func TestMain(m *testing.M) {
	flag.Parse()
	if *child != "" {
		os.Exit(runChild(*child))
	}
	os.Exit(run(m))
}

// childArgs are the settings of a gateway run as a process of its own.
type childArgs struct {
	Listen string
	Shards []string
	// Skew is how far the gateway's clock runs off while it has
	// SIGUSR1, until SIGUSR2.
	Skew time.Duration
	// Log is the file the gateway logs to.
	Log string
}

// runChild runs a gateway until SIGTERM (or SIGKILL), telling its parent
// it listens by a line on stdout.
func runChild(arg string) int {
	var a childArgs
	if err := json.Unmarshal([]byte(arg), &a); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	logFile, err := os.OpenFile(a.Log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	cfg := gateway.Config{Listen: a.Listen, RequestTimeout: 5 * time.Second,
		Log: slog.New(slog.NewTextHandler(logFile, &slog.HandlerOptions{Level: slog.LevelInfo}))}
	for _, u := range a.Shards {
		cfg.Shards = append(cfg.Shards, cluster.ShardConfig{URL: u})
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	s, err := gateway.New(ctx, cfg)
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "start gateway:", err)
		return 1
	}
	go s.Serve()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGTERM)
	fmt.Println("listening", s.Addr())
	for g := range sig {
		switch g {
		case syscall.SIGUSR1:
			s.SkewClock(a.Skew)
		case syscall.SIGUSR2:
			s.SkewClock(0)
		default:
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			s.Shutdown(ctx)
			cancel()
			return 0
		}
	}
	return 0
}

// cl is the package's cluster, started once for its tests.
var cl *testCluster

func run(m *testing.M) int {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// gocql logs each reconnection attempt to a gateway killed on
	// purpose; the histories say what the clients saw.
	gocql.Logger = log.New(io.Discard, "", 0)
	// The proxies' toxics log every interruption through zerolog's
	// global logger.
	zerolog.SetGlobalLevel(zerolog.Disabled)
	var err error
	var stop func(keepLogs bool)
	if cl, stop, err = startCluster(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "start the cluster:", err)
		return 1
	}
	code := m.Run()
	stop(code != 0)
	return code
}
