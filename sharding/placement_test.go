package sharding

import (
	"slices"
	"sync"
	"testing"
)

// sixRing is the classic teaching picture: six shards, one token each, at
// 0, 100, ..., 500, shard i owning token 100*i.
func sixRing(t testing.TB) *Ring {
	var shards []ShardInfo
	for i := range 6 {
		shards = append(shards, shard(string(rune('A'+i)), "dc1", "r1", Token(100*i)))
	}
	return mustRing(t, shards...)
}

func TestSimpleStrategyPlacement(t *testing.T) {
	ring := sixRing(t)
	tests := []struct {
		name       string
		rf         int
		tok        Token
		wantFactor int
		want       []int
	}{
		{"RF 1", 1, 50, 1, []int{1}},
		{"RF 2", 2, 50, 2, []int{1, 2}},
		{"RF 3", 3, 50, 3, []int{1, 2, 3}},
		{"RF 3 on a range end", 3, 300, 3, []int{3, 4, 5}},
		{"RF 3 wraps past the last shard", 3, 450, 3, []int{5, 0, 1}},
		{"RF 3 above the last token", 3, 501, 3, []int{0, 1, 2}},
		{"RF 3 at MinToken", 3, MinToken, 3, []int{0, 1, 2}},
		{"RF above shard count is capped", 8, 50, 6, []int{1, 2, 3, 4, 5, 0}},
		{"RF 0 has no replicas", 0, 50, 0, []int{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := ring.Placement(Replication{Class: SimpleStrategyClass, Factor: tc.rf})
			if got := p.Factor(); got != tc.wantFactor {
				t.Errorf("Factor() = %d, want %d", got, tc.wantFactor)
			}
			if got := p.Replicas(tc.tok); !slices.Equal(got, tc.want) {
				t.Errorf("Replicas(%d) = %v, want %v", tc.tok, got, tc.want)
			}
		})
	}
}

// TestSimpleStrategySkipsRepeatedShards uses vnodes: a shard owning the
// next token as well must not be counted twice.
func TestSimpleStrategySkipsRepeatedShards(t *testing.T) {
	ring := mustRing(t, shard("a", "dc1", "r1", 0, 100), shard("b", "dc1", "r1", 200))
	p := ring.Placement(Replication{Class: "SimpleStrategy", Factor: 2})
	tests := []struct {
		tok  Token
		want []int
	}{
		{50, []int{0, 1}},
		{150, []int{1, 0}},
		{-5, []int{0, 1}},
	}
	for _, tc := range tests {
		if got := p.Replicas(tc.tok); !slices.Equal(got, tc.want) {
			t.Errorf("Replicas(%d) = %v, want %v", tc.tok, got, tc.want)
		}
	}
}

// ntsRing has two datacenters of three shards on two racks, with the
// datacenters interleaved around the ring:
//
//	token:  0    100  200  300  400  500
//	shard:  0    3    1    4    2    5
//	dc:     dc1  dc2  dc1  dc2  dc1  dc2
//	rack:   r1   r1   r1   r2   r2   r2
func ntsRing(t testing.TB) *Ring {
	return mustRing(t,
		shard("s0", "dc1", "r1", 0),
		shard("s1", "dc1", "r1", 200),
		shard("s2", "dc1", "r2", 400),
		shard("s3", "dc2", "r1", 100),
		shard("s4", "dc2", "r2", 300),
		shard("s5", "dc2", "r2", 500),
	)
}

