package gateway

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cqlpg/cqlpg/gateway/advise"
	"github.com/cqlpg/cqlpg/gateway/auth"
	"github.com/cqlpg/cqlpg/gateway/certs"
	"github.com/cqlpg/cqlpg/gateway/cluster"
	"github.com/cqlpg/cqlpg/gateway/cqlwire"
	"github.com/cqlpg/cqlpg/gateway/exec"
	"github.com/cqlpg/cqlpg/gateway/repair"
	"github.com/cqlpg/cqlpg/gateway/webui"
	"github.com/cqlpg/cqlpg/sharding"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Config configures a gateway.
type Config struct {
	// Listen is the CQL listener's address; HTTP serves /readyz and
	// /metrics, and may be empty to serve neither.
	Listen string
	HTTP   string
	// TLS, when set, makes the CQL listener accept TLS connections only
	// (TLSConfig builds it from files). TLSCerts, set instead, does the
	// same with a certificate the server reloads (ReloadCertificates).
	TLS      *tls.Config
	TLSCerts *certs.Files
	// HTTPCerts, when set, makes the HTTP listener speak HTTPS only, TLS
	// 1.2 at least, with a certificate the server reloads.
	HTTPCerts *certs.Files
	// MetricsAuth puts /metrics behind the web view's login; it needs
	// Auth. Off, Prometheus scrapes without credentials.
	MetricsAuth bool
	// Shards are the PostgreSQL servers, in ring-joining order.
	Shards []cluster.ShardConfig
	// ClusterName, Datacenter and Rack are what system.local reports.
	ClusterName string
	Datacenter  string
	Rack        string
	// NumTokens is how many vnodes a joining shard takes.
	NumTokens int
	// ShardConns is the number of data connections per shard.
	ShardConns int
	// NullData answers data statements from memory, with no rows and no
	// error, while the catalog stays on the shards: it leaves the cost of
	// the protocol and the executor alone, for benchmarks only.
	NullData bool
	// RequestTimeout bounds every request.
	RequestTimeout time.Duration
	// The times replicas have to meet a consistency level, Cassandra's
	// write_request_timeout, counter_write_request_timeout,
	// read_request_timeout and range_request_timeout; past them the client
	// gets a write or read timeout.
	WriteTimeout        time.Duration
	CounterWriteTimeout time.Duration
	// CASContentionTimeout bounds the Paxos rounds of a lightweight
	// transaction (Cassandra's cas_contention_timeout).
	CASContentionTimeout time.Duration
	ReadTimeout          time.Duration
	RangeTimeout         time.Duration
	// MaxFrameSize is the largest request frame accepted.
	MaxFrameSize int64
	// MaxConnections bounds the client connections open at once; one past
	// it is answered Overloaded to its STARTUP and closed (limits.go).
	MaxConnections int
	// MaxRequestsPerConn and MaxRequests bound the requests in flight on
	// one connection and on the gateway in all: past either, a request is
	// answered Overloaded at once rather than queued.
	MaxRequestsPerConn int
	MaxRequests        int
	// BatchSizeWarn and BatchSizeFail are Cassandra's
	// batch_size_warn_threshold and batch_size_fail_threshold: a batch
	// writing several partitions with more bytes of values than the first
	// gets a warning, than the second is refused.
	BatchSizeWarn, BatchSizeFail int64
	// IdleTimeout, when positive, closes a connection that has sent no
	// request for that long and has none in flight; 0 keeps connections
	// open however long they are idle, as Cassandra does.
	IdleTimeout time.Duration
	// Sweep sets the sweeper of expired data (repair.Sweeper).
	Sweep repair.SweepConfig
	// BatchlogTimeout is the age after which a batch log record counts as
	// abandoned by its gateway and is replayed; BatchlogInterval is how
	// often the shards' batch logs are checked for such records.
	BatchlogTimeout  time.Duration
	BatchlogInterval time.Duration
	// AdviseInterval is how often the gateway runs the advisor over
	// every table for its metrics (cqlpg_advisor_findings): 10 minutes
	// when zero, never when negative. Advise holds the pass's thresholds.
	AdviseInterval time.Duration
	Advise         advise.Options
	// RingCheck is how often the gateway checks the ring version the
	// members record, besides hearing of each change (RingChannel);
	// 500 ms when zero.
	RingCheck time.Duration
	// Gateways sets how gateways on the same shards find each other
	// (cluster.Registry).
	Gateways cluster.GatewaysConfig
	// Auth turns on authentication and authorization (package auth).
	Auth AuthConfig
	// SlowQuery, when positive, logs every request that takes longer, at
	// warning level.
	SlowQuery time.Duration
	// Origin, when set, puts the gateway in front of an origin cluster
	// as well as its shards, for a live migration: dual writes (dual.go).
	Origin *OriginConfig
	Log    *slog.Logger
}

