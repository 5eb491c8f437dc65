package histories

import (
	"fmt"
	"math"
	"time"

	"github.com/anishathalye/porcupine"
)

// The register workload's functions: a read at SERIAL, a compare-and-set
// (UPDATE … SET v = Value WHERE k = Key IF v = Expect) and an insert
// (INSERT … IF NOT EXISTS).
const (
	FRead   = "read"
	FCas    = "cas"
	FInsert = "insert"
)

// regState is a register's state: whether its row exists, and its value.
type regState struct {
	exists bool
	value  int64
}

// regOutput is how a register operation ended: ok, fail with a
// conditional write's current value, or info.
type regOutput struct {
	typ     Type
	exists  bool
	value   int64
	applied bool
}

// RegisterModel is the model of one register per key, partitioned by key,
// for Porcupine. An info operation may have applied at any point after its
// invocation or never: it returns at the end of the history and applies
// when its condition holds where it is placed (placed last, it changes
// nothing anyone saw). A conditional write not applied had no effect, and
// the current value it returned must be the state's, no row returned
// meaning no row.
var RegisterModel = porcupine.Model{
	Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
		byKey := map[int][]porcupine.Operation{}
		var keys []int
		for _, op := range history {
			k := op.Input.(Event).Key
			if _, ok := byKey[k]; !ok {
				keys = append(keys, k)
			}
			byKey[k] = append(byKey[k], op)
		}
		parts := make([][]porcupine.Operation, len(keys))
		for i, k := range keys {
			parts[i] = byKey[k]
		}
		return parts
	},
	Init: func() any { return regState{} },
	Step: func(state, input, output any) (bool, any) {
		st, in, out := state.(regState), input.(Event), output.(regOutput)
		same := out.exists == st.exists && (!st.exists || out.value == st.value)
		switch in.F {
		case FRead:
			return out.typ == OK && same, st
		case FCas:
			holds := st.exists && st.value == in.Expect
			switch {
			case out.typ == Info && holds, out.typ == OK && out.applied && holds:
				return true, regState{exists: true, value: in.Value}
			case out.typ == Info:
				return true, st
			case out.typ == Fail && !out.applied:
				return !holds && same, st
			}
		case FInsert:
			switch {
			case out.typ == Info && !st.exists, out.typ == OK && out.applied && !st.exists:
				return true, regState{exists: true, value: in.Value}
			case out.typ == Info:
				return true, st
			case out.typ == Fail && !out.applied:
				return st.exists && same, st
			}
		}
		return false, st
	},
	Equal: func(a, b any) bool { return a.(regState) == b.(regState) },
	DescribeOperation: func(input, output any) string {
		in, out := input.(Event), output.(regOutput)
		var call string
		switch in.F {
		case FRead:
			call = "read()"
		case FCas:
			call = fmt.Sprintf("cas(%d→%d)", in.Expect, in.Value)
		default:
			call = fmt.Sprintf("insert(%d)", in.Value)
		}
		switch {
		case out.typ == Info:
			return call + " → ?"
		case in.F == FRead || !out.applied:
			if !out.exists {
				return fmt.Sprintf("%s → %s none", call, out.typ)
			}
			return fmt.Sprintf("%s → %s %d", call, out.typ, out.value)
		}
		return call + " → applied"
	},
	DescribeState: func(state any) string {
		if st := state.(regState); st.exists {
			return fmt.Sprint(st.value)
		}
		return "none"
	},
}

// RegisterOperations turns a register history into Porcupine's operations:
// reads that did not return and writes that failed without a current
// value (Unavailable, a refusal) are left out, as they changed nothing and
// observed nothing; an info operation returns after every other.
func RegisterOperations(events []Event) []porcupine.Operation {
	ops := Operations(events)
	var end int64
	for _, op := range ops {
		if op.End.Time != math.MaxInt64 {
			end = max(end, op.End.Time)
		}
	}
	var out []porcupine.Operation
	clients := map[int]int{} // process → Porcupine's dense client id
	for _, op := range ops {
		o := regOutput{typ: op.End.Type, exists: op.End.Exists, value: op.End.Value, applied: op.End.Applied}
		ret := op.End.Time
		switch {
		case op.Invoke.F == FRead && o.typ != OK:
			continue
		case o.typ == Fail && op.End.Error != "":
			continue
		case o.typ == Info:
			ret = end + 1
		}
		c, ok := clients[op.Invoke.Process]
		if !ok {
			c = len(clients)
			clients[op.Invoke.Process] = c
		}
		out = append(out, porcupine.Operation{ClientId: c, Input: op.Invoke, Call: op.Invoke.Time,
			Output: o, Return: ret})
	}
	return out
}

// CheckRegister checks a register history for linearizability, giving up
// after timeout (Unknown, which is no pass).
func CheckRegister(events []Event, timeout time.Duration) (porcupine.CheckResult, porcupine.LinearizationInfo) {
	return porcupine.CheckOperationsVerbose(RegisterModel, RegisterOperations(events), timeout)
}

// CheckRegisterKeys checks a register history key by key, one at a time,
// giving up on a key after timeout (Unknown, which is no pass): checking
// every key at once, as Porcupine does, holds all their searches in memory
// together. It returns the verdict and the keys that did not pass.
func CheckRegisterKeys(events []Event, timeout time.Duration) (porcupine.CheckResult, []int) {
	byKey := map[int][]Event{}
	var keys []int
	for _, e := range events {
		if e.Type == Nemesis {
			continue
		}
		if _, ok := byKey[e.Key]; !ok {
			keys = append(keys, e.Key)
		}
		byKey[e.Key] = append(byKey[e.Key], e)
	}
	result := porcupine.Ok
	var bad []int
	for _, k := range keys {
		switch porcupine.CheckOperationsTimeout(RegisterModel, RegisterOperations(byKey[k]), timeout) {
		case porcupine.Illegal:
			result = porcupine.Illegal
			bad = append(bad, k)
		case porcupine.Unknown:
			if result == porcupine.Ok {
				result = porcupine.Unknown
			}
			bad = append(bad, k)
		}
	}
	return result, bad
}
