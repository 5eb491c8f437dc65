package sharding

import (
	"fmt"
	"math"
	"slices"
	"testing"
)

// checkAllocation verifies the contract every AllocateTokens result must
// meet: n sorted, distinct tokens, none of them already in existing.
func checkAllocation(t *testing.T, got []Token, existing [][]Token, n int) {
	t.Helper()
	if len(got) != n {
		t.Fatalf("got %d tokens, want %d", len(got), n)
	}
	for i := 1; i < len(got); i++ {
		if got[i-1] >= got[i] {
			t.Fatalf("tokens not strictly ascending at %d: %v", i, got)
		}
	}
	for _, tok := range got {
		for _, toks := range existing {
			if slices.Contains(toks, tok) {
				t.Fatalf("token %d already exists", tok)
			}
		}
	}
}

func TestAllocateTokensFirstShard(t *testing.T) {
	tests := []struct {
		n        int
		wantStep uint64
	}{
		{1, 0},
		{2, 1 << 63},
		{4, 1 << 62},
		{16, 1 << 60},
		{3, (1<<64 - 1) / 3},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.n), func(t *testing.T) {
			got := AllocateTokens(nil, tc.n, 42)
			checkAllocation(t, got, nil, tc.n)
			for i := 1; i < len(got); i++ {
				if step := uint64(got[i]) - uint64(got[i-1]); step != tc.wantStep {
					t.Errorf("tokens %d and %d are %d apart, want %d", i-1, i, step, tc.wantStep)
				}
			}
		})
	}
}

func TestAllocateTokensDeterministic(t *testing.T) {
	existing := [][]Token{AllocateTokens(nil, 16, 1)}
	a := AllocateTokens(existing, 16, 99)
	b := AllocateTokens(existing, 16, 99)
	if !slices.Equal(a, b) {
		t.Errorf("same seed gave %v and %v", a, b)
	}
	if first, other := AllocateTokens(nil, 8, 1), AllocateTokens(nil, 8, 2); slices.Equal(first, other) {
		t.Errorf("seeds 1 and 2 gave the same first-shard tokens %v", first)
	}
}

func TestAllocateTokensEdgeCases(t *testing.T) {
	tests := []struct {
		name     string
		existing [][]Token
		n        int
	}{
		{"shards without tokens only", [][]Token{nil, {}}, 4},
		{"one existing token, many new", [][]Token{{0}}, 16},
		{"more new tokens than ranges", [][]Token{{-5, 5}}, 7},
		{"adjacent existing tokens", [][]Token{{0, 1}, {2, 3}}, 4},
		{"token listed by two shards", [][]Token{{9, 100}, {9}}, 2},
		{"ring extremes", [][]Token{{MinToken}, {MaxToken}}, 3},
		{"more shards than new tokens", [][]Token{{-300}, {-100}, {100}, {300}}, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkAllocation(t, AllocateTokens(tc.existing, tc.n, 5), tc.existing, tc.n)
		})
	}

	for _, n := range []int{0, -1} {
		if got := AllocateTokens([][]Token{{1}}, n, 5); got != nil {
			t.Errorf("AllocateTokens(n=%d) = %v, want nil", n, got)
		}
	}
}

// TestAllocateTokensShares checks the share the new shard takes, and from
// whom, on small rings with known ownership.
func TestAllocateTokensShares(t *testing.T) {
	const q = Token(1 << 62) // a quarter of the ring
	tests := []struct {
		name     string
		existing [][]Token
		n        int
		want     []float64 // ownership afterwards, the new shard last
	}{
		{"one-token ring is halved", [][]Token{{0}}, 4, []float64{0.5, 0.5}},
		{"equal shards each give a third", [][]Token{{0}, {MinToken}}, 2, []float64{1.0 / 3, 1.0 / 3, 1.0 / 3}},
		// Shard 0 owns 3/4 and shard 1 1/4: only shard 0 is above 1/3.
		{"only the over-owner loses", [][]Token{{-q, 0, q}, {MinToken}}, 3, []float64{5.0 / 12, 1.0 / 4, 1.0 / 3}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := AllocateTokens(tc.existing, tc.n, 3)
			var shards []ShardInfo
			for i, toks := range append(slices.Clone(tc.existing), got) {
				shards = append(shards, shard(fmt.Sprint(i), "", "", toks...))
			}
			own := mustRing(t, shards...).Ownership()
			for i := range tc.want {
				if math.Abs(own[i]-tc.want[i]) > 1e-6 {
					t.Errorf("ownership = %.4f, want %.4f", own, tc.want)
					break
				}
			}
		})
	}
}

// growRing adds shards of n tokens one at a time, each allocated against all
// tokens so far, and returns the final ownership.
func growRing(t *testing.T, shards, n int, seed int64) []float64 {
	t.Helper()
	var existing [][]Token
	var infos []ShardInfo
	for k := range shards {
		toks := AllocateTokens(existing, n, seed+int64(k))
		checkAllocation(t, toks, existing, n)
		existing = append(existing, toks)
		infos = append(infos, shard(fmt.Sprint(k), "", "", toks...))
	}
	return mustRing(t, infos...).Ownership()
}

func TestAllocateTokensBalance(t *testing.T) {
	tests := []struct {
		shards int
		lo, hi float64
	}{
		{shards: 2, lo: 0.45, hi: 0.55},
		{shards: 3, lo: 0.25, hi: 0.42},
		{shards: 8, lo: 0.08, hi: 0.18},
	}
	for _, tc := range tests {
		for seed := range int64(20) {
			t.Run(fmt.Sprintf("%d shards seed %d", tc.shards, seed), func(t *testing.T) {
				own := growRing(t, tc.shards, 16, seed)
				for i, f := range own {
					if f < tc.lo || f > tc.hi {
						t.Errorf("shard %d owns %.4f, want within [%v, %v]; all: %.3f", i, f, tc.lo, tc.hi, own)
					}
				}
			})
		}
	}
}
