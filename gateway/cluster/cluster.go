package cluster

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cqlpg/cqlpg/migrations"
	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/sharding"
)

// ShardConfig names one shard and its place in the topology.
type ShardConfig struct {
	URL        string
	Datacenter string
	Rack       string
}

// Cluster is the gateway's view of its shards: a control pool on each for
// the catalog and schema changes, the data pools, the ring and the schema,
// the last two as snapshots swapped atomically.
type Cluster struct {
	log *slog.Logger
	cfg Config
	// onChange hears of a data pool going down or up.
	onChange func(shard string, up bool)
	// ring is the membership served (ring.go), and ringMu serializes its
	// changes.
	ring   atomic.Pointer[ringState]
	ringMu sync.Mutex
	// drained is the ring version served with no counter update or
	// lightweight transaction in flight on an older one
	// (DrainedRingVersion).
	drained  atomic.Int64
	current  atomic.Pointer[pgschema.Schema]
	reloadMu sync.Mutex
	// changed is signalled when a reload changes the schema version, for
	// the gateway to publish the version it serves (its registry).
	changed chan struct{}
	// applying holds the versions of this gateway's schema changes in
	// progress: notifications of them are no news to it (Applying).
	applying sync.Map
}

// Config is what Open needs of the gateway's configuration.
type Config struct {
	Shards []ShardConfig
	// NumTokens is how many vnodes a joining shard takes.
	NumTokens int
	// ShardConns is the number of data connections per shard.
	ShardConns int
	// RequestTimeout bounds every statement a data pool runs.
	RequestTimeout time.Duration
	// NullData answers data statements from memory (sharding.PoolConfig).
	NullData bool
}

// Topology returns the current ring and shards.
func (c *Cluster) Topology() *sharding.Topology {
	if r := c.ring.Load(); r != nil {
		return r.topo
	}
	return nil
}

// Schema returns the current schema snapshot.
func (c *Cluster) Schema() *pgschema.Schema { return c.current.Load() }

// Control returns the control pools, one per shard in topology order,
// for the catalog and the gateways' own tables. A caller that needs both
// in step takes them from one Ring.
func (c *Cluster) Control() []*pgxpool.Pool {
	if r := c.ring.Load(); r != nil {
		return r.control
	}
	return nil
}

// Changed is signalled when a reload changes the schema version, for the
// gateway to publish the version it serves.
func (c *Cluster) Changed() <-chan struct{} { return c.changed }

// Applying reports whether version is one of this gateway's schema
// changes in progress: notifications of it are no news.
func (c *Cluster) Applying(version [16]byte) bool {
	_, ok := c.applying.Load(version)
	return ok
}

// NewStatic returns a cluster with a fixed topology and schema and no
// control pools, for benchmarks that run without shards.
func NewStatic(log *slog.Logger, topo *sharding.Topology, schema *pgschema.Schema) *Cluster {
	c := &Cluster{log: log, changed: make(chan struct{}, 1)}
	c.ring.Store(&ringState{topo: topo})
	c.current.Store(schema)
	return c
}

// Open migrates every shard's catalog, joins new shards to the ring in the
// order given, and loads the schema; onChange hears of a data pool going
// down or up.
func Open(ctx context.Context, cfg Config, log *slog.Logger, onChange func(shard string, up bool)) (*Cluster, error) {
	if len(cfg.Shards) == 0 {
		return nil, errors.New("no shards configured")
	}
	c := &Cluster{log: log, cfg: cfg, onChange: onChange, changed: make(chan struct{}, 1)}
	urls := make([]string, len(cfg.Shards))
	for i, sc := range cfg.Shards {
		urls[i] = sc.URL
	}
	given, down, err := openMembers(ctx, urls, log)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(down, nil) {
		for _, p := range given {
			p.Close()
		}
		return nil, fmt.Errorf("no shard given can be reached: %w", errors.Join(down...))
	}
	c.ring.Store(&ringState{control: given})
	members, version, urls, control, err := c.membership(ctx, cfg, down)
	if err != nil {
		c.Close()
		return nil, err
	}
	held := false
	for _, pool := range control {
		if f, err := pgschema.WritesHeld(ctx, pool); err == nil {
			held = f
			break
		}
	}
	r, err := c.newRing(version, members, held, urls, control, nil)
	if err != nil {
		for _, p := range control {
			p.Close()
		}
		c.ring.Store(nil)
		return nil, err
	}
	c.ring.Store(r)
	c.drained.Store(version)
	if err := c.Reload(ctx); err != nil {
		c.Close()
		return nil, err
	}
	for i, pool := range c.Control() {
		err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error { return pgschema.SyncSQLWrites(ctx, tx) })
		var connect *pgconn.ConnectError
		if errors.As(err, &connect) {
			log.Warn("a member is down as the gateway starts; its requests fail over to the other replicas until it is back",
				"shard", c.Topology().Shards[i].Info.Name)
			continue
		}
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("triggers for SQL writes: %w", err)
		}
	}
	return c, nil
}

