package repair

import (
	"sync"
	"time"
)

// Status is the progress of the repair that started last in the
// process, which repairs report to as they go (Run), for metrics.
type Status struct {
	mu sync.Mutex
	// gen names the repair that started last, and counts the repairs
	// started: an earlier one still running reports no more.
	gen      uint64
	running  bool
	started  time.Time
	progress Progress
}

// begin records the start of a repair of ranges token ranges and returns
// its generation.
func (r *Status) begin(ranges int) uint64 {
	if r == nil {
		return 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.gen++
	r.running, r.started, r.progress = true, time.Now(), Progress{RangesTotal: ranges}
	return r.gen
}

// update records the progress of repair gen.
func (r *Status) update(gen uint64, p Progress) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.gen == gen {
		r.progress = p
	}
}

// end records the end of repair gen.
func (r *Status) end(gen uint64) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.gen == gen {
		r.running = false
	}
}

// Snapshot returns how many repairs started, whether the last one runs,
// when it started and its progress.
func (r *Status) Snapshot() (runs uint64, running bool, started time.Time, p Progress) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.gen, r.running, r.started, r.progress
}