func TestNetworkTopologyStrategyPlacement(t *testing.T) {
	ring := ntsRing(t)
	nts := func(rf int, dcs map[string]int) Replication {
		return Replication{Class: NetworkTopologyStrategyClass, Factor: rf, DCFactors: dcs}
	}
	tests := []struct {
		name       string
		rep        Replication
		tok        Token
		wantFactor int
		want       []int
	}{
		// s1 is passed over (rack r1 of dc1 taken by s0) and dc1 is
		// completed by s2 on r2.
		{"RF 2 per DC", nts(0, map[string]int{"dc1": 2, "dc2": 2}), 0, 4, []int{0, 3, 4, 2}},
		// s1 is taken once s2 has covered dc1's last rack, so it is listed
		// after s2 although the walk reached it first.
		{"RF 3 per DC", nts(0, map[string]int{"dc1": 3, "dc2": 3}), 0, 6, []int{0, 3, 4, 2, 1, 5}},
		{"RF 2 per DC from the middle", nts(0, map[string]int{"dc1": 2, "dc2": 2}), 250, 4, []int{4, 2, 0, 3}},
		{"RF 3 per DC from the middle", nts(0, map[string]int{"dc1": 3, "dc2": 3}), 250, 6, []int{4, 2, 0, 3, 5, 1}},
		{"wrap-around above the last token", nts(0, map[string]int{"dc1": 2, "dc2": 2}), 501, 4, []int{0, 3, 4, 2}},
		{"wrap-around at MaxToken", nts(0, map[string]int{"dc1": 2, "dc2": 2}), MaxToken, 4, []int{0, 3, 4, 2}},
		{"one DC only", nts(0, map[string]int{"dc2": 2}), 0, 2, []int{3, 4}},
		{"replication_factor applies to every DC", nts(1, nil), 0, 2, []int{0, 3}},
		{"explicit DC overrides replication_factor", nts(1, map[string]int{"dc1": 0}), 0, 1, []int{3}},
		{"DC factor capped at DC size", nts(0, map[string]int{"dc1": 5}), 0, 3, []int{0, 2, 1}},
		{"unknown DC gets nothing", nts(0, map[string]int{"dc1": 1, "dc9": 3}), 0, 1, []int{0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := ring.Placement(tc.rep)
			if got := p.Factor(); got != tc.wantFactor {
				t.Errorf("Factor() = %d, want %d", got, tc.wantFactor)
			}
			if got := p.Replicas(tc.tok); !slices.Equal(got, tc.want) {
				t.Errorf("Replicas(%d) = %v, want %v", tc.tok, got, tc.want)
			}
		})
	}
}

func TestPlacementUnknownClassHasNoReplicas(t *testing.T) {
	p := sixRing(t).Placement(Replication{Class: "org.example.Custom", Factor: 3})
	if p.Factor() != 0 || len(p.Replicas(42)) != 0 {
		t.Errorf("unknown class: Factor() = %d, Replicas = %v, want none", p.Factor(), p.Replicas(42))
	}
}

// TestRangeReplicasCannotClobberNeighbours checks that appending to a
// returned slice does not write into the next range's replicas.
func TestRangeReplicasCannotClobberNeighbours(t *testing.T) {
	p := sixRing(t).Placement(Replication{Class: SimpleStrategyClass, Factor: 2})
	before := slices.Clone(p.RangeReplicas(1))
	_ = append(p.RangeReplicas(0), 99)
	if got := p.RangeReplicas(1); !slices.Equal(got, before) {
		t.Errorf("RangeReplicas(1) = %v after appending to range 0, want %v", got, before)
	}
}

func TestRangeReplicasOutOfBounds(t *testing.T) {
	p := sixRing(t).Placement(Replication{Class: SimpleStrategyClass, Factor: 1})
	for _, i := range []int{-1, 6} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("RangeReplicas(%d) did not panic", i)
				}
			}()
			p.RangeReplicas(i)
		}()
	}
}

// TestConcurrentUse exercises a shared Ring and Placement from several
// goroutines; run with -race it checks that read paths never write.
func TestConcurrentUse(t *testing.T) {
	ring := ntsRing(t)
	p := ring.Placement(Replication{Class: NetworkTopologyStrategyClass, DCFactors: map[string]int{"dc1": 2, "dc2": 2}})
	want := slices.Clone(p.Replicas(250))
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 1000 {
				tok := Token(i*g*7919 - 4000)
				if !ring.Range(ring.RangeIndex(tok)).Contains(tok) {
					t.Errorf("token %d outside its range", tok)
					return
				}
				_ = ring.Ownership()
				if got := p.Replicas(250); !slices.Equal(got, want) {
					t.Errorf("Replicas(250) = %v, want %v", got, want)
					return
				}
			}
		})
	}
	wg.Wait()
}
