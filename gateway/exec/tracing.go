package exec

import (
	"crypto/rand"
	"encoding/binary"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// A request with the tracing flag is answered with the flag and a trace
// session id first in its body, and leaves a session row and its events
// in system_traces.sessions and system_traces.events. cqlpg keeps them in
// the gateway that ran the request, for a day as Cassandra does, the
// newest maxTraceSessions of them; a driver reads them back through the
// same gateway, where it asked for the trace.

// maxTraceSessions bounds the trace sessions a gateway keeps.
const maxTraceSessions = 1000

// traceTTL is how long a trace stays readable: Cassandra's system_traces
// tables expire their rows after a day.
const traceTTL = 24 * time.Hour

// TraceSession is one traced request.
type TraceSession struct {
	Id          [16]byte
	Client      net.IP
	Coordinator net.IP
	Port        int32
	Request     string
	Parameters  map[string]string
	Started     time.Time
	Duration    time.Duration
	events      []traceEvent
}

// traceEvent is one step of a traced request.
type traceEvent struct {
	id       [16]byte
	activity string
	elapsed  time.Duration
}

// TraceStore keeps a gateway's trace sessions, oldest first. The zero
// value is ready to use.
type TraceStore struct {
	mu       sync.Mutex
	sessions []*TraceSession
}

func (tr *TraceSession) Event(now time.Time, activity string) {
	tr.events = append(tr.events, traceEvent{id: NewTimeUUID(now), activity: activity, elapsed: now.Sub(tr.Started)})
}

// Add keeps a finished session, dropping the oldest beyond the bound.
func (s *TraceStore) Add(tr *TraceSession) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.sessions) >= maxTraceSessions {
		n := copy(s.sessions, s.sessions[1:])
		s.sessions[n] = nil
		s.sessions = s.sessions[:n]
	}
	s.sessions = append(s.sessions, tr)
}

// live returns the sessions younger than traceTTL.
func (s *TraceStore) live() []*TraceSession {
	cutoff := time.Now().Add(-traceTTL)
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*TraceSession, 0, len(s.sessions))
	for _, tr := range s.sessions {
		if tr.Started.After(cutoff) {
			out = append(out, tr)
		}
	}
	return out
}

// sessionRows are the rows of system_traces.sessions.
func (s *TraceStore) sessionRows() []VirtualRow {
	var rows []VirtualRow
	for _, tr := range s.live() {
		rows = append(rows, VirtualRow{
			"session_id":       uuidValue(tr.Id),
			"client":           InetValue(tr.Client),
			"command":          TextValue("QUERY"),
			"coordinator":      InetValue(tr.Coordinator),
			"coordinator_port": IntValue(tr.Port),
			"duration":         IntValue(int32(tr.Duration.Microseconds())),
			"parameters":       TextMapValue(tr.Parameters),
			"request":          TextValue(tr.Request),
			"started_at":       timestampValue(tr.Started),
		})
	}
	return rows
}

// eventRows are the rows of system_traces.events.
func (s *TraceStore) eventRows() []VirtualRow {
	var rows []VirtualRow
	for _, tr := range s.live() {
		for _, ev := range tr.events {
			rows = append(rows, VirtualRow{
				"session_id":     uuidValue(tr.Id),
				"event_id":       uuidValue(ev.id),
				"activity":       TextValue(ev.activity),
				"source":         InetValue(tr.Coordinator),
				"source_elapsed": IntValue(int32(ev.elapsed.Microseconds())),
				"source_port":    IntValue(tr.Port),
				"thread":         TextValue("request"),
			})
		}
	}
	return rows
}

func AddrIP(a net.Addr) net.IP {
	if t, ok := a.(*net.TCPAddr); ok {
		return t.IP
	}
	return net.IPv4(127, 0, 0, 1)
}

// uuidEpochOffset is the number of 100 ns intervals between the UUID
// epoch (1582-10-15) and the Unix epoch.
const uuidEpochOffset = 0x01B21DD213814000

// lastUUIDTime is the time of the last timeuuid issued, so that each one
// differs; uuidClockNode is the clock sequence and node of this process's,
// random as Cassandra makes them when it has no hardware address.
var (
	lastUUIDTime  atomic.Int64
	uuidClockNode = func() (b [8]byte) {
		rand.Read(b[:])
		b[0] = b[0]&0x3f | 0x80 // the variant
		b[2] |= 0x01            // a node that is no hardware address
		return b
	}()
)

// NewTimeUUID returns a version 1 UUID for time t, as trace ids are.
func NewTimeUUID(t time.Time) [16]byte {
	raw := t.UnixNano()/100 + uuidEpochOffset
	for {
		last := lastUUIDTime.Load()
		if raw <= last {
			raw = last + 1
		}
		if lastUUIDTime.CompareAndSwap(last, raw) {
			break
		}
	}
	var u [16]byte
	binary.BigEndian.PutUint32(u[0:], uint32(raw))
	binary.BigEndian.PutUint16(u[4:], uint16(raw>>32))
	binary.BigEndian.PutUint16(u[6:], uint16(raw>>48)&0x0fff|0x1000)
	copy(u[8:], uuidClockNode[:])
	return u
}
