package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/cqlpg/cqlpg/gateway"
	"github.com/cqlpg/cqlpg/sharding/localpg"
)

// placed matches a shard given with its datacenter and rack, DC:RACK=URL.
var placed = regexp.MustCompile(`^([A-Za-z0-9_.-]+):([A-Za-z0-9_.-]+)=(.+)$`)

// parseShard reads a --shard value: a PostgreSQL URL or keyword/value
// connection string, optionally prefixed by DC:RACK=.
func parseShard(spec string) gateway.ShardConfig {
	if m := placed.FindStringSubmatch(spec); m != nil {
		return gateway.ShardConfig{Datacenter: m[1], Rack: m[2], URL: m[3]}
	}
	return gateway.ShardConfig{URL: spec}
}

// stringList is a repeatable flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

func serve(args []string) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:9042", "CQL listener `address`")
	httpAddr := fs.String("http", "127.0.0.1:9180", "HTTP `address` for /readyz and /metrics")
	var shards stringList
	fs.Var(&shards, "shard", "PostgreSQL `URL` of a shard, repeatable, in ring order, optionally placed as DC:RACK=URL; "+
		"without it cqlpg runs managed local shards")
	dc := fs.String("dc", "datacenter1", "the gateway's `datacenter`, local to the LOCAL_ consistency levels, and the default of shards")
	rack := fs.String("rack", "rack1", "the gateway's `rack`, and the default of shards")
	broadcast := fs.String("broadcast-address", "", "`address` the other gateways list for this one in system.peers "+
		"(default: the listener's, or when it is a wildcard, the one this host reaches its shards from)")
	numTokens := fs.Int("num-tokens", 16, "vnode tokens a shard takes when it joins the ring")
	writeTimeout := fs.Duration("write-timeout", 2*time.Second, "time replicas have to acknowledge a write")
	counterTimeout := fs.Duration("counter-write-timeout", 5*time.Second, "time replicas have to acknowledge a counter update")
	readTimeout := fs.Duration("read-timeout", 5*time.Second, "time replicas have to answer a read")
	rangeTimeout := fs.Duration("range-timeout", 10*time.Second, "time replicas have to answer a range scan")
	tlsCert := fs.String("tls-cert", "", "PEM `file` of the CQL listener's TLS certificate; with it the listener speaks TLS only")
	tlsKey := fs.String("tls-key", "", "PEM `file` of the TLS certificate's private key")
	tlsClientCA := fs.String("tls-client-ca", "", "PEM `file` of the authorities client certificates must chain to; "+
		"with it every client must present one")
	localShards := fs.Int("local-shards", 3, "number of managed local shards")
	dataDir := fs.String("data-dir", "./cqlpg-data", "`directory` of the managed local shards")
	auth := fs.Bool("auth", false, "make clients log in with a role's password and check each statement's permissions, "+
		"as Cassandra's PasswordAuthenticator and CassandraAuthorizer do")
	superuserPassword := fs.String("superuser-password", "", "`password` of the default superuser cassandra, "+
		"created when --auth first runs on shards without roles (default: a random one, logged once)")
	logFormat := fs.String("log-format", "text", "log format: text or json")
	logLevel := fs.String("log-level", "info", "log level: debug, info, warn or error")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	log, err := newLogger(*logFormat, *logLevel)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cqlpg:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	cfg := gateway.Config{Listen: *listen, HTTP: *httpAddr, Log: log, Datacenter: *dc, Rack: *rack, NumTokens: *numTokens,
		WriteTimeout: *writeTimeout, CounterWriteTimeout: *counterTimeout, ReadTimeout: *readTimeout, RangeTimeout: *rangeTimeout,
		Sweep:    gateway.SweepConfig{Interval: gateway.DefaultSweepInterval},
		Gateways: gateway.GatewaysConfig{Address: *broadcast},
		Auth:     gateway.AuthConfig{Enabled: *auth, SuperuserPassword: *superuserPassword}}
	for _, spec := range shards {
		cfg.Shards = append(cfg.Shards, parseShard(spec))
	}
	if *tlsCert != "" || *tlsKey != "" {
		if cfg.TLS, err = gateway.TLSConfig(*tlsCert, *tlsKey, *tlsClientCA); err != nil {
			log.Error("cannot set up TLS", "err", err)
			return 2
		}
	} else if *tlsClientCA != "" {
		log.Error("--tls-client-ca needs --tls-cert and --tls-key")
		return 2
	}
	if *superuserPassword != "" && !*auth {
		log.Error("--superuser-password needs --auth")
		return 2
	}
	if len(shards) == 0 {
		clusters, err := startLocalShards(ctx, *dataDir, *localShards, log)
		if err != nil {
			log.Error("cannot start the managed local shards", "err", err)
			return 1
		}
		defer stopLocalShards(clusters, log)
		for _, c := range clusters {
			cfg.Shards = append(cfg.Shards, gateway.ShardConfig{URL: c.URL()})
		}
	}

	srv, err := gateway.New(ctx, cfg)
	if err != nil {
		log.Error("cannot start the gateway", "err", err)
		return 1
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve() }()
	select {
	case <-ctx.Done():
		log.Info("shutting down")
	case err := <-served:
		log.Error("listener failed", "err", err)
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		log.Warn("shutdown", "err", err)
	}
	return 0
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

func newLogger(format, level string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("bad --log-level: %w", err)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(os.Stderr, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(os.Stderr, opts)), nil
	}
	return nil, fmt.Errorf("bad --log-format %q: want text or json", format)
}
