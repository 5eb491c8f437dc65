package sharding

import (
	"cmp"
	"maps"
	"math/bits"
	"math/rand/v2"
	"slices"
)

// AllocateTokens chooses n new tokens, in ascending order, for a shard
// joining a ring whose current shards own existing: existing[i] holds the
// tokens of shard i. The result is deterministic for a given seed and never
// repeats an existing token or itself.
//
// With no existing tokens the n tokens are evenly spaced over the ring,
// rotated by an offset drawn from seed, so every range has the same size.
//
// Otherwise, with k shards owning tokens, the new shard is given about
// 1/(k+1) of the ring, taken from the shards that own more than 1/(k+1) in
// proportion to their excess, so that every shard ends near an equal share.
// A new token m inside a range (a, b] takes (a, m] from b's owner; each
// losing shard gets a number of the new tokens proportional to its loss and
// gives up the same fraction of each of its largest ranges. Knowing the
// owners is what makes this even: choosing ranges by size alone takes
// unevenly from shards whose ranges happen to be larger.
func AllocateTokens(existing [][]Token, n int, seed int64) []Token {
	if n <= 0 {
		return nil
	}
	rng := rand.New(rand.NewPCG(uint64(seed), 0x5bd1e9955bd1e995))
	spans := ownedSpans(existing, rng)
	var out []Token
	if len(spans) == 0 {
		out = evenTokens(n, rng)
	} else {
		out = takeFromOwners(spans, n)
	}
	return fillDistinct(out, existing, n, rng)
}

// evenTokens returns n tokens 2^64/n apart, starting at a random offset.
func evenTokens(n int, rng *rand.Rand) []Token {
	if n == 1 {
		return []Token{Token(rng.Uint64())}
	}
	step, _ := bits.Div64(1, 0, uint64(n)) // 2^64 / n; n >= 2 so no overflow
	first := MinToken
	t := uint64(first) + rng.Uint64N(step)
	out := make([]Token, n)
	for i := range out {
		out[i] = Token(t)
		t += step
	}
	return out
}

// span is one existing range (start, start+size], owned by owner.
type span struct {
	start uint64
	size  float64 // exact enough for proportions; 2^64 for a one-token ring
	max   uint64  // largest usable offset: size-1, so the old end stays put
	owner int
	tie   uint64 // random order among a shard's ranges of equal size
}

// ownedSpans lists the ranges of the ring formed by existing, in token
// order. A token listed more than once keeps its first owner.
func ownedSpans(existing [][]Token, rng *rand.Rand) []span {
	type owned struct {
		tok   Token
		owner int
	}
	var all []owned
	for s, toks := range existing {
		for _, t := range toks {
			all = append(all, owned{t, s})
		}
	}
	slices.SortStableFunc(all, func(a, b owned) int { return cmp.Compare(a.tok, b.tok) })
	all = slices.CompactFunc(all, func(a, b owned) bool { return a.tok == b.tok })

	spans := make([]span, len(all))
	for i, e := range all {
		start := all[(i+len(all)-1)%len(all)].tok
		size := uint64(e.tok) - uint64(start) // wraps modulo 2^64 = ring size
		spans[i] = span{start: uint64(start), size: float64(size), max: size - 1, owner: e.owner, tie: rng.Uint64()}
	}
	if len(spans) == 1 {
		spans[0].size = ringSizeF // the one range is the whole ring
	}
	return spans
}

// takeFromOwners places n tokens so that the new shard takes 1/(k+1) of
// the ring from the k owners of spans, each losing in proportion to how far
// it is above 1/(k+1).
func takeFromOwners(spans []span, n int) []Token {
	loss, share := plannedLoss(spans)
	counts := apportion(loss, n)
	// Shards that received no token cannot lose anything; the others make
	// up for them.
	var total float64
	for s, c := range counts {
		if c > 0 {
			total += loss[s]
		}
	}
	out := make([]Token, 0, n)
	for _, s := range slices.Sorted(maps.Keys(counts)) {
		if c := counts[s]; c > 0 {
			out = cutOwner(out, spans, s, c, loss[s]/total*share)
		}
	}
	return out
}

