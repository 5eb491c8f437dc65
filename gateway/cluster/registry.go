package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/sharding"
)

// Gateways on the same shards find each other through the catalog table
// cqlpg.gateways: each registers on every shard the address its clients
// reach it by, renews the registration every heartbeat and reads the
// others' at the same time. system.peers lists the other alive gateways,
// and system.local and system.peers split the ring's tokens among all of
// them, so that a driver connected to one gateway finds every other one,
// spreads its requests over them, and its token-aware routing still
// covers every token.

// GatewaysConfig sets how gateways on the same shards find each other.
type GatewaysConfig struct {
	// Address is the address the other gateways list for this one in
	// system.peers, where their clients connect to it: an IP or a host
	// name. By default it is the listener's address or, when the listener
	// is on a wildcard address, the address this host reaches its shards
	// from.
	Address string
	// Heartbeat is how often the gateway renews its registration and
	// reads the others'; Timeout is the age past which a registration no
	// longer counts as a live gateway.
	Heartbeat time.Duration
	Timeout   time.Duration
}

// SetDefaults fills in the settings left zero.
func (c *GatewaysConfig) SetDefaults() {
	if c.Heartbeat <= 0 {
		c.Heartbeat = 2 * time.Second
	}
	if c.Timeout <= 0 {
		c.Timeout = max(10*time.Second, 3*c.Heartbeat)
	}
}

// forgetAfter is how long the registration of a gateway that stopped
// without removing it stays in the catalog, for operators to see when it
// was last alive.
const forgetAfter = time.Hour

// Peer is one gateway as the registry records it.
type Peer struct {
	HostID        [16]byte
	Addr          netip.Addr
	Port          int
	Datacenter    string
	Rack          string
	Release       string
	SchemaVersion [16]byte
}

// GatewaySet is one immutable snapshot of the alive gateways, this one
// included, sorted by host id: every gateway that sees the same gateways
// orders them the same way, and so splits the ring's tokens the same way.
type GatewaySet struct {
	// All are the gateways, Self this one's place among them.
	All  []Peer
	Self int
}

// Tokens returns, as decimal strings, the ring tokens that the i-th
// gateway of the set reports as its own: every n-th token of the sorted
// ring starting at the i-th. The shares are disjoint, cover the ring
// together, and interleave around it so that each gateway gets a fair part
// of every shard's ranges.
func (gs *GatewaySet) Tokens(ring []sharding.Token, i int) []string {
	n := len(gs.All)
	out := make([]string, 0, len(ring)/n+1)
	for j := i; j < len(ring); j += n {
		out = append(out, ring[j].String())
	}
	return out
}