// execConfig is what executions need of the configuration.
func (c *Config) execConfig() exec.Config {
	return exec.Config{ClusterName: c.ClusterName, Datacenter: c.Datacenter, Rack: c.Rack,
		RequestTimeout: c.RequestTimeout, WriteTimeout: c.WriteTimeout, CounterWriteTimeout: c.CounterWriteTimeout,
		ReadTimeout: c.ReadTimeout, RangeTimeout: c.RangeTimeout, CASContentionTimeout: c.CASContentionTimeout,
		BatchlogTimeout: c.BatchlogTimeout, BatchlogInterval: c.BatchlogInterval,
		BatchSizeWarn: c.BatchSizeWarn, BatchSizeFail: c.BatchSizeFail}
}

// clusterConfig is what the cluster needs of the configuration.
func (c *Config) clusterConfig() cluster.Config {
	return cluster.Config{Shards: c.Shards, NumTokens: c.NumTokens, ShardConns: c.ShardConns,
		RequestTimeout: c.RequestTimeout, NullData: c.NullData}
}

func (c *Config) setDefaults() {
	if c.ClusterName == "" {
		c.ClusterName = "cqlpg"
	}
	if c.Datacenter == "" {
		c.Datacenter = "datacenter1"
	}
	if c.AdviseInterval == 0 {
		c.AdviseInterval = 10 * time.Minute
	}
	if c.RingCheck <= 0 {
		c.RingCheck = 500 * time.Millisecond
	}
	if c.Rack == "" {
		c.Rack = "rack1"
	}
	if c.NumTokens <= 0 {
		c.NumTokens = 16
	}
	if c.ShardConns <= 0 {
		c.ShardConns = 4
	}
	if c.RequestTimeout <= 0 {
		c.RequestTimeout = 12 * time.Second
	}
	if c.MaxFrameSize <= 0 {
		c.MaxFrameSize = 256 << 20
	}
	if c.MaxConnections <= 0 {
		c.MaxConnections = DefaultMaxConnections
	}
	if c.MaxRequestsPerConn <= 0 {
		c.MaxRequestsPerConn = DefaultMaxRequestsPerConn
	}
	if c.MaxRequests <= 0 {
		c.MaxRequests = DefaultMaxRequests
	}
	if c.BatchSizeWarn <= 0 {
		c.BatchSizeWarn = 5 << 10 // Cassandra's defaults: 5 KiB and 50 KiB
	}
	if c.BatchSizeFail <= 0 {
		c.BatchSizeFail = 50 << 10
	}
	// Cassandra's defaults.
	for _, d := range []struct {
		t   *time.Duration
		def time.Duration
	}{{&c.WriteTimeout, 2 * time.Second}, {&c.CounterWriteTimeout, 5 * time.Second},
		{&c.ReadTimeout, 5 * time.Second}, {&c.RangeTimeout, 10 * time.Second},
		{&c.CASContentionTimeout, time.Second}} {
		if *d.t <= 0 {
			*d.t = d.def
		}
	}
	// As Cassandra's: twice the write timeout, checked every ten seconds.
	if c.BatchlogTimeout <= 0 {
		c.BatchlogTimeout = 2 * c.RequestTimeout
	}
	if c.BatchlogInterval <= 0 {
		c.BatchlogInterval = 10 * time.Second
	}
	c.Gateways.SetDefaults()
	c.Auth.SetDefaults()
	if c.Log == nil {
		c.Log = slog.Default()
	}
	c.Log = redacting(c.Log) // passwords never reach the log (redact.go)
	for i := range c.Shards {
		if c.Shards[i].Datacenter == "" {
			c.Shards[i].Datacenter = c.Datacenter
		}
		if c.Shards[i].Rack == "" {
			c.Shards[i].Rack = c.Rack
		}
	}
}

