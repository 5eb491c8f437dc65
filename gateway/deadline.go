package gateway

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
// seconds, a tick milliseconds.

// deadlineTick is the clock's resolution.
const deadlineTick = 5 * time.Millisecond

// deadlineClock closes each tick's channel once the tick has passed, and
// expires the asynchronous requests due in it (async.go). Its goroutine
// runs only while some channel is open or some request is due.
type deadlineClock struct {
	mu      sync.Mutex
	ticks   map[int64]chan struct{}
	due     map[int64]*[]dueRequest
	running bool
	// lastTick and lastDue are the tick a request was last due in and
	// its list: requests arriving together share one, and skip the map.
	lastTick int64
	lastDue  *[]dueRequest
	// spare holds lists whose tick has passed, for later ticks.
	spare []*[]dueRequest
}

// dueRequest is an asynchronous request to expire at its tick, unless it
// was answered first: gen tells whether the execution still runs the
// same request, as executions are recycled.
type dueRequest struct {
	e   *execution
	gen uint64
}

var deadlines = deadlineClock{ticks: map[int64]chan struct{}{}, due: map[int64]*[]dueRequest{}}

// tickOf returns the tick at whose end a deadline d after now falls.
func tickOf(now time.Time, d time.Duration) int64 {
	return (now.UnixNano() + int64(d) + int64(deadlineTick) - 1) / int64(deadlineTick)
}

// expireAt has e.expire(gen) called once d has passed since now.
func (k *deadlineClock) expireAt(now time.Time, d time.Duration, e *execution, gen uint64) {
	tick := tickOf(now, d)
	k.mu.Lock()
	if tick != k.lastTick || k.lastDue == nil {
		k.lastDue = k.due[tick]
		if k.lastDue == nil {
			if n := len(k.spare); n > 0 {
				k.lastDue, k.spare = k.spare[n-1], k.spare[:n-1]
			} else {
				k.lastDue = new([]dueRequest)
			}
			k.due[tick] = k.lastDue
		}
		k.lastTick = tick
	}
	*k.lastDue = append(*k.lastDue, dueRequest{e: e, gen: gen})
	k.start()
	k.mu.Unlock()
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
// requests due in them, until nothing is left to wait for.
func (k *deadlineClock) run() {
	t := time.NewTicker(deadlineTick)
	defer t.Stop()
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
		for tick, due := range k.due {
			if tick <= passed {
				expired = append(expired, *due...)
				delete(k.due, tick)
				if due == k.lastDue {
					k.lastDue = nil
				}
				clear(*due)
				*due = (*due)[:0]
				k.spare = append(k.spare, due)
			}
		}
		idle := len(k.ticks) == 0 && len(k.due) == 0
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

// requestContext is a request's context: done once the request's time is
// up, by the shared clock. It is never cancelled otherwise, so Err is
// DeadlineExceeded once done. It also carries the time the request
// arrived, the one reading of the clock a request makes.
type requestContext struct {
	arrived time.Time
	timeout time.Duration
	done    <-chan struct{}
}

func newRequestContext(now time.Time, timeout time.Duration) *requestContext {
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