// Registry is the gateway's part in cqlpg.gateways: it registers the
// gateway, keeps the current set of alive gateways, tells the gateway's
// clients, through its hooks, when gateways come and go, and follows the
// schema changes that other gateways make (follow.go).
type Registry struct {
	cluster    *Cluster
	hooks      RegistryHooks
	listenAddr net.Addr
	cfg        GatewaysConfig
	log        *slog.Logger
	self       Peer
	// origin is the cluster this gateway runs dual writes from, if any.
	origin   string
	instance [16]byte
	started  time.Time
	set      atomic.Pointer[GatewaySet]
	// wake asks for a heartbeat now: another gateway registered, left or
	// changed its schema version.
	wake chan struct{}
	// registered marks the shards (by control pool) that hold this run's
	// registration, so that a row found under another instance there
	// means a clash, not a restart.
	registered sync.Map
	// unreachable is set while no shard answers heartbeats, so that the
	// outage is logged once.
	unreachable bool

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// RegistryHooks are how the registry tells the gateway of what it learns.
type RegistryHooks struct {
	// Event pushes a TOPOLOGY_CHANGE or STATUS_CHANGE event (NEW_NODE,
	// REMOVED_NODE, UP, DOWN) about the gateway at addr to the clients.
	Event func(event, change string, addr netip.AddrPort)
	// SchemaChanged runs when another gateway changed the schema: the
	// gateway reloads it and tells its clients.
	SchemaChanged func(ctx context.Context)
}

// Self is this gateway as the registry lists it.
type Self struct {
	HostID     [16]byte
	Datacenter string
	Rack       string
	Release    string
	Started    time.Time
	// Listen is the CQL listener's address.
	Listen net.Addr
	// Origin is the cluster the gateway runs dual writes from, if any.
	Origin string
}

// StartRegistry registers the gateway on every shard, reads the other
// gateways, and starts the heartbeat and the schema follower. Failing to
// reach shards is not fatal: the heartbeat retries.
func StartRegistry(ctx context.Context, c *Cluster, cfg GatewaysConfig, self Self, log *slog.Logger, hooks RegistryHooks) *Registry {
	r := &Registry{cluster: c, hooks: hooks, listenAddr: self.Listen, cfg: cfg, log: log, instance: NewUUID(4),
		started: self.Started, origin: self.Origin, wake: make(chan struct{}, 1)}
	port := 0
	if a, ok := self.Listen.(*net.TCPAddr); ok {
		port = a.Port
	}
	r.self = Peer{HostID: self.HostID, Addr: r.address(ctx), Port: port, Datacenter: self.Datacenter,
		Rack: self.Rack, Release: self.Release}
	r.set.Store(&GatewaySet{All: []Peer{r.self}})
	r.beat(ctx, true)
	log.Info("registered with the other gateways", "address", netip.AddrPortFrom(r.self.Addr, uint16(port)).String(),
		"host_id", pgschema.UUIDText(self.HostID[:]), "gateways", len(r.Current().All))
	loop, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	r.wg.Go(func() { r.run(loop) })
	r.wg.Go(func() { r.follow(loop) })
	return r
}

// Current returns the alive gateways as last read.
func (r *Registry) Current() *GatewaySet { return r.set.Load() }

// address chooses the address the other gateways' clients reach this one
// by: the configured one, else the listener's, else, for a wildcard
// listener, the address this host reaches its shards from, which is on
// the network the gateways share, or failing that the first address of an
// interface.
func (r *Registry) address(ctx context.Context) netip.Addr {
	if a := r.cfg.Address; a != "" {
		if ip, err := netip.ParseAddr(a); err == nil {
			return ip.Unmap()
		}
		ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", a)
		if err == nil && len(ips) > 0 {
			return ips[0].Unmap()
		}
		r.log.Warn("cannot resolve the gateway address; using the listener's", "address", a, "err", err)
	}
	var listen netip.Addr
	if a, ok := r.listenAddr.(*net.TCPAddr); ok {
		listen = a.AddrPort().Addr().Unmap()
	}
	if listen.IsValid() && !listen.IsUnspecified() {
		return listen
	}
	for _, pool := range r.cluster.Control() {
		if ip := localAddrTo(ctx, pool); ip.IsValid() && !ip.IsLoopback() {
			return ip
		}
	}
	if addrs, err := net.InterfaceAddrs(); err == nil {
		var v6 netip.Addr
		for _, a := range addrs {
			pfx, err := netip.ParsePrefix(a.String())
			if ip := pfx.Addr().Unmap(); err == nil && ip.IsGlobalUnicast() {
				if ip.Is4() {
					return ip
				}
				if !v6.IsValid() {
					v6 = ip
				}
			}
		}
		if v6.IsValid() {
			return v6
		}
	}
	if listen.Is6() {
		return netip.IPv6Loopback()
	}
	return netip.AddrFrom4([4]byte{127, 0, 0, 1})
}

// localAddrTo returns the local address of a connection to a shard, or
// the zero Addr when the connection is not TCP (a Unix socket).
func localAddrTo(ctx context.Context, pool *pgxpool.Pool) netip.Addr {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	c, err := pool.Acquire(ctx)
	if err != nil {
		return netip.Addr{}
	}
	defer c.Release()
	if a, ok := c.Conn().PgConn().Conn().LocalAddr().(*net.TCPAddr); ok {
		return a.AddrPort().Addr().Unmap()
	}
	return netip.Addr{}
}

// run heartbeats until ctx ends, at once when woken, and announces the
// gateway's new schema version whenever it changes.
func (r *Registry) run(ctx context.Context) {
	t := time.NewTicker(r.cfg.Heartbeat)
	defer t.Stop()
	for {
		announce := false
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-r.wake:
		case <-r.cluster.Changed():
			announce = true
		}
		r.beat(ctx, announce)
	}
}

