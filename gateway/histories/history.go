package histories

import (
	"bufio"
	"encoding/json"
	"math"
	"os"
	"sort"
	"sync"
	"time"
)

// Type is how an event stands in an operation: its invocation, or how it
// ended.
type Type string

// An operation is invoked, then ends ok (it took effect, or a read
// returned), fail (it had no effect) or info (its outcome is unknown).
// Nemesis events mark the faults.
const (
	Invoke  Type = "invoke"
	OK      Type = "ok"
	Fail    Type = "fail"
	Info    Type = "info"
	Nemesis Type = "nemesis"
)

// Event is one line of a history. The fields after Key are what the
// operation's function (F) takes and returns; an invocation carries the
// inputs, its completion the outputs.
type Event struct {
	// Time is nanoseconds since the history began, from one monotonic
	// clock.
	Time    int64  `json:"time"`
	Process int    `json:"process"`
	Type    Type   `json:"type"`
	F       string `json:"f"`
	Gateway int    `json:"gateway"`
	Key     int    `json:"key"`
	// CL is the consistency level of a read that workloads read at
	// several.
	CL string `json:"cl,omitempty"`
	// Value is the value a write writes or a read returned, Exists false
	// when the read found no row; Expect is a compare-and-set's expected
	// value; Applied is a conditional write's [applied].
	Value   int64 `json:"value,omitempty"`
	Exists  bool  `json:"exists,omitempty"`
	Expect  int64 `json:"expect,omitempty"`
	Applied bool  `json:"applied,omitempty"`
	// Values are the elements a set read returned, or the balances of a
	// bank read by account.
	Values []int64 `json:"values,omitempty"`
	// From, To and Amount are a transfer's accounts and amount.
	From   int `json:"from,omitempty"`
	To     int `json:"to,omitempty"`
	Amount int `json:"amount,omitempty"`
	// Error is the error an operation ended with, or a nemesis event's
	// description.
	Error string `json:"error,omitempty"`
}

// History records the events of concurrent clients. It is safe for
// concurrent use; events are kept in the order of their times.
type History struct {
	start   time.Time
	mu      sync.Mutex
	events  []Event
	process int
}

// NewHistory starts an empty history; its clock starts now.
func NewHistory() *History { return &History{start: time.Now()} }

// NewProcess returns a process id never given before.
func (h *History) NewProcess() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.process++
	return h.process
}

// Add records e at the current time and returns it as recorded.
func (h *History) Add(e Event) Event {
	h.mu.Lock()
	defer h.mu.Unlock()
	e.Time = int64(time.Since(h.start))
	h.events = append(h.events, e)
	return e
}

// Events returns a copy of the events recorded so far.
func (h *History) Events() []Event {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Event(nil), h.events...)
}

// WriteFile writes events to path as JSON lines.
func WriteFile(path string, events []Event) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	for _, e := range events {
		if err := enc.Encode(e); err != nil {
			f.Close()
			return err
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Op is an operation: its invocation and how it ended. An operation still
// in flight when the history ends counts as info.
type Op struct {
	Invoke, End Event
}

// Operations pairs each invocation in events with the event that ended it,
// in the order of invocation; nemesis events are left out.
func Operations(events []Event) []Op {
	var ops []Op
	open := map[int]int{} // process → index in ops
	for _, e := range events {
		switch e.Type {
		case Nemesis:
		case Invoke:
			open[e.Process] = len(ops)
			ops = append(ops, Op{Invoke: e})
		default:
			if i, ok := open[e.Process]; ok {
				ops[i].End = e
				delete(open, e.Process)
			}
		}
	}
	for _, i := range open {
		ops[i].End = Event{Time: math.MaxInt64, Process: ops[i].Invoke.Process, Type: Info, F: ops[i].Invoke.F,
			Error: "in flight when the history ended"}
	}
	sort.SliceStable(ops, func(i, j int) bool { return ops[i].Invoke.Time < ops[j].Invoke.Time })
	return ops
}

// Count returns how many operations of f (all when f is empty) ended
// each way.
func Count(ops []Op, f string) map[Type]int {
	n := map[Type]int{}
	for _, op := range ops {
		if f == "" || op.Invoke.F == f {
			n[op.End.Type]++
		}
	}
	return n
}
