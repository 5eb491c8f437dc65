package histories

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/Shopify/toxiproxy/v2"
)

// fault is one kind of fault the nemesis injects: start injects it on a
// shard or gateway chosen with rnd and returns what it did and how to heal
// it.
type fault struct {
	name string
	// oneShardDown marks the faults that take one shard away from every
	// gateway: with lightweight transactions on a quorum, they must keep
	// succeeding through them (-histories.quorum-lwt).
	oneShardDown bool
	start        func(ctx context.Context, c *testCluster, rnd *rand.Rand) (string, func() error, error)
}

// shardLinks returns every gateway's link to shard s.
func (c *testCluster) shardLinks(s int) []*toxiproxy.Proxy {
	var links []*toxiproxy.Proxy
	for _, g := range c.gws {
		links = append(links, g.links[s])
	}
	return links
}

// onLinks adds a toxic to links, and heals them with reconnect.
func onLinks(links []*toxiproxy.Proxy, kind, stream string, attrs map[string]any, reconnect bool) (func() error, error) {
	healAll := func() error {
		var errs []error
		for _, l := range links {
			errs = append(errs, heal(l, reconnect))
		}
		return errors.Join(errs...)
	}
	for _, l := range links {
		if err := toxic(l, kind, kind, stream, attrs); err != nil {
			healAll()
			return nil, err
		}
	}
	return healAll, nil
}

// allFaults are the faults the nemesis knows, in the order of the
// issue's list.
var allFaults = []fault{
	{name: "latency", start: func(ctx context.Context, c *testCluster, rnd *rand.Rand) (string, func() error, error) {
		s := rnd.IntN(len(c.shards))
		h, err := onLinks(c.shardLinks(s), "latency", "", map[string]any{"latency": 100, "jitter": 50}, false)
		return fmt.Sprintf("100±50 ms each way to shard %d", s), h, err
	}},
	{name: "bandwidth", start: func(ctx context.Context, c *testCluster, rnd *rand.Rand) (string, func() error, error) {
		s := rnd.IntN(len(c.shards))
		h, err := onLinks(c.shardLinks(s), "bandwidth", "downstream", map[string]any{"rate": 16}, false)
		return fmt.Sprintf("16 KB/s from shard %d", s), h, err
	}},
	{name: "black-hole", oneShardDown: true, start: func(ctx context.Context, c *testCluster, rnd *rand.Rand) (string, func() error, error) {
		s := rnd.IntN(len(c.shards))
		h, err := onLinks(c.shardLinks(s), "timeout", "", map[string]any{"timeout": 0}, true)
		return fmt.Sprintf("shard %d unreachable from every gateway, its connections hanging", s), h, err
	}},
	{name: "partition", start: func(ctx context.Context, c *testCluster, rnd *rand.Rand) (string, func() error, error) {
		g, s := rnd.IntN(len(c.gws)), rnd.IntN(len(c.shards))
		h, err := onLinks(c.gws[g].links[s:s+1], "timeout", "", map[string]any{"timeout": 0}, true)
		return fmt.Sprintf("gateway %d cut from shard %d; the other gateway reaches it", g, s), h, err
	}},
	{name: "reset", start: func(ctx context.Context, c *testCluster, rnd *rand.Rand) (string, func() error, error) {
		s := rnd.IntN(len(c.shards))
		h, err := onLinks(c.shardLinks(s), "reset_peer", "upstream", map[string]any{"timeout": 300}, true)
		return fmt.Sprintf("connections to shard %d reset 300 ms after they send", s), h, err
	}},
	{name: "slow-close", start: func(ctx context.Context, c *testCluster, rnd *rand.Rand) (string, func() error, error) {
		s := rnd.IntN(len(c.shards))
		h, err := onLinks(c.shardLinks(s), "slow_close", "", map[string]any{"delay": 2000}, false)
		if err != nil {
			return "", nil, err
		}
		n := 0
		for g := range c.gws {
			m, _ := c.terminate(ctx, g, s)
			n += m
		}
		return fmt.Sprintf("closes from shard %d delayed 2 s, and its %d backends terminated", s, n), h, nil
	}},
	{name: "kill-postgres", oneShardDown: true, start: func(ctx context.Context, c *testCluster, rnd *rand.Rand) (string, func() error, error) {
		s := rnd.IntN(len(c.shards))
		if err := c.shards[s].Kill(); err != nil {
			return "", nil, err
		}
		return fmt.Sprintf("shard %d's PostgreSQL killed with SIGKILL", s), func() error {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			return c.shards[s].Restart(ctx)
		}, nil
	}},
	{name: "terminate", start: func(ctx context.Context, c *testCluster, rnd *rand.Rand) (string, func() error, error) {
		g, s := rnd.IntN(len(c.gws)), rnd.IntN(len(c.shards))
		stop := make(chan struct{})
		done := make(chan int)
		go func() {
			n := 0
			for {
				m, _ := c.terminate(ctx, g, s)
				n += m
				select {
				case <-stop:
					done <- n
					return
				case <-time.After(300 * time.Millisecond):
				}
			}
		}()
		return fmt.Sprintf("gateway %d's backends on shard %d terminated every 300 ms", g, s), func() error {
			close(stop)
			<-done
			return nil
		}, nil
	}},
	{name: "kill-gateway", start: func(ctx context.Context, c *testCluster, rnd *rand.Rand) (string, func() error, error) {
		g := c.gws[rnd.IntN(len(c.gws))]
		g.kill()
		return fmt.Sprintf("gateway %d killed with SIGKILL", g.id), g.start, nil
	}},
	{name: "clock-skew", start: func(ctx context.Context, c *testCluster, rnd *rand.Rand) (string, func() error, error) {
		g := c.gws[rnd.IntN(len(c.gws))]
		if err := g.signal(syscall.SIGUSR1); err != nil {
			return "", nil, err
		}
		return fmt.Sprintf("gateway %d's clock %v off", g.id, g.args.Skew), func() error { return g.signal(syscall.SIGUSR2) }, nil
	}},
}

