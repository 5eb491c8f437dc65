package exec

import (
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/cqlpg/cqlpg/gateway/auth"
	"github.com/cqlpg/cqlpg/gateway/cluster"
)

// Env is the gateway as executions see it: its settings, its shards and
// the services around them. Executions reach the gateway through it and
// their session alone, never through the server or the connection.
type Env struct {
	Config  Config
	Cluster *cluster.Cluster
	Metrics *Metrics
	Log     *slog.Logger
	Hooks   Hooks
	// Auth checks each statement's permission; nil when authentication
	// is off.
	Auth   *auth.Authenticator
	Traces TraceStore
	// Cache holds the prepared statements (cache.go).
	Cache *Cache
	// ShardUp wakes the hint replayer when a shard comes back up.
	ShardUp chan struct{}
	// Gateways returns the registry of live gateways, which starts after
	// the server is made; hostID this gateway's host id, known once it
	// listens; started when it started.
	Gateways func() *cluster.Registry
	HostID   func() [16]byte
	Started  time.Time
	// BroadcastSchemaChange pushes a SCHEMA_CHANGE event to the clients.
	BroadcastSchemaChange func(change, target, keyspace, name string, args ...string)
	// ClientRows and settingRows answer system_views.clients and
	// system_views.settings.
	ClientRows, SettingRows func() []VirtualRow

	// paxosLocks serialize this gateway's Paxos rounds on each partition
	// (paxos.go), by stripe.
	paxosLocks     [paxosStripes]chan struct{}
	paxosLocksOnce sync.Once
	// views drains the view logs and builds views (views.go).
	views views
	// Hot counts the partitions requests ask for, by sample (hot.go).
	Hot HotSampler
}

// Config is what executions need of the gateway's settings.
type Config struct {
	// ClusterName, Datacenter and Rack are what system.local reports.
	ClusterName, Datacenter, Rack string
	// RequestTimeout bounds every request; the others are the times
	// replicas have to meet a consistency level.
	RequestTimeout, WriteTimeout, CounterWriteTimeout, ReadTimeout, RangeTimeout time.Duration
	// CASContentionTimeout bounds the Paxos rounds of a lightweight
	// transaction, before its commit.
	CASContentionTimeout time.Duration
	// BatchlogTimeout is the age after which a batch log record counts as
	// abandoned and is replayed; BatchlogInterval how often the batch
	// logs are checked.
	BatchlogTimeout, BatchlogInterval time.Duration
	// BatchSizeWarn and BatchSizeFail are Cassandra's
	// batch_size_warn_threshold and batch_size_fail_threshold.
	BatchSizeWarn, BatchSizeFail int64
}

// Session is what an execution needs of the connection it serves.
type Session interface {
	// ProtocolVersion is the connection's protocol version.
	ProtocolVersion() byte
	// Keyspace is the session's keyspace, and SetKeyspace switches it
	// (USE).
	Keyspace() string
	SetKeyspace(keyspace string)
	// LocalAddr is the address the client connected to.
	LocalAddr() net.Addr
	// Logger logs with the connection's attributes.
	Logger() *slog.Logger
	// Answer ends an asynchronous request of st that arrived at at: resp
	// is its finished RESULT frame, or nil when err is its answer.
	Answer(stream int16, resp *[]byte, err error, st *Statement, at time.Time)
}
