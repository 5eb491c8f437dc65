package cluster

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/sharding"
)

// ringState is the membership a gateway serves at one ring version: the
// topology (ring, shards and their data pools) and each member's control
// pool and connection string, in the members' joining order. It never
// changes once published; a newer version replaces it whole.
type ringState struct {
	version int64
	topo    *sharding.Topology
	control []*pgxpool.Pool
	urls    []string
}

// DrainedRingVersion returns the ring version the gateway serves with no
// counter update or lightweight transaction in flight on an older one:
// the version a topology operation's barrier waits for.
func (c *Cluster) DrainedRingVersion() int64 { return c.drained.Load() }

// RingVersion returns the ring version the gateway serves.
func (c *Cluster) RingVersion() int64 {
	if r := c.ring.Load(); r != nil {
		return r.version
	}
	return 0
}

// Snapshot returns the topology and the members' control pools of one
// ring version, indexed alike; Topology and Control, called one after the
// other, may straddle a switch.
func (c *Cluster) Snapshot() (*sharding.Topology, []*pgxpool.Pool) {
	if r := c.ring.Load(); r != nil {
		return r.topo, r.control
	}
	return nil, nil
}

// newRing builds the state of members at version, whose connection
// strings and control pools are urls and control. Members in old keep
// their data pools; the others get new ones.
//
// The ring reads use holds the tokens of the members in state normal and
// leaving. While a member joins or leaves, the topology also carries the
// ring once it has (joining members' tokens in, leaving members' out),
// whose extra replicas writes go to as pending ones.
func (c *Cluster) newRing(version int64, members []pgschema.Member, held bool, urls []string, control []*pgxpool.Pool,
	old *ringState) (*ringState, error) {
	pools := map[[16]byte]*sharding.Pool{}
	if old != nil && old.topo != nil {
		for _, s := range old.topo.Shards {
			pools[s.Info.HostID] = s.Pool
		}
	}
	read := make([]sharding.ShardInfo, len(members))
	next := make([]sharding.ShardInfo, len(members))
	moving := false
	shards := make([]*sharding.Shard, len(members))
	for i, m := range members {
		info := sharding.ShardInfo{HostID: m.HostID, Name: m.Name, DC: m.Datacenter, Rack: m.Rack}
		var tokens []sharding.Token
		for _, t := range m.Tokens {
			tokens = append(tokens, sharding.Token(t))
		}
		read[i], next[i] = info, info
		switch m.State {
		case pgschema.MemberJoining:
			next[i].Tokens, moving = tokens, true
		case pgschema.MemberLeaving:
			read[i].Tokens, moving = tokens, true
		default:
			read[i].Tokens, next[i].Tokens = tokens, tokens
		}
		pool := pools[m.HostID]
		if pool == nil {
			name := m.Name
			var err error
			pool, err = sharding.NewPool(sharding.PoolConfig{Name: name, URL: pgschema.GatewayConnString(urls[i]),
				Conns: c.cfg.ShardConns, Timeout: c.cfg.RequestTimeout, Log: c.log, Null: c.cfg.NullData,
				OnChange: func(up bool) { c.onChange(name, up) }})
			if err != nil {
				return nil, err
			}
		}
		shards[i] = &sharding.Shard{Info: read[i], URL: pgschema.GatewayConnString(urls[i]), Pool: pool}
	}
	ring, err := sharding.NewRing(read)
	if err != nil {
		return nil, err
	}
	topo := sharding.NewTopology(ring, shards)
	if moving {
		after, err := sharding.NewRing(next)
		if err != nil {
			return nil, err
		}
		topo = sharding.NewMovingTopology(ring, after, shards)
	}
	topo.Held = held
	return &ringState{version: version, topo: topo, control: control, urls: urls}, nil
}

// FollowRing checks every interval, until ctx ends, whether the members
// record a newer ring version, and switches to it (CheckRing).
func (c *Cluster) FollowRing(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if _, err := c.CheckRing(ctx); err != nil && ctx.Err() == nil {
			c.log.Warn("cannot follow the ring", "err", err)
		}
	}
}

