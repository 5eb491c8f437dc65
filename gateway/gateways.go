package gateway

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

	"github.com/cqlpg/cqlpg/gateway/cluster"
	"github.com/cqlpg/cqlpg/gateway/cqlwire"
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

func (c *GatewaysConfig) setDefaults() {
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

// peer is one gateway as the registry records it.
type peer struct {
	hostID        [16]byte
	addr          netip.Addr
	port          int
	datacenter    string
	rack          string
	release       string
	schemaVersion [16]byte
}

// gatewaySet is one immutable snapshot of the alive gateways, this one
// included, sorted by host id: every gateway that sees the same gateways
// orders them the same way, and so splits the ring's tokens the same way.
type gatewaySet struct {
	all  []peer
	self int
}

// tokens returns, as decimal strings, the ring tokens that the i-th
// gateway of the set reports as its own: every n-th token of the sorted
// ring starting at the i-th. The shares are disjoint, cover the ring
// together, and interleave around it so that each gateway gets a fair part
// of every shard's ranges.
func (gs *gatewaySet) tokens(ring []sharding.Token, i int) []string {
	n := len(gs.all)
	out := make([]string, 0, len(ring)/n+1)
	for j := i; j < len(ring); j += n {
		out = append(out, ring[j].String())
	}
	return out
}

// registry is the gateway's part in cqlpg.gateways: it registers the
// gateway, keeps the current set of alive gateways, tells connected
// clients when gateways come and go, and follows the schema changes that
// other gateways make (notify.go).
type registry struct {
	srv      *Server
	cfg      GatewaysConfig
	log      *slog.Logger
	self     peer
	instance [16]byte
	started  time.Time
	set      atomic.Pointer[gatewaySet]
	// wake asks for a heartbeat now: another gateway registered, left or
	// changed its schema version.
	wake chan struct{}
	// registered marks the shards that hold this run's registration, so
	// that a row found under another instance there means a clash, not a
	// restart.
	registered []bool
	// unreachable is set while no shard answers heartbeats, so that the
	// outage is logged once.
	unreachable bool

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// startGateways registers the gateway on every shard, reads the other
// gateways, and starts the heartbeat and the schema follower. Failing to
// reach shards is not fatal: the heartbeat retries.
func (s *Server) startGateways(ctx context.Context) {
	r := &registry{srv: s, cfg: s.cfg.Gateways, log: s.log, instance: cluster.NewUUID(4), started: s.started,
		wake: make(chan struct{}, 1), registered: make([]bool, len(s.cluster.Control()))}
	port := 0
	if a, ok := s.listener.Addr().(*net.TCPAddr); ok {
		port = a.Port
	}
	r.self = peer{hostID: s.hostID, addr: r.address(ctx), port: port, datacenter: s.cfg.Datacenter,
		rack: s.cfg.Rack, release: releaseVersion}
	r.set.Store(&gatewaySet{all: []peer{r.self}})
	s.gateways = r
	r.beat(ctx, true)
	s.log.Info("registered with the other gateways", "address", netip.AddrPortFrom(r.self.addr, uint16(port)).String(),
		"host_id", pgschema.UUIDText(s.hostID[:]), "gateways", len(r.current().all))
	loop, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	r.wg.Go(func() { r.run(loop) })
	r.wg.Go(func() { r.follow(loop) })
}

// current returns the alive gateways as last read.
func (r *registry) current() *gatewaySet { return r.set.Load() }

// address chooses the address the other gateways' clients reach this one
// by: the configured one, else the listener's, else, for a wildcard
// listener, the address this host reaches its shards from, which is on
// the network the gateways share, or failing that the first address of an
// interface.
func (r *registry) address(ctx context.Context) netip.Addr {
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
	if a, ok := r.srv.listener.Addr().(*net.TCPAddr); ok {
		listen = a.AddrPort().Addr().Unmap()
	}
	if listen.IsValid() && !listen.IsUnspecified() {
		return listen
	}
	for _, pool := range r.srv.cluster.Control() {
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
func (r *registry) run(ctx context.Context) {
	t := time.NewTicker(r.cfg.Heartbeat)
	defer t.Stop()
	for {
		announce := false
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-r.wake:
		case <-r.srv.cluster.Changed():
			announce = true
		}
		r.beat(ctx, announce)
	}
}

// kick asks for a heartbeat now.
func (r *registry) kick() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// registration is one gateway's row as a shard holds it.
type registration struct {
	peer
	age float64 // seconds since its last heartbeat, by the shard's clock
}

// beat renews the gateway's registration on every shard and reads the
// alive gateways there; the gateways alive on any shard that answered
// become the current set. With announce it also tells the other gateways
// to read the registry now rather than at their next heartbeat.
func (r *registry) beat(parent context.Context, announce bool) {
	ctx, cancel := context.WithTimeout(parent, r.cfg.Heartbeat+time.Second)
	defer cancel()
	version := r.srv.cluster.Schema().Version
	control := r.srv.cluster.Control()
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
			if seen, ok := alive[g.hostID]; !ok || g.age < seen.age {
				alive[g.hostID] = g
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
func (r *registry) beatShard(ctx context.Context, i int, pool *pgxpool.Pool, version [16]byte,
	announce bool) ([]registration, error) {
	var b pgx.Batch
	var prev *[16]byte
	b.Queue(pgschema.GatewayRegisterSQL, r.self.hostID, r.instance, r.self.addr, r.self.port, r.self.datacenter, r.self.rack,
		r.self.release, version, r.started).QueryRow(func(row pgx.Row) error { return row.Scan(&prev) })
	var list []registration
	b.Queue(pgschema.GatewaysAliveSQL, r.cfg.Timeout.Seconds(), r.self.hostID).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			var g registration
			if err := rows.Scan(&g.hostID, &g.addr, &g.port, &g.datacenter, &g.rack, &g.release,
				&g.schemaVersion, &g.age); err != nil {
				return err
			}
			g.addr = g.addr.Unmap()
			list = append(list, g)
		}
		return rows.Err()
	})
	b.Queue(pgschema.GatewaysForgetSQL, forgetAfter.Seconds())
	if announce {
		b.Queue(cluster.NotifySQL, cluster.GatewaysChannel, pgschema.UUIDText(r.self.hostID[:]))
	}
	if err := pool.SendBatch(ctx, &b).Close(); err != nil {
		return nil, fmt.Errorf("gateway heartbeat: %w", err)
	}
	if prev != nil && *prev != r.instance && r.registered[i] {
		r.log.Warn("another gateway registers with this gateway's host id; give each gateway its own listen address",
			"host_id", pgschema.UUIDText(r.self.hostID[:]), "shard", i)
	}
	r.registered[i] = true
	return list, nil
}

// update makes the alive gateways, besides this one, the current set and
// tells the clients registered for topology changes which came and went.
func (r *registry) update(alive map[[16]byte]registration) {
	all := []peer{r.self}
	for _, g := range alive {
		all = append(all, g.peer)
	}
	slices.SortFunc(all, func(a, b peer) int { return bytes.Compare(a.hostID[:], b.hostID[:]) })
	set := &gatewaySet{all: all}
	for i, g := range all {
		if g.hostID == r.self.hostID {
			set.self = i
		}
	}
	old := r.set.Swap(set)
	// The set is stored before the events go out: a driver that hears of
	// a new gateway reads system.peers right away.
	gone := map[netip.AddrPort]peer{}
	for _, g := range old.all {
		if g.hostID != r.self.hostID {
			gone[netip.AddrPortFrom(g.addr, uint16(g.port))] = g
		}
	}
	for _, g := range all {
		if g.hostID == r.self.hostID {
			continue
		}
		ap := netip.AddrPortFrom(g.addr, uint16(g.port))
		if was, ok := gone[ap]; ok && was.hostID == g.hostID {
			delete(gone, ap)
			continue
		}
		r.log.Info("gateway joined", "address", ap.String(), "host_id", pgschema.UUIDText(g.hostID[:]))
		r.srv.broadcastTopologyChange("NEW_NODE", ap)
		r.broadcastStatus("UP", ap)
	}
	for ap, g := range gone {
		r.log.Info("gateway left", "address", ap.String(), "host_id", pgschema.UUIDText(g.hostID[:]))
		r.srv.broadcastTopologyChange("REMOVED_NODE", ap)
		r.broadcastStatus("DOWN", ap)
	}
}

// schemaAgreementWait bounds how long a schema change's answer waits for
// the other gateways to serve the new schema.
const schemaAgreementWait = time.Second

// awaitSchema waits, up to limit, until every other live gateway reports
// schema version v.
func (r *registry) awaitSchema(ctx context.Context, v [16]byte, limit time.Duration) {
	deadline := time.Now().Add(limit)
	for ctx.Err() == nil && time.Now().Before(deadline) {
		agreed := true
		for _, g := range r.current().all {
			if g.hostID != r.self.hostID && g.schemaVersion != v {
				agreed = false
			}
		}
		if agreed {
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// stop ends the heartbeat and the schema follower and removes the
// gateway's registration from every shard, then tells the other gateways:
// only once it is gone from all of them, as they count a gateway
// registered on any shard as alive.
func (r *registry) stop() {
	r.cancel()
	r.wg.Wait()
	control := r.srv.cluster.Control()
	var wg sync.WaitGroup
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	for i, pool := range control {
		wg.Go(func() {
			if _, err := pool.Exec(ctx, pgschema.GatewayDeregisterSQL, r.self.hostID, r.instance); err != nil {
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
			pool.Exec(nctx, cluster.NotifySQL, cluster.GatewaysChannel, pgschema.UUIDText(r.self.hostID[:]))
		})
	}
	wg.Wait()
}

// broadcastStatus pushes a STATUS_CHANGE event for a gateway that came up
// or went down, unless it shares this gateway's address: drivers key
// status by address alone, and would take this gateway for the one gone.
func (r *registry) broadcastStatus(change string, addr netip.AddrPort) {
	if set := r.current(); set != nil && addr.Addr() == r.self.addr {
		return
	}
	r.srv.broadcastEvent(eventStatus, "STATUS_CHANGE", change, addr)
}

// broadcastTopologyChange pushes a TOPOLOGY_CHANGE event to every
// connection registered for it.
func (s *Server) broadcastTopologyChange(change string, addr netip.AddrPort) {
	s.broadcastEvent(eventTopology, "TOPOLOGY_CHANGE", change, addr)
}

// broadcastEvent pushes a topology or status event to every connection
// registered for its kind.
func (s *Server) broadcastEvent(kind uint32, event, change string, addr netip.AddrPort) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		if c.events.Load()&kind == 0 {
			continue
		}
		b := cqlwire.GetBuffer(0)
		*b = cqlwire.AppendHeader((*b)[:0], c.version, -1, cqlwire.OpEvent)
		*b = appendInet(cqlwire.AppendString(cqlwire.AppendString(*b, event), change), addr)
		cqlwire.FinishFrame(*b)
		c.sendEvent(b)
	}
}

// appendInet writes an [inet]: the address's length and bytes, then the
// port as an [int].
func appendInet(b []byte, addr netip.AddrPort) []byte {
	ip := addr.Addr().Unmap().AsSlice()
	b = append(append(b, byte(len(ip))), ip...)
	return cqlwire.AppendInt(b, int32(addr.Port()))
}
