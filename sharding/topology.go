package sharding

import (
	"sync"
	"sync/atomic"
)

// Shard is one PostgreSQL server of the cluster and the pool that runs
// statements on it.
type Shard struct {
	Info ShardInfo
	// URL is the shard's connection string; it may hold a password and
	// must not reach clients or logs unredacted.
	URL  string
	Pool *Pool
}

// Topology is one immutable snapshot of the cluster: the ring and its
// shards, indexed as the ring indexes them. A request resolves every
// placement against a single snapshot; a new snapshot replaces the old one
// atomically.
//
// While token ranges move (a shard joining or leaving), Next is the ring
// once the movement completes, over the same shards: a joining shard holds
// its tokens there and none on Ring, a leaving one the reverse. Reads use
// Ring's replicas; writes go to those and to the replicas Next adds, the
// pending ones (Placement.WriteReplicas), whose acknowledgements the
// levels then need too (RequireWrite), as Cassandra's pending ranges do.
type Topology struct {
	Ring   *Ring
	Next   *Ring
	Shards []*Shard
	// Held holds, in the last step of a movement, the requests that
	// must not run on two rings at once: counter updates, lightweight
	// transactions and SERIAL reads (HeldKind). HeldWrites counts those
	// running on this snapshot, which a switch waits for before the
	// gateway reports the new ring.
	Held       bool
	HeldWrites atomic.Int64
	// placements caches one Placement per replication setting, keyed by
	// its canonical String form. Entries never change once stored.
	placements sync.Map
}

// NewTopology returns the snapshot of shards placed on ring.
func NewTopology(ring *Ring, shards []*Shard) *Topology {
	return &Topology{Ring: ring, Shards: shards}
}

// NewMovingTopology returns the snapshot of shards placed on ring while
// ranges move to their places on next.
func NewMovingTopology(ring, next *Ring, shards []*Shard) *Topology {
	return &Topology{Ring: ring, Next: next, Shards: shards}
}

// Placement returns the replica sets of a replication setting, computing
// them on first use.
func (t *Topology) Placement(rep Replication) *Placement {
	key := rep.String()
	if p, ok := t.placements.Load(key); ok {
		return p.(*Placement)
	}
	p := t.Ring.Placement(rep)
	if t.Next != nil {
		p.next = t.Next.Placement(rep)
	}
	stored, _ := t.placements.LoadOrStore(key, p)
	return stored.(*Placement)
}

// The states of a shard on a topology (Topology.State).
const (
	StateNormal  = "normal"
	StateJoining = "joining"
	StateLeaving = "leaving"
)

// State names the state of shard i: joining when it holds tokens only on
// the ring after the movement, leaving when only on the ring reads use,
// normal otherwise.
func (t *Topology) State(i int) string {
	if t.Next == nil {
		return StateNormal
	}
	now, next := len(t.Ring.Shards()[i].Tokens) > 0, len(t.Next.Shards()[i].Tokens) > 0
	switch {
	case !now && next:
		return StateJoining
	case now && !next:
		return StateLeaving
	}
	return StateNormal
}
