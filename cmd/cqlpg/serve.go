package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/cqlpg/cqlpg/gateway"
	"github.com/cqlpg/cqlpg/gateway/certs"
	"github.com/cqlpg/cqlpg/gateway/cluster"
	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/sharding/localpg"
	"github.com/jackc/pgx/v5"
)

// placed matches a shard given with its datacenter and rack, DC:RACK=URL.
var placed = regexp.MustCompile(`^([A-Za-z0-9_.-]+):([A-Za-z0-9_.-]+)=(.+)$`)

// parseShard reads a --shard value: a PostgreSQL URL or keyword/value
// connection string, optionally prefixed by DC:RACK=.
func parseShard(spec string) cluster.ShardConfig {
	if m := placed.FindStringSubmatch(spec); m != nil {
		return cluster.ShardConfig{Datacenter: m[1], Rack: m[2], URL: m[3]}
	}
	return cluster.ShardConfig{URL: spec}
}

// stringList is a repeatable flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

func serve(args []string) int {
	c, err := loadConfig("serve", args, os.LookupEnv, os.Stderr)
	if err != nil {
		reportConfigError(err)
		return 2
	}
	log, err := newLogger(c.LogFormat, c.LogLevel)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cqlpg:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	// SIGHUP reloads the certificates. It is caught from the start: one
	// sent while the gateway starts waits for it rather than ending the
	// process, as SIGHUP otherwise would.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)

	cfg := c.gateway()
	cfg.Log = log
	if c.TLSCert != "" {
		if cfg.TLSCerts, err = certs.Load(c.TLSCert, c.TLSKey, c.TLSClientCA, log); err != nil {
			log.Error("cannot set up TLS", "err", err)
			return 2
		}
	}
	if c.HTTPTLSCert != "" {
		if cfg.HTTPCerts, err = certs.Load(c.HTTPTLSCert, c.HTTPTLSKey, "", log); err != nil {
			log.Error("cannot set up HTTPS", "err", err)
			return 2
		}
	}
	var joining []string
	if len(cfg.Shards) == 0 {
		clusters, err := startLocalShards(ctx, c.DataDir, c.LocalShards, log)
		if err != nil {
			log.Error("cannot start the managed local shards", "err", err)
			return 1
		}
		defer stopLocalShards(clusters, log)
		n := recordedMembers(ctx, clusters[0].URL())
		if n > len(clusters) {
			log.Error(fmt.Sprintf("the cluster has %d shards and --local-shards %d would leave some out: "+
				"start it with --local-shards %d, or take shards out of the cluster with cqlpg shard decommission",
				n, len(clusters), n))
			return 1
		}
		// More local shards than members: the new ones join the running
		// cluster, as cqlpg shard add joins them.
		for i, cl := range clusters {
			if n > 0 && i >= n {
				joining = append(joining, cl.URL())
				continue
			}
			cfg.Shards = append(cfg.Shards, cluster.ShardConfig{URL: cl.URL()})
		}
	}

	srv, err := gateway.New(ctx, cfg)
	if err != nil {
		log.Error("cannot start the gateway", "err", err)
		return 1
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve() }()
	if len(joining) > 0 {
		go joinLocalShards(ctx, srv.Cluster(), joining, &c, log)
	}
	for running := true; running; {
		select {
		case <-ctx.Done():
			log.Info("shutting down")
			running = false
		case err := <-served:
			log.Error("listener failed", "err", err)
			running = false
		case <-hup:
			reloadCertificates(srv, log)
		}
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), c.ShutdownGrace)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		log.Warn("shutdown", "err", err)
	}
	return 0
}

// reloadCertificates is SIGHUP's: the listeners' certificates are read
// again from their files, and the outcome logged. One that does not load
// is served as it was.
func reloadCertificates(srv *gateway.Server, log *slog.Logger) {
	if err := srv.ReloadCertificates(); err != nil {
		log.Error("SIGHUP: a TLS certificate did not reload and is served as before", "err", err)
		return
	}
	log.Info("SIGHUP: reloaded the TLS certificates")
}

// joinLocalShards joins the managed local shards at urls to the running
// cluster, one after the other, as cqlpg shard add does, and logs each
// step.
func joinLocalShards(ctx context.Context, c *cluster.Cluster, urls []string, cfg *config, log *slog.Logger) {
	for _, url := range urls {
		out := logWriter{log}
		err := c.Join(ctx, url, cluster.JoinOptions{Datacenter: cfg.Datacenter, Rack: cfg.Rack, NumTokens: cfg.NumTokens,
			OpOptions: cluster.OpOptions{Stream: streamRanges(out, c, 0, "serve --local-shards"), Progress: func(step string) { log.Info(step) },
				GatewayTimeout: 10 * time.Second, BarrierLimit: 30 * time.Second}})
		if err != nil {
			if ctx.Err() == nil {
				log.Error("a new local shard could not join; restart to resume", "err", err)
			}
			return
		}
	}
}

// logWriter logs each line written to it.
type logWriter struct{ log *slog.Logger }

func (w logWriter) Write(p []byte) (int, error) {
	w.log.Info(strings.TrimSpace(string(p)))
	return len(p), nil
}

// recordedMembers returns how many members the shard at url records, 0
// when it records none or cannot say (a new shard).
func recordedMembers(ctx context.Context, url string) int {
	conn, err := pgx.Connect(ctx, pgschema.GatewayConnString(url))
	if err != nil {
		return 0
	}
	defer conn.Close(ctx)
	members, _, err := pgschema.LoadMembers(ctx, conn)
	if err != nil {
		return 0
	}
	return len(members)
}

// startLocalShards starts (or reuses) the managed local shards and prints
// how to open each in psql.
func startLocalShards(ctx context.Context, dataDir string, n int, log *slog.Logger) ([]*localpg.Cluster, error) {
	if n < 1 {
		return nil, errors.New("--local-shards must be at least 1")
	}
	root, moved, err := localpg.Root(dataDir)
	if err != nil {
		return nil, err
	}
	if moved {
		log.Warn("PostgreSQL's OS user cannot reach the data directory; keeping the shards elsewhere",
			"data_dir", dataDir, "shards_dir", root)
	}
	clusters, err := localpg.StartMany(ctx, root, n, localpg.Options{Log: log})
	if err != nil {
		return nil, err
	}
	for i, c := range clusters {
		fmt.Printf("shard%d: %s\n", i, c.PsqlCommand())
	}
	return clusters, nil
}

func stopLocalShards(clusters []*localpg.Cluster, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, c := range clusters {
		if err := c.Stop(ctx); err != nil {
			log.Warn("stopping a local shard", "dir", c.Dir(), "err", err)
		}
	}
}

// reportConfigError prints an error of loadConfig, unless the flag
// package has already.
func reportConfigError(err error) {
	var reported reportedError
	if errors.As(err, &reported) {
		return
	}
	errs := []error{err}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		errs = joined.Unwrap()
	}
	for _, err := range errs {
		fmt.Fprintln(os.Stderr, "cqlpg:", err)
	}
}

func newLogger(format, level string) (*slog.Logger, error) {
	lv, err := parseLevel(level)
	if err != nil {
		return nil, err
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(os.Stderr, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(os.Stderr, opts)), nil
	}
	return nil, fmt.Errorf("%q is not a log format: want text or json", format)
}

func parseLevel(level string) (slog.Level, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return 0, fmt.Errorf("%q is not a log level: want debug, info, warn or error", level)
	}
	return lv, nil
}
