package sharding

import (
	"fmt"
	"slices"
	"testing"
)

// growBalance grows a ring shard by shard to upTo shards of n tokens,
// each allocated by alloc, and returns, after each shard, the largest
// replicated ownership at rf over the mean.
func growBalance(t testing.TB, upTo, n, rf int, alloc func(existing [][]Token, k int) []Token) []float64 {
	var existing [][]Token
	var infos []ShardInfo
	var out []float64
	for k := range upTo {
		toks := alloc(existing, k)
		if len(toks) != n {
			t.Fatalf("shard %d got %d tokens", k, len(toks))
		}
		existing = append(existing, toks)
		infos = append(infos, shard(fmt.Sprint(k), "", "", toks...))
		own := mustRing(t, infos...).Placement(Replication{Class: SimpleStrategyClass, Factor: rf}).Ownership()
		mean := 0.0
		for _, o := range own {
			mean += o
		}
		mean /= float64(len(own))
		out = append(out, slices.Max(own)/mean, own[k]/mean)
	}
	return out
}

// TestAllocateTokensRFBalance grows rings shard by shard from 3 to 64
// shards of 16 tokens and checks the largest replicated ownership over the
// mean after every shard: at most 1.10 at RF 1 and RF 3 (Cassandra's own
// test allows 1.083 at RF 3 for 16 tokens without racks on 250 nodes;
// random tokens give about 1.24 at 12 nodes). It logs the figures, and
// those of AllocateTokens, which balances primary ownership only.
func TestAllocateTokensRFBalance(t *testing.T) {
	for _, rf := range []int{1, 3} {
		for seed := range int64(4) {
			rfAware := growBalance(t, 64, 16, rf, func(e [][]Token, k int) []Token { return AllocateTokensRF(e, 16, rf, seed*100+int64(k)) })
			primary := growBalance(t, 64, 16, rf, func(e [][]Token, k int) []Token { return AllocateTokens(e, 16, seed*100+int64(k)) })
			worst, worstP, at, moved := 0.0, 0.0, 0, 0.0
			for k := 2; k < 64; k++ {
				if rfAware[2*k] > worst {
					worst, at = rfAware[2*k], k+1
				}
				worstP = max(worstP, primary[2*k])
				// The new shard receives each range it replicates once,
				// its share of all the data (rf copies of the ring): about
				// 1/k when its ownership is about the mean.
				moved = max(moved, rfAware[2*k+1])
			}
			t.Logf("rf %d seed %d: max/mean from 3 to 64 shards %.3f (at %d shards; primary-balanced tokens %.3f); at 4, 8, 16, 32, 64 shards: %.3f %.3f %.3f %.3f %.3f; a new shard receives at most %.3f/N of the data",
				rf, seed, worst, at, worstP, rfAware[6], rfAware[14], rfAware[30], rfAware[62], rfAware[126], moved)
			if worst > 1.10 {
				t.Errorf("rf %d seed %d: a shard replicates %.3f of the mean at %d shards, want at most 1.10", rf, seed, worst, at)
			}
			if moved > 1.10 {
				t.Errorf("rf %d seed %d: a new shard receives %.3f/N of the data, want about 1/N", rf, seed, moved)
			}
		}
	}
}

// TestAllocateTokensRFDeterministic checks that the tokens a joining shard
// gets depend on the ring and the factor alone, once the ring has as many
// shards as the factor: the what-if page's added shard (WithShard, with
// its fixed seed) takes the tokens cqlpg shard add then gives it (with a
// seed from the clock).
func TestAllocateTokensRFDeterministic(t *testing.T) {
	var existing [][]Token
	var infos []ShardInfo
	for k := range 5 {
		toks := AllocateTokensRF(existing, 16, 3, int64(k))
		existing = append(existing, toks)
		infos = append(infos, shard(fmt.Sprint(k), "dc1", "r1", toks...))
	}
	grown, err := mustRing(t, infos...).WithShard(ShardInfo{Name: "new", DC: "dc1", Rack: "r1"}, 16, 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, seed := range []int64{2, 1 << 40, -7} {
		if got, want := AllocateTokensRF(existing, 16, 3, seed), grown.Shards()[5].Tokens; !slices.Equal(got, want) {
			t.Errorf("seed %d: %v, the what-if page's %v", seed, got, want)
		}
	}
}