// Server is a running gateway.
type Server struct {
	cfg     Config
	log     *slog.Logger
	cluster *cluster.Cluster
	// ui is the web view (gateway/webui).
	ui      *webui.View
	metrics *metrics
	sweeper *repair.Sweeper
	// gateways registers this gateway with the others on the shards.
	gateways *cluster.Registry
	hostID   [16]byte
	started  time.Time

	listener net.Listener
	httpSrv  *http.Server
	httpAddr net.Addr
	ready    atomic.Bool
	mu       sync.Mutex
	conns    map[*conn]struct{}
	wg       sync.WaitGroup
	// open counts the connections accepted and not yet closed, refused
	// those being refused, and requests the requests in flight on every
	// connection (limits.go).
	open, refused atomic.Int64
	requests      atomic.Int64

	// stopBackground stops the work beside requests (the replayers and
	// the ring follower), and backgroundDone is closed once it has.
	stopBackground context.CancelFunc
	backgroundDone chan struct{}
	// auth logs clients in and authorizes their statements; nil when
	// authentication is off. authSet is set once auth is: the HTTP
	// listener serves before it, and its logins wait for it.
	auth    *auth.Authenticator
	authSet atomic.Bool
	// certs are the certificates the listeners serve, which
	// ReloadCertificates reloads.
	certs []*certs.Files
	// env is what executions see of the server (package exec): it holds
	// the statement cache, the trace sessions and the test hooks.
	env exec.Env
	// dual is the dual writes' state when the gateway has an origin.
	dual *dual
}

// AuthConfig turns on authentication and authorization (auth.Config).
type AuthConfig = auth.Config

// New connects to the shards, prepares their catalogs and joins them to
// the ring, and opens the listeners; Serve then accepts clients.
func New(ctx context.Context, cfg Config) (*Server, error) {
	cfg.setDefaults()
	if cfg.TLS != nil && cfg.TLSCerts != nil {
		return nil, errors.New("the CQL listener's TLS is given twice, as a configuration and as certificate files")
	}
	if cfg.MetricsAuth && !cfg.Auth.Enabled {
		return nil, errors.New("a login for /metrics needs authentication on")
	}
	s := newServer(cfg)
	if cfg.Origin != nil {
		if err := probeOrigin(ctx, cfg.Origin.Config); err != nil {
			return nil, err
		}
		s.dual = newDual(*cfg.Origin, s.log, s.metrics.registry)
	}
	if cfg.HTTP != "" {
		if err := s.startHTTP(); err != nil {
			return nil, err
		}
	}
	var err error
	if s.cluster, err = cluster.Open(ctx, cfg.clusterConfig(), s.log, s.shardChanged); err != nil {
		s.closeHTTP()
		return nil, err
	}
	s.env.Cluster = s.cluster
	s.metrics.cluster.Store(s.cluster)
	for _, sh := range s.cluster.Topology().Shards {
		s.metrics.shardUp.WithLabelValues(sh.Info.Name).Set(1)
	}
	if cfg.Auth.Enabled {
		if s.auth, err = auth.New(ctx, cfg.Auth, s.cluster, cfg.RequestTimeout, s.log); err != nil {
			s.cluster.Close()
			s.closeHTTP()
			return nil, err
		}
	}
	s.env.Auth = s.auth
	s.authSet.Store(true)
	if s.listener, err = net.Listen("tcp", cfg.Listen); err != nil {
		s.cluster.Close()
		s.closeHTTP()
		return nil, err
	}
	switch {
	case cfg.TLS != nil:
		s.listener = tls.NewListener(s.listener, atLeastTLS12(cfg.TLS))
	case cfg.TLSCerts != nil:
		s.listener = tls.NewListener(s.listener, cfg.TLSCerts.Config())
	}
	s.hostID = s.identity()
	s.sweeper = repair.NewSweeper(s.cluster, s.cfg.Sweep, s.log, s.metrics.sweep.record)
	s.startGateways(ctx)
	bgCtx, stop := context.WithCancel(context.Background())
	s.stopBackground, s.backgroundDone = stop, make(chan struct{})
	var background sync.WaitGroup
	background.Go(func() { s.env.ReplayBatchlog(bgCtx) })
	background.Go(func() { s.env.RunViews(bgCtx) })
	background.Go(func() { s.env.ReplayHints(bgCtx) })
	background.Go(func() { s.runAdvisor(bgCtx) })
	// Membership changes reach this gateway as the members record them
	// (RingChannel), and at the latest within RingCheck.
	background.Go(func() { s.cluster.FollowRing(bgCtx, s.cfg.RingCheck) })
	background.Go(func() {
		repair.FollowReplication(bgCtx, s.cluster, s.gateways, s.log, time.Second, &s.metrics.stream)
	})
	go func() {
		background.Wait()
		close(s.backgroundDone)
	}()
	return s, nil
}

