package sharding_test

import (
	"testing"
	"time"

	"github.com/cqlpg/cqlpg/sharding"
)

// TestLatency checks which bucket a duration is counted in: the first
// whose bound is above it, the last past every bound.
func TestLatency(t *testing.T) {
	u := sharding.LatencyUnit
	for _, tc := range []struct {
		d      time.Duration
		bucket int
	}{
		{0, 0},
		{-time.Second, 0},
		{u - 1, 0},
		{u, 1},
		{2*u - 1, 1},
		{2 * u, 2},
		{5 * time.Millisecond, 8},
		{sharding.LatencyBound(sharding.LatencyBuckets-2) - 1, sharding.LatencyBuckets - 2},
		{sharding.LatencyBound(sharding.LatencyBuckets - 2), sharding.LatencyBuckets - 1},
		{time.Hour, sharding.LatencyBuckets - 1},
	} {
		var l sharding.Latency
		l.Observe(tc.d)
		s := l.Snapshot()
		if s.Counts[tc.bucket] != 1 || s.Count() != 1 {
			t.Errorf("%v counted in %v, want bucket %d", tc.d, s.Counts, tc.bucket)
		}
		if tc.d > 0 && s.Sum != tc.d {
			t.Errorf("%v summed as %v", tc.d, s.Sum)
		}
		if tc.bucket < sharding.LatencyBuckets-1 && tc.d >= sharding.LatencyBound(tc.bucket) {
			t.Errorf("%v is not under its bucket's bound %v", tc.d, sharding.LatencyBound(tc.bucket))
		}
	}
}

// TestPoolStats checks a pool's counters on a real PostgreSQL.
func TestPoolStats(t *testing.T) {
	ctx, pool := onePool(t)
	run := func(sql string) error {
		op := sharding.NewOp(sharding.NewStatement(sql, nil), nil, nil, nil)
		pool.Submit(op)
		return op.Wait(ctx)
	}
	for range 3 {
		if err := run("SELECT 1"); err != nil {
			t.Fatal(err)
		}
	}
	if err := run("SELECT 1/0"); err == nil {
		t.Fatal("division by zero succeeded")
	}
	// A worker counts itself busy until just after it has answered the
	// last op: give it its moment.
	s := pool.Stats()
	for deadline := time.Now().Add(time.Second); s.Busy != 0 && time.Now().Before(deadline); s = pool.Stats() {
		time.Sleep(time.Millisecond)
	}
	if s.Ops != 4 || s.Failed != 1 {
		t.Errorf("%d ops, %d failed; want 4, 1", s.Ops, s.Failed)
	}
	if s.Open != 1 || s.Busy != 0 || s.Queued != 0 || s.Conns != 1 {
		t.Errorf("connections open %d, busy %d, of %d; %d queued: want 1, 0, of 1; 0", s.Open, s.Busy, s.Conns, s.Queued)
	}
	if n := s.Pipelines.Count(); n != 4 || s.Pipelines.Sum <= 0 {
		t.Errorf("%d pipelines timed, %v in all; want 4", n, s.Pipelines.Sum)
	}
}
