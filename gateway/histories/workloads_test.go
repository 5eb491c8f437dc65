package histories

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
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

// register is a linearizable register per key: SERIAL reads, compare and
// set by UPDATE … IF v = ?, and INSERT … IF NOT EXISTS, each write's value
// unique. The clients use keys keys for regWindow, then the next keys:
// an info operation is concurrent with every later one on its key, which
// Porcupine pays for exponentially, so a key's history stays short.
type register struct {
	h     *History
	table string
	keys  int
	start time.Time
	next  atomic.Int64
}

// regWindow is how long the register's clients use a set of keys.
const regWindow = 10 * time.Second

// key returns one of the keys in use now.
func (w *register) key(r *rand.Rand) int {
	return int(time.Since(w.start)/regWindow)*w.keys + r.IntN(w.keys)
}

func (w *register) name() string           { return "register" }
func (w *register) history() *History      { return w.h }
func (w *register) serverTimestamps() bool { return true }
func (w *register) lwt() bool              { return true }
func (w *register) setup(ctx context.Context, admin *gocql.Session) error {
	w.table = fmt.Sprintf("reg_%d", tableSeq.Add(1))
	w.start = time.Now()
	return admin.Query("CREATE TABLE " + w.table + " (k int PRIMARY KEY, v bigint)").WithContext(ctx).Exec()
}

func (w *register) run(ctx context.Context, sess [2]*gocql.Session, rnd *rand.Rand) {
	seen := map[*client]map[int]int64{}
	var mu sync.Mutex
	clients(ctx, w.h, sess, 3, 20*time.Millisecond, rnd, func(c *client, r *rand.Rand) {
		mu.Lock()
		if seen[c] == nil {
			seen[c] = map[int]int64{}
		}
		mine := seen[c]
		mu.Unlock()
		k := w.key(r)
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
	used := (int(time.Since(w.start)/regWindow) + 1) * w.keys
	for g := range sess {
		c := newClient(w.h, g, sess[g])
		for k := range used {
			if err := retry(ctx, func() error {
				if e := w.read(c, k); e.Type != OK {
					return errors.New(e.Error)
				}
				return nil
			}); err != nil {
				return fmt.Errorf("key %d through gateway %d: %w", k, g, err)
			}
		}
	}
	return nil
}

// check is done by Porcupine (checkHistory).
func (w *register) check() []string { return nil }

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
		err := retry(ctx, func() error {
			e := w.read(c, k)
			if e.Type != OK {
				return errors.New(e.Error)
			}
			w.finals[k] = e.Values
			return nil
		})
		if err != nil {
			return fmt.Errorf("key %d: %w", k, err)
		}
	}
	return nil
}

func (w *set) check() []string { return CheckSet(w.h.Events(), w.finals) }

// bank is a few accounts per partition, transfers between two of them by a
// LOGGED batch of two conditional updates (IF balance = ?), and reads of
// a partition's balances at SERIAL and, with quorumReads, at QUORUM.
// A QUORUM read sees a partition's batch whole or not at all in
// Cassandra; today's gateway lets one see half of a conditional batch in
// flight, under any fault or none, hence the switch.
type bank struct {
	h           *History
	table       string
	keys        int
	accounts    int
	quorumReads bool
}

// bankBalance is every account's balance at the start.
const bankBalance = 100

func (w *bank) name() string           { return "bank" }
func (w *bank) history() *History      { return w.h }
func (w *bank) serverTimestamps() bool { return true }
func (w *bank) lwt() bool              { return true }
func (w *bank) setup(ctx context.Context, admin *gocql.Session) error {
	w.table = fmt.Sprintf("bank_%d", tableSeq.Add(1))
	if err := admin.Query("CREATE TABLE " + w.table + " (k int, acct int, balance bigint, PRIMARY KEY (k, acct))").WithContext(ctx).Exec(); err != nil {
		return err
	}
	for k := range w.keys {
		for a := range w.accounts {
			if err := admin.Query("INSERT INTO "+w.table+" (k, acct, balance) VALUES (?, ?, ?)", k, a, bankBalance).
				WithContext(ctx).Consistency(gocql.All).Exec(); err != nil {
				return err
			}
		}
	}
	return nil
}

