package repair

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cqlpg/cqlpg/gateway/cluster"
	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/sharding"
)

// A keyspace's replication change is a movement too, as a topology
// operation is: ALTER KEYSPACE records the replication before it
// (Keyspace.ReplicationFrom), reads keep its replicas and writes also
// reach the replicas the new one adds, as pending ones. Once every live
// gateway serves that schema, one gateway streams the ranges the new
// replicas gain, then clears ReplicationFrom with a schema change, and
// reads move to the new replicas. Cassandra leaves the new replicas empty
// until a repair; cqlpg streams them, so that a QUORUM read never meets a
// quorum of replicas without the data.

// StreamStatus counts the streaming a gateway does, for metrics.
type StreamStatus struct {
	Rows          atomic.Int64
	RangesPending atomic.Int64
	Running       atomic.Bool
}

// replicationLock is the advisory lock that elects the gateway that
// streams a replication change.
const replicationLock = 0x63716c70_7265706c // "cqlprepl"

// FollowReplication checks every interval, until ctx ends, for keyspaces
// whose replication changes, and streams them as said above.
func FollowReplication(ctx context.Context, c *cluster.Cluster, reg *cluster.Registry, log *slog.Logger,
	every time.Duration, status *StreamStatus) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for _, ks := range c.Schema().Keyspaces() {
			if ks.ReplicationFrom != nil && ctx.Err() == nil {
				if err := streamReplication(ctx, c, reg, log, ks, status); err != nil && ctx.Err() == nil {
					log.Warn("cannot stream a replication change yet", "keyspace", ks.Name, "err", err)
				}
			}
		}
	}
}

// streamReplication streams the replication change of ks, if this
// gateway holds the lock and every live gateway serves the schema.
func streamReplication(ctx context.Context, c *cluster.Cluster, reg *cluster.Registry, log *slog.Logger,
	ks *pgschema.Keyspace, status *StreamStatus) error {
	topo, control := c.Snapshot()
	if topo.Next != nil {
		return nil // a topology operation first; replication changes wait
	}
	conn, err := control[0].Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	var locked bool
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, int64(replicationLock)).Scan(&locked); err != nil || !locked {
		return err // another gateway streams
	}
	defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, int64(replicationLock))
	schema := c.Schema()
	if !reg.AgreeOn(ctx, schema.Version, 30*time.Second) {
		return nil // a gateway does not write to the new replicas yet
	}
	ks = schema.Keyspace(ks.Name)
	if ks == nil || ks.ReplicationFrom == nil {
		return nil
	}
	from, to := *ks.ReplicationFrom, ks.Replication
	pieces, err := Pieces(topo, schema, ks.Name, -1, func(*pgschema.Keyspace) []sharding.Movement {
		return topo.ReplicationMovements(from, to)
	})
	if err != nil {
		return err
	}
	log.Info("streaming a replication change", "keyspace", ks.Name, "from", from.String(), "to", to.String(),
		"ranges", len(pieces))
	status.Running.Store(true)
	status.RangesPending.Store(int64(len(pieces)))
	defer status.Running.Store(false)
	start, last := time.Now(), int64(0)
	rows, err := Stream(ctx, topo, pieces, 0, func(p StreamProgress) {
		status.Rows.Add(p.Rows - last)
		last = p.Rows
		status.RangesPending.Store(int64(p.Total - p.Done))
		if p.Done%64 == 0 || p.Done == p.Total {
			log.Info("streaming a replication change", "keyspace", ks.Name, "ranges_done", p.Done, "ranges", p.Total,
				"rows", p.Rows, "elapsed", p.Elapsed.Round(time.Millisecond))
		}
	})
	if err != nil {
		return err
	}
	// The switch to the new replicas holds counter updates and
	// lightweight transactions, as a topology operation's last step does:
	// the counters are copied whole to the new replicas (they never get
	// increments as pending ones), and a partition's first replica, which
	// its conditional writes lock, may change with the replication.
	var counted int64
	err = c.WhileHeld(ctx, cluster.OpOptions{GatewayTimeout: 10 * time.Second, BarrierLimit: 30 * time.Second},
		func(topo *sharding.Topology) error {
			if tables := c.CounterTables(ks.Name); len(tables) > 0 {
				var err error
				counted, err = c.CopyCounters(ctx, topo, tables, -1, func(*pgschema.Keyspace) []sharding.Movement {
					return topo.ReplicationMovements(from, to)
				})
				if err != nil {
					return err
				}
			}
			version := cluster.NewUUID(4)
			if _, err := c.ApplySchema(ctx, version, func(ctx context.Context, tx pgx.Tx) (bool, error) {
				return pgschema.ReplicationStreamed(ctx, tx, ks.Name, to)
			}); err != nil {
				return err
			}
			reg.AgreeOn(ctx, version, 30*time.Second)
			return nil
		})
	if err != nil {
		return err
	}
	log.Info("replication change streamed: reads use the new replicas", "keyspace", ks.Name, "ranges", len(pieces),
		"rows", rows, "counter_rows", counted, "took", time.Since(start).Round(time.Millisecond))
	return c.Reload(ctx)
}
