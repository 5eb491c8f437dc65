package histories

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/gocql/gocql"
)

// newWorkloads returns the workloads named in list.
func newWorkloads(list string) ([]workload, error) {
	var ws []workload
	for _, name := range strings.Split(list, ",") {
		switch name {
		case "register":
			ws = append(ws, &register{h: NewHistory(), keys: 10})
		case "set":
			ws = append(ws, &set{h: NewHistory()})
		case "bank":
			ws = append(ws, &bank{h: NewHistory(), keys: 2, accounts: 4, quorumReads: *bankQuorum})
		case "monotonic":
			ws = append(ws, &monotonic{h: NewHistory(), keys: 4})
		default:
			return nil, fmt.Errorf("no workload %q", name)
		}
	}
	return ws, nil
}

// TestHistories runs the workloads at once on both gateways for
// -histories.duration while the nemesis injects faults, heals them, reads
// what the checks need and checks every history: registers linearizable
// (Porcupine), sets holding every acknowledged element, banks conserving
// their total with no negative balance, reads monotonic.
func TestHistories(t *testing.T) {
	ws, err := newWorkloads(*workloads)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := selectFaults(*faults)
	if err != nil {
		t.Fatal(err)
	}
	s := *seed
	if s == 0 {
		s = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (-histories.seed), %v under faults", s, *duration)
	rnd := rand.New(rand.NewPCG(s, s))
	ctx := t.Context()

	admin, err := session(cl.gws[0].port, "hist", false)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	admin.SetConsistency(gocql.All)
	var hs []*History
	sessions := make([][2]*gocql.Session, len(ws))
	for i, w := range ws {
		if err := w.setup(ctx, admin); err != nil {
			t.Fatalf("%s: %v", w.name(), err)
		}
		for g := range sessions[i] {
			if sessions[i][g], err = session(cl.gws[g].port, "hist", w.serverTimestamps()); err != nil {
				t.Fatal(err)
			}
			defer sessions[i][g].Close()
		}
		hs = append(hs, w.history())
	}

	faultFor := min(max(*duration/30, 3*time.Second), 20*time.Second)
	quietFor := min(max(faultFor/2, time.Second), 5*time.Second)
	runCtx, cancel := context.WithTimeout(ctx, *duration)
	defer cancel()
	var wg sync.WaitGroup
	for i, w := range ws {
		r := rand.New(rand.NewPCG(rnd.Uint64(), rnd.Uint64()))
		wg.Go(func() { w.run(runCtx, sessions[i], r) })
	}
	counts, nemErr := nemesis(runCtx, cl, fs, faultFor, quietFor, rand.New(rand.NewPCG(rnd.Uint64(), rnd.Uint64())), hs)
	wg.Wait()
	t.Logf("faults injected (%v each): %v", faultFor, counts)
	if nemErr != nil {
		t.Error(nemErr)
	}

	finalCtx, cancelFinal := context.WithTimeout(ctx, time.Minute)
	defer cancelFinal()
	for i, w := range ws {
		if err := w.final(finalCtx, sessions[i]); err != nil {
			t.Errorf("%s: final reads after healing: %v", w.name(), err)
		}
	}

	dir := *artifacts
	if dir == "" {
		if dir, err = os.MkdirTemp("", "cqlpg-histories-"); err != nil {
			t.Fatal(err)
		}
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, w := range ws {
		t.Run(w.name(), func(t *testing.T) { checkHistory(t, w, dir) })
	}
	if *artifacts == "" && !t.Failed() {
		os.RemoveAll(dir)
	} else {
		t.Logf("histories in %s; gateway logs in %s", dir, cl.dir)
	}
}

// checkHistory checks a workload's history and logs what it holds. On a
// violation the history (JSON lines) and, for a register, Porcupine's
// visualization are written to dir.
func checkHistory(t *testing.T, w workload, dir string) {
	events := w.history().Events()
	ops := Operations(events)
	var summary []string
	for _, f := range []string{FRead, FCas, FInsert, FAdd, FTransfer, FWrite} {
		if n := Count(ops, f); len(n) > 0 {
			summary = append(summary, fmt.Sprintf("%s ok %d fail %d info %d", f, n[OK], n[Fail], n[Info]))
		}
	}
	t.Logf("%d operations: %s", len(ops), strings.Join(summary, "; "))
	// A history without a write that took effect proves nothing.
	if !slices.ContainsFunc(ops, func(op Op) bool { return op.Invoke.F != FRead && op.End.Type == OK }) {
		t.Errorf("%s: no write ended ok", w.name())
	}
	if w.lwt() {
		// Through a fault that takes one shard of three away, a
		// partition's lightweight transactions need only the two
		// replicas left (Paxos on a quorum).
		var unavail, info, n int
		for _, op := range duringOneShardDown(events) {
			if op.Invoke.F == FRead && op.End.Type != OK {
				continue
			}
			n++
			if unavailable(op.End) {
				unavail++
			}
			if op.End.Type == Info {
				info++
			}
		}
		t.Logf("with one shard down: %d operations, %d answered Unavailable, %d info", n, unavail, info)
		if *quorumLWT && unavail > 0 {
			t.Errorf("%d lightweight transactions answered Unavailable with one shard of three down", unavail)
		}
	}
	problems := w.check()
	var result porcupine.CheckResult
	var bad []int
	if _, ok := w.(*register); ok {
		const timeout = time.Minute
		began := time.Now()
		result, bad = CheckRegisterKeys(events, timeout)
		t.Logf("Porcupine: %s in %v", result, time.Since(began).Round(time.Millisecond))
		if result != porcupine.Ok {
			problems = append(problems, fmt.Sprintf("Porcupine: %s on keys %v (Unknown is a timeout after %v on a key, no pass)", result, bad, timeout))
		}
	}
	if len(problems) == 0 && *artifacts == "" {
		return
	}
	path := filepath.Join(dir, w.name()+".jsonl")
	if err := WriteFile(path, events); err != nil {
		t.Error(err)
	}
	if result != "" && result != porcupine.Ok {
		visualizeKeys(t, events, bad, dir)
	}
	t.Logf("history: %s", path)
	for i, p := range problems {
		if i == 20 {
			t.Errorf("and %d more", len(problems)-i)
			break
		}
		t.Error(p)
	}
}

// visualizeKeys writes Porcupine's visualization of the first few keys
// whose register history did not pass, each alone: one of a whole long
// history would take more memory than the machine has.
func visualizeKeys(t *testing.T, events []Event, keys []int, dir string) {
	for i, k := range keys {
		if i == 3 {
			return
		}
		var mine []Event
		for _, e := range events {
			if e.Type != Nemesis && e.Key == k {
				mine = append(mine, e)
			}
		}
		_, info := CheckRegister(mine, 10*time.Second)
		html := filepath.Join(dir, fmt.Sprintf("register-key%d.html", k))
		if err := porcupine.VisualizePath(RegisterModel, info, html); err != nil {
			t.Error(err)
		}
		t.Logf("key %d: visualization %s", k, html)
	}
}
