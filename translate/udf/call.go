package udf

import (
	"fmt"
	"math"
	"runtime"
	"sync"
	"time"
)

// framePool keeps frames between calls; a call's frame is cleared before
// it goes back.
var framePool = sync.Pool{New: func() any { return new(frame) }}

// Call runs the body on CQL-serialized arguments (nil is null) and returns
// the serialized result (nil is null). Errors are *Failure for a Java
// exception the body throws, *Timeout when the budget ran out, and a
// plain error for a call with the wrong number of arguments or a fault of
// the interpreter.
func (f *Func) Call(args [][]byte, b Budget) (out []byte, err error) {
	if len(args) != len(f.params) {
		return nil, fmt.Errorf("function takes %d arguments, got %d", len(f.params), len(args))
	}
	if f.strict {
		for i, a := range args {
			if a == nil || len(a) == 0 && emptyIsNull(f.params[i].Type) {
				return nil, nil
			}
		}
	}
	fr := framePool.Get().(*frame)
	n := f.nlocals + f.nargs
	if cap(fr.locals) < n {
		fr.locals = make([]val, n)
	}
	all := fr.locals[:n]
	fr.locals, fr.args = all[:f.nlocals:f.nlocals], all[f.nlocals:]
	fr.fn = f
	fr.steps, fr.checkAt, fr.mem = math.MaxInt64, 0, b.Memory
	if b.Steps > 0 {
		fr.steps = b.Steps
	}
	if fr.mem <= 0 {
		fr.mem = DefaultMemory
	}
	fr.timed = b.Timeout > 0
	if fr.timed {
		fr.deadline = time.Now().Add(b.Timeout)
	}
	fr.checkAt = max(fr.steps-checkEvery, 0)
	defer func() {
		fr.release()
		clear(all)
		fr.fn, fr.locals, fr.args, fr.ret = nil, all[:0], nil, null
		framePool.Put(fr)
		if r := recover(); r != nil {
			switch r := r.(type) {
			case *jthrow:
				out, err = nil, &Failure{Msg: r.text()}
			case stopped:
				out, err = nil, &Timeout{Limit: b.Timeout}
			case runtime.Error:
				// A fault of the interpreter itself: the call fails as a
				// server error would, and the process goes on.
				out, err = nil, fmt.Errorf("user function interpreter fault: %v", r)
			default:
				panic(r)
			}
		}
	}()
	for i, a := range args {
		if a == nil || len(a) == 0 && emptyIsNull(f.params[i].Type) {
			continue
		}
		fr.locals[i] = f.argIn[i](fr, a)
	}
	f.body(fr)
	return f.retOut(fr, fr.ret), nil
}
