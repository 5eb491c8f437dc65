package sharding

import (
	"math"
	"slices"
	"testing"
)

// evenRing is n shards with one token each, evenly spaced, so that every
// range is 1/n of the token space; shard i is in dcs[i%len(dcs)], each
// shard on its own rack.
func evenRing(t testing.TB, n int, dcs ...string) *Ring {
	var shards []ShardInfo
	step := uint64(math.MaxUint64)/uint64(n) + 1
	for i := range n {
		tok := Token(int64(uint64(i)*step) + math.MinInt64)
		shards = append(shards, shard(string(rune('A'+i)), dcs[i%len(dcs)], string(rune('a'+i)), tok))
	}
	return mustRing(t, shards...)
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

var allLevels = []Consistency{Any, One, Two, Three, Quorum, All, LocalOne, LocalQuorum, EachQuorum}

// availability maps each level to the number of ranges it cannot serve.
func availability(o Outage) map[Consistency]int {
	m := map[Consistency]int{}
	for _, l := range o.Levels {
		m[l.Level] = l.Unavailable
	}
	return m
}

func TestSimulateOutageSimple(t *testing.T) {
	ring := evenRing(t, 6, "dc1")
	rf3 := Replication{Class: SimpleStrategyClass, Factor: 3}
	tests := []struct {
		name      string
		down      []int
		lost      []int
		lostShare float64
		levels    map[Consistency]int
	}{
		{"all up", nil, nil, 0,
			map[Consistency]int{Any: 0, One: 0, Two: 0, Three: 0, Quorum: 0, All: 0, LocalOne: 0, LocalQuorum: 0, EachQuorum: 0}},
		// Shard 0 replicates the ranges ending at shards 4, 5 and 0: ALL
		// loses those three, QUORUM keeps them with two of three up.
		{"one down", []int{0}, nil, 0,
			map[Consistency]int{Any: 0, One: 0, Two: 0, Three: 3, Quorum: 0, All: 3, LocalOne: 0, LocalQuorum: 0, EachQuorum: 0}},
		// Shards 0 and 1 are both replicas of the ranges ending at 5 and 0.
		{"two neighbours down", []int{0, 1}, []int{0, 5}, 2.0 / 6,
			map[Consistency]int{Any: 0, One: 0, Two: 2, Three: 4, Quorum: 2, All: 4, LocalOne: 0, LocalQuorum: 2, EachQuorum: 2}},
		// Range 0 (replicas 0, 1, 2) has none left, ranges 1 and 5 one each.
		{"three neighbours down", []int{0, 1, 2}, []int{0, 1, 5}, 3.0 / 6,
			map[Consistency]int{Any: 0, One: 1, Two: 3, Three: 5, Quorum: 3, All: 5, LocalOne: 1, LocalQuorum: 3, EachQuorum: 3}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			down := make([]bool, 6)
			for _, d := range tc.down {
				down[d] = true
			}
			o := ring.SimulateOutage(rf3, down, "dc1", allLevels)
			if o.Factor != 3 {
				t.Errorf("Factor = %d, want 3", o.Factor)
			}
			if !slices.Equal(o.LostQuorum, tc.lost) || !near(o.LostQuorumShare, tc.lostShare) {
				t.Errorf("lost quorum %v (%.3f), want %v (%.3f)", o.LostQuorum, o.LostQuorumShare, tc.lost, tc.lostShare)
			}
			got := availability(o)
			for l, want := range tc.levels {
				if got[l] != want {
					t.Errorf("%v unavailable on %d ranges, want %d", l, got[l], want)
				}
			}
			for _, l := range o.Levels {
				if !near(l.Share, float64(l.Unavailable)/6) {
					t.Errorf("%v share %.3f for %d ranges", l.Level, l.Share, l.Unavailable)
				}
			}
		})
	}
}

