package sharding

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
)

// ShardInfo describes one shard, a PostgreSQL server, as a member of the
// token ring. Clients see each shard as one Cassandra node.
type ShardInfo struct {
	// HostID is the node's host_id as system.local and system.peers show it.
	HostID [16]byte
	// Name identifies the shard in errors and operator output.
	Name string
	// DC and Rack place the shard for NetworkTopologyStrategy.
	DC, Rack string
	// Tokens are the ends of the vnode ranges the shard owns as primary.
	Tokens []Token
}

// ringSizeF is the number of tokens on the ring, 2^64, as a float.
const ringSizeF = 1 << 64

// Ring is the token ring over a fixed set of shards. It is immutable once
// built and safe for concurrent use.
type Ring struct {
	// shards is a deep copy of NewRing's input, so callers cannot change the
	// ring behind its back; shard indexes refer to positions in it.
	shards []ShardInfo
	// tokens holds every shard's tokens in ascending order, without
	// duplicates; owners[i] is the index of the shard owning tokens[i].
	tokens []Token
	owners []int
	// holding counts the shards that hold tokens.
	holding int
}

// NewRing builds the ring owned by shards. Shard indexes used throughout
// the package are positions in shards. A shard may hold no tokens: one
// joining the cluster is a shard of the ring its reads use, with nothing
// to read yet (Topology). It fails if there are no tokens at all, or if
// two shards (or one shard twice) claim the same token, since ownership
// of that range would be ambiguous.
func NewRing(shards []ShardInfo) (*Ring, error) {
	if len(shards) == 0 {
		return nil, errors.New("sharding: a ring needs at least one shard")
	}
	type entry struct {
		tok   Token
		owner int
	}
	var entries []entry
	r := &Ring{shards: make([]ShardInfo, len(shards))}
	for i, s := range shards {
		if len(s.Tokens) > 0 {
			r.holding++
		}
		s.Tokens = slices.Clone(s.Tokens)
		r.shards[i] = s
		for _, t := range s.Tokens {
			entries = append(entries, entry{t, i})
		}
	}
	if len(entries) == 0 {
		return nil, errors.New("sharding: a ring needs at least one token")
	}
	slices.SortFunc(entries, func(a, b entry) int {
		if c := cmp.Compare(a.tok, b.tok); c != 0 {
			return c
		}
		return cmp.Compare(a.owner, b.owner)
	})
	r.tokens = make([]Token, len(entries))
	r.owners = make([]int, len(entries))
	for i, e := range entries {
		if i > 0 && entries[i-1].tok == e.tok && entries[i-1].owner == e.owner {
			return nil, fmt.Errorf("sharding: shard %q lists token %v twice", shards[e.owner].Name, e.tok)
		}
		if i > 0 && entries[i-1].tok == e.tok {
			return nil, fmt.Errorf("sharding: token %v is owned by both shard %q and shard %q",
				e.tok, shards[entries[i-1].owner].Name, shards[e.owner].Name)
		}
		r.tokens[i] = e.tok
		r.owners[i] = e.owner
	}
	return r, nil
}

// Shards returns a copy of the shards the ring was built from, in their
// original order, so that shard indexes can be resolved.
func (r *Ring) Shards() []ShardInfo {
	out := make([]ShardInfo, len(r.shards))
	for i, s := range r.shards {
		s.Tokens = slices.Clone(s.Tokens)
		out[i] = s
	}
	return out
}

// Len returns the number of vnode ranges, which is the number of tokens.
func (r *Ring) Len() int { return len(r.tokens) }

// Tokens returns a copy of all ring tokens in ascending order. Token i is
// the end of vnode range i.
func (r *Ring) Tokens() []Token {
	return slices.Clone(r.tokens)
}

// Owner returns the index of the shard owning Tokens()[i], which is also
// the primary owner of range i. It panics if i is out of range.
func (r *Ring) Owner(i int) int {
	return r.owners[i]
}

// RangeIndex returns the index of the vnode range containing t: the index
// of the first ring token >= t, or 0 when t is above every token, because
// that range wraps around.
func (r *Ring) RangeIndex(t Token) int {
	// A hand-written binary search keeps this hot path free of closures.
	lo, hi := 0, len(r.tokens)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if r.tokens[mid] < t {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo == len(r.tokens) {
		return 0
	}
	return lo
}

// Range is the token range (Start, End]. When Start >= End it wraps around
// the ring: it holds every token above Start and every token up to End.
// Start == End therefore denotes the whole ring, the single range of a
// one-token ring.
type Range struct {
	Start, End Token
}

// Contains reports whether t lies in the range.
func (rg Range) Contains(t Token) bool {
	if rg.Start < rg.End {
		return rg.Start < t && t <= rg.End
	}
	return t > rg.Start || t <= rg.End
}

// Inclusive returns the range as at most two inclusive [lo, hi] bounds
// that do not wrap, as SQL on the token column takes them. (t, t] is the
// whole ring, as on a ring of one token.
func (rg Range) Inclusive() [][2]int64 {
	start, end := int64(rg.Start), int64(rg.End)
	if start < end {
		return [][2]int64{{start + 1, end}}
	}
	var out [][2]int64
	if start < math.MaxInt64 {
		out = append(out, [2]int64{start + 1, math.MaxInt64})
	}
	return append(out, [2]int64{math.MinInt64, end})
}

// Range returns vnode range i, (Tokens()[i-1], Tokens()[i]], where range 0
// starts at the last token. It panics if i is out of range.
func (r *Ring) Range(i int) Range {
	prev := i - 1
	if prev < 0 {
		prev = len(r.tokens) - 1
	}
	return Range{Start: r.tokens[prev], End: r.tokens[i]}
}

// Ownership returns, per shard index, the fraction of the token space the
// shard owns as primary replica. The fractions sum to 1 (up to floating
// point rounding).
func (r *Ring) Ownership() []float64 {
	out := make([]float64, len(r.shards))
	if len(r.tokens) == 1 {
		out[r.owners[0]] = 1
		return out
	}
	for i := range r.tokens {
		out[r.owners[i]] += float64(r.rangeSize(i)) / ringSizeF
	}
	return out
}

// rangeSize is the number of tokens in range i. It is exact for rings of
// two or more tokens; the single range of a one-token ring has 2^64 tokens,
// which does not fit and comes out as 0.
func (r *Ring) rangeSize(i int) uint64 {
	rg := r.Range(i)
	// Unsigned subtraction wraps modulo 2^64, which is the ring's size, so
	// wrapping ranges need no special case.
	return uint64(rg.End) - uint64(rg.Start)
}
