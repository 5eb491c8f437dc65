package gateway

import (
	"context"
	"log/slog"
	"time"

	"github.com/cqlpg/cqlpg/gateway/auth"
	"github.com/cqlpg/cqlpg/gateway/cluster"
)

// env is what the executor needs of the gateway beyond a request's
// connection: its settings, its shards and the services around them.
// Executions reach the gateway through it alone (and their connection
// for what is the session's), never through the Server: this is the seam
// along which the executor will move into a package of its own, where
// the services become interfaces.
type env struct {
	cfg     *Config
	cluster *cluster.Cluster
	metrics *metrics
	log     *slog.Logger
	hooks   *hooks
	auth    *auth.Authenticator
	traces  *traceStore
	// gateways returns the registry of live gateways, which starts after
	// the server is made; hostID this gateway's host id, known once it
	// listens; started when it started.
	gateways func() *cluster.Registry
	hostID   func() [16]byte
	started  time.Time
	// staleExecute answers a statement a shard refused as stale: planned
	// again and run, or UNPREPARED.
	staleExecute func(ctx context.Context, st *statement, err error) error
	// broadcastSchemaChange pushes a SCHEMA_CHANGE event to the clients.
	broadcastSchemaChange func(change, target, keyspace, name string)
	// clientRows and settingRows answer system_views.clients and
	// system_views.settings.
	clientRows, settingRows func() []virtualRow
}

// newEnv returns the executor's view of s.
func newEnv(s *Server) env {
	return env{cfg: &s.cfg, cluster: s.cluster, metrics: s.metrics, log: s.log, hooks: &s.hooks, auth: s.auth,
		traces: &s.traces, gateways: func() *cluster.Registry { return s.gateways },
		hostID: func() [16]byte { return s.hostID }, started: s.started,
		staleExecute: s.staleExecute, broadcastSchemaChange: s.broadcastSchemaChange,
		clientRows: s.clientRows, settingRows: s.settingRows}
}
