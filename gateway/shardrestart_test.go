package gateway_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"github.com/jackc/pgx/v5"
)

// outageLoad runs reads and writes at ONE, QUORUM and ALL on an RF=3
// table while a test breaks shards, and checks each error a client gets:
// Unavailable or a read or write timeout, with the level asked, the
// replicas it needs, and fewer alive or answering than that; anything
// else, or an answer slower than the gateway's request timeout, fails the
// test.
type outageLoad struct {
	t       *testing.T
	sess    *gocql.Session
	stop    atomic.Bool
	wg      sync.WaitGroup
	mu      sync.Mutex
	ok      int
	errs    map[string]int
	slowest time.Duration
}

// blockFor is what each level needs of three replicas.
var blockFor = map[gocql.Consistency]int{gocql.One: 1, gocql.Quorum: 2, gocql.All: 3}

func startOutageLoad(t *testing.T, sess *gocql.Session, workers int) *outageLoad {
	l := &outageLoad{t: t, sess: sess, errs: map[string]int{}}
	levels := []gocql.Consistency{gocql.One, gocql.Quorum, gocql.Quorum, gocql.All}
	for w := range workers {
		l.wg.Go(func() {
			for seq := 0; !l.stop.Load(); seq++ {
				cl := levels[rand.IntN(len(levels))]
				k := rand.IntN(200)
				began := time.Now()
				var err error
				if seq%2 == 0 {
					err = sess.Query("INSERT INTO outage.t (k, v) VALUES (?, ?)", k, w*1_000_000+seq).Consistency(cl).Exec()
				} else {
					var v int
					err = sess.Query("SELECT v FROM outage.t WHERE k = ?", k).Consistency(cl).Scan(&v)
					if errors.Is(err, gocql.ErrNotFound) {
						err = nil
					}
				}
				l.record(cl, time.Since(began), err)
			}
		})
	}
	return l
}

func (l *outageLoad) record(cl gocql.Consistency, took time.Duration, err error) {
	kind := l.check(cl, err)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.slowest = max(l.slowest, took)
	if err == nil {
		l.ok++
		return
	}
	l.errs[kind]++
}

// check names an error's kind, failing the test on a wrong one.
func (l *outageLoad) check(cl gocql.Consistency, err error) string {
	var (
		unavailable *gocql.RequestErrUnavailable
		writeTO     *gocql.RequestErrWriteTimeout
		readTO      *gocql.RequestErrReadTimeout
	)
	need := blockFor[cl]
	switch {
	case err == nil:
		return ""
	case errors.As(err, &unavailable):
		if unavailable.Consistency != cl || unavailable.Required != need || unavailable.Alive >= need {
			l.t.Errorf("at %v: Unavailable at %v required %d alive %d; want one at %v required %d with fewer alive",
				cl, unavailable.Consistency, unavailable.Required, unavailable.Alive, cl, need)
		}
		return fmt.Sprintf("Unavailable at %v", cl)
	case errors.As(err, &writeTO):
		if writeTO.Consistency != cl || writeTO.BlockFor != need || writeTO.Received >= need || writeTO.WriteType != "SIMPLE" {
			l.t.Errorf("at %v: WriteTimeout at %v received %d of %d (%s); want one at %v for %d of SIMPLE with fewer received",
				cl, writeTO.Consistency, writeTO.Received, writeTO.BlockFor, writeTO.WriteType, cl, need)
		}
		return fmt.Sprintf("WriteTimeout at %v", cl)
	case errors.As(err, &readTO):
		if readTO.Consistency != cl || readTO.BlockFor != need || readTO.Received > need ||
			readTO.Received == need && readTO.DataPresent != 0 {
			l.t.Errorf("at %v: ReadTimeout at %v received %d of %d, data present %d; want one at %v for %d with fewer received",
				cl, readTO.Consistency, readTO.Received, readTO.BlockFor, readTO.DataPresent, cl, need)
		}
		return fmt.Sprintf("ReadTimeout at %v", cl)
	}
	l.t.Errorf("at %v: %v (%T), want Unavailable or a timeout", cl, err, err)
	return "other"
}

// end stops the load and reports what it saw.
func (l *outageLoad) end(limit time.Duration) {
	l.stop.Store(true)
	l.wg.Wait()
	var kinds []string
	for k, n := range l.errs {
		kinds = append(kinds, fmt.Sprintf("%s: %d", k, n))
	}
	sort.Strings(kinds)
	l.t.Logf("%d requests succeeded; errors %v; slowest answer %v", l.ok, kinds, l.slowest.Round(time.Millisecond))
	if l.slowest > limit {
		l.t.Errorf("a request took %v to be answered, more than %v", l.slowest, limit)
	}
}

// TestShardRestart breaks the shards' connections under load: the
// gateway's connections to one shard are terminated, another shard's
// server restarts fast, then every shard terminates the gateway's
// connections at once. Requests meanwhile succeed or get Unavailable or a
// timeout with the right fields, never hang, and after each break the
// gateway serves ALL again without being restarted.
func TestShardRestart(t *testing.T) {
	fc := startFailureCluster(t)
	sess := sessionOn(t, fc.gw, "")
	exec(t, sess, "CREATE KEYSPACE outage WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}",
		"CREATE TABLE outage.t (k int PRIMARY KEY, v int)")
	ctx := context.Background()
	terminate := func(shard int) {
		conn, err := pgx.Connect(ctx, fc.clusters[shard].URL())
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close(ctx)
		var n int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity
			WHERE pid <> pg_backend_pid() AND backend_type = 'client backend') x`).Scan(&n); err != nil {
			t.Error(err)
			return
		}
		if n == 0 {
			t.Errorf("shard %d: no gateway connection to terminate", shard)
		}
	}
	// recovered waits until writes and reads at ALL succeed again.
	recovered := func(what string) {
		t.Helper()
		began := time.Now()
		for {
			err := sess.Query("INSERT INTO outage.t (k, v) VALUES (-1, 1)").Consistency(gocql.All).Exec()
			if err == nil {
				var v int
				err = sess.Query("SELECT v FROM outage.t WHERE k = -1").Consistency(gocql.All).Scan(&v)
			}
			if err == nil {
				t.Logf("%s: ALL succeeds again after %v", what, time.Since(began).Round(time.Millisecond))
				return
			}
			if time.Since(began) > 30*time.Second {
				t.Fatalf("%s: ALL still fails after 30 s: %v", what, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	// The gateway's request timeout bounds every answer; a second more
	// covers the way to and from the client.
	const limit = 5 * time.Second

	load := startOutageLoad(t, sess, 6)
	time.Sleep(time.Second)
	terminate(0)
	time.Sleep(2 * time.Second)
	recovered("connections to shard 0 terminated")

	if err := fc.clusters[1].Restart(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	recovered("shard 1 restarted")

	var all sync.WaitGroup
	for shard := range fc.clusters {
		all.Go(func() { terminate(shard) })
	}
	all.Wait()
	time.Sleep(2 * time.Second)
	recovered("connections to every shard terminated")
	time.Sleep(time.Second)
	load.end(limit)
}