// kick asks for a heartbeat now.
func (r *Registry) kick() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// registration is one gateway's row as a shard holds it.
type registration struct {
	Peer
	age float64 // seconds since its last heartbeat, by the shard's clock
}

// beat renews the gateway's registration on every shard and reads the
// alive gateways there; the gateways alive on any shard that answered
// become the current set. With announce it also tells the other gateways
// to read the registry now rather than at their next heartbeat.
func (r *Registry) beat(parent context.Context, announce bool) {
	ctx, cancel := context.WithTimeout(parent, r.cfg.Heartbeat+time.Second)
	defer cancel()
	version := r.cluster.Schema().Version
	control := r.cluster.Control()
	lists := make([][]registration, len(control))
	errs := make([]error, len(control))
	var wg sync.WaitGroup
	for i, pool := range control {
		wg.Go(func() { lists[i], errs[i] = r.beatShard(ctx, i, pool, version, announce) })
	}
	wg.Wait()
	if parent.Err() != nil {
		return // shutting down
	}
	alive := map[[16]byte]registration{}
	answered := 0
	for i, list := range lists {
		if errs[i] != nil {
			r.log.Debug("gateway heartbeat failed on a shard", "shard", i, "err", errs[i])
			continue
		}
		answered++
		for _, g := range list {
			if seen, ok := alive[g.HostID]; !ok || g.age < seen.age {
				alive[g.HostID] = g
			}
		}
	}
	if answered == 0 {
		// Without any shard there is nothing to tell: keep the gateways
		// as last seen, which cannot serve without shards either.
		if !r.unreachable {
			r.log.Warn("no shard answers the gateway heartbeat", "err", errors.Join(errs...))
		}
		r.unreachable = true
		return
	}
	r.unreachable = false
	r.update(alive)
}

// beatShard registers the gateway on one shard and reads the gateways
// alive there, in one round trip.
func (r *Registry) beatShard(ctx context.Context, i int, pool *pgxpool.Pool, version [16]byte,
	announce bool) ([]registration, error) {
	var b pgx.Batch
	var prev *[16]byte
	b.Queue(pgschema.GatewayRegisterSQL, r.self.HostID, r.instance, r.self.Addr, r.self.Port, r.self.Datacenter, r.self.Rack,
		r.self.Release, version, r.started, r.cluster.DrainedRingVersion(), r.origin).QueryRow(func(row pgx.Row) error { return row.Scan(&prev) })
	var list []registration
	b.Queue(pgschema.GatewaysAliveSQL, r.cfg.Timeout.Seconds(), r.self.HostID).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			var g registration
			if err := rows.Scan(&g.HostID, &g.Addr, &g.Port, &g.Datacenter, &g.Rack, &g.Release,
				&g.SchemaVersion, &g.age); err != nil {
				return err
			}
			g.Addr = g.Addr.Unmap()
			list = append(list, g)
		}
		return rows.Err()
	})
	b.Queue(pgschema.GatewaysForgetSQL, forgetAfter.Seconds())
	if announce {
		b.Queue(NotifySQL, GatewaysChannel, pgschema.UUIDText(r.self.HostID[:]))
	}
	if err := pool.SendBatch(ctx, &b).Close(); err != nil {
		return nil, fmt.Errorf("gateway heartbeat: %w", err)
	}
	if _, ok := r.registered.Load(pool); prev != nil && *prev != r.instance && ok {
		r.log.Warn("another gateway registers with this gateway's host id; give each gateway its own listen address",
			"host_id", pgschema.UUIDText(r.self.HostID[:]), "shard", i)
	}
	r.registered.Store(pool, true)
	return list, nil
}

