package histories

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/gocql/gocql"
)

// set is a set per key: elements added at QUORUM, each once, and read at
// QUORUM. A key takes adds for a few seconds, so partitions stay small.
type set struct {
	h      *History
	table  string
	start  time.Time
	next   atomic.Int64
	finals map[int][]int64
}

// setBucket is how long a key of the set takes adds.
const setBucket = 5 * time.Second

func (w *set) name() string           { return "set" }
func (w *set) history() *History      { return w.h }
func (w *set) serverTimestamps() bool { return false }
func (w *set) lwt() bool              { return false }
func (w *set) setup(ctx context.Context, admin *gocql.Session) error {
	w.table = fmt.Sprintf("set_%d", tableSeq.Add(1))
	w.start = time.Now()
	return admin.Query("CREATE TABLE " + w.table + " (k int, e bigint, PRIMARY KEY (k, e))").WithContext(ctx).Exec()
}

func (w *set) key() int { return int(time.Since(w.start) / setBucket) }

func (w *set) run(ctx context.Context, sess [2]*gocql.Session, rnd *rand.Rand) {
	clients(ctx, w.h, sess, 3, 5*time.Millisecond, rnd, func(c *client, r *rand.Rand) {
		if r.IntN(4) == 0 {
			w.read(c, max(0, w.key()-r.IntN(2)))
			return
		}
		k, e := w.key(), w.next.Add(1)
		c.do(Event{F: FAdd, Key: k, Value: e}, func() (Event, error) {
			return Event{}, c.sess.Query("INSERT INTO "+w.table+" (k, e) VALUES (?, ?)", k, e).Consistency(gocql.Quorum).Exec()
		})
	})
}

func (w *set) read(c *client, k int) Event {
	return c.do(Event{F: FRead, Key: k}, func() (Event, error) {
		iter := c.sess.Query("SELECT e FROM "+w.table+" WHERE k = ?", k).Consistency(gocql.Quorum).Iter()
		var out Event
		var e int64
		for iter.Scan(&e) {
			out.Values = append(out.Values, e)
		}
		return out, iter.Close()
	})
}

func (w *set) final(ctx context.Context, sess [2]*gocql.Session) error {
	w.finals = map[int][]int64{}
	c := newClient(w.h, 0, sess[0])
	for k := range w.key() + 1 {
		e, err := readUntilOK(ctx, func() Event { return w.read(c, k) })
		if err != nil {
			return fmt.Errorf("key %d: %w", k, err)
		}
		w.finals[k] = e.Values
	}
	return nil
}

func (w *set) check() []string { return CheckSet(w.h.Events(), w.finals) }
