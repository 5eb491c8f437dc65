package histories

import (
	"fmt"
	"slices"
	"sort"
)

// The other workloads' functions: a set's add and read (FRead), a bank's
// transfer and read (FRead), and a monotonic value's write and read
// (FRead).
const (
	FAdd      = "add"
	FTransfer = "transfer"
	FWrite    = "write"
)

// CheckSet checks a set history: an element's add invoked by an ok
// operation, and every read's elements.
//
// Every read that returned holds each element whose add was acknowledged
// before the read was invoked (a QUORUM read sees the QUORUM writes
// acknowledged before it) and no element never added; final holds each
// key's elements read once the faults are healed, which must hold every
// acknowledged add.
func CheckSet(events []Event, final map[int][]int64) []string {
	var problems []string
	ops := Operations(events)
	type ack struct {
		at    int64
		value int64
	}
	acked := map[int][]ack{}          // key → acknowledged adds
	tried := map[int]map[int64]bool{} // key → elements whose add was invoked
	for _, op := range ops {
		if op.Invoke.F != FAdd {
			continue
		}
		k := op.Invoke.Key
		if tried[k] == nil {
			tried[k] = map[int64]bool{}
		}
		tried[k][op.Invoke.Value] = true
		if op.End.Type == OK {
			acked[k] = append(acked[k], ack{op.End.Time, op.Invoke.Value})
		}
	}
	for _, op := range ops {
		if op.Invoke.F != FRead || op.End.Type != OK {
			continue
		}
		k := op.Invoke.Key
		read := map[int64]bool{}
		for _, v := range op.End.Values {
			read[v] = true
			if !tried[k][v] {
				problems = append(problems, fmt.Sprintf("key %d: read by process %d at %d holds %d, never added", k, op.Invoke.Process, op.End.Time, v))
			}
		}
		for _, a := range acked[k] {
			if a.at < op.Invoke.Time && !read[a.value] {
				problems = append(problems, fmt.Sprintf("key %d: read by process %d invoked at %d lacks %d, acknowledged at %d",
					k, op.Invoke.Process, op.Invoke.Time, a.value, a.at))
			}
		}
	}
	for k, as := range acked {
		read := map[int64]bool{}
		for _, v := range final[k] {
			read[v] = true
		}
		for _, a := range as {
			if !read[a.value] {
				problems = append(problems, fmt.Sprintf("key %d: final read lacks %d, acknowledged at %d", k, a.value, a.at))
			}
		}
	}
	return problems
}

// CheckBank checks a bank history: every read that returned (a partition's
// balances by account) shows each of the accounts, none negative, and the
// total the partition started with.
func CheckBank(events []Event, accounts int, total int64) []string {
	var problems []string
	for _, op := range Operations(events) {
		if op.Invoke.F != FRead || op.End.Type != OK {
			continue
		}
		bal := op.End.Values
		var sum int64
		for _, b := range bal {
			sum += b
		}
		switch {
		case len(bal) != accounts:
			problems = append(problems, fmt.Sprintf("key %d: read by process %d at %d shows %d accounts, not %d: %v",
				op.Invoke.Key, op.Invoke.Process, op.End.Time, len(bal), accounts, bal))
		case sum != total:
			problems = append(problems, fmt.Sprintf("key %d: read by process %d at %d totals %d, not %d: %v",
				op.Invoke.Key, op.Invoke.Process, op.End.Time, sum, total, bal))
		case slices.ContainsFunc(bal, func(b int64) bool { return b < 0 }):
			problems = append(problems, fmt.Sprintf("key %d: read by process %d at %d shows a negative balance: %v",
				op.Invoke.Key, op.Invoke.Process, op.End.Time, bal))
		}
	}
	return problems
}

// CheckMonotonic checks a history of increasing values per key, each key
// written by one writer at a time in increasing order: a process never
// reads a value older than one it read before, a read never returns a
// value older than one acknowledged before it was invoked, nor a value
// whose write had not been invoked by the time the read returned.
func CheckMonotonic(events []Event) []string {
	var problems []string
	ops := Operations(events)
	type write struct{ invoked, acked int64 }
	writes := map[int]map[int64]write{} // key → value → its write
	for _, op := range ops {
		if op.Invoke.F != FWrite {
			continue
		}
		k := op.Invoke.Key
		if writes[k] == nil {
			writes[k] = map[int64]write{}
		}
		w := write{invoked: op.Invoke.Time, acked: -1}
		if op.End.Type == OK {
			w.acked = op.End.Time
		}
		writes[k][op.Invoke.Value] = w
	}
	// acked[k] lists key k's acknowledged writes by the time of their
	// acknowledgement, each with the newest value acknowledged by then.
	type ack struct{ at, newest int64 }
	acked := map[int][]ack{}
	for k, ws := range writes {
		var as []ack
		for v, w := range ws {
			if w.acked >= 0 {
				as = append(as, ack{w.acked, v})
			}
		}
		sort.Slice(as, func(i, j int) bool { return as[i].at < as[j].at })
		for i := 1; i < len(as); i++ {
			as[i].newest = max(as[i].newest, as[i-1].newest)
		}
		acked[k] = as
	}
	type seen struct{ process, key int }
	last := map[seen]int64{}
	for _, op := range ops {
		if op.Invoke.F != FRead || op.End.Type != OK {
			continue
		}
		k, v := op.Invoke.Key, op.End.Value
		if !op.End.Exists {
			v = 0
		}
		if prev, ok := last[seen{op.Invoke.Process, k}]; ok && v < prev {
			problems = append(problems, fmt.Sprintf("key %d: process %d read %d at %d after reading %d", k, op.Invoke.Process, v, op.End.Time, prev))
		}
		last[seen{op.Invoke.Process, k}] = v
		if w, ok := writes[k][v]; v != 0 && (!ok || w.invoked > op.End.Time) {
			problems = append(problems, fmt.Sprintf("key %d: process %d read %d at %d, not written by then", k, op.Invoke.Process, v, op.End.Time))
		}
		if a := acked[k]; len(a) > 0 {
			// The newest value acknowledged before the read began.
			i := sort.Search(len(a), func(i int) bool { return a[i].at >= op.Invoke.Time })
			if i > 0 && a[i-1].newest > v {
				problems = append(problems, fmt.Sprintf("key %d: read by process %d invoked at %d returned %d, older than %d, acknowledged by %d",
					k, op.Invoke.Process, op.Invoke.Time, v, a[i-1].newest, a[i-1].at))
			}
		}
	}
	return problems
}
