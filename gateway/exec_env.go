package gateway

import (
	"log/slog"
	"net"
	"time"

	"github.com/cqlpg/cqlpg/gateway/auth"
	"github.com/cqlpg/cqlpg/gateway/cluster"
)

// env is the gateway as executions see it: its settings, its shards and
// the services around them. Executions reach the gateway through it and
// their session alone, never through the server or the connection.
type env struct {
	cfg     execConfig
	cluster *cluster.Cluster
	metrics *execMetrics
	log     *slog.Logger
	hooks   hooks
	// auth checks each statement's permission; nil when authentication
	// is off.
	auth   *auth.Authenticator
	traces traceStore
	// cache holds the prepared statements (cache.go).
	cache *stmtCache
	// shardUp wakes the hint replayer when a shard comes back up.
	shardUp chan struct{}
	// gateways returns the registry of live gateways, which starts after
	// the server is made; hostID this gateway's host id, known once it
	// listens; started when it started.
	gateways func() *cluster.Registry
	hostID   func() [16]byte
	started  time.Time
	// broadcastSchemaChange pushes a SCHEMA_CHANGE event to the clients.
	broadcastSchemaChange func(change, target, keyspace, name string)
	// clientRows and settingRows answer system_views.clients and
	// system_views.settings.
	clientRows, settingRows func() []virtualRow
}

// execConfig is what executions need of the gateway's settings.
type execConfig struct {
	// ClusterName, Datacenter and Rack are what system.local reports.
	ClusterName, Datacenter, Rack string
	// RequestTimeout bounds every request; the others are the times
	// replicas have to meet a consistency level.
	RequestTimeout, WriteTimeout, CounterWriteTimeout, ReadTimeout, RangeTimeout time.Duration
	// BatchlogTimeout is the age after which a batch log record counts as
	// abandoned and is replayed; BatchlogInterval how often the batch
	// logs are checked.
	BatchlogTimeout, BatchlogInterval time.Duration
}

// session is what an execution needs of the connection it serves.
type session interface {
	// ProtocolVersion is the connection's protocol version.
	ProtocolVersion() byte
	// SetKeyspace switches the session's keyspace (USE).
	SetKeyspace(keyspace string)
	// LocalAddr is the address the client connected to.
	LocalAddr() net.Addr
	// Logger logs with the connection's attributes.
	Logger() *slog.Logger
	// Answer ends an asynchronous request of st that arrived at at: resp
	// is its finished RESULT frame, or nil when err is its answer.
	Answer(stream int16, resp *[]byte, err error, st *statement, at time.Time)
}
