package exec

import (
	"math/rand/v2"
	"testing"

	"github.com/cqlpg/cqlpg/pgschema"
)

// TestHotSampler asks for one partition in a third of 300,000 requests
// and for 10,000 others evenly: the sampler names the hot one, with about
// its share, and no other above 1%.
func TestHotSampler(t *testing.T) {
	var h HotSampler
	tbl := &pgschema.Table{Keyspace: "ks", Name: "t", ID: [16]byte{1}}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 300000 {
		// The hot partition every other request: a sampler of fixed
		// period would see it always or never.
		tok := int64(rng.IntN(10000) + 1)
		if i%2 == 0 && rng.IntN(3) < 2 {
			tok = -42
		}
		h.note(tbl, tok)
	}
	hot := h.Hot(10)
	if len(hot) == 0 || hot[0].Token != -42 || hot[0].Share < 0.25 {
		t.Fatalf("hot partitions %+v", hot)
	}
	for _, p := range hot[1:] {
		if p.Share > 0.01 {
			t.Errorf("a cold partition with %.1f%% of the samples: %+v", 100*p.Share, p)
		}
	}
}

// BenchmarkHotNote is the sampler's cost on a request: one random
// number, and one request in 64 counted under a lock.
func BenchmarkHotNote(b *testing.B) {
	var h HotSampler
	tbl := &pgschema.Table{ID: [16]byte{1}}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		tok := int64(0)
		for pb.Next() {
			tok++
			h.note(tbl, tok&1023)
		}
	})
}
