package histories

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/gocql/gocql"
)

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
	cls := []gocql.Consistency{serial}
	if w.quorumReads {
		cls = append(cls, gocql.Quorum)
	}
	for _, cl := range cls {
		if err := finalReads(ctx, w.h, sess, w.keys, func(c *client, k int) Event { return w.read(c, k, cl) }); err != nil {
			return fmt.Errorf("at %v: %w", cl, err)
		}
	}
	return nil
}

func (w *bank) check() []string {
	return CheckBank(w.h.Events(), w.accounts, int64(w.accounts*bankBalance))
}