// openControl migrates the catalog of each shard at urls and opens its
// control pool, all at once; every shard must answer.
func openControl(ctx context.Context, urls []string, log *slog.Logger) ([]*pgxpool.Pool, error) {
	pools, down, err := openMembers(ctx, urls, log)
	if err == nil {
		if err = errors.Join(down...); err != nil {
			for _, p := range pools {
				p.Close()
			}
		}
	}
	return pools, err
}

// openMembers migrates the catalog of each member at urls and opens its
// control pool, all at once. A member that cannot be reached is not an
// error: its pool is made all the same (it connects when the member comes
// back), and down holds why (nil for the members up). It fails for other
// errors. A cluster opens
// with a member down, as a Cassandra coordinator starts with a node down.
func openMembers(ctx context.Context, urls []string, log *slog.Logger) ([]*pgxpool.Pool, []error, error) {
	pools := make([]*pgxpool.Pool, len(urls))
	down := make([]error, len(urls))
	errs := make([]error, len(urls))
	var wg sync.WaitGroup
	for i, url := range urls {
		wg.Go(func() {
			err := migrations.Up(ctx, url)
			var connect *pgconn.ConnectError
			if errors.As(err, &connect) {
				down[i], err = fmt.Errorf("shard %d: %w", i, err), nil
			}
			if err != nil {
				errs[i] = fmt.Errorf("shard %d: %w", i, err)
				return
			}
			pc, err := sharding.ParsePoolConfig(pgschema.GatewayConnString(url), log)
			if err == nil {
				pc.MaxConns = 4
				pools[i], err = pgxpool.NewWithConfig(ctx, pc)
			}
			if err != nil {
				errs[i] = fmt.Errorf("shard %d: %w", i, err)
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		for _, p := range pools {
			if p != nil {
				p.Close()
			}
		}
		return nil, nil, err
	}
	return pools, down, nil
}

// join reads each shard's identity, giving new shards tokens that
// balance the ring with the shards before them.
func (c *Cluster) join(ctx context.Context, cfg Config, control []*pgxpool.Pool) ([]sharding.ShardInfo, error) {
	var infos []sharding.ShardInfo
	var existing [][]sharding.Token
	for i, sc := range cfg.Shards {
		node, err := pgschema.LoadNode(ctx, control[i])
		if err != nil {
			return nil, fmt.Errorf("shard %d: %w", i, err)
		}
		if node == nil {
			// A new cluster has no keyspaces yet: tokens balanced for
			// RF 3, as Cassandra 4 allocates them by default.
			tokens := sharding.AllocateTokensRF(existing, cfg.NumTokens, sharding.AllocationFactor(nil, sc.Datacenter), time.Now().UnixNano())
			n := &pgschema.Node{HostID: NewUUID(4), Name: fmt.Sprintf("shard%d", i),
				Datacenter: sc.Datacenter, Rack: sc.Rack}
			for _, t := range tokens {
				n.Tokens = append(n.Tokens, int64(t))
			}
			if node, err = pgschema.ClaimNode(ctx, control[i], n); err != nil {
				return nil, fmt.Errorf("shard %d: %w", i, err)
			}
			c.log.Info("shard joined the ring", "shard", node.Name, "tokens", len(node.Tokens))
		}
		info := sharding.ShardInfo{HostID: node.HostID, Name: node.Name, DC: node.Datacenter, Rack: node.Rack}
		for _, t := range node.Tokens {
			info.Tokens = append(info.Tokens, sharding.Token(t))
		}
		infos = append(infos, info)
		existing = append(existing, info.Tokens)
	}
	return infos, nil
}

// Reload reads the schema from the first shard that answers and makes it
// the current snapshot.
func (c *Cluster) Reload(ctx context.Context) error {
	_, _, err := c.SwapSchema(ctx)
	return err
}

// SwapSchema reloads the schema and returns the snapshots before and
// after, which reloads made one at a time make consecutive.
func (c *Cluster) SwapSchema(ctx context.Context) (old, cur *pgschema.Schema, err error) {
	c.reloadMu.Lock()
	defer c.reloadMu.Unlock()
	old = c.current.Load()
	var errs []error
	for i, pool := range c.Control() {
		s, err := pgschema.Load(ctx, pool)
		if err == nil {
			c.current.Store(s)
			if old == nil || old.Version != s.Version {
				for _, u := range s.Unloadable() {
					c.log.Error("catalog object left out of the schema; statements that touch it fail",
						"kind", u.Kind, "object", u.Object(), "err", u.Err)
				}
			}
			if old != nil && old.Version != s.Version {
				select {
				case c.changed <- struct{}{}:
				default:
				}
			}
			return old, s, nil
		}
		errs = append(errs, fmt.Errorf("shard %d: %w", i, err))
	}
	return nil, nil, fmt.Errorf("cannot read the schema from any shard: %w", errors.Join(errs...))
}

// ReadCatalog runs f on the first shard whose catalog answers, as schema
// reads do: every shard holds the whole catalog.
func (c *Cluster) ReadCatalog(ctx context.Context, f func(q pgschema.Querier) error) error {
	var errs []error
	for i, pool := range c.Control() {
		err := f(pool)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return err
		}
		errs = append(errs, fmt.Errorf("shard %d: %w", i, err))
	}
	return errors.Join(errs...)
}

// ApplySchema runs a schema change on every shard, each in a transaction
// holding the shard's schema lock, and records version as the new schema
// version where it applied. It reports whether the change applied. Once
// the change has applied everywhere, the other gateways are notified.
func (c *Cluster) ApplySchema(ctx context.Context, version [16]byte,
	change func(ctx context.Context, tx pgx.Tx) (bool, error)) (bool, error) {
	c.applying.Store(version, struct{}{})
	defer c.applying.Delete(version)
	served := c.RingVersion()
	var newer atomic.Bool
	control := c.Control()
	applied := make([]bool, len(control))
	errs := make([]error, len(control))
	var wg sync.WaitGroup
	for i, pool := range control {
		wg.Go(func() {
			ok := false
			errs[i] = retryLocks(ctx, func() error {
				return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
					if err := pgschema.Lock(ctx, tx); err != nil {
						return err
					}
					// A shard joining takes the catalog under every
					// member's schema lock: a change that takes the lock
					// after it finds a newer ring, and goes to the joiner
					// too (below).
					var ring int64
					if err := tx.QueryRow(ctx, `SELECT coalesce((SELECT version FROM cqlpg.ring_version), 0)`).Scan(&ring); err != nil {
						return err
					}
					if ring > served {
						newer.Store(true)
					}
					// The change's table locks are tried for a short while
					// only: a DDL statement waiting for one holds up every
					// request queued behind it on that table. The guard
					// against DDL run outside cqlpg lets this change pass
					// and records the layout it leaves (migration 0012).
					if _, err := tx.Exec(ctx, "SET LOCAL lock_timeout = '100ms'; SET LOCAL cqlpg.ddl = 'on'"); err != nil {
						return err
					}
					var err error
					if ok, err = change(ctx, tx); err != nil || !ok {
						return err
					}
					return pgschema.SetVersion(ctx, tx, version)
				})
			})
			applied[i] = ok && errs[i] == nil
		})
	}
	wg.Wait()
	any := false
	for i := range applied {
		any = any || applied[i]
	}
	if newer.Load() && ctx.Err() == nil {
		if err := c.applyToNewMembers(ctx, version, control, change); err != nil {
			errs = append(errs, err)
		}
	}
	if err := sharding.FirstError(errs); err != nil {
		if any {
			c.log.Error("schema change applied on some shards only", "err", err)
		}
		return any, err
	}
	if any {
		err := c.Reload(ctx)
		c.notifySchema(ctx, version)
		return true, err
	}
	return false, nil
}

