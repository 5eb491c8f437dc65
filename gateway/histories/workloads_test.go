package histories

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gocql/gocql"
)

// workload is one kind of client load with its own table and history.
type workload interface {
	name() string
	history() *History
	// setup creates the workload's table through admin.
	setup(ctx context.Context, admin *gocql.Session) error
	// run runs the clients on both gateways' sessions until ctx ends.
	run(ctx context.Context, sess [2]*gocql.Session, rnd *rand.Rand)
	// serverTimestamps tells whether its sessions let the gateway give
	// write timestamps.
	serverTimestamps() bool
	// final reads what the check needs once the faults are healed.
	final(ctx context.Context, sess [2]*gocql.Session) error
	// check returns the history's violations; Porcupine's verdict
	// is written to dir on failure by checkHistory.
	check() []string
	// lwt tells whether the workload's writes are lightweight
	// transactions.
	lwt() bool
}

// tableSeq numbers each run's tables, so that runs in one process start
// from empty tables.
var tableSeq atomic.Int64

// serial is the consistency of reads through Paxos.
const serial = gocql.Consistency(gocql.Serial)

// clients runs n clients per gateway until ctx ends, each calling step
// for one operation at a time with a pause of up to pause between them.
func clients(ctx context.Context, h *History, sess [2]*gocql.Session, n int, pause time.Duration, rnd *rand.Rand,
	step func(c *client, rnd *rand.Rand)) {
	var wg sync.WaitGroup
	for g := range sess {
		for range n {
			r := rand.New(rand.NewPCG(rnd.Uint64(), rnd.Uint64()))
			c := newClient(h, g, sess[g])
			wg.Go(func() {
				for ctx.Err() == nil {
					step(c, r)
					time.Sleep(time.Duration(r.Int64N(int64(pause) + 1)))
				}
			})
		}
	}
	wg.Wait()
}

// retry runs f until it succeeds or ctx ends, for the reads after the
// faults are healed, which must succeed once the gateways see the shards
// back.
// readUntilOK runs read until its event is ok, or ctx ends, and returns
// that event.
func readUntilOK(ctx context.Context, read func() Event) (Event, error) {
	var e Event
	err := retry(ctx, func() error {
		if e = read(); e.Type != OK {
			return errors.New(e.Error)
		}
		return nil
	})
	return e, err
}

// finalReads reads each of keys through each gateway, with a client of
// its own, until the read is ok: a workload's reads once healed.
func finalReads(ctx context.Context, h *History, sess [2]*gocql.Session, keys int, read func(c *client, k int) Event) error {
	for g := range sess {
		c := newClient(h, g, sess[g])
		for k := range keys {
			if _, err := readUntilOK(ctx, func() Event { return read(c, k) }); err != nil {
				return fmt.Errorf("key %d through gateway %d: %w", k, g, err)
			}
		}
	}
	return nil
}

func retry(ctx context.Context, f func() error) error {
	for {
		err := f()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last error: %w)", ctx.Err(), err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}
