package gateway

import (
	"context"
	"crypto/tls"
	"fmt"
	"maps"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/cqlpg/cqlpg/gateway/advise"
	"github.com/cqlpg/cqlpg/gateway/cluster"
	"github.com/cqlpg/cqlpg/gateway/exec"
	"github.com/cqlpg/cqlpg/gateway/repair"
	"github.com/cqlpg/cqlpg/sharding"
)

// OpenCluster opens the shards of cfg for a tool, such as repair or the
// bulk loader; Listen, HTTP and the background settings are ignored.
func OpenCluster(ctx context.Context, cfg Config) (*cluster.Cluster, error) {
	cfg.setDefaults()
	return cluster.Open(ctx, cfg.clusterConfig(), cfg.Log, func(string, bool) {})
}

// Cluster returns the gateway's cluster, for the operations the
// command line runs beside it (a join of managed shards).
func (s *Server) Cluster() *cluster.Cluster { return s.cluster }

// Repair runs anti-entropy repair on the gateway's shards (repair.Run),
// following it in the gateway's metrics.
func (s *Server) Repair(ctx context.Context, opts repair.Options) (repair.Result, error) {
	opts.Status = &s.metrics.repair
	return repair.Run(ctx, s.cluster, opts)
}

// RepairPartition repairs one partition of a table, given its partition
// key's components, across its replicas (repair.Partition).
func (s *Server) RepairPartition(ctx context.Context, keyspace, table string, key ...[]byte) (repair.Result, error) {
	return repair.Partition(ctx, s.cluster, keyspace, table, key)
}

// Sweep runs one sweeper pass on every shard, after any pass in progress,
// and reports it shard by shard.
func (s *Server) Sweep(ctx context.Context) []repair.SweepStats { return s.sweeper.Pass(ctx) }

// SkewClock makes the gateway give writes that bring no timestamp of
// their own one as if its clock ran d ahead of the machine's (behind when
// d is negative), for tests of clock skew between gateways; 0 undoes it.
// Timestamps never go back all the same (exec's ServerTimestamp): a clock
// set back gives each write one past the last until it catches up.
func (s *Server) SkewClock(d time.Duration) { s.env.Hooks.ClockSkew.Store(int64(d)) }

// DefaultSweepInterval is the time between sweeper passes that cqlpg
// serve uses.
const DefaultSweepInterval = time.Minute

// clientRows answers system_views.clients: this gateway's connections.
func (s *Server) clientRows() []exec.VirtualRow {
	s.mu.Lock()
	conns := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	var rows []exec.VirtualRow
	for _, c := range conns {
		addr, _ := c.nc.RemoteAddr().(*net.TCPAddr)
		if addr == nil {
			continue
		}
		stage := "established"
		if c.started.Load() {
			stage = "ready"
		}
		row := exec.VirtualRow{"address": exec.InetValue(addr.IP), "port": exec.IntValue(int32(addr.Port)),
			"hostname": exec.TextValue(addr.IP.String()), "connection_stage": exec.TextValue(stage),
			"protocol_version": exec.IntValue(int32(c.version)), "request_count": exec.BigintValue(c.requests.Load())}
		if s.auth != nil {
			if role := s.auth.RoleOf(c); role != "" {
				row["username"] = exec.TextValue(role)
			}
		}
		if opts := c.options.Load(); opts != nil {
			row["client_options"] = exec.TextMapValue(*opts)
			if v, ok := (*opts)["DRIVER_NAME"]; ok {
				row["driver_name"] = exec.TextValue(v)
			}
			if v, ok := (*opts)["DRIVER_VERSION"]; ok {
				row["driver_version"] = exec.TextValue(v)
			}
		}
		tc, ssl := c.nc.(*tls.Conn)
		row["ssl_enabled"] = exec.BoolValue(ssl)
		if ssl {
			st := tc.ConnectionState()
			row["ssl_protocol"] = exec.TextValue(tls.VersionName(st.Version))
			row["ssl_cipher_suite"] = exec.TextValue(tls.CipherSuiteName(st.CipherSuite))
		}
		rows = append(rows, row)
	}
	return rows
}

