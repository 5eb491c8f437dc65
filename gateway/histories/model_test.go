package histories

import (
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// op is an operation of one process, from invocation to end, for
// hand-made histories.
func op(process int, f string, key int, call, ret int64, in, out Event) []Event {
	in.Process, in.Type, in.F, in.Key, in.Time = process, Invoke, f, key, call
	out.Process, out.F, out.Key, out.Time = process, f, key, ret
	return []Event{in, out}
}

// history sorts the events of hand-made operations by time.
func history(ops ...[]Event) []Event {
	var events []Event
	for _, o := range ops {
		events = append(events, o...)
	}
	for i := range events {
		for j := i; j > 0 && events[j].Time < events[j-1].Time; j-- {
			events[j], events[j-1] = events[j-1], events[j]
		}
	}
	return events
}

func TestRegisterModel(t *testing.T) {
	ok := func(v int64) Event { return Event{Type: OK, Exists: true, Value: v} }
	applied := Event{Type: OK, Applied: true}
	for _, c := range []struct {
		name   string
		events []Event
		want   porcupine.CheckResult
	}{
		{"insert then cas then read", history(
			op(1, FInsert, 1, 0, 10, Event{Value: 1}, applied),
			op(1, FCas, 1, 20, 30, Event{Expect: 1, Value: 2}, applied),
			op(2, FRead, 1, 40, 50, Event{}, ok(2)),
		), porcupine.Ok},
		{"a read of a value overwritten before it began", history(
			op(1, FInsert, 1, 0, 10, Event{Value: 1}, applied),
			op(1, FCas, 1, 20, 30, Event{Expect: 1, Value: 2}, applied),
			op(2, FRead, 1, 40, 50, Event{}, ok(1)),
		), porcupine.Illegal},
		{"two inserts applied", history(
			op(1, FInsert, 1, 0, 10, Event{Value: 1}, applied),
			op(2, FInsert, 1, 0, 10, Event{Value: 2}, applied),
		), porcupine.Illegal},
		{"an insert not applied returns the winner's row", history(
			op(1, FInsert, 1, 0, 10, Event{Value: 1}, applied),
			op(2, FInsert, 1, 0, 10, Event{Value: 2}, Event{Type: Fail, Exists: true, Value: 1}),
		), porcupine.Ok},
		{"an insert not applied returns another row", history(
			op(1, FInsert, 1, 0, 10, Event{Value: 1}, applied),
			op(2, FInsert, 1, 0, 10, Event{Value: 2}, Event{Type: Fail, Exists: true, Value: 3}),
		), porcupine.Illegal},
		{"a cas not applied although its condition held", history(
			op(1, FInsert, 1, 0, 10, Event{Value: 1}, applied),
			op(1, FCas, 1, 20, 30, Event{Expect: 1, Value: 2}, Event{Type: Fail, Exists: true, Value: 1}),
		), porcupine.Illegal},
		{"an info cas seen applied later", history(
			op(1, FInsert, 1, 0, 10, Event{Value: 1}, applied),
			op(2, FCas, 1, 20, 30, Event{Expect: 1, Value: 2}, Event{Type: Info, Error: "write timeout"}),
			op(3, FRead, 1, 40, 50, Event{}, ok(2)),
			op(3, FRead, 1, 60, 70, Event{}, ok(2)),
		), porcupine.Ok},
		{"an info cas seen applied, then not", history(
			op(1, FInsert, 1, 0, 10, Event{Value: 1}, applied),
			op(2, FCas, 1, 20, 30, Event{Expect: 1, Value: 2}, Event{Type: Info, Error: "write timeout"}),
			op(3, FRead, 1, 40, 50, Event{}, ok(2)),
			op(3, FRead, 1, 60, 70, Event{}, ok(1)),
		), porcupine.Illegal},
		{"an info cas never seen", history(
			op(1, FInsert, 1, 0, 10, Event{Value: 1}, applied),
			op(2, FCas, 1, 20, 30, Event{Expect: 1, Value: 2}, Event{Type: Info, Error: "write timeout"}),
			op(3, FRead, 1, 40, 50, Event{}, ok(1)),
		), porcupine.Ok},
		{"an info cas seen before it was invoked", history(
			op(1, FInsert, 1, 0, 10, Event{Value: 1}, applied),
			op(3, FRead, 1, 11, 15, Event{}, ok(2)),
			op(2, FCas, 1, 20, 30, Event{Expect: 1, Value: 2}, Event{Type: Info, Error: "write timeout"}),
		), porcupine.Illegal},
		{"a failed cas is no write", history(
			op(1, FInsert, 1, 0, 10, Event{Value: 1}, applied),
			op(2, FCas, 1, 20, 30, Event{Expect: 1, Value: 2}, Event{Type: Fail, Error: "unavailable"}),
			op(3, FRead, 1, 40, 50, Event{}, ok(2)),
		), porcupine.Illegal},
		{"keys are registers of their own", history(
			op(1, FInsert, 1, 0, 10, Event{Value: 1}, applied),
			op(2, FInsert, 2, 0, 10, Event{Value: 2}, applied),
			op(3, FRead, 2, 40, 50, Event{}, ok(1)),
		), porcupine.Illegal},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got, _ := CheckRegister(c.events, 10*time.Second); got != c.want {
				t.Errorf("%s, want %s", got, c.want)
			}
		})
	}
}

