package histories

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/Shopify/toxiproxy/v2"
	"github.com/gocql/gocql"
	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/cqlpg/cqlpg/gateway"
	"github.com/cqlpg/cqlpg/gateway/cluster"
	"github.com/cqlpg/cqlpg/sharding/localpg"
)

// testCluster is three shards and two gateways, each gateway reaching each
// shard through a proxy of its own.
type testCluster struct {
	// dir holds the gateways' logs.
	dir    string
	shards []*localpg.Cluster
	gws    []*gatewayProc
}

// gatewayProc is a gateway run as a process of its own, so that it can be
// killed; it listens on the same port across restarts.
type gatewayProc struct {
	id   int
	port int
	// links[s] is the gateway's proxy to shard s.
	links []*toxiproxy.Proxy
	args  childArgs

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
}

// Each gateway's clock, skewed, runs this far off: one behind, the other
// ahead.
var skews = []time.Duration{-5 * time.Second, 5 * time.Second}

// shardSettings keep commits on a shard killed with SIGKILL: fsync off
// loses nothing unless the machine crashes, synchronous_commit off would.
var shardSettings = map[string]string{"fsync": "off", "full_page_writes": "off"}

// startCluster starts the shards, makes them a cluster with a gateway of
// the test's own process, which records the members at their own
// addresses, then starts two gateways as processes, each given its own
// proxies to the shards (a gateway reaches the members it is given at the
// addresses given, matched by host id).
func startCluster(ctx context.Context) (*testCluster, func(keepLogs bool), error) {
	dir, err := os.MkdirTemp("", "cqlpg-histories-")
	if err != nil {
		return nil, nil, err
	}
	shards, stopShards, err := localpg.TempClusters(ctx, 3, localpg.Options{Settings: shardSettings})
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	c := &testCluster{dir: dir, shards: shards}
	stop := func(keepLogs bool) {
		for _, g := range c.gws {
			g.stop()
		}
		stopShards()
		if !keepLogs {
			os.RemoveAll(dir)
		}
	}
	if err := c.bootstrap(ctx); err != nil {
		stop(false)
		return nil, nil, err
	}
	proxies := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	for i := range 2 {
		g := &gatewayProc{id: i}
		c.gws = append(c.gws, g)
		for s, sh := range shards {
			p := toxiproxy.NewProxy(proxies, fmt.Sprintf("gw%d-shard%d", i, s), "127.0.0.1:0", fmt.Sprintf("127.0.0.1:%d", sh.Port()))
			if err := p.Start(); err != nil {
				stop(false)
				return nil, nil, err
			}
			g.links = append(g.links, p)
			g.args.Shards = append(g.args.Shards, fmt.Sprintf("host=127.0.0.1 port=%s user=%s dbname=%s sslmode=disable application_name=%s",
				p.Listen[strings.LastIndexByte(p.Listen, ':')+1:], localpg.Superuser, sh.Database(), g.appName()))
		}
		if g.port, err = freePort(); err != nil {
			stop(false)
			return nil, nil, err
		}
		g.args.Listen = fmt.Sprintf("127.0.0.1:%d", g.port)
		g.args.Skew = skews[i]
		g.args.Log = fmt.Sprintf("%s/gateway%d.log", dir, i)
		if err := g.start(); err != nil {
			stop(false)
			return nil, nil, err
		}
	}
	return c, stop, nil
}