// newServer returns a server of cfg, with defaults set, before it opens
// its shards.
func newServer(cfg Config) *Server {
	s := &Server{cfg: cfg, log: cfg.Log, conns: map[*conn]struct{}{}, started: time.Now()}
	s.env = exec.Env{Config: cfg.execConfig(), Log: s.log, Cache: exec.NewCache(), ShardUp: make(chan struct{}, 1),
		Started: s.started, Gateways: func() *cluster.Registry { return s.gateways },
		HostID: func() [16]byte { return s.hostID }, BroadcastSchemaChange: s.broadcastSchemaChange,
		ClientRows: s.clientRows, SettingRows: s.settingRows}
	s.metrics = newMetrics(s)
	s.ui = webui.New(uiBackend{s}, s.log)
	for _, c := range []*certs.Files{cfg.TLSCerts, cfg.HTTPCerts} {
		if c != nil {
			s.certs = append(s.certs, c)
		}
	}
	return s
}

// ReloadCertificates reads the listeners' certificate files again (the
// command's SIGHUP), and the shards' (sslrootcert, sslcert, sslkey) before
// their next connections: new connections get the certificates the files
// hold, and connections open keep theirs. A listener's certificate that
// does not load stays as it was, and its error is returned; a shard's is
// logged as its next connection opens.
func (s *Server) ReloadCertificates() error {
	sharding.ReloadTLS()
	var errs []error
	for _, c := range s.certs {
		if err := c.Reload(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// shardChanged records a shard going down or up, and on up wakes the
// hint replayer.
func (s *Server) shardChanged(name string, up bool) {
	v := 0.0
	if up {
		v = 1
		select {
		case s.env.ShardUp <- struct{}{}:
		default:
		}
	}
	s.metrics.shardUp.WithLabelValues(name).Set(v)
}

// identity derives the gateway's host id from its shards and the address
// it listens on, so that it stays the same across restarts and differs
// between the gateways on the same shards: the port a listener on port 0
// got, and the host's name for a wildcard address, which every host has.
func (s *Server) identity() [16]byte {
	h := sha256.New()
	for _, sh := range s.cluster.Topology().Shards {
		h.Write(sh.Info.HostID[:])
	}
	addr := s.listener.Addr()
	h.Write([]byte(addr.String()))
	if a, ok := addr.(*net.TCPAddr); ok && a.IP.IsUnspecified() {
		name, _ := os.Hostname()
		h.Write([]byte(name))
	}
	var id [16]byte
	copy(id[:], h.Sum(nil))
	id[6] = id[6]&0x0f | 0x40
	id[8] = id[8]&0x3f | 0x80
	return id
}

// Addr returns the CQL listener's address.
func (s *Server) Addr() net.Addr { return s.listener.Addr() }

// HTTPAddr returns the HTTP listener's address, or nil without one.
func (s *Server) HTTPAddr() net.Addr { return s.httpAddr }

// Serve accepts clients until Shutdown.
func (s *Server) Serve() error {
	s.ready.Store(true)
	s.log.Info("accepting CQL clients", "addr", s.listener.Addr().String())
	for {
		nc, err := s.listener.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			if isTimeout(err) {
				continue
			}
			return err
		}
		if tc, ok := nc.(*net.TCPConn); ok {
			tc.SetNoDelay(true)
		}
		if s.open.Add(1) > int64(s.cfg.MaxConnections) {
			s.open.Add(-1)
			s.refuse(nc)
			continue
		}
		c := newConn(s, nc)
		s.mu.Lock()
		s.conns[c] = struct{}{}
		s.mu.Unlock()
		s.metrics.connections.Inc()
		s.wg.Go(func() {
			c.serve()
			s.auth.Forget(c)
			s.mu.Lock()
			delete(s.conns, c)
			s.mu.Unlock()
			s.open.Add(-1)
			s.metrics.connections.Dec()
		})
	}
}

// Shutdown stops accepting clients, lets requests in flight finish until
// ctx ends, then closes every connection and shard pool.
func (s *Server) Shutdown(ctx context.Context) error {
	s.ready.Store(false)
	// Leave the other gateways' peers first, so that drivers stop opening
	// connections to this one.
	s.gateways.Stop()
	s.listener.Close()
	s.mu.Lock()
	for c := range s.conns {
		// Closing the read side ends each reader; requests in flight still
		// answer before the connection closes.
		if tc, ok := c.nc.(*net.TCPConn); ok {
			tc.CloseRead()
		} else {
			c.nc.Close()
		}
	}
	s.mu.Unlock()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = fmt.Errorf("connections still open at shutdown: %w", ctx.Err())
		s.mu.Lock()
		for c := range s.conns {
			c.nc.Close()
		}
		s.mu.Unlock()
	}
	s.stopBackground()
	<-s.backgroundDone
	s.sweeper.Stop()
	s.cluster.Close()
	s.closeHTTP()
	return err
}

// broadcastSchemaChange pushes a SCHEMA_CHANGE event to every connection
// registered for it.
func (s *Server) broadcastSchemaChange(change, target, keyspace, name string, args ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		if c.events.Load()&eventSchema == 0 {
			continue
		}
		b := cqlwire.GetBuffer(0)
		*b = cqlwire.AppendHeader((*b)[:0], c.version, -1, cqlwire.OpEvent)
		*b = cqlwire.AppendSchemaChange(cqlwire.AppendString(*b, "SCHEMA_CHANGE"), change, target, keyspace, name, args...)
		cqlwire.FinishFrame(*b)
		c.sendEvent(b)
	}
}

