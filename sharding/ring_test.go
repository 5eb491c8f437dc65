package sharding

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// shard is a test helper building a ShardInfo.
func shard(name, dc, rack string, tokens ...Token) ShardInfo {
	return ShardInfo{Name: name, DC: dc, Rack: rack, Tokens: tokens}
}

func mustRing(t testing.TB, shards ...ShardInfo) *Ring {
	t.Helper()
	r, err := NewRing(shards)
	if err != nil {
		t.Fatalf("NewRing: %v", err)
	}
	return r
}

func TestNewRing(t *testing.T) {
	tests := []struct {
		name       string
		shards     []ShardInfo
		wantTokens []Token
		wantOwners []int
	}{
		{
			name:       "single shard single token",
			shards:     []ShardInfo{shard("a", "dc1", "r1", 42)},
			wantTokens: []Token{42},
			wantOwners: []int{0},
		},
		{
			name: "tokens sorted across shards",
			shards: []ShardInfo{
				shard("a", "dc1", "r1", 300, -100),
				shard("b", "dc1", "r1", 0, MaxToken),
				shard("c", "dc1", "r1", MinToken),
			},
			wantTokens: []Token{MinToken, -100, 0, 300, MaxToken},
			wantOwners: []int{2, 0, 1, 0, 1},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := mustRing(t, tc.shards...)
			if got := r.Tokens(); !slices.Equal(got, tc.wantTokens) {
				t.Errorf("Tokens() = %v, want %v", got, tc.wantTokens)
			}
			for i, want := range tc.wantOwners {
				if got := r.Owner(i); got != want {
					t.Errorf("Owner(%d) = %d, want %d", i, got, want)
				}
			}
		})
	}

	invalid := []struct {
		name    string
		shards  []ShardInfo
		wantErr string
	}{
		{"no shards", nil, "at least one shard"},
		{"no tokens", []ShardInfo{shard("a", "dc1", "r1"), shard("b", "dc1", "r1")}, "at least one token"},
		{"token owned by two shards", []ShardInfo{shard("a", "dc1", "r1", 1, 5), shard("b", "dc1", "r1", 5)}, `token 5 is owned by both shard "a" and shard "b"`},
		{"token repeated within a shard", []ShardInfo{shard("a", "dc1", "r1", 7, 7)}, `shard "a" lists token 7 twice`},
	}
	for _, tc := range invalid {
		t.Run(tc.name, func(t *testing.T) {
			r, err := NewRing(tc.shards)
			if err == nil {
				t.Fatalf("NewRing succeeded with tokens %v, want error", r.Tokens())
			}
			if !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("NewRing error = %q, want it to contain %q", err, tc.wantErr)
			}
		})
	}
}

// TestRingIsACopy checks that mutating NewRing's input or the slices the
// ring returns leaves the ring unchanged.
func TestRingIsACopy(t *testing.T) {
	in := []ShardInfo{shard("a", "dc1", "r1", 10, 20)}
	r := mustRing(t, in...)
	in[0].Tokens[0] = 15
	in[0].Name = "changed"
	r.Shards()[0].Tokens[1] = 25
	r.Tokens()[0] = 99
	if got := r.Tokens(); !slices.Equal(got, []Token{10, 20}) {
		t.Errorf("Tokens() = %v after mutating copies, want [10 20]", got)
	}
	if s := r.Shards()[0]; s.Name != "a" || !slices.Equal(s.Tokens, []Token{10, 20}) {
		t.Errorf("Shards()[0] = %+v after mutating copies", s)
	}
}

func TestRangeIndex(t *testing.T) {
	r := mustRing(t, shard("a", "dc1", "r1", -100, 100), shard("b", "dc1", "r1", 0))
	tests := []struct {
		tok  Token
		want int
	}{
		{MinToken, 0},
		{-101, 0},
		{-100, 0}, // range ends are inclusive
		{-99, 1},
		{0, 1},
		{1, 2},
		{100, 2},
		{101, 0}, // past the last token wraps to range 0
		{MaxToken, 0},
	}
	for _, tc := range tests {
		if got := r.RangeIndex(tc.tok); got != tc.want {
			t.Errorf("RangeIndex(%d) = %d, want %d", tc.tok, got, tc.want)
		}
		if rg := r.Range(tc.want); !rg.Contains(tc.tok) {
			t.Errorf("Range(%d) = %+v does not contain %d", tc.want, rg, tc.tok)
		}
	}
}

