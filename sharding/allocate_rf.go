package sharding

import (
	"cmp"
	"math/rand/v2"
	"slices"
)

// AllocateTokensRF chooses n new tokens for a shard joining a ring whose
// shards own existing, balancing what each shard replicates at
// replication factor rf rather than what it owns as primary, as
// Cassandra 4's allocation for a replication factor does
// (allocate_tokens_for_local_replication_factor): at RF 3, three shards
// hold every range, and a token placed well for primary ownership can
// still leave a shard replicating far more than another.
//
// It places the tokens one at a time, greedily: each goes to the middle
// of the range where it lowers the sum of squared deviations of the
// shards' replicated ownership from an equal share the most (and of their
// primary ownership: see gain). Cutting ranges at quarters too was tried,
// and balanced worse: the greedy choice then takes too much at once. Replicas are
// SimpleStrategy's, the distinct owners met walking clockwise from a
// range, and a token only changes the replicas of its range and of the
// ranges just before it whose walk reaches it, so each candidate is
// scored from those alone. With fewer shards than rf, every shard holds
// every range, and AllocateTokens' spread is kept.
func AllocateTokensRF(existing [][]Token, n, rf int, seed int64) []Token {
	shards := 0
	for _, toks := range existing {
		if len(toks) > 0 {
			shards++
		}
	}
	if rf <= 1 || shards+1 <= rf || n <= 0 {
		return AllocateTokens(existing, n, seed)
	}
	a := newAllocation(existing, len(existing), rf)
	var out []Token
	for range n {
		best, bestAt, bestQ := 0.0, -1, 0
		for i := range a.tokens {
			if a.size(i) < 4 {
				continue
			}
			for q := 1; q < cutParts; q++ {
				if d := a.gain(i, q); bestAt < 0 || d < best {
					best, bestAt, bestQ = d, i, q
				}
			}
		}
		if bestAt < 0 {
			break
		}
		out = append(out, a.split(bestAt, bestQ))
	}
	return fillDistinct(out, existing, n, rand.New(rand.NewPCG(uint64(seed), 0x5bd1e9955bd1e995)))
}

// AllocationFactor is the replication factor a shard joining datacenter
// dc allocates its tokens for (AllocateTokensRF): the largest of reps
// there, or 3, Cassandra 4's default for
// allocate_tokens_for_local_replication_factor, when none names it.
func AllocationFactor(reps []Replication, dc string) int {
	rf := 0
	for _, rep := range reps {
		f := rep.Factor
		if rep.Class == NetworkTopologyStrategyClass {
			if n, ok := rep.DCFactors[dc]; ok {
				f = n
			}
		}
		rf = max(rf, f)
	}
	if rf == 0 {
		return 3
	}
	return rf
}

// allocation is a ring being grown by one shard, with each shard's
// replicated ownership (a fraction of the ring) at the factor rf.
type allocation struct {
	tokens []Token
	owners []int
	own    []float64
	prim   []float64
	rf     int
	ideal  float64
	newbie int
}

func newAllocation(existing [][]Token, newbie, rf int) *allocation {
	a := &allocation{rf: rf, newbie: newbie, own: make([]float64, newbie+1), prim: make([]float64, newbie+1)}
	type owned struct {
		tok   Token
		owner int
	}
	var all []owned
	holders := 1
	for s, toks := range existing {
		if len(toks) > 0 {
			holders++
		}
		for _, t := range toks {
			all = append(all, owned{t, s})
		}
	}
	slices.SortStableFunc(all, func(x, y owned) int { return cmp.Compare(x.tok, y.tok) })
	all = slices.CompactFunc(all, func(x, y owned) bool { return x.tok == y.tok })
	for _, o := range all {
		a.tokens = append(a.tokens, o.tok)
		a.owners = append(a.owners, o.owner)
	}
	a.ideal = float64(rf) / float64(holders)
	for i := range a.tokens {
		a.prim[a.owners[i]] += a.frac(i)
		for _, s := range a.replicas(i, -1) {
			a.own[s] += a.frac(i)
		}
	}
	return a
}

// size is the number of tokens in range i, (tokens[i-1], tokens[i]].
func (a *allocation) size(i int) uint64 {
	prev := a.tokens[(i+len(a.tokens)-1)%len(a.tokens)]
	if len(a.tokens) == 1 {
		return ^uint64(0)
	}
	return uint64(a.tokens[i]) - uint64(prev)
}

func (a *allocation) frac(i int) float64 { return float64(a.size(i)) / ringSizeF }

