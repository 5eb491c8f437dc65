package gateway

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/cqlpg/cqlpg/gateway/exec"
	"github.com/cqlpg/cqlpg/translate"
)

// DropBatchParts makes the gateway leave the parts of logged batches for
// which drop returns true unapplied, and their records in the batch log,
// as if it died halfway through them; nil restores normal batches.
func (s *Server) DropBatchParts(drop func(shard int) bool) {
	if drop == nil {
		s.env.Hooks.DropBatchPart.Store(nil)
		return
	}
	s.env.Hooks.DropBatchPart.Store(&drop)
}

// BatchlogWrites returns how many batches the gateway wrote to the batch
// log.
func (s *Server) BatchlogWrites() int { return counterValue(s.env.Metrics.BatchlogWrites) }

// BatchlogReplays returns how many batch log records the gateway replayed
// with a result (applied or dropped).
func (s *Server) BatchlogReplays(result string) int {
	return counterValue(s.env.Metrics.BatchlogReplays.WithLabelValues(result))
}

func counterValue(c prometheus.Counter) int {
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		panic(err)
	}
	return int(m.GetCounter().GetValue())
}

// HintsWritten returns how many hints the gateway stored.
func (s *Server) HintsWritten() int { return counterValue(s.env.Metrics.HintsWritten) }

// ReadRepairs returns how many reads found their replicas disagreeing.
func (s *Server) ReadRepairs() int { return counterValue(s.env.Metrics.ReadRepairs) }

// PanicAt makes requests panic at a point of their path ("handler",
// "reader" or "completion") when panics returns true for the point and
// the request's text; nil restores normal requests.
func (s *Server) PanicAt(panics func(point, text string) bool) {
	if panics == nil {
		s.env.Hooks.PanicAt.Store(nil)
		return
	}
	s.env.Hooks.PanicAt.Store(&panics)
}

// RaceEnabled tells the package's external tests that the race detector
// runs, which multiplies memory and goroutine costs.
const RaceEnabled = raceEnabled

// SetUICountLimits sets how the web view counts a table's rows on a
// shard: for at most timeout, and not at all where Postgres estimates more
// than rows, unless the page asks for exact counts.
func (s *Server) SetUICountLimits(timeout time.Duration, rows int64) {
	s.ui.SetCountLimits(timeout, rows)
}

// RingVersion is the ring version the gateway serves.
func (s *Server) RingVersion() int64 { return s.cluster.RingVersion() }

// SpeculativeReads counts the replicas asked by speculative retry.
func (s *Server) SpeculativeReads() int { return counterValue(s.env.Metrics.SpeculativeReads) }

// CachedStatements returns the text of every statement in the statement
// cache, and the passwords the plans of role statements hold.
func (s *Server) CachedStatements() (texts, passwords []string) {
	c := s.env.Cache
	c.Mu.RLock()
	defer c.Mu.RUnlock()
	for _, m := range []map[[16]byte]*exec.Statement{c.ByID, c.ByText} {
		for _, st := range m {
			texts = append(texts, st.Query)
			if a, ok := st.Plan.(*translate.Auth); ok {
				if o := a.RoleOptions(); o != nil && o.Password != nil {
					passwords = append(passwords, *o.Password)
				}
			}
		}
	}
	return texts, passwords
}