func TestInvariantCheckers(t *testing.T) {
	set := history(
		op(1, FAdd, 1, 0, 10, Event{Value: 1}, Event{Type: OK}),
		op(2, FAdd, 1, 0, 10, Event{Value: 2}, Event{Type: Info}),
		op(3, FRead, 1, 20, 30, Event{}, Event{Type: OK, Values: []int64{2}}),
		op(3, FRead, 1, 40, 50, Event{}, Event{Type: OK, Values: []int64{1, 7}}),
	)
	bank := history(
		op(1, FRead, 1, 0, 10, Event{}, Event{Type: OK, Values: []int64{50, 50}}),
		op(1, FRead, 1, 20, 30, Event{}, Event{Type: OK, Values: []int64{60, 50}}),
		op(1, FRead, 1, 40, 50, Event{}, Event{Type: OK, Values: []int64{110, -10}}),
		op(1, FRead, 1, 60, 70, Event{}, Event{Type: OK, Values: []int64{100}}),
	)
	mono := history(
		op(1, FWrite, 1, 0, 10, Event{Value: 1}, Event{Type: OK}),
		op(1, FWrite, 1, 20, 30, Event{Value: 2}, Event{Type: OK}),
		op(2, FRead, 1, 25, 28, Event{}, Event{Type: OK, Exists: true, Value: 2}),
		op(2, FRead, 1, 31, 35, Event{}, Event{Type: OK, Exists: true, Value: 1}),
		op(3, FRead, 1, 31, 35, Event{}, Event{Type: OK, Exists: true, Value: 9}),
	)
	for _, c := range []struct {
		name     string
		problems []string
		want     []string
	}{
		{"set", CheckSet(set, map[int][]int64{1: {2}}), []string{
			"read by process 3 invoked at 20 lacks 1", "holds 7, never added", "final read lacks 1"}},
		{"bank", CheckBank(bank, 2, 100), []string{"totals 110", "negative balance", "shows 1 accounts"}},
		{"monotonic", CheckMonotonic(mono), []string{
			"process 2 read 1 at 35 after reading 2", "older than 2, acknowledged by 30", "read 9 at 35, not written"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if len(c.problems) != len(c.want) {
				t.Errorf("problems %q, want %d", c.problems, len(c.want))
			}
			for _, w := range c.want {
				found := false
				for _, p := range c.problems {
					found = found || strings.Contains(p, w)
				}
				if !found {
					t.Errorf("no problem says %q in %q", w, c.problems)
				}
			}
		})
	}
}

// TestDuringOneShardDown: the operations invoked while a fault took one
// shard away, which -histories.quorum-lwt requires never to be answered
// Unavailable, are those between the fault's start and its heal.
func TestDuringOneShardDown(t *testing.T) {
	unavail := Event{Type: Fail, Error: unavailablePrefix + "Cannot achieve consistency level SERIAL"}
	events := history(
		op(1, FCas, 1, 0, 10, Event{}, unavail),
		[]Event{{Time: 20, Type: Nemesis, F: "start", Error: "partition: gateway 0 cut from shard 1"}},
		op(2, FCas, 1, 25, 30, Event{}, unavail),
		[]Event{{Time: 40, Type: Nemesis, F: "heal", Error: "partition"}},
		[]Event{{Time: 50, Type: Nemesis, F: "start", Error: "kill-postgres: shard 2's PostgreSQL killed"}},
		op(3, FCas, 1, 55, 70, Event{}, unavail),
		op(4, FInsert, 1, 60, 65, Event{}, Event{Type: OK, Applied: true}),
		[]Event{{Time: 80, Type: Nemesis, F: "heal", Error: "kill-postgres"}},
		op(5, FCas, 1, 85, 90, Event{}, unavail),
	)
	var got []int
	for _, o := range duringOneShardDown(events) {
		if unavailable(o.End) {
			got = append(got, o.Invoke.Process)
		}
	}
	if len(got) != 1 || got[0] != 3 {
		t.Errorf("Unavailable during one shard down: processes %v, want [3]", got)
	}
}

// TestCheckRegisterKeys: checked key by key, a history's verdict is its
// worst key's, and the keys that did not pass are named.
func TestCheckRegisterKeys(t *testing.T) {
	applied := Event{Type: OK, Applied: true}
	events := history(
		op(1, FInsert, 1, 0, 10, Event{Value: 1}, applied),
		op(2, FInsert, 2, 0, 10, Event{Value: 2}, applied),
		op(3, FRead, 1, 20, 30, Event{}, Event{Type: OK, Exists: true, Value: 1}),
		op(3, FRead, 2, 40, 50, Event{}, Event{Type: OK}),
	)
	if result, bad := CheckRegisterKeys(events, 10*time.Second); result != porcupine.Illegal || len(bad) != 1 || bad[0] != 2 {
		t.Errorf("%s on keys %v, want Illegal on [2]", result, bad)
	}
}
