package sharding

import (
	"maps"
	"slices"
)

// Placement holds the replica lists of every vnode range of one ring under
// one replication setting. It is computed once, so that per-request look-ups
// are a binary search and a slice expression. It is immutable and safe for
// concurrent use.
type Placement struct {
	ring *Ring
	// factor is the number of replicas of every range. Both strategies give
	// every range the same count, which lets the lists share one flat array:
	// range i's replicas are replicas[i*factor : (i+1)*factor].
	factor   int
	replicas []int
	// next is the placement on the ring once ranges in movement have
	// moved (Topology.Next), nil when none move.
	next *Placement
}

// Placement computes the replicas of every range of r under rep.
//
// SimpleStrategy takes the range's owner and the next distinct shards
// clockwise, up to rep.Factor capped at the number of shards.
//
// NetworkTopologyStrategy follows Cassandra's rack-aware walk, clockwise
// from the range's end token. A shard is taken if its datacenter still
// needs replicas and no replica of that datacenter is on its rack yet. A
// shard passed over only because its rack was taken is remembered; once
// every rack of the datacenter holds a replica, the remembered shards are
// taken in the order they were passed, and from then on every further shard
// of that datacenter is taken, until its factor (capped at its number of
// shards) is met. Replicas are listed in the order taken. Datacenters
// without shards get none; a 'replication_factor' option applies to every
// datacenter of the ring that is not named.
//
// Any other class places no replicas, so that a setting that was never
// validated fails loudly (no replica available) instead of silently
// picking some strategy.
func (r *Ring) Placement(rep Replication) *Placement {
	p := &Placement{ring: r}
	switch canonicalClass(rep.Class) {
	case SimpleStrategyClass:
		p.factor = min(max(rep.Factor, 0), r.holding)
		p.replicas = make([]int, 0, p.factor*len(r.tokens))
		for i := range r.tokens {
			p.replicas = r.appendSimple(p.replicas, i, p.factor)
			checkLayout(p.replicas, i, p.factor)
		}
	case NetworkTopologyStrategyClass:
		p.factor, p.replicas = r.placeNTS(rep)
	}
	return p
}

// checkLayout panics unless ranges 0..i have produced exactly factor
// replicas each. Both walks visit every shard, so they always find the
// capped factor; the check guards the flat layout, which a short range
// would silently shift.
func checkLayout(replicas []int, i, factor int) {
	if len(replicas) != (i+1)*factor {
		panic("sharding: internal error: range placed with the wrong number of replicas")
	}
}

// Factor returns the number of replicas of each range, after capping the
// requested factors at the number of shards available.
func (p *Placement) Factor() int {
	return p.factor
}

// Replicas returns the shard indexes holding token t, primary first. The
// slice is shared: callers must not modify it. It does not allocate.
func (p *Placement) Replicas(t Token) []int {
	return p.RangeReplicas(p.ring.RangeIndex(t))
}

// WriteReplicas returns the shards a write of token t goes to: its
// replicas, then, while ranges move, the pending ones, which hold t once
// the movement completes and do not yet (pending counts them). Without a
// movement it is Replicas and does not allocate; the slice is then
// shared, and callers must not modify it.
func (p *Placement) WriteReplicas(t Token) (replicas []int, pending int) {
	replicas = p.Replicas(t)
	if p.next == nil {
		return replicas, 0
	}
	for _, s := range p.next.Replicas(t) {
		if !slices.Contains(replicas[:len(replicas)-pending], s) {
			if pending == 0 {
				replicas = slices.Clone(replicas)
			}
			replicas = append(replicas, s)
			pending++
		}
	}
	return replicas, pending
}

// RangeReplicas returns the shard indexes holding vnode range i, primary
// first. The slice is shared: callers must not modify it. It panics if i is
// not a range index of the ring.
func (p *Placement) RangeReplicas(i int) []int {
	if i < 0 || i >= len(p.ring.tokens) {
		panic("sharding: range index out of bounds")
	}
	lo, hi := i*p.factor, (i+1)*p.factor
	// The capacity limit stops an append by the caller from overwriting
	// the next range's replicas.
	return p.replicas[lo:hi:hi]
}

// appendSimple appends SimpleStrategy's rf replicas of range i: distinct
// shards in ring order starting at the owner of the range's end token.
func (r *Ring) appendSimple(dst []int, i, rf int) []int {
	start := len(dst)
	for step := 0; step < len(r.tokens) && len(dst)-start < rf; step++ {
		s := r.owners[(i+step)%len(r.tokens)]
		if !slices.Contains(dst[start:], s) {
			dst = append(dst, s)
		}
	}
	return dst
}

