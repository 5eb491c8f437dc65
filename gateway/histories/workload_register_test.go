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

// register is a linearizable register per key: SERIAL reads, compare and
// set by UPDATE … IF v = ?, and INSERT … IF NOT EXISTS, each write's value
// unique. The clients use keys keys for an epoch, then the next keys: an
// info operation is concurrent with every later one on its key, which
// Porcupine pays for exponentially, so an epoch ends after regWindow or
// once its keys had regInfos info operations each on average.
type register struct {
	h     *History
	table string
	keys  int
	next  atomic.Int64

	mu         sync.Mutex
	epoch      int
	epochStart time.Time
	infos      int
}

const (
	regWindow = 10 * time.Second
	regInfos  = 2
)

// key returns one of the keys of the current epoch, counting the info
// operation the client's last operation ended with, if it did.
func (w *register) key(r *rand.Rand, lastInfo bool) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	if lastInfo {
		w.infos++
	}
	if time.Since(w.epochStart) > regWindow || w.infos >= regInfos*w.keys {
		w.epoch, w.epochStart, w.infos = w.epoch+1, time.Now(), 0
	}
	return w.epoch*w.keys + r.IntN(w.keys)
}

func (w *register) name() string           { return "register" }
func (w *register) history() *History      { return w.h }
func (w *register) serverTimestamps() bool { return true }
func (w *register) lwt() bool              { return true }
func (w *register) setup(ctx context.Context, admin *gocql.Session) error {
	w.table = fmt.Sprintf("reg_%d", tableSeq.Add(1))
	w.epochStart = time.Now()
	return admin.Query("CREATE TABLE " + w.table + " (k int PRIMARY KEY, v bigint)").WithContext(ctx).Exec()
}

func (w *register) run(ctx context.Context, sess [2]*gocql.Session, rnd *rand.Rand) {
	seen := map[*client]map[int]int64{}
	lastInfo := map[*client]bool{}
	var mu sync.Mutex
	clients(ctx, w.h, sess, 3, 20*time.Millisecond, rnd, func(c *client, r *rand.Rand) {
		mu.Lock()
		if seen[c] == nil {
			seen[c] = map[int]int64{}
		}
		mine, info := seen[c], lastInfo[c]
		mu.Unlock()
		k := w.key(r, info)
		expect, known := mine[k]
		var end Event
		switch p := r.IntN(100); {
		case p < 25 || (p >= 40 && !known):
			end = w.read(c, k)
		case p < 40:
			end = w.insert(c, k, w.next.Add(1))
		default:
			end = w.cas(c, k, expect, w.next.Add(1))
		}
		mu.Lock()
		lastInfo[c] = end.Type == Info
		mu.Unlock()
		switch {
		case end.Type == OK && end.Applied:
			mine[k] = end.Value
		case (end.Type == OK || end.Type == Fail) && end.Exists:
			mine[k] = end.Value
		}
	})
}

func (w *register) read(c *client, k int) Event {
	return c.do(Event{F: FRead, Key: k}, func() (Event, error) {
		var v int64
		err := c.sess.Query("SELECT v FROM "+w.table+" WHERE k = ?", k).Consistency(serial).Scan(&v)
		if errors.Is(err, gocql.ErrNotFound) {
			return Event{}, nil
		}
		return Event{Exists: true, Value: v}, err
	})
}

// casAnswer is the end of a conditional write: applied, or not with the
// current value it returned (none when the row does not exist: values
// are never 0).
func casAnswer(applied bool, m map[string]any, value int64, err error) (Event, error) {
	if err != nil {
		return Event{}, err
	}
	if applied {
		return Event{Applied: true, Value: value}, nil
	}
	v, _ := m["v"].(int64)
	return Event{Type: Fail, Exists: v != 0, Value: v}, nil
}

func (w *register) cas(c *client, k int, expect, value int64) Event {
	return c.do(Event{F: FCas, Key: k, Expect: expect, Value: value}, func() (Event, error) {
		m := map[string]any{}
		applied, err := c.sess.Query("UPDATE "+w.table+" SET v = ? WHERE k = ? IF v = ?", value, k, expect).
			Consistency(gocql.Quorum).SerialConsistency(gocql.Serial).MapScanCAS(m)
		return casAnswer(applied, m, value, err)
	})
}

func (w *register) insert(c *client, k int, value int64) Event {
	return c.do(Event{F: FInsert, Key: k, Value: value}, func() (Event, error) {
		m := map[string]any{}
		applied, err := c.sess.Query("INSERT INTO "+w.table+" (k, v) VALUES (?, ?) IF NOT EXISTS", k, value).
			Consistency(gocql.Quorum).SerialConsistency(gocql.Serial).MapScanCAS(m)
		return casAnswer(applied, m, value, err)
	})
}

// final reads every key used at SERIAL through each gateway, into the
// history.
func (w *register) final(ctx context.Context, sess [2]*gocql.Session) error {
	w.mu.Lock()
	used := (w.epoch + 1) * w.keys
	w.mu.Unlock()
	return finalReads(ctx, w.h, sess, used, w.read)
}

// check is done by Porcupine (checkHistory).
func (w *register) check() []string { return nil }