// CheckRing switches to the newest ring version any member records, if it
// is newer than the one served, and reports whether it did. Requests in
// flight finish on the state they took; data pools of members that left
// are closed once those have had their time.
func (c *Cluster) CheckRing(ctx context.Context) (bool, error) {
	c.ringMu.Lock()
	defer c.ringMu.Unlock()
	cur := c.ring.Load()
	newest, from := cur.version, -1
	for i, pool := range cur.control {
		var v int64
		qctx, cancel := context.WithTimeout(ctx, time.Second)
		err := pool.QueryRow(qctx, `SELECT coalesce((SELECT version FROM cqlpg.ring_version), 0)`).Scan(&v)
		cancel()
		if err == nil && v > newest {
			newest, from = v, i
		}
	}
	if from < 0 {
		return false, nil
	}
	var members []pgschema.Member
	var version int64
	var held bool
	err := pgx.BeginTxFunc(ctx, cur.control[from], pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly},
		func(tx pgx.Tx) error {
			var err error
			if members, version, err = pgschema.LoadMembers(ctx, tx); err != nil {
				return err
			}
			held, err = pgschema.WritesHeld(ctx, tx)
			return err
		})
	if err != nil {
		return false, err
	}
	byHost := map[[16]byte]int{}
	for i, s := range cur.topo.Shards {
		byHost[s.Info.HostID] = i
	}
	urls := make([]string, len(members))
	control := make([]*pgxpool.Pool, len(members))
	kept := map[int]bool{}
	for j, m := range members {
		if i, ok := byHost[m.HostID]; ok {
			urls[j], control[j], kept[i] = cur.urls[i], cur.control[i], true
			continue
		}
		urls[j] = pgschema.MemberURL(m.Address, c.cfg.Shards[0].URL)
		opened, err := openControl(ctx, urls[j:j+1], c.log)
		if err != nil {
			for k := range j {
				if _, old := byHost[members[k].HostID]; !old && control[k] != nil {
					control[k].Close()
				}
			}
			return false, fmt.Errorf("member %s: %w", m.Name, err)
		}
		control[j] = opened[0]
	}
	next, err := c.newRing(version, members, held, urls, control, cur)
	if err != nil {
		return false, err
	}
	c.ring.Store(next)
	// The gateway says it serves the new version once the counter
	// updates and lightweight transactions that took an older one are
	// done (DrainedRingVersion).
	go func() {
		deadline := time.Now().Add(2 * c.cfg.RequestTimeout)
		for cur.topo.HeldWrites.Load() > 0 && time.Now().Before(deadline) {
			time.Sleep(2 * time.Millisecond)
		}
		for {
			d := c.drained.Load()
			if d >= version || c.drained.CompareAndSwap(d, version) {
				break
			}
		}
		select {
		case c.changed <- struct{}{}:
		default:
		}
	}()
	c.log.Info("switched to a new ring", "version", version, "members", len(members), "from", cur.version)
	// The registry says so at once, for the operation that waits on it.
	select {
	case c.changed <- struct{}{}:
	default:
	}
	// Members that left: their pools go once requests that took the old
	// state have had their time.
	var gone []*sharding.Shard
	var goneControl []*pgxpool.Pool
	for i, s := range cur.topo.Shards {
		if !kept[i] {
			gone, goneControl = append(gone, s), append(goneControl, cur.control[i])
		}
	}
	if len(gone) > 0 {
		time.AfterFunc(2*c.cfg.RequestTimeout, func() {
			for i, s := range gone {
				s.Pool.Close()
				goneControl[i].Close()
			}
		})
	}
	return true, nil
}

// AwaitRing waits until every gateway heard of within alive serves ring
// version or a newer one, or until limit has passed, when it names the
// gateways behind. A topology operation takes each step only once every
// gateway serves the ring of the step before.
func (c *Cluster) AwaitRing(ctx context.Context, version int64, alive, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		behind := map[string]int64{}
		for _, pool := range c.Control() {
			rows, err := pool.Query(ctx, pgschema.GatewaysBehindSQL, alive.Seconds(), version)
			if err != nil {
				continue
			}
			for rows.Next() {
				var addr string
				var v int64
				if rows.Scan(&addr, &v) == nil {
					behind[addr] = v
				}
			}
			rows.Close()
		}
		if len(behind) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("gateways still serve an older ring than version %d after %v: %v", version, limit, behind)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
