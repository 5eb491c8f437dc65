package sharding

import (
	"fmt"
	"testing"
)

// benchRing is a 12-shard, two-datacenter ring with 16 vnodes per shard,
// allocated the way a growing cluster would be.
func benchRing(tb testing.TB) *Ring {
	tb.Helper()
	var existing [][]Token
	var shards []ShardInfo
	for i := range 12 {
		toks := AllocateTokens(existing, 16, int64(i))
		existing = append(existing, toks)
		shards = append(shards, ShardInfo{
			Name:   fmt.Sprintf("pg%d", i),
			DC:     fmt.Sprintf("dc%d", i%2),
			Rack:   fmt.Sprintf("rack%d", i%3),
			Tokens: toks,
		})
	}
	return mustRing(tb, shards...)
}

func TestReplicasDoesNotAllocate(t *testing.T) {
	p := benchRing(t).Placement(Replication{Class: NetworkTopologyStrategyClass, DCFactors: map[string]int{"dc0": 3, "dc1": 3}})
	if n := testing.AllocsPerRun(100, func() { p.Replicas(12345) }); n != 0 {
		t.Errorf("Replicas allocates %v times per call, want 0", n)
	}
}

func BenchmarkTokenOf(b *testing.B) {
	key := []byte{0x41, 0xd0, 0x1b, 0x63, 0x24, 0x4e, 0x43, 0x5d, 0xbd, 0x6d, 0x5d, 0xc8, 0xa0, 0xad, 0xdb, 0x8c}
	b.ReportAllocs()
	b.SetBytes(int64(len(key)))
	for b.Loop() {
		TokenOf(key)
	}
}

func BenchmarkKeyToken(b *testing.B) {
	comps := [][]byte{{0, 0, 0x07, 0xd0}, []byte("user-0001"), {0x41, 0xd0, 0x1b, 0x63, 0x24, 0x4e, 0x43, 0x5d}}
	b.ReportAllocs()
	for b.Loop() {
		KeyToken(comps)
	}
}

func BenchmarkReplicas(b *testing.B) {
	ring := benchRing(b)
	for _, bc := range []struct {
		name string
		rep  Replication
	}{
		{"SimpleStrategy", Replication{Class: SimpleStrategyClass, Factor: 3}},
		{"NetworkTopologyStrategy", Replication{Class: NetworkTopologyStrategyClass, DCFactors: map[string]int{"dc0": 3, "dc1": 3}}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			p := ring.Placement(bc.rep)
			b.ReportAllocs()
			tok := Token(0)
			for b.Loop() {
				p.Replicas(tok)
				tok += 0x9e3779b97f4a7c15 >> 1 // walk the ring in large strides
			}
		})
	}
}

func BenchmarkPlacement(b *testing.B) {
	ring := benchRing(b)
	rep := Replication{Class: NetworkTopologyStrategyClass, DCFactors: map[string]int{"dc0": 3, "dc1": 3}}
	b.ReportAllocs()
	for b.Loop() {
		ring.Placement(rep)
	}
}
