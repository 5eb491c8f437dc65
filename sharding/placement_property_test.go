package sharding

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// randomRing builds a ring of 1-12 shards spread over up to three
// datacenters and three racks each, with 1-8 random tokens per shard.
func randomRing(t *testing.T, rng *rand.Rand) *Ring {
	t.Helper()
	used := make(map[Token]bool)
	shards := make([]ShardInfo, 1+rng.IntN(12))
	for i := range shards {
		s := ShardInfo{
			Name: fmt.Sprintf("s%d", i),
			DC:   fmt.Sprintf("dc%d", rng.IntN(3)),
			Rack: fmt.Sprintf("r%d", rng.IntN(3)),
		}
		for range 1 + rng.IntN(8) {
			tok := Token(rng.Uint64())
			if !used[tok] {
				used[tok] = true
				s.Tokens = append(s.Tokens, tok)
			}
		}
		shards[i] = s
	}
	return mustRing(t, shards...)
}

func randomReplication(rng *rand.Rand) Replication {
	if rng.IntN(2) == 0 {
		return Replication{Class: SimpleStrategyClass, Factor: rng.IntN(9)}
	}
	rep := Replication{Class: NetworkTopologyStrategyClass, Factor: rng.IntN(3), DCFactors: map[string]int{}}
	for _, dc := range []string{"dc0", "dc1", "dc2", "elsewhere"} {
		if rng.IntN(3) > 0 {
			rep.DCFactors[dc] = rng.IntN(5)
		}
	}
	return rep
}

// TestPlacementProperties checks, on random rings and settings, that every
// range has the capped number of distinct replicas, that SimpleStrategy
// starts at the range's owner, and that NetworkTopologyStrategy picks per
// datacenter the same shards as Cassandra 4's formulation of the walk
// (modelNTS) and never doubles up on a rack while one of that datacenter's
// racks is unused.
func TestPlacementProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for iter := range 500 {
		ring := randomRing(t, rng)
		rep := randomReplication(rng)
		p := ring.Placement(rep)
		shards := ring.Shards()

		want := 0
		if rep.Class == SimpleStrategyClass {
			want = min(rep.Factor, len(shards))
		} else {
			full := rep.Expand(dcNames(shards))
			for dc, n := range dcSizes(shards) {
				want += min(full.DCFactors[dc], n)
			}
		}
		if p.Factor() != want {
			t.Fatalf("iter %d: Factor() = %d, want %d for %v", iter, p.Factor(), want, rep)
		}

		for i := range ring.Tokens() {
			got := p.RangeReplicas(i)
			if len(got) != want {
				t.Fatalf("iter %d range %d: %d replicas %v, want %d", iter, i, len(got), got, want)
			}
			if dup := slices.Compact(slices.Sorted(slices.Values(got))); len(dup) != len(got) {
				t.Fatalf("iter %d range %d: repeated shard in %v", iter, i, got)
			}
			if rep.Class == SimpleStrategyClass {
				if want > 0 && got[0] != ring.Owner(i) {
					t.Fatalf("iter %d range %d: first replica %d, owner %d", iter, i, got[0], ring.Owner(i))
				}
				continue
			}
			checkRacks(t, shards, got)
			model := modelNTS(ring, rep, i)
			if !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(model))) {
				t.Fatalf("iter %d range %d: replicas %v, model %v", iter, i, got, model)
			}
		}

		for range 20 {
			tok := Token(rng.Uint64())
			i := ring.RangeIndex(tok)
			if !ring.Range(i).Contains(tok) {
				t.Fatalf("iter %d: Range(%d) = %+v does not contain %d", iter, i, ring.Range(i), tok)
			}
			if !slices.Equal(p.Replicas(tok), p.RangeReplicas(i)) {
				t.Fatalf("iter %d: Replicas(%d) differs from RangeReplicas(%d)", iter, tok, i)
			}
		}
	}
}

// checkRacks fails if, within one datacenter, two replicas share a rack
// while some rack of that datacenter holds none.
func checkRacks(t *testing.T, shards []ShardInfo, replicas []int) {
	t.Helper()
	racksInDC := make(map[string]map[string]bool)
	for _, s := range shards {
		if racksInDC[s.DC] == nil {
			racksInDC[s.DC] = make(map[string]bool)
		}
		racksInDC[s.DC][s.Rack] = true
	}
	used := make(map[string]map[string]int)
	for _, r := range replicas {
		s := shards[r]
		if used[s.DC] == nil {
			used[s.DC] = make(map[string]int)
		}
		used[s.DC][s.Rack]++
	}
	for dc, racks := range used {
		repeated := false
		for _, n := range racks {
			repeated = repeated || n > 1
		}
		if repeated && len(racks) < len(racksInDC[dc]) {
			t.Fatalf("replicas %v repeat a rack in %s while %d of its %d racks are unused",
				replicas, dc, len(racksInDC[dc])-len(racks), len(racksInDC[dc]))
		}
	}
}

// modelNTS is Cassandra 4's formulation of the NetworkTopologyStrategy
// walk, written independently of placeNTS: per datacenter, a shard on a new
// rack is always accepted, and a shard on a rack already used is accepted
// only while rf - racks such repeats remain. It yields the same replica set
// as the skip-and-remember walk, in a possibly different order.
func modelNTS(ring *Ring, rep Replication, rangeIdx int) []int {
	shards := ring.Shards()
	owners := make([]int, len(ring.Tokens()))
	for i := range owners {
		owners[i] = ring.Owner(i)
	}
	full := rep.Expand(dcNames(shards))
	sizes := dcSizes(shards)
	var out []int
	for dc, n := range sizes {
		rf := min(full.DCFactors[dc], n)
		racks := make(map[string]bool)
		for _, s := range shards {
			if s.DC == dc {
				racks[s.Rack] = true
			}
		}
		repeats := rf - len(racks)
		seenRacks := make(map[string]bool)
		var taken []int
		for step := 0; step < len(owners) && len(taken) < rf; step++ {
			s := owners[(rangeIdx+step)%len(owners)]
			if shards[s].DC != dc || slices.Contains(taken, s) {
				continue
			}
			if !seenRacks[shards[s].Rack] {
				seenRacks[shards[s].Rack] = true
				taken = append(taken, s)
			} else if repeats > 0 {
				repeats--
				taken = append(taken, s)
			}
		}
		out = append(out, taken...)
	}
	return out
}

func dcSizes(shards []ShardInfo) map[string]int {
	m := make(map[string]int)
	for _, s := range shards {
		m[s.DC]++
	}
	return m
}

func dcNames(shards []ShardInfo) []string {
	var names []string
	for dc := range dcSizes(shards) {
		names = append(names, dc)
	}
	return names
}