// plannedLoss returns, per owner, a weight for how much it should give up,
// and the share of the ring, 1/(k+1), the new shard should get.
func plannedLoss(spans []span) (map[int]float64, float64) {
	owned := make(map[int]float64)
	for _, sp := range spans {
		owned[sp.owner] += sp.size / ringSizeF
	}
	share := 1 / float64(len(owned)+1)
	// The excesses over the share add up to at least the share, since
	// ownership adds up to 1, so taking them proportionally can fill it.
	loss := make(map[int]float64)
	for s, o := range owned {
		if ex := o - share; ex > 0 {
			loss[s] = ex
		}
	}
	if len(loss) == 0 {
		// Only rounding can leave no shard above the share; take in
		// proportion to ownership instead.
		return owned, share
	}
	return loss, share
}

// cutOwner appends c tokens placed in the largest ranges of owner s so
// that the new shard takes amount (a fraction of the ring) from it, the
// same fraction of each range used.
func cutOwner(out []Token, spans []span, s, c int, amount float64) []Token {
	var mine []span
	for _, sp := range spans {
		if sp.owner == s {
			mine = append(mine, sp)
		}
	}
	slices.SortFunc(mine, func(a, b span) int {
		if d := cmp.Compare(b.max, a.max); d != 0 {
			return d
		}
		return cmp.Compare(a.tie, b.tie)
	})
	chosen := mine[:min(c, len(mine))]
	// More tokens than ranges: the extra ones go round-robin and merely
	// split the new shard's part of a range.
	per := make([]int, len(chosen))
	for i := range c {
		per[i%len(chosen)]++
	}
	var sum float64
	for _, sp := range chosen {
		sum += sp.size
	}
	frac := amount * ringSizeF / sum
	for i, sp := range chosen {
		out = appendCuts(out, sp, frac, per[i])
	}
	return out
}

// apportion splits n tokens over the owners with a positive weight in
// proportion to it, by largest remainder, breaking ties by owner index.
func apportion(weight map[int]float64, n int) map[int]int {
	var total float64
	for _, w := range weight {
		total += w
	}
	type rem struct {
		owner int
		frac  float64
	}
	var rems []rem
	counts := make(map[int]int)
	given := 0
	for _, s := range slices.Sorted(maps.Keys(weight)) {
		if weight[s] <= 0 {
			continue
		}
		exact := float64(n) * weight[s] / total
		counts[s] = int(exact)
		given += counts[s]
		rems = append(rems, rem{s, exact - float64(counts[s])})
	}
	slices.SortStableFunc(rems, func(a, b rem) int { return cmp.Compare(b.frac, a.frac) })
	for i := 0; given < n; i++ {
		counts[rems[i%len(rems)].owner]++
		given++
	}
	return counts
}

// appendCuts appends c tokens that take the first frac of sp for the new
// shard, spread evenly over the part taken. The part is kept between c and
// sp.max tokens so the new tokens are distinct and the old end stays with
// its owner; a range too small for that gets no tokens here.
func appendCuts(out []Token, sp span, frac float64, c int) []Token {
	take := sp.max
	if want := sp.size * frac; want < float64(sp.max) {
		take = uint64(want)
	}
	n := uint64(c)
	if take < n {
		if sp.max < n {
			return out // fillDistinct makes up for it
		}
		take = n
	}
	for j := uint64(1); j <= n; j++ {
		// take*j/n with a 128-bit product, which cannot overflow.
		hi, lo := bits.Mul64(take, j)
		q, _ := bits.Div64(hi, lo, n)
		out = append(out, Token(sp.start+q))
	}
	return out
}

// fillDistinct drops tokens of out that repeat existing ones or each other,
// tops the result up to n with random tokens, and sorts it. Only degenerate
// rings (ranges too small to split) need the top-up.
func fillDistinct(out []Token, existing [][]Token, n int, rng *rand.Rand) []Token {
	used := make(map[Token]bool)
	for _, toks := range existing {
		for _, t := range toks {
			used[t] = true
		}
	}
	kept := out[:0]
	for _, t := range out {
		if !used[t] {
			used[t] = true
			kept = append(kept, t)
		}
	}
	for len(kept) < n {
		t := Token(rng.Uint64())
		if !used[t] {
			used[t] = true
			kept = append(kept, t)
		}
	}
	slices.Sort(kept)
	return kept
}
