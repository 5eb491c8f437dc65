package exec

import (
	"container/heap"
	"slices"
	"strconv"

	"github.com/cqlpg/cqlpg/translate"
	"github.com/cqlpg/cqlpg/translate/cqlfunc"
)

// ANN queries (ORDER BY v ANN OF [...] LIMIT k) read every row their
// restrictions allow, from every shard's ranges, and keep the k rows whose
// vectors are most similar to the query's: exact top-k under the index's
// similarity, in memory bounded by k (at most translate.MaxANNLimit rows).

// annBest is a min-heap of the best rows so far, the least similar on top.
type annBest struct {
	k      int
	query  []float32
	sim    cqlfunc.Similarity
	slot   int
	rows   []annRow
	floats []float32
	seen   int // rows scored, which orders rows of equal scores
}

type annRow struct {
	score float32
	seq   int // arrival, so that equal scores keep their order
	vals  [][]byte
}

func (b *annBest) Len() int { return len(b.rows) }
func (b *annBest) Less(i, j int) bool {
	if b.rows[i].score != b.rows[j].score {
		return b.rows[i].score < b.rows[j].score
	}
	return b.rows[i].seq > b.rows[j].seq
}
func (b *annBest) Swap(i, j int) { b.rows[i], b.rows[j] = b.rows[j], b.rows[i] }
func (b *annBest) Push(x any)    { b.rows = append(b.rows, x.(annRow)) }
func (b *annBest) Pop() any {
	r := b.rows[len(b.rows)-1]
	b.rows = b.rows[:len(b.rows)-1]
	return r
}

// keepBest scores a row's vector and keeps the row if it is among the
// best so far. A row without a vector has no place in the order.
func (w *rowWriter) keepBest(vals [][]byte) error {
	if w.best == nil {
		a := w.plan.ANN
		q, _ := w.e.bound.Get(a.Query)
		w.best = &annBest{k: w.limit, query: cqlfunc.Floats(q, nil), sim: a.Similarity, slot: a.Slot}
	}
	b := w.best
	v := vals[b.slot]
	if v == nil || b.k == 0 {
		return nil
	}
	b.floats = cqlfunc.Floats(v, b.floats)
	if len(b.floats) != len(b.query) {
		return nil
	}
	score := b.sim.Score(b.floats, b.query)
	seq := b.seen
	b.seen++
	if len(b.rows) == b.k {
		if score <= b.rows[0].score {
			return nil
		}
		heap.Pop(b)
	}
	heap.Push(b, annRow{score: score, seq: seq, vals: copyValues(vals, nil)})
	return nil
}

// sorted returns the rows kept, most similar first.
func (b *annBest) sorted() [][][]byte {
	slices.SortFunc(b.rows, func(x, y annRow) int {
		switch {
		case x.score > y.score:
			return -1
		case x.score < y.score:
			return 1
		}
		return x.seq - y.seq
	})
	out := make([][][]byte, len(b.rows))
	for i, r := range b.rows {
		out[i] = r.vals
	}
	return out
}

// checkANNLimit refuses an ANN query's LIMIT past translate.MaxANNLimit.
func checkANNLimit(p *translate.Select, limit int) error {
	if p.ANN == nil {
		return nil
	}
	if limit < 0 || limit > translate.MaxANNLimit {
		text := "NO LIMIT"
		if limit >= 0 {
			text = strconv.Itoa(limit)
		}
		return translate.ANNLimitError(text)
	}
	return nil
}