func (s *Server) startHTTP() error {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if !s.ready.Load() {
			http.Error(w, "not ready: the CQL listener is not accepting clients yet\n", http.StatusServiceUnavailable)
			return
		}
		if err := s.cluster.Ping(r.Context()); err != nil {
			http.Error(w, "not ready: "+err.Error()+"\n", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ready")
		// Objects the catalog could not load do not stop the gateway
		// serving everything else; they are named for the operator.
		for _, u := range s.cluster.Schema().Unloadable() {
			fmt.Fprintf(w, "unloadable %s\n", u.Error())
		}
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "ok") })
	metrics := promhttp.HandlerFor(s.metrics.registry, promhttp.HandlerOpts{})
	if s.cfg.MetricsAuth {
		// The metrics tell of the shards and the load: behind the login
		// when the operator wants them private.
		open := metrics
		metrics = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if _, ok := s.uiLogin(w, r); ok {
				open.ServeHTTP(w, r)
			}
		})
	}
	mux.Handle("GET /metrics", metrics)
	s.ui.Route(mux)
	ln, err := net.Listen("tcp", s.cfg.HTTP)
	if err != nil {
		return err
	}
	s.httpAddr = ln.Addr()
	// The HTTP server's own errors, such as failed TLS handshakes, go to
	// the gateway's log.
	s.httpSrv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second,
		ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelWarn)}
	if c := s.cfg.HTTPCerts; c != nil {
		// HTTPS only: a plain request is answered 400 by the server.
		s.httpSrv.TLSConfig = c.Config()
		go s.httpSrv.ServeTLS(ln, "", "")
	} else {
		go s.httpSrv.Serve(ln)
	}
	s.log.Info("serving HTTP", "addr", ln.Addr().String(), "tls", s.cfg.HTTPCerts != nil)
	return nil
}

func (s *Server) closeHTTP() {
	if s.httpSrv != nil {
		s.httpSrv.Close()
	}
}
