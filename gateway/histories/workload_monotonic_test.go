package histories

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/gocql/gocql"
)

// monotonic is an increasing value per key, written at QUORUM by one
// writer at a time (client-side timestamps, increasing with the value),
// and read at QUORUM by clients on both gateways.
type monotonic struct {
	h     *History
	table string
	keys  int
}

func (w *monotonic) name() string           { return "monotonic" }
func (w *monotonic) history() *History      { return w.h }
func (w *monotonic) serverTimestamps() bool { return false }
func (w *monotonic) lwt() bool              { return false }
func (w *monotonic) setup(ctx context.Context, admin *gocql.Session) error {
	w.table = fmt.Sprintf("mono_%d", tableSeq.Add(1))
	return admin.Query("CREATE TABLE " + w.table + " (k int PRIMARY KEY, v bigint)").WithContext(ctx).Exec()
}

func (w *monotonic) run(ctx context.Context, sess [2]*gocql.Session, rnd *rand.Rand) {
	var wg sync.WaitGroup
	for k := range w.keys {
		c := newClient(w.h, k%2, sess[k%2])
		r := rand.New(rand.NewPCG(rnd.Uint64(), rnd.Uint64()))
		wg.Go(func() {
			for v := int64(1); ctx.Err() == nil; v++ {
				c.do(Event{F: FWrite, Key: k, Value: v}, func() (Event, error) {
					return Event{}, c.sess.Query("UPDATE "+w.table+" SET v = ? WHERE k = ?", v, k).Consistency(gocql.Quorum).Exec()
				})
				time.Sleep(time.Duration(r.Int64N(int64(10 * time.Millisecond))))
			}
		})
	}
	clients(ctx, w.h, sess, 2, 5*time.Millisecond, rnd, func(c *client, r *rand.Rand) {
		w.read(c, r.IntN(w.keys))
	})
	wg.Wait()
}

func (w *monotonic) read(c *client, k int) Event {
	return c.do(Event{F: FRead, Key: k}, func() (Event, error) {
		var v int64
		err := c.sess.Query("SELECT v FROM "+w.table+" WHERE k = ?", k).Consistency(gocql.Quorum).Scan(&v)
		if errors.Is(err, gocql.ErrNotFound) {
			return Event{}, nil
		}
		return Event{Exists: true, Value: v}, err
	})
}

func (w *monotonic) final(ctx context.Context, sess [2]*gocql.Session) error {
	return finalReads(ctx, w.h, sess, w.keys, w.read)
}

func (w *monotonic) check() []string { return CheckMonotonic(w.h.Events()) }
