package udf

import (
	"fmt"
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
}

// stopped is the panic that ends a call out of budget.
type stopped struct{}

// checkEvery is how many steps pass between looks at the clock.
const checkEvery = 1024

// step counts one step of the budget.
func (fr *frame) step() {
	fr.steps--
	if fr.steps < fr.checkAt {
		fr.check()
	}
}

func (fr *frame) check() {
	if fr.steps < 0 || fr.timed && time.Now().After(fr.deadline) {
		panic(stopped{})
	}
	fr.checkAt = max(fr.steps-checkEvery, 0)
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