func TestRangeContains(t *testing.T) {
	tests := []struct {
		name string
		rg   Range
		tok  Token
		want bool
	}{
		{"inside", Range{0, 100}, 50, true},
		{"end is inclusive", Range{0, 100}, 100, true},
		{"start is exclusive", Range{0, 100}, 0, false},
		{"above", Range{0, 100}, 101, false},
		{"below", Range{0, 100}, -1, false},
		{"wrapping, above start", Range{100, -100}, MaxToken, true},
		{"wrapping, below end", Range{100, -100}, MinToken, true},
		{"wrapping, at end", Range{100, -100}, -100, true},
		{"wrapping, at start", Range{100, -100}, 100, false},
		{"wrapping, in the gap", Range{100, -100}, 0, false},
		{"whole ring, at the token", Range{7, 7}, 7, true},
		{"whole ring, elsewhere", Range{7, 7}, MinToken, true},
	}
	for _, tc := range tests {
		if got := tc.rg.Contains(tc.tok); got != tc.want {
			t.Errorf("%s: %+v.Contains(%d) = %v, want %v", tc.name, tc.rg, tc.tok, got, tc.want)
		}
	}
}

func TestRange(t *testing.T) {
	r := mustRing(t, shard("a", "dc1", "r1", 10, 30), shard("b", "dc1", "r1", 20))
	want := []Range{{30, 10}, {10, 20}, {20, 30}}
	for i, w := range want {
		if got := r.Range(i); got != w {
			t.Errorf("Range(%d) = %+v, want %+v", i, got, w)
		}
	}
}

func TestOwnership(t *testing.T) {
	const q = Token(1 << 62) // a quarter of the ring
	tests := []struct {
		name   string
		shards []ShardInfo
		want   []float64
	}{
		{"single token owns everything", []ShardInfo{shard("a", "", "", 5)}, []float64{1}},
		{
			name: "quarters, one shard wrapping",
			// a owns (MaxToken, -q], which wraps, and (0, q].
			shards: []ShardInfo{shard("a", "", "", -q, q), shard("b", "", "", 0), shard("c", "", "", MaxToken)},
			want:   []float64{0.5, 0.25, 0.25},
		},
		{"two halves", []ShardInfo{shard("a", "", "", MinToken), shard("b", "", "", 0)}, []float64{0.5, 0.5}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := mustRing(t, tc.shards...).Ownership()
			sum := 0.0
			for _, f := range got {
				sum += f
			}
			if math.Abs(sum-1) > 1e-9 {
				t.Errorf("ownership sums to %v, want 1", sum)
			}
			for i := range tc.want {
				if math.Abs(got[i]-tc.want[i]) > 1e-9 {
					t.Errorf("Ownership() = %v, want %v", got, tc.want)
					break
				}
			}
		})
	}
}

// TestRangeInclusive checks the inclusive bounds of ranges that do and do
// not wrap, and of the whole ring.
func TestRangeInclusive(t *testing.T) {
	for _, tc := range []struct {
		r    Range
		want [][2]int64
	}{
		{Range{-5, 10}, [][2]int64{{-4, 10}}},
		{Range{10, -5}, [][2]int64{{11, math.MaxInt64}, {math.MinInt64, -5}}},
		{Range{math.MaxInt64, 3}, [][2]int64{{math.MinInt64, 3}}},
		{Range{7, 7}, [][2]int64{{8, math.MaxInt64}, {math.MinInt64, 7}}},
	} {
		if got := tc.r.Inclusive(); !slices.Equal(got, tc.want) {
			t.Errorf("%v: %v, want %v", tc.r, got, tc.want)
		}
	}
}
