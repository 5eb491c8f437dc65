package exec

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cqlpg/cqlpg/gateway/advise"
	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/translate"
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

// filterCounts are the executions of a statement that filters rows or
// reads through a secondary index, and the rows they returned.
type filterCounts struct {
	execs, rows atomic.Int64
	since       atomic.Int64 // unix nanoseconds of the first execution
}

func (f *filterCounts) add(rows int) {
	if f.execs.Add(1) == 1 {
		f.since.Store(time.Now().UnixNano())
	}
	f.rows.Add(int64(rows))
}

// FilterStats returns the prepared statements that filter rows or read
// through a secondary index, with their executions and rows, for the
// advisor.
func (c *Cache) FilterStats() []advise.QueryStats {
	c.Mu.RLock()
	defer c.Mu.RUnlock()
	var out []advise.QueryStats
	for _, st := range c.ByID {
		p, ok := st.Plan.(*translate.Select)
		n := st.filtered.execs.Load()
		if !ok || n == 0 {
			continue
		}
		out = append(out, advise.QueryStats{Keyspace: p.Table.Keyspace, Table: p.Table.Name, Query: st.Query, Filtering: p.Filtering,
			Index: p.Index, Executions: n, Rows: st.filtered.rows.Load(), Since: time.Unix(0, st.filtered.since.Load())})
	}
	return out
}