// TestSimulateOutageDatacenters checks the levels that count by
// datacenter: with a dc1 shard down, EACH_QUORUM fails where it is a
// replica, LOCAL_QUORUM from dc2 never does, and from dc1 only where
// dc1's two replicas are needed.
func TestSimulateOutageDatacenters(t *testing.T) {
	ring := evenRing(t, 6, "dc1", "dc2") // A, C, E in dc1; B, D, F in dc2
	rep := Replication{Class: NetworkTopologyStrategyClass, DCFactors: map[string]int{"dc1": 2, "dc2": 2}}
	down := []bool{true, false, false, false, false, false}
	p := ring.Placement(rep)
	withA := 0
	for i := range 6 {
		if slices.Contains(p.RangeReplicas(i), 0) {
			withA++
		}
	}
	if withA != 4 {
		t.Fatalf("shard A replicates %d ranges, want 4 (two dc1 replicas of three shards)", withA)
	}
	levels := []Consistency{Quorum, LocalQuorum, EachQuorum, LocalOne}
	fromDC2 := availability(ring.SimulateOutage(rep, down, "dc2", levels))
	fromDC1 := availability(ring.SimulateOutage(rep, down, "dc1", levels))
	want2 := map[Consistency]int{Quorum: 0, LocalQuorum: 0, EachQuorum: withA, LocalOne: 0}
	want1 := map[Consistency]int{Quorum: 0, LocalQuorum: withA, EachQuorum: withA, LocalOne: 0}
	for l := range want2 {
		if fromDC2[l] != want2[l] {
			t.Errorf("from dc2: %v unavailable on %d ranges, want %d", l, fromDC2[l], want2[l])
		}
		if fromDC1[l] != want1[l] {
			t.Errorf("from dc1: %v unavailable on %d ranges, want %d", l, fromDC1[l], want1[l])
		}
	}
}

func TestPlacementOwnership(t *testing.T) {
	ring := evenRing(t, 6, "dc1", "dc2")
	for _, rep := range []Replication{
		{Class: SimpleStrategyClass, Factor: 1},
		{Class: SimpleStrategyClass, Factor: 3},
		{Class: SimpleStrategyClass, Factor: 9}, // capped at 6
		{Class: NetworkTopologyStrategyClass, DCFactors: map[string]int{"dc1": 3, "dc2": 1}},
	} {
		own := ring.Placement(rep).Ownership()
		sum := 0.0
		for _, o := range own {
			sum += o
		}
		if f := ring.Placement(rep).Factor(); !near(sum, float64(f)) {
			t.Errorf("%v: ownership sums to %.6f, want the factor %d", rep, sum, f)
		}
	}
	// NTS dc1:3 puts every range on all three dc1 shards.
	own := ring.Placement(Replication{Class: NetworkTopologyStrategyClass, DCFactors: map[string]int{"dc1": 3}}).Ownership()
	for i, o := range own {
		want := 0.0
		if i%2 == 0 {
			want = 1
		}
		if !near(o, want) {
			t.Errorf("shard %d owns %.3f, want %.0f", i, o, want)
		}
	}
}

func TestWithShardAndMoved(t *testing.T) {
	var shards []ShardInfo
	for i, name := range []string{"a", "b", "c"} {
		shards = append(shards, ShardInfo{Name: name, DC: "dc1", Rack: "r1", Tokens: AllocateTokens(tokensOf(shards), 16, int64(i))})
	}
	ring := mustRing(t, shards...)
	grown, err := ring.WithShard(ShardInfo{Name: "d", DC: "dc1", Rack: "r1"}, 16, 3, 7)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(grown.Shards()); got != 4 {
		t.Fatalf("grown ring has %d shards, want 4", got)
	}
	if got := len(grown.Shards()[3].Tokens); got != 16 {
		t.Errorf("new shard has %d tokens, want 16", got)
	}
	for _, old := range ring.Tokens() {
		if _, found := slices.BinarySearch(grown.Tokens(), old); !found {
			t.Fatalf("token %d of the old ring is gone", old)
		}
	}
	share := grown.Ownership()[3]
	if share < 0.2 || share > 0.3 {
		t.Errorf("new shard owns %.3f of the ring, want about 1/4", share)
	}
	// With one replica, exactly what the new shard took moves.
	rf1 := Replication{Class: SimpleStrategyClass, Factor: 1}
	if moved := Moved(ring.Placement(rf1), grown.Placement(rf1)); !near(moved, share) {
		t.Errorf("RF 1: moved %.6f, want the new shard's share %.6f", moved, share)
	}
	// With three replicas on four shards, every range the new shard
	// replicates changes its set, and no other does.
	rf3 := Replication{Class: SimpleStrategyClass, Factor: 3}
	if moved, want := Moved(ring.Placement(rf3), grown.Placement(rf3)), grown.Placement(rf3).Ownership()[3]; !near(moved, want) {
		t.Errorf("RF 3: moved %.6f, want %.6f", moved, want)
	}
	if moved := Moved(ring.Placement(rf3), ring.Placement(rf3)); moved != 0 {
		t.Errorf("a ring against itself moved %.6f", moved)
	}
}

func tokensOf(shards []ShardInfo) [][]Token {
	var out [][]Token
	for _, s := range shards {
		out = append(out, s.Tokens)
	}
	return out
}
