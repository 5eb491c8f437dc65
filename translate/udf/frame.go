package udf

import (
	"fmt"
	"sync/atomic"
	"time"
)

// A call runs in a frame: the body's local variables by slot, the scratch
// space of method arguments by call site, and what is left of the call's
// budget. Java exceptions and the budget's end unwind the Go stack as
// panics of their own types, recovered by Call; the closures return only
// values.

// frame is the state of one call.
type frame struct {
	fn     *Func
	locals []val
	args   []val
	ret    val

	steps    int64 // steps left; the call stops below zero
	checkAt  int64 // the step count at which to look at the clock again
	deadline time.Time
	timed    bool
	mem      int64 // bytes the call may still allocate
	// expired is set by a timer when the deadline passes, for calls that
	// outlast their first look at the clock: a step may do much work (a
	// method over a large collection), so that a thousand steps can take
	// far longer than the timeout.
	expired *atomic.Bool
	timer   *time.Timer
}

// stopped is the panic that ends a call out of budget.
type stopped struct{}

// checkEvery is how many steps pass between looks at the clock.
const checkEvery = 1024

// step counts one step of the budget.
func (fr *frame) step() {
	fr.steps--
	if fr.steps < fr.checkAt || fr.expired != nil && fr.expired.Load() {
		fr.check()
	}
}

// work counts n steps of a method's own work, so that a method looping
// over a large collection spends the call's steps and stops with it.
func (fr *frame) work(n int) {
	fr.steps -= int64(n)
	if fr.steps < fr.checkAt || fr.expired != nil && fr.expired.Load() {
		fr.check()
	}
}

// check stops the call when its steps or time are spent. The first look
// at the clock of a timed call arms the timer that ends it, which short
// calls never need.
func (fr *frame) check() {
	if fr.steps < 0 || fr.expired != nil && fr.expired.Load() {
		panic(stopped{})
	}
	if fr.timed {
		left := time.Until(fr.deadline)
		if left <= 0 {
			panic(stopped{})
		}
		if fr.timer == nil {
			// A flag of its own, so that a timer firing late cannot
			// touch the frame's next call.
			flag := new(atomic.Bool)
			fr.expired = flag
			fr.timer = time.AfterFunc(left, func() { flag.Store(true) })
		}
	}
	fr.checkAt = max(fr.steps-checkEvery, 0)
}

// release stops the call's timer.
func (fr *frame) release() {
	if fr.timer != nil {
		fr.timer.Stop()
	}
	fr.timer, fr.expired = nil, nil
}

// alloc counts n bytes of strings or collection elements made by the
// call, throwing OutOfMemoryError past its budget. The count only grows:
// it bounds what a call allocates, not what it keeps. A nil frame counts
// nothing.
func (fr *frame) alloc(n int) {
	if fr == nil { // decoding arguments, which the call does not pay for
		return
	}
	fr.mem -= int64(n)
	if fr.mem < 0 {
		panic(&jthrow{cls: clsOutOfMemory, msg: "Java heap space", hasMsg: true})
	}
}

// The bytes alloc counts for an element of an array or list, and for an
// entry of a map or set.
const (
	valSize   = 24
	entrySize = 128
)

// throw raises a Java exception of class c with a message.
func throw(c *jclass, format string, args ...any) {
	msg := format
	if len(args) > 0 {
		msg = fmt.Sprintf(format, args...)
	}
	panic(&jthrow{cls: c, msg: msg, hasMsg: true})
}

// throwBare raises a Java exception of class c without a message.
func throwBare(c *jclass) { panic(&jthrow{cls: c}) }

// npe raises NullPointerException, which Java 11 throws without a message.
func npe() { throwBare(clsNPE) }

// text is the exception as Throwable.toString prints it.
func (t *jthrow) text() string {
	if !t.hasMsg {
		return t.cls.full
	}
	return t.cls.full + ": " + t.msg
}

// indexOutOfBounds is Java 11's message for an index out of range.
func indexOutOfBounds(c *jclass, i, n int) {
	throw(c, "Index %d out of bounds for length %d", i, n)
}