// applyToNewMembers switches to the newest ring and applies a schema
// change to its members not among control, unless one already holds the
// change's schema version (it took the catalog after the change).
func (c *Cluster) applyToNewMembers(ctx context.Context, version [16]byte, control []*pgxpool.Pool,
	change func(ctx context.Context, tx pgx.Tx) (bool, error)) error {
	if _, err := c.CheckRing(ctx); err != nil {
		return err
	}
	for _, pool := range c.Control() {
		if slices.Contains(control, pool) {
			continue
		}
		err := retryLocks(ctx, func() error {
			return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
				if err := pgschema.Lock(ctx, tx); err != nil {
					return err
				}
				var cur [16]byte
				if err := tx.QueryRow(ctx, `SELECT version FROM cqlpg.schema_version`).Scan(&cur); err != nil {
					return err
				}
				if cur == version {
					return nil
				}
				if _, err := tx.Exec(ctx, "SET LOCAL lock_timeout = '100ms'; SET LOCAL cqlpg.ddl = 'on'"); err != nil {
					return err
				}
				ok, err := change(ctx, tx)
				if err != nil || !ok {
					return err
				}
				return pgschema.SetVersion(ctx, tx, version)
			})
		})
		if err != nil {
			return fmt.Errorf("a joining member: %w", err)
		}
		c.log.Info("a schema change went to a member that joined while it ran")
	}
	return nil
}