// selectFaults returns the faults named in list, every one when it is
// empty or "all". (With lightweight transactions serialized on a
// partition's first replica, connection losses between a gateway and a
// shard in the middle of its transactions, reset, slow-close,
// kill-postgres and terminate, made the bank's conditional batches create
// or destroy money for good; under Paxos every fault is in the suite.)
func selectFaults(list string) ([]fault, error) {
	if list == "" || list == "all" {
		return allFaults, nil
	}
	var fs []fault
	for _, name := range strings.Split(list, ",") {
		i := slices.IndexFunc(allFaults, func(f fault) bool { return f.name == name })
		if i < 0 {
			return nil, fmt.Errorf("no fault %q", name)
		}
		fs = append(fs, allFaults[i])
	}
	return fs, nil
}

// nemesis injects faults one at a time until ctx ends: each for faultFor,
// healed, then quiet for quietFor, in a random order that goes through
// every fault before repeating one. It records each fault's start and
// heal in every history. It returns how many of each it injected and the
// first error met injecting or healing one.
func nemesis(ctx context.Context, c *testCluster, faults []fault, faultFor, quietFor time.Duration, rnd *rand.Rand,
	hs []*History) (map[string]int, error) {
	record := func(e Event) {
		for _, h := range hs {
			h.Add(e)
		}
	}
	sleep := func(d time.Duration) {
		select {
		case <-ctx.Done():
		case <-time.After(d):
		}
	}
	counts := map[string]int{}
	var order []fault
	sleep(quietFor)
	for ctx.Err() == nil {
		if len(order) == 0 {
			order = slices.Clone(faults)
			rnd.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		}
		f := order[0]
		order = order[1:]
		what, heal, err := f.start(context.WithoutCancel(ctx), c, rnd)
		if err != nil {
			return counts, fmt.Errorf("inject %s: %w", f.name, err)
		}
		counts[f.name]++
		record(Event{Type: Nemesis, F: "start", Error: f.name + ": " + what})
		sleep(faultFor)
		err = heal()
		record(Event{Type: Nemesis, F: "heal", Error: f.name})
		if err != nil {
			return counts, fmt.Errorf("heal %s: %w", f.name, err)
		}
		sleep(quietFor)
	}
	return counts, nil
}

// duringOneShardDown returns the operations of events invoked while a
// fault that takes one shard from every gateway was on.
func duringOneShardDown(events []Event) []Op {
	down := map[string]bool{}
	for _, f := range allFaults {
		down[f.name] = f.oneShardDown
	}
	var spans [][2]int64
	for _, e := range events {
		name, _, _ := strings.Cut(e.Error, ":")
		switch {
		case e.Type == Nemesis && e.F == "start" && down[name]:
			spans = append(spans, [2]int64{e.Time, math.MaxInt64})
		case e.Type == Nemesis && e.F == "heal" && len(spans) > 0:
			spans[len(spans)-1][1] = min(spans[len(spans)-1][1], e.Time)
		}
	}
	var during []Op
	for _, op := range Operations(events) {
		if slices.ContainsFunc(spans, func(s [2]int64) bool { return op.Invoke.Time >= s[0] && op.Invoke.Time < s[1] }) {
			during = append(during, op)
		}
	}
	return during
}