// bootstrap records the cluster's members with a gateway on the shards'
// own addresses and creates the keyspace.
func (c *testCluster) bootstrap(ctx context.Context) error {
	cfg := gateway.Config{Listen: "127.0.0.1:0", Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	for _, sh := range c.shards {
		cfg.Shards = append(cfg.Shards, cluster.ShardConfig{URL: sh.TCPURL()})
	}
	s, err := gateway.New(ctx, cfg)
	if err != nil {
		return err
	}
	go s.Serve()
	defer s.Shutdown(context.Background())
	sess, err := session(s.Addr().(*net.TCPAddr).Port, "", false)
	if err != nil {
		return err
	}
	defer sess.Close()
	return sess.Query("CREATE KEYSPACE hist WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}").Exec()
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// appName is the application_name of the gateway's connections to the
// shards, by which its backends are found.
func (g *gatewayProc) appName() string { return fmt.Sprintf("histories-gw%d", g.id) }

// start runs the gateway and waits until it listens.
func (g *gatewayProc) start() error {
	arg, err := json.Marshal(g.args)
	if err != nil {
		return err
	}
	log, err := os.OpenFile(g.args.Log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer log.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^$", "-histories.gateway="+string(arg))
	cmd.Stderr = log
	// The gateway dies with the tests, however they end.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	listening := make(chan error, 1)
	go func() {
		r := bufio.NewReader(out)
		line, err := r.ReadString('\n')
		if err == nil && !strings.HasPrefix(line, "listening") {
			err = fmt.Errorf("gateway %d says %q", g.id, line)
		}
		listening <- err
		io.Copy(io.Discard, r)
		cmd.Wait()
		close(done)
	}()
	select {
	case err = <-listening:
	case <-time.After(time.Minute):
		err = errors.New("no answer in a minute")
	}
	if err != nil {
		cmd.Process.Kill()
		<-done
		return fmt.Errorf("start gateway %d (log %s): %w", g.id, g.args.Log, err)
	}
	g.mu.Lock()
	g.cmd, g.done = cmd, done
	g.mu.Unlock()
	return nil
}

// kill ends the gateway with SIGKILL and waits until it is gone.
func (g *gatewayProc) kill() {
	g.mu.Lock()
	cmd, done := g.cmd, g.done
	g.cmd = nil
	g.mu.Unlock()
	if cmd != nil {
		cmd.Process.Kill()
		<-done
	}
}

// stop ends the gateway with SIGTERM, or SIGKILL if it has not ended
// within 10 s.
func (g *gatewayProc) stop() {
	g.mu.Lock()
	cmd, done := g.cmd, g.done
	g.cmd = nil
	g.mu.Unlock()
	if cmd == nil {
		return
	}
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		<-done
	}
}

// signal sends the running gateway sig.
func (g *gatewayProc) signal(sig syscall.Signal) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.cmd == nil {
		return fmt.Errorf("gateway %d is not running", g.id)
	}
	return g.cmd.Process.Signal(sig)
}

// session opens an unmodified gocql session on the gateway at port alone.
// The driver's default is client-side timestamps; with serverTimestamps
// the gateway gives them, and its clock counts. A session never retries:
// a retried conditional write would be two operations in one.
func session(port int, keyspace string, serverTimestamps bool) (*gocql.Session, error) {
	cfg := gocql.NewCluster("127.0.0.1")
	cfg.Port = port
	cfg.Keyspace = keyspace
	cfg.Timeout = 6 * time.Second
	cfg.ConnectTimeout = 5 * time.Second
	cfg.ReconnectInterval = 500 * time.Millisecond
	cfg.DefaultTimestamp = !serverTimestamps
	cfg.RetryPolicy = nil
	cfg.HostFilter = gocql.HostFilterFunc(func(h *gocql.HostInfo) bool { return h.Port() == port })
	return cfg.CreateSession()
}

// toxic adds a toxic to a link, on both directions when stream is "".
func toxic(link *toxiproxy.Proxy, name, kind, stream string, attrs map[string]any) error {
	streams := []string{stream}
	if stream == "" {
		streams = []string{"upstream", "downstream"}
	}
	for _, s := range streams {
		b, err := json.Marshal(map[string]any{"name": name + "_" + s, "type": kind, "stream": s, "toxicity": 1.0, "attributes": attrs})
		if err != nil {
			return err
		}
		if _, err := link.Toxics.AddToxicJson(bytes.NewReader(b)); err != nil {
			return fmt.Errorf("%s on %s: %w", kind, link.Name, err)
		}
	}
	return nil
}

// heal takes a link's toxics away; with reconnect it also closes the
// connections through it, whose bytes a black hole dropped: TCP would
// have delivered them late or broken the connection, never skipped them.
func heal(link *toxiproxy.Proxy, reconnect bool) error {
	link.Toxics.ResetToxics(context.Background())
	if !reconnect {
		return nil
	}
	link.Stop()
	return link.Start()
}

// terminate ends the backends of gateway g's connections on shard s with
// pg_terminate_backend, and returns how many it ended.
func (c *testCluster) terminate(ctx context.Context, g, s int) (int, error) {
	conn, err := pgx.Connect(ctx, c.shards[s].URL())
	if err != nil {
		return 0, err
	}
	defer conn.Close(context.Background())
	var n int
	err = conn.QueryRow(ctx, `SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE application_name = $1`, c.gws[g].appName()).Scan(&n)
	return n, err
}