// retryLocks runs f, a transaction, again while it fails for a lock it
// could not take in time, a deadlock with requests in flight, or a
// connection the shard had closed (twice at most), with a growing pause,
// until ctx ends: a schema change must apply on every shard, and each try
// holds up requests only briefly.
func retryLocks(ctx context.Context, f func() error) error {
	pause := 10 * time.Millisecond
	for tries := 1; ; tries++ {
		err := f()
		var pgErr *pgconn.PgError
		lock := errors.As(err, &pgErr) && (pgErr.Code == "55P03" || pgErr.Code == "40P01" || pgErr.Code == "40001")
		// A pooled connection the shard closed (a restart, 57P01 when it
		// happened mid-transaction) fails the first statement sent on it;
		// the transaction did not commit, and a new connection takes it.
		// A shard that stays unreachable fails the change after a few
		// tries.
		gone := tries < 3 && (pgconn.SafeToRetry(err) || errors.As(err, &pgErr) && pgErr.Code == "57P01")
		if !lock && !gone {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(pause):
		}
		pause = min(2*pause, 500*time.Millisecond)
	}
}

// OnEveryShard runs f in a transaction on every shard, in parallel, and
// returns the first error.
func (c *Cluster) OnEveryShard(ctx context.Context, f func(ctx context.Context, tx pgx.Tx) error) error {
	control := c.Control()
	errs := make([]error, len(control))
	var wg sync.WaitGroup
	for i, pool := range control {
		wg.Go(func() {
			errs[i] = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error { return f(ctx, tx) })
		})
	}
	wg.Wait()
	return sharding.FirstError(errs)
}

// Ping checks that every shard answers, in parallel, within two seconds.
func (c *Cluster) Ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	control := c.Control()
	errs := make([]error, len(control))
	var wg sync.WaitGroup
	for i, pool := range control {
		wg.Go(func() {
			if err := pool.Ping(ctx); err != nil {
				errs[i] = fmt.Errorf("shard %d is unreachable", i)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Close releases every pool.
func (c *Cluster) Close() {
	if t := c.Topology(); t != nil {
		for _, s := range t.Shards {
			s.Pool.Close()
		}
	}
	for _, p := range c.Control() {
		if p != nil {
			p.Close()
		}
	}
}

// NewUUID returns a random UUID of the given version (4, or 1 for the time
// based ids Cassandra gives tables, with a random node).
func NewUUID(version byte) [16]byte {
	var u [16]byte
	rand.Read(u[:])
	if version == 1 {
		// 100ns intervals since 1582-10-15.
		ts := uint64(time.Now().UnixNano()/100) + 0x01b21dd213814000
		u[0], u[1], u[2], u[3] = byte(ts>>24), byte(ts>>16), byte(ts>>8), byte(ts)
		u[4], u[5] = byte(ts>>40), byte(ts>>32)
		u[6], u[7] = byte(ts>>56)&0x0f, byte(ts>>48)
	}
	u[6] = u[6]&0x0f | version<<4
	u[8] = u[8]&0x3f | 0x80
	return u
}

// Channels the gateways notify on (NOTIFY on every shard, LISTEN on one).
const (
	// SchemaChannel carries the new schema version, as a uuid's text.
	SchemaChannel = "cqlpg_schema"
	// GatewaysChannel carries the host id of a gateway that registered,
	// left, or now serves another schema version.
	GatewaysChannel = "cqlpg_gateways"
	// RingChannel carries a new ring version the members record.
	RingChannel = "cqlpg_ring"
)

// NotifySQL sends a notification: the channel, then the payload.
const NotifySQL = `SELECT pg_notify($1, $2)`

// notifySchema tells the other gateways, through every shard, that the
// schema is now at version. It runs after the change has committed
// everywhere, so that a gateway that hears of it finds the change on
// every shard; one that misses it finds it at its next version check.
func (c *Cluster) notifySchema(ctx context.Context, version [16]byte) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for i, pool := range c.Control() {
		wg.Go(func() {
			if _, err := pool.Exec(ctx, NotifySQL, SchemaChannel, pgschema.UUIDText(version[:])); err != nil {
				c.log.Warn("cannot notify the other gateways of a schema change; they see it at their next version check",
					"shard", i, "err", err)
			}
		})
	}
	wg.Wait()
}