// settingRows answers system_views.settings: the gateway's settings, by
// Cassandra's names where one means the same, with secrets redacted.
func (s *Server) settingRows() []exec.VirtualRow {
	c := s.cfg
	settings := map[string]string{
		"native_transport_port":                        portOf(c.Listen),
		"rpc_address":                                  hostOf(c.Listen),
		"write_request_timeout":                        durationSetting(c.WriteTimeout),
		"counter_write_request_timeout":                durationSetting(c.CounterWriteTimeout),
		"cas_contention_timeout":                       durationSetting(c.CASContentionTimeout),
		"read_request_timeout":                         durationSetting(c.ReadTimeout),
		"range_request_timeout":                        durationSetting(c.RangeTimeout),
		"request_timeout":                              durationSetting(c.RequestTimeout),
		"native_transport_max_frame_size":              fmt.Sprintf("%dB", c.MaxFrameSize),
		"native_transport_max_concurrent_connections":  fmt.Sprint(c.MaxConnections),
		"native_transport_max_requests_per_connection": fmt.Sprint(c.MaxRequestsPerConn),
		"batch_size_warn_threshold":                    fmt.Sprintf("%dKiB", c.BatchSizeWarn>>10),
		"batch_size_fail_threshold":                    fmt.Sprintf("%dKiB", c.BatchSizeFail>>10),
		"authenticator":                                "AllowAllAuthenticator",
		"authorizer":                                   "AllowAllAuthorizer",
		"client_encryption_options_enabled":            fmt.Sprint(c.TLS != nil || c.TLSCerts != nil),
		"num_tokens":                                   fmt.Sprint(c.NumTokens),
		"cluster_name":                                 c.ClusterName,
		"endpoint_snitch":                              "GossipingPropertyFileSnitch",
		"dc":                                           c.Datacenter,
		"rack":                                         c.Rack,
		"partitioner":                                  exec.Partitioner,
	}
	if c.Auth.Enabled {
		settings["authenticator"], settings["authorizer"] = "PasswordAuthenticator", "CassandraAuthorizer"
		settings["credentials_validity"] = durationSetting(c.Auth.CredentialsValidity)
		settings["permissions_validity"] = durationSetting(c.Auth.PermissionsValidity)
	}
	for i, sh := range c.Shards {
		settings[fmt.Sprintf("cqlpg_shard_%d", i)] = sharding.Redact(sh.URL)
	}
	var rows []exec.VirtualRow
	for _, name := range slices.Sorted(maps.Keys(settings)) {
		rows = append(rows, exec.VirtualRow{"name": exec.TextValue(name), "value": exec.TextValue(settings[name])})
	}
	return rows
}

func durationSetting(d time.Duration) string { return fmt.Sprintf("%dms", d.Milliseconds()) }

func portOf(hostport string) string {
	_, port, _ := net.SplitHostPort(hostport)
	return port
}

func hostOf(hostport string) string {
	host, _, _ := net.SplitHostPort(hostport)
	return strings.Trim(host, "[]")
}

// runAdvisor runs the advisor over every table every AdviseInterval,
// until ctx ends, and counts its findings by kind for the metrics.
func (s *Server) runAdvisor(ctx context.Context) {
	if s.cfg.AdviseInterval < 0 {
		return
	}
	tick := time.NewTicker(s.cfg.AdviseInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		opts := s.cfg.Advise
		opts.Traffic, opts.Queries, opts.Duty = s.env.Hot.Hot(20), s.env.Cache.FilterStats(), 0.1
		rep, err := advise.Run(ctx, s.cluster, opts)
		if err != nil {
			if ctx.Err() == nil {
				s.log.Warn("the advisor's pass failed", "err", err)
			}
			continue
		}
		counts := map[string]int{}
		for _, f := range rep.Findings {
			counts[f.Kind]++
		}
		for _, k := range advise.Kinds {
			s.metrics.advice.WithLabelValues(k).Set(float64(counts[k]))
		}
		s.log.Info("advisor pass", "tables", rep.Tables, "findings", len(rep.Findings), "took", rep.Took.Round(time.Millisecond))
	}
}
