package exec

import (
	"context"
	"sync"
	"time"
)

// A timer per request, or a context.WithTimeout, costs several
// allocations and a timer in the runtime's heap. Requests instead share
// the channels of one coarse clock: a deadline is rounded up to the next
// tick, and every request whose deadline falls in the same tick waits on
// the same channel, which the clock closes once the tick has passed. A
// deadline thus fires up to one tick late, never early; timeouts are
// seconds, a tick milliseconds. Requests answered from the pools'
// goroutines wait on nothing: the clock holds them in lists, in arrival
// order, and answers with its timeout each one still there when its time
// is up. An answer takes its request out, so what the clock holds is
// bounded by the requests in flight, not by the rate times the timeout.

// deadlineTick is the clock's resolution.
const deadlineTick = 5 * time.Millisecond

// deadlineClock closes each tick's channel once the tick has passed, and
// expires the asynchronous requests whose time is up (async.go). Its
// goroutine runs only while some channel is open or some request waits.
type deadlineClock struct {
	mu      sync.Mutex
	ticks   map[int64]chan struct{}
	running bool
	// due holds the asynchronous requests waiting for an answer, one list
	// per timeout, each in the order the requests arrived and so, near
	// enough, in the order their time is up. A request leaves its list
	// when answered, so the lists hold only requests in flight; waiting
	// counts them.
	due     map[time.Duration]*dueList
	waiting int
}

// dueList is the requests of one timeout, linked through their
// executions (execution.due).
type dueList struct{ head, tail *Execution }

// dueLink is an execution's place in a dueList, guarded by the clock's
// lock: the list it is in (nil once out), its neighbours, when its time
// is up, and the generation of the request it was put there for.
type dueLink struct {
	list       *dueList
	prev, next *Execution
	at         int64
	gen        uint64
}

// deadlines is the one clock. Reader and pool goroutines take its lock on
// every asynchronous request, so it has cache lines of its own: beside
// another hot variable, it cost a point read 4% in BenchmarkHotPath.
var deadlines = struct {
	_ [64]byte
	deadlineClock
	_ [64]byte
}{deadlineClock: deadlineClock{ticks: map[int64]chan struct{}{}, due: map[time.Duration]*dueList{}}}

// tickOf returns the tick at whose end a deadline d after now falls.
func tickOf(now time.Time, d time.Duration) int64 {
	return (now.UnixNano() + int64(d) + int64(deadlineTick) - 1) / int64(deadlineTick)
}

// expireAt has e.expire(gen) called once d has passed since e's request
// arrived, unless cancel takes the request out first.
func (k *deadlineClock) expireAt(e *Execution, d time.Duration, gen uint64) {
	k.mu.Lock()
	l := k.due[d]
	if l == nil {
		l = new(dueList)
		k.due[d] = l
	}
	e.due = dueLink{list: l, prev: l.tail, at: e.Now.UnixNano() + int64(d), gen: gen}
	if l.tail != nil {
		l.tail.due.next = e
	} else {
		l.head = e
	}
	l.tail = e
	k.waiting++
	k.start()
	k.mu.Unlock()
}

// cancel takes e's request out of its list, if the clock has not.
func (k *deadlineClock) cancel(e *Execution) {
	k.mu.Lock()
	if e.due.list != nil {
		k.unlink(e)
	}
	k.mu.Unlock()
}

// unlink takes e out of its list; k.mu is held.
func (k *deadlineClock) unlink(e *Execution) {
	l := e.due.list
	if e.due.prev != nil {
		e.due.prev.due.next = e.due.next
	} else {
		l.head = e.due.next
	}
	if e.due.next != nil {
		e.due.next.due.prev = e.due.prev
	} else {
		l.tail = e.due.prev
	}
	e.due = dueLink{}
	k.waiting--
}

// start starts the clock's goroutine unless it runs; k.mu is held.
func (k *deadlineClock) start() {
	if !k.running {
		k.running = true
		go k.run()
	}
}

// after returns a channel closed once d has passed since now.
func (k *deadlineClock) after(now time.Time, d time.Duration) <-chan struct{} {
	tick := tickOf(now, d)
	k.mu.Lock()
	ch := k.ticks[tick]
	if ch == nil {
		ch = make(chan struct{})
		k.ticks[tick] = ch
		k.start()
	}
	k.mu.Unlock()
	return ch
}

// run closes the channels of the ticks that have passed and expires the
// requests whose time is up, until nothing is left to wait for.
func (k *deadlineClock) run() {
	t := time.NewTicker(deadlineTick)
	defer t.Stop()
	type dueRequest struct {
		e   *Execution
		gen uint64
	}
	var expired []dueRequest
	for now := range t.C {
		passed := now.UnixNano() / int64(deadlineTick)
		k.mu.Lock()
		for tick, ch := range k.ticks {
			if tick <= passed {
				close(ch)
				delete(k.ticks, tick)
			}
		}
		for _, l := range k.due {
			for e := l.head; e != nil && e.due.at <= now.UnixNano(); e = l.head {
				expired = append(expired, dueRequest{e, e.due.gen})
				k.unlink(e)
			}
		}
		idle := len(k.ticks) == 0 && k.waiting == 0
		if idle {
			k.running = false
		}
		k.mu.Unlock()
		// Outside the lock: expiring answers requests, and may submit.
		for i, d := range expired {
			d.e.expire(d.gen)
			expired[i] = dueRequest{}
		}
		expired = expired[:0]
		if idle {
			return
		}
	}
}

// cancelGrace is how long after its request's timeout a statement still
// running on a shard is cancelled (sharding.Op.Deadline): late enough for
// the clock to have answered the request with its timeout first, so that
// the client gets its ReadTimeout or WriteTimeout rather than the
// cancelled statement's error.
const cancelGrace = 20 * deadlineTick

// opDeadline is the deadline of the ops of a request that arrived at
// arrived, with timeout to be answered.
func opDeadline(arrived time.Time, timeout time.Duration) time.Time {
	return arrived.Add(timeout + cancelGrace)
}

// requestContext is a request's context: done once the request's time is
// up, by the shared clock. It is never cancelled otherwise, so Err is
// DeadlineExceeded once done. It also carries the time the request
// arrived, the one reading of the clock a request makes.
type requestContext struct {
	arrived time.Time
	timeout time.Duration
	done    <-chan struct{}
	// Kind is the kind of statement the request runs, once known (runs).
	Kind Kind
}

func NewRequestContext(now time.Time, timeout time.Duration) *requestContext {
	return &requestContext{arrived: now, timeout: timeout, done: deadlines.after(now, timeout)}
}

// arrival returns when the request of ctx arrived, or now for a context
// made elsewhere.
func arrival(ctx context.Context) time.Time {
	if r, ok := ctx.(*requestContext); ok {
		return r.arrived
	}
	return time.Now()
}

func (r *requestContext) Deadline() (time.Time, bool) { return r.arrived.Add(r.timeout), true }
func (r *requestContext) Done() <-chan struct{}       { return r.done }
func (r *requestContext) Value(any) any               { return nil }

func (r *requestContext) Err() error {
	select {
	case <-r.done:
		return context.DeadlineExceeded
	default:
		return nil
	}
}

// Waiting returns the number of asynchronous requests waiting on the
// clock.
func Waiting() int {
	deadlines.mu.Lock()
	defer deadlines.mu.Unlock()
	return deadlines.waiting
}
