package sharding

import "slices"

// Outage is what one replication setting keeps and loses on a ring when
// some of its shards are down: the ranges whose replicas can no longer
// form a quorum, and, per consistency level, the ranges that level cannot
// serve. Shares are fractions of the token space.
type Outage struct {
	// Factor is the number of replicas of each range.
	Factor int
	// LostQuorum lists the ranges with fewer replicas up than a QUORUM of
	// their replicas, in ring order; LostQuorumShare is their share.
	LostQuorum      []int
	LostQuorumShare float64
	// Levels holds the availability of each level asked for, in order.
	Levels []LevelAvailability
}

// LevelAvailability says how much of the ring one consistency level can
// serve: Unavailable counts the ranges for which it would answer
// Unavailable, Share is their share of the token space.
type LevelAvailability struct {
	Level       Consistency
	Unavailable int
	Share       float64
}

// Available reports whether the level serves every range.
func (l LevelAvailability) Available() bool { return l.Unavailable == 0 }

// SimulateOutage computes the Outage of rep on r with the shards marked
// in down (by shard index) unreachable, judging the LOCAL_ levels from
// localDC. It judges each range by the same rules a request does
// (Topology.Require and Available), on a topology whose shards are only
// their ring entries and an up or down mark.
func (r *Ring) SimulateOutage(rep Replication, down []bool, localDC string, levels []Consistency) Outage {
	up, gone := new(Pool), new(Pool)
	gone.down.Store(true)
	shards := make([]*Shard, len(r.shards))
	for i := range r.shards {
		shards[i] = &Shard{Info: r.shards[i], Pool: up}
		if i < len(down) && down[i] {
			shards[i].Pool = gone
		}
	}
	topo := NewTopology(r, shards)
	p := r.Placement(rep)
	out := Outage{Factor: p.Factor(), Levels: make([]LevelAvailability, len(levels))}
	for i, l := range levels {
		out.Levels[i].Level = l
	}
	for i := range r.tokens {
		share := r.RangeShare(i)
		replicas := p.RangeReplicas(i)
		quorum := topo.Require(Quorum, replicas, localDC)
		if topo.Available(&quorum, replicas) != nil || len(replicas) == 0 {
			out.LostQuorum = append(out.LostQuorum, i)
			out.LostQuorumShare += share
		}
		for j := range out.Levels {
			a := topo.Require(levels[j], replicas, localDC)
			if topo.Available(&a, replicas) != nil || (len(replicas) == 0 && levels[j] != Any) {
				out.Levels[j].Unavailable++
				out.Levels[j].Share += share
			}
		}
	}
	return out
}

// RangeShare returns range i's share of the token space.
func (r *Ring) RangeShare(i int) float64 {
	if len(r.tokens) == 1 {
		return 1
	}
	return float64(r.rangeSize(i)) / ringSizeF
}

// Ownership returns, per shard index, the share of the token space the
// shard holds a replica of under the placement: the data it stores,
// where Ring.Ownership counts only the ranges it is primary for. The
// shares sum to the replication factor.
func (p *Placement) Ownership() []float64 {
	out := make([]float64, len(p.ring.shards))
	for i := range p.ring.tokens {
		share := p.ring.RangeShare(i)
		for _, s := range p.RangeReplicas(i) {
			out[s] += share
		}
	}
	return out
}

// WithShard returns the ring with one more shard, info, given n tokens as
// a shard joining the cluster is (AllocateTokensRF for the factor rf,
// with seed); info.Tokens is ignored. The new shard's index is the old
// ring's shard count.
func (r *Ring) WithShard(info ShardInfo, n, rf int, seed int64) (*Ring, error) {
	existing := make([][]Token, len(r.shards))
	for i, s := range r.shards {
		existing[i] = s.Tokens
	}
	info.Tokens = AllocateTokensRF(existing, n, rf, seed)
	return NewRing(append(slices.Clone(r.shards), info))
}

// Moved returns the share of the token space whose replica set differs
// between two placements of rings over the same first shards, such as a
// ring before and after WithShard: the data that would be streamed to new
// replicas. Sets are compared as sets; the order of replicas is ignored.
func Moved(before, after *Placement) float64 {
	moved := 0.0
	ar := after.ring
	for i := range ar.tokens {
		rg := ar.Range(i)
		// Range i of the new ring lies inside one range of the old ring,
		// whose end is the first old token at or above rg.End, since every
		// old token is also a token of the new ring.
		old := before.RangeReplicas(before.ring.RangeIndex(rg.End))
		if !SameReplicas(old, after.RangeReplicas(i)) {
			moved += ar.RangeShare(i)
		}
	}
	return moved
}

// SameReplicas reports whether two replica lists hold the same shards,
// in any order.
func SameReplicas(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}