func (w *bank) run(ctx context.Context, sess [2]*gocql.Session, rnd *rand.Rand) {
	clients(ctx, w.h, sess, 2, 10*time.Millisecond, rnd, func(c *client, r *rand.Rand) {
		k := r.IntN(w.keys)
		if w.quorumReads && r.IntN(4) == 0 {
			w.read(c, k, gocql.Quorum)
			return
		}
		read := w.read(c, k, serial)
		if read.Type != OK || len(read.Values) != w.accounts {
			return
		}
		from, to := r.IntN(w.accounts), r.IntN(w.accounts-1)
		if to >= from {
			to++
		}
		bal := read.Values
		if bal[from] <= 0 {
			return
		}
		amount := 1 + r.Int64N(min(bal[from], 20))
		c.do(Event{F: FTransfer, Key: k, From: from, To: to, Amount: int(amount)}, func() (Event, error) {
			b := c.sess.NewBatch(gocql.LoggedBatch)
			b.SetConsistency(gocql.Quorum)
			b.SerialConsistency(gocql.Serial)
			q := "UPDATE " + w.table + " SET balance = ? WHERE k = ? AND acct = ? IF balance = ?"
			b.Query(q, bal[from]-amount, k, from, bal[from])
			b.Query(q, bal[to]+amount, k, to, bal[to])
			applied, iter, err := c.sess.MapExecuteBatchCAS(b, map[string]any{})
			if iter != nil {
				iter.Close()
			}
			if err != nil {
				return Event{}, err
			}
			if !applied {
				return Event{Type: Fail}, nil
			}
			return Event{Applied: true}, nil
		})
	})
}

// read reads partition k's balances, by account, at cl.
func (w *bank) read(c *client, k int, cl gocql.Consistency) Event {
	name := cl.String()
	if cl == serial {
		name = "SERIAL" // gocql names only the levels of its Consistency type
	}
	return c.do(Event{F: FRead, Key: k, CL: name}, func() (Event, error) {
		iter := c.sess.Query("SELECT acct, balance FROM "+w.table+" WHERE k = ?", k).Consistency(cl).Iter()
		type row struct {
			acct    int
			balance int64
		}
		var rows []row
		var r row
		for iter.Scan(&r.acct, &r.balance) {
			rows = append(rows, r)
		}
		sort.Slice(rows, func(i, j int) bool { return rows[i].acct < rows[j].acct })
		var out Event
		for _, r := range rows {
			out.Values = append(out.Values, r.balance)
		}
		return out, iter.Close()
	})
}

func (w *bank) final(ctx context.Context, sess [2]*gocql.Session) error {
	for g := range sess {
		c := newClient(w.h, g, sess[g])
		for k := range w.keys {
			cls := []gocql.Consistency{serial}
			if w.quorumReads {
				cls = append(cls, gocql.Quorum)
			}
			for _, cl := range cls {
				if err := retry(ctx, func() error {
					if e := w.read(c, k, cl); e.Type != OK {
						return errors.New(e.Error)
					}
					return nil
				}); err != nil {
					return fmt.Errorf("key %d through gateway %d: %w", k, g, err)
				}
			}
		}
	}
	return nil
}

func (w *bank) check() []string {
	return CheckBank(w.h.Events(), w.accounts, int64(w.accounts*bankBalance))
}

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
	for g := range sess {
		c := newClient(w.h, g, sess[g])
		for k := range w.keys {
			if err := retry(ctx, func() error {
				if e := w.read(c, k); e.Type != OK {
					return errors.New(e.Error)
				}
				return nil
			}); err != nil {
				return fmt.Errorf("key %d through gateway %d: %w", k, g, err)
			}
		}
	}
	return nil
}

func (w *monotonic) check() []string { return CheckMonotonic(w.h.Events()) }
