package sharding

import (
	"math"
	"math/bits"
	"sync/atomic"
	"time"
)

// PoolStats is what a pool has done and is doing, read by the gateway's
// metrics when they are scraped: the pool keeps plain atomic counters and
// never calls a metrics library itself.
type PoolStats struct {
	// Queued is how many ops wait for a connection; Open and Busy count
	// the connections open and those running a pipeline, of at most
	// Conns.
	Queued, Open, Busy, Conns int
	// Ops counts the ops finished, Failed those finished with an error
	// (the shard's, or its connection's), and Cancelled the cancel requests
	// sent for statements still running past their op's deadline
	// (Op.Deadline).
	Ops, Failed, Cancelled uint64
	// Pipelines times the pipelines sent, each from its first statement
	// sent to its last result read.
	Pipelines LatencySnapshot
}

// poolStats are a pool's counters.
type poolStats struct {
	ops, failed, cancelled atomic.Uint64
	open, busy             atomic.Int32
	pipelines              Latency
}

// Stats returns the pool's counters. A pool that reaches no server
// (NewFuncPool) counts nothing.
func (p *Pool) Stats() PoolStats {
	return PoolStats{Queued: len(p.queue), Open: int(p.stats.open.Load()), Busy: int(p.stats.busy.Load()),
		Conns: p.conns, Ops: p.stats.ops.Load(), Failed: p.stats.failed.Load(),
		Cancelled: p.stats.cancelled.Load(), Pipelines: p.stats.pipelines.Snapshot()}
}

// LatencyBuckets is how many buckets a Latency counts in: bucket 0 holds
// durations under LatencyUnit, bucket i up to LatencyUnit<<i, and the
// last one everything longer.
const LatencyBuckets = 20

// LatencyUnit is the bound of a Latency's first bucket; each next bucket
// doubles it, up to 6.5 seconds for the last bounded one.
const LatencyUnit = 25 * time.Microsecond

// Latency counts durations in buckets of doubling bounds, for a
// Prometheus histogram built when metrics are scraped. Observe is two
// atomic additions and no search: it suits a path where a call into a
// metrics library, with its floating-point sum, costs more than the work
// around it. The gateway times its requests with it too.
type Latency struct {
	counts [LatencyBuckets]atomic.Uint64
	sum    atomic.Int64 // nanoseconds
}

// Observe counts one duration.
func (l *Latency) Observe(d time.Duration) {
	d = max(d, 0)
	i := min(bits.Len64(uint64(d/LatencyUnit)), LatencyBuckets-1)
	l.counts[i].Add(1)
	l.sum.Add(int64(d))
}

// LatencySnapshot is a Latency's counts at one moment.
type LatencySnapshot struct {
	// Counts holds each bucket's count, not cumulated.
	Counts [LatencyBuckets]uint64
	Sum    time.Duration
}

// Snapshot reads the counts. Each is read atomically, not all at once:
// durations observed meanwhile may be in some and not in others.
func (l *Latency) Snapshot() LatencySnapshot {
	var s LatencySnapshot
	for i := range l.counts {
		s.Counts[i] = l.counts[i].Load()
	}
	s.Sum = time.Duration(l.sum.Load())
	return s
}

// Count returns how many durations the snapshot holds.
func (s *LatencySnapshot) Count() uint64 {
	var n uint64
	for _, c := range s.Counts {
		n += c
	}
	return n
}

// LatencyBound returns the upper bound of bucket i, which holds the durations
// under it and at least the bound of bucket i-1; the last bucket has none.
func LatencyBound(i int) time.Duration { return LatencyUnit << i }

// Quantile returns the duration under which fraction q of the snapshot's
// durations fall, as the upper bound of the bucket that reaches it, and
// false when the snapshot holds fewer than 100 durations.
func (s *LatencySnapshot) Quantile(q float64) (time.Duration, bool) {
	total := s.Count()
	if total < 100 {
		return 0, false
	}
	want := uint64(math.Ceil(q * float64(total)))
	var seen uint64
	for i, c := range s.Counts {
		if seen += c; seen >= want {
			return LatencyBound(i), true
		}
	}
	return LatencyBound(LatencyBuckets - 1), true
}

// quantileCache keeps a pool's latency quantile for a while: reads that
// may speculate ask for it on every request.
type quantileCache struct {
	at    atomic.Int64 // UnixNano of the last computation
	q     atomic.Uint64
	value atomic.Int64 // nanoseconds; -1 when unknown
}

// LatencyQuantile returns the quantile q of the durations of the
// pipelines the pool sent (LatencySnapshot.Quantile), computed at most
// every 100 ms.
func (p *Pool) LatencyQuantile(q float64) (time.Duration, bool) {
	c := &p.quantile
	now := time.Now().UnixNano()
	if now-c.at.Load() > int64(100*time.Millisecond) || math.Float64frombits(c.q.Load()) != q {
		s := p.stats.pipelines.Snapshot()
		d, ok := s.Quantile(q)
		if !ok {
			d = -1
		}
		c.value.Store(int64(d))
		c.q.Store(math.Float64bits(q))
		c.at.Store(now)
	}
	d := c.value.Load()
	return time.Duration(d), d >= 0
}
