package exec

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"sync"

	"github.com/cqlpg/cqlpg/gateway/advise"
	"github.com/cqlpg/cqlpg/pgschema"
)

// Hot partitions: one request in hotEvery that reads or writes a
// partition is noted in a small table of counters, keyed by table and
// token, which keeps the partitions most asked for (a counter that meets
// another key is decremented, and the key takes the slot once it reaches
// zero, as the space-saving sketches do). The cost on a request is one
// random number; the noted one takes a lock. The advisor reads the
// table (advise.HotPartitions) for its traffic findings.

// hotEvery is one in how many requests is noted.
const hotEvery = 64

// hotSlots is the size of the table of counters.
const hotSlots = 1024

// HotSampler counts the partitions requests ask for, by sample.
type HotSampler struct {
	mu    sync.Mutex
	slots [hotSlots]hotSlot
	noted uint64
}

type hotSlot struct {
	table *pgschema.Table
	token int64
	count uint32
}

// note counts a request to the partition of t with token, one in
// hotEvery.
func (h *HotSampler) note(t *pgschema.Table, token int64) {
	// A random one in hotEvery: a fixed period would see only one of
	// two partitions a client asks for in turn.
	if rand.Uint32()%hotEvery != 0 {
		return
	}
	i := (uint64(token) ^ uint64(t.ID[0])<<56 ^ uint64(t.ID[15])) % hotSlots
	h.mu.Lock()
	s := &h.slots[i]
	switch {
	case s.table != nil && s.token == token && s.table.ID == t.ID:
		s.count++
	case s.count == 0:
		*s = hotSlot{table: t, token: token, count: 1}
	default:
		s.count--
	}
	h.noted++
	h.mu.Unlock()
}

// Hot returns the partitions the sampled requests asked for most, the
// largest share of their table first, with at least min samples each.
func (h *HotSampler) Hot(min int) []advise.HotPartition {
	h.mu.Lock()
	defer h.mu.Unlock()
	perTable := map[[16]byte]int{}
	for _, s := range h.slots {
		if s.table != nil {
			perTable[s.table.ID] += int(s.count)
		}
	}
	var out []advise.HotPartition
	for _, s := range h.slots {
		if s.table != nil && int(s.count) >= min {
			out = append(out, advise.HotPartition{Keyspace: s.table.Keyspace, Table: s.table.Name, Token: s.token, Sampled: int(s.count),
				Share: float64(s.count) / float64(perTable[s.table.ID])})
		}
	}
	slices.SortFunc(out, func(a, b advise.HotPartition) int { return cmp.Compare(b.Share, a.Share) })
	return out
}