// replicas returns the replicas of the range that starts its walk at
// index from, as if a token of the new shard stood just before index at
// (at -1 for none): the first rf distinct owners met walking clockwise.
func (a *allocation) replicas(from, at int) []int {
	out := make([]int, 0, a.rf)
	add := func(s int) {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	for step := 0; step < len(a.tokens) && len(out) < a.rf; step++ {
		j := (from + step) % len(a.tokens)
		if j == at && step > 0 {
			add(a.newbie)
			if len(out) == a.rf {
				break
			}
		}
		add(a.owners[j])
	}
	return out
}

// change is a shard's replicated ownership moving by delta.
type change struct {
	shard int
	delta float64
}

// cutParts is how many parts a range is cut into for the points a token
// may go: the middle only.
const cutParts = 2

// taken is the fraction of the ring a token q parts into range i takes.
func (a *allocation) taken(i, q int) float64 {
	return float64(a.size(i)/cutParts*uint64(q)) / ringSizeF
}

// changes returns what a token of the new shard q parts into range i
// changes: the part before it gets replicas walked from the new token,
// and the ranges before it whose walk reaches it meet the new shard there.
func (a *allocation) changes(i, q int) []change {
	var out []change
	move := func(before, after []int, f float64) {
		for _, s := range before {
			if !slices.Contains(after, s) {
				out = append(out, change{s, -f})
			}
		}
		for _, s := range after {
			if !slices.Contains(before, s) {
				out = append(out, change{s, f})
			}
		}
	}
	part := a.taken(i, q)
	old := a.replicas(i, -1)
	first := append([]int{a.newbie}, a.replicas(i, -1)...)
	first = distinctPrefix(first, a.rf)
	move(old, first, part)
	// Ranges before i whose walk reaches i: those with fewer than rf
	// distinct owners from them up to i-1.
	var seen []int
	for back := 1; back < len(a.tokens); back++ {
		j := (i - back + len(a.tokens)) % len(a.tokens)
		if !slices.Contains(seen, a.owners[j]) {
			seen = append(seen, a.owners[j])
		}
		if len(seen) >= a.rf {
			break
		}
		move(a.replicas(j, -1), a.replicas(j, i), a.frac(j))
	}
	return out
}

// distinctPrefix returns the first n distinct shards of s.
func distinctPrefix(s []int, n int) []int {
	var out []int
	for _, x := range s {
		if !slices.Contains(out, x) {
			out = append(out, x)
			if len(out) == n {
				break
			}
		}
	}
	return out
}

// gain returns how much a token in the middle of range i changes the
// balance, lower being better: the sum of squared deviations of the
// shards' replicated ownership from an equal share, plus rf times that
// of their primary ownership. The second term keeps the new shard taking
// its primary share from the shards that hold the most; without it, the
// cheapest way to replicate a fair share is to own little as primary,
// which leaves the first shards holding more and more of the ring.
func (a *allocation) gain(i, q int) float64 {
	changes := a.changes(i, q)
	part := a.taken(i, q)
	changes = append(changes, change{a.owners[i], 0}, change{a.newbie, 0})
	// Shards in a fixed order, so that equal scores break ties alike.
	slices.SortStableFunc(changes, func(x, y change) int { return cmp.Compare(x.shard, y.shard) })
	var d float64
	w, share := float64(a.rf), a.ideal/float64(a.rf)
	for k := 0; k < len(changes); {
		s, x := changes[k].shard, 0.0
		for ; k < len(changes) && changes[k].shard == s; k++ {
			x += changes[k].delta
		}
		before := a.own[s] - a.ideal
		d += (before+x)*(before+x) - before*before
		var p float64
		switch s {
		case a.owners[i]:
			p = -part
		case a.newbie:
			p = part
		}
		before = a.prim[s] - share
		d += w * ((before+p)*(before+p) - before*before)
	}
	return d
}

// split places a token of the new shard q parts into range i and
// returns it.
func (a *allocation) split(i, q int) Token {
	for _, c := range a.changes(i, q) {
		a.own[c.shard] += c.delta
	}
	part := a.taken(i, q)
	a.prim[a.owners[i]] -= part
	a.prim[a.newbie] += part
	prev := a.tokens[(i+len(a.tokens)-1)%len(a.tokens)]
	t := Token(uint64(prev) + a.size(i)/cutParts*uint64(q))
	if i == 0 && t > a.tokens[len(a.tokens)-1] {
		// Range 0 wraps: a token above the last one goes at the end.
		i = len(a.tokens)
	}
	a.tokens = slices.Insert(a.tokens, i, t)
	a.owners = slices.Insert(a.owners, i, a.newbie)
	return t
}