// update makes the alive gateways, besides this one, the current set and
// tells the clients registered for topology changes which came and went.
func (r *Registry) update(alive map[[16]byte]registration) {
	all := []Peer{r.self}
	for _, g := range alive {
		all = append(all, g.Peer)
	}
	slices.SortFunc(all, func(a, b Peer) int { return bytes.Compare(a.HostID[:], b.HostID[:]) })
	set := &GatewaySet{All: all}
	for i, g := range all {
		if g.HostID == r.self.HostID {
			set.Self = i
		}
	}
	old := r.set.Swap(set)
	// The set is stored before the events go out: a driver that hears of
	// a new gateway reads system.peers right away.
	gone := map[netip.AddrPort]Peer{}
	for _, g := range old.All {
		if g.HostID != r.self.HostID {
			gone[netip.AddrPortFrom(g.Addr, uint16(g.Port))] = g
		}
	}
	for _, g := range all {
		if g.HostID == r.self.HostID {
			continue
		}
		ap := netip.AddrPortFrom(g.Addr, uint16(g.Port))
		if was, ok := gone[ap]; ok && was.HostID == g.HostID {
			delete(gone, ap)
			continue
		}
		r.log.Info("gateway joined", "address", ap.String(), "host_id", pgschema.UUIDText(g.HostID[:]))
		r.hooks.Event("TOPOLOGY_CHANGE", "NEW_NODE", ap)
		r.broadcastStatus("UP", ap)
	}
	for ap, g := range gone {
		r.log.Info("gateway left", "address", ap.String(), "host_id", pgschema.UUIDText(g.HostID[:]))
		r.hooks.Event("TOPOLOGY_CHANGE", "REMOVED_NODE", ap)
		r.broadcastStatus("DOWN", ap)
	}
}

// SchemaAgreementWait bounds how long a schema change's answer waits for
// the other gateways to serve the new schema.
const SchemaAgreementWait = time.Second

// AwaitSchema waits, up to limit, until every other live gateway reports
// schema version v.
func (r *Registry) AwaitSchema(ctx context.Context, v [16]byte, limit time.Duration) {
	deadline := time.Now().Add(limit)
	for ctx.Err() == nil && time.Now().Before(deadline) {
		agreed := true
		for _, g := range r.Current().All {
			if g.HostID != r.self.HostID && g.SchemaVersion != v {
				agreed = false
			}
		}
		if agreed {
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// AgreeOn waits, up to limit, until every other live gateway reports
// schema version v, and reports whether they all do.
func (r *Registry) AgreeOn(ctx context.Context, v [16]byte, limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	for {
		agreed := true
		for _, g := range r.Current().All {
			if g.HostID != r.self.HostID && g.SchemaVersion != v {
				agreed = false
			}
		}
		if agreed || ctx.Err() != nil || time.Now().After(deadline) {
			return agreed
		}
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Stop ends the heartbeat and the schema follower and removes the
// gateway's registration from every shard, then tells the other gateways:
// only once it is gone from all of them, as they count a gateway
// registered on any shard as alive.
func (r *Registry) Stop() {
	r.cancel()
	r.wg.Wait()
	control := r.cluster.Control()
	var wg sync.WaitGroup
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	for i, pool := range control {
		wg.Go(func() {
			if _, err := pool.Exec(ctx, pgschema.GatewayDeregisterSQL, r.self.HostID, r.instance); err != nil {
				r.log.Warn("cannot remove the gateway's registration; the others drop it once it is old",
					"shard", i, "err", err)
			}
		})
	}
	wg.Wait()
	// A shard that hung above must not keep the others from telling.
	nctx, ncancel := context.WithTimeout(context.Background(), time.Second)
	defer ncancel()
	for _, pool := range control {
		wg.Go(func() {
			pool.Exec(nctx, NotifySQL, GatewaysChannel, pgschema.UUIDText(r.self.HostID[:]))
		})
	}
	wg.Wait()
}

// broadcastStatus pushes a STATUS_CHANGE event for a gateway that came up
// or went down, unless it shares this gateway's address: drivers key
// status by address alone, and would take this gateway for the one gone.
func (r *Registry) broadcastStatus(change string, addr netip.AddrPort) {
	if set := r.Current(); set != nil && addr.Addr() == r.self.Addr {
		return
	}
	r.hooks.Event("STATUS_CHANGE", change, addr)
}