// ntsDC is the per-datacenter state of the NetworkTopologyStrategy walk.
type ntsDC struct {
	rf        int   // replicas wanted, capped at the DC's shard count
	racks     int   // distinct racks in the DC
	need      int   // replicas still missing for the current range
	seenRacks int   // racks that already hold a replica for the current range
	skipped   []int // shards passed over because their rack was taken
}

// ntsWalker holds the ring's topology, indexed once, and the scratch state
// reused by every range's walk.
type ntsWalker struct {
	ring   *Ring
	dcs    []ntsDC
	dcOf   []int // shard index -> index into dcs
	rackOf []int // shard index -> rack number, unique across datacenters
	factor int   // sum of the capped per-DC factors
	// seen and rackUsed hold the current range's stamp once the shard or
	// rack has been dealt with, which resets them per range without
	// clearing.
	seen, rackUsed []int
	missing        int // datacenters still short of replicas
}

// newNTSWalker indexes r's datacenters and racks and the factors rep gives
// them.
func newNTSWalker(r *Ring, rep Replication) *ntsWalker {
	// Shards without tokens are never met on the walk, and count for
	// nothing: not in their datacenter's shards, nor its racks.
	shardsInDC := make(map[string]int)
	for _, s := range r.shards {
		if len(s.Tokens) > 0 {
			shardsInDC[s.DC]++
		}
	}
	// Number datacenters in sorted order so nothing depends on map
	// iteration order.
	names := slices.Sorted(maps.Keys(shardsInDC))
	rep = rep.Expand(names)
	w := &ntsWalker{
		ring:   r,
		dcs:    make([]ntsDC, len(names)),
		dcOf:   make([]int, len(r.shards)),
		rackOf: make([]int, len(r.shards)),
		seen:   make([]int, len(r.shards)),
	}
	dcIndex := make(map[string]int)
	for i, name := range names {
		dcIndex[name] = i
		w.dcs[i].rf = min(max(rep.DCFactors[name], 0), shardsInDC[name])
		w.factor += w.dcs[i].rf
	}
	type rackKey struct{ dc, rack string }
	rackIndex := make(map[rackKey]int)
	for i, s := range r.shards {
		if len(s.Tokens) == 0 {
			continue
		}
		d := dcIndex[s.DC]
		k := rackKey{s.DC, s.Rack}
		if _, ok := rackIndex[k]; !ok {
			rackIndex[k] = len(rackIndex)
			w.dcs[d].racks++
		}
		w.dcOf[i], w.rackOf[i] = d, rackIndex[k]
	}
	w.rackUsed = make([]int, len(rackIndex))
	return w
}

// placeNTS computes NetworkTopologyStrategy replicas for every range, as
// described at Ring.Placement, and returns the per-range count and the flat
// replica array.
func (r *Ring) placeNTS(rep Replication) (int, []int) {
	w := newNTSWalker(r, rep)
	out := make([]int, 0, w.factor*len(r.tokens))
	for i := range r.tokens {
		out = w.appendRange(out, i)
		checkLayout(out, i, w.factor)
	}
	return w.factor, out
}

// appendRange walks the ring from range i's end token and appends the
// replicas of range i to out in the order they are taken.
func (w *ntsWalker) appendRange(out []int, i int) []int {
	stamp := i + 1
	w.missing = 0
	for d := range w.dcs {
		dc := &w.dcs[d]
		dc.need, dc.seenRacks, dc.skipped = dc.rf, 0, dc.skipped[:0]
		if dc.rf > 0 {
			w.missing++
		}
	}
	owners := w.ring.owners
	for step := 0; step < len(owners) && w.missing > 0; step++ {
		s := owners[(i+step)%len(owners)]
		dc := &w.dcs[w.dcOf[s]]
		if w.seen[s] == stamp || dc.need == 0 {
			continue
		}
		w.seen[s] = stamp
		switch {
		case dc.seenRacks == dc.racks:
			out = w.take(out, dc, s)
		case w.rackUsed[w.rackOf[s]] == stamp:
			dc.skipped = append(dc.skipped, s)
		default:
			out = w.take(out, dc, s)
			w.rackUsed[w.rackOf[s]] = stamp
			dc.seenRacks++
			if dc.seenRacks == dc.racks {
				// Every rack is covered: the shards passed over come next,
				// in the order they were met.
				for _, k := range dc.skipped {
					if dc.need == 0 {
						break
					}
					out = w.take(out, dc, k)
				}
			}
		}
	}
	return out
}

// take records shard s as a replica for datacenter dc.
func (w *ntsWalker) take(out []int, dc *ntsDC, s int) []int {
	dc.need--
	if dc.need == 0 {
		w.missing--
	}
	return append(out, s)
}
