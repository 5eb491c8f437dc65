package gateway_test

import (
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlpg/cqlpg/gateway"
)

// waitingOnLocks counts the statements on table on every shard waiting
// for a lock that started before: with the test's transactions holding
// the table, those of the gateway's request (replays of the hints of the
// writes that timed out follow, and wait too, as they should).
func waitingOnLocks(t *testing.T, table string, before time.Time) int {
	t.Helper()
	n := 0
	for _, rows := range onEveryShard(t, "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' "+
		"AND wait_event_type = 'Lock' AND pid <> pg_backend_pid() AND query_start < $1 AND strpos(query, $2) > 0",
		before, `"`+table+`"`) {
		c, err := strconv.Atoi(rows[0])
		if err != nil {
			t.Fatal(err)
		}
		n += c
	}
	return n
}

// TestTimeoutCancelsStatement: a request whose statements wait on a lock
// past its timeout is answered with Cassandra's ReadTimeout or
// WriteTimeout and their fields, on the path of point requests answered
// from the pools (ONE) and on that of handlers (QUORUM), and its
// statements are cancelled on the shards rather than left waiting; the
// shards' connections stay usable.
func TestTimeoutCancelsStatement(t *testing.T) {
	createLimitsTable(t)
	const timeout = 500 * time.Millisecond
	s := limitedGateway(t, func(c *gateway.Config) {
		c.WriteTimeout, c.ReadTimeout = timeout, timeout
	})
	sess := sessionOn(t, s, "limits")
	// A table each, so that the replays of one's hints do not wait on
	// the next one's lock.
	for _, table := range []string{"tw1", "tw2", "tr1", "tr2", "tb1"} {
		exec(t, sess, "CREATE TABLE IF NOT EXISTS "+table+" (k int PRIMARY KEY, v int)",
			"INSERT INTO "+table+" (k, v) VALUES (1, 1)")
	}
	for _, tc := range []struct {
		name  string
		table string
		mode  string // of the lock held
		query string
		level gocql.Consistency
		check func(error) bool
	}{
		{"write at ONE", "tw1", "EXCLUSIVE", "INSERT INTO tw1 (k, v) VALUES (1, 2)", gocql.One, func(err error) bool {
			var wt *gocql.RequestErrWriteTimeout
			return errors.As(err, &wt) && wt.Consistency == gocql.One && wt.Received == 0 && wt.BlockFor == 1 && wt.WriteType == "SIMPLE"
		}},
		{"write at QUORUM", "tw2", "EXCLUSIVE", "INSERT INTO tw2 (k, v) VALUES (1, 3)", gocql.Quorum, func(err error) bool {
			var wt *gocql.RequestErrWriteTimeout
			return errors.As(err, &wt) && wt.Consistency == gocql.Quorum && wt.Received == 0 && wt.BlockFor == 2 && wt.WriteType == "SIMPLE"
		}},
		{"unlogged batch at ONE", "tb1", "EXCLUSIVE", "BEGIN UNLOGGED BATCH INSERT INTO tb1 (k, v) VALUES (1, 4); " +
			"INSERT INTO tb1 (k, v) VALUES (2, 4) APPLY BATCH", gocql.One, func(err error) bool {
			var wt *gocql.RequestErrWriteTimeout
			return errors.As(err, &wt) && wt.Consistency == gocql.One && wt.Received == 0 && wt.BlockFor == 1 && wt.WriteType == "UNLOGGED_BATCH"
		}},
		{"read at ONE", "tr1", "ACCESS EXCLUSIVE", "SELECT v FROM tr1 WHERE k = 1", gocql.One, func(err error) bool {
			var rt *gocql.RequestErrReadTimeout
			return errors.As(err, &rt) && rt.Consistency == gocql.One && rt.Received == 0 && rt.BlockFor == 1 && rt.DataPresent == 0
		}},
		{"read at QUORUM", "tr2", "ACCESS EXCLUSIVE", "SELECT v FROM tr2 WHERE k = 1", gocql.Quorum, func(err error) bool {
			var rt *gocql.RequestErrReadTimeout
			return errors.As(err, &rt) && rt.Consistency == gocql.Quorum && rt.Received == 0 && rt.BlockFor == 2 && rt.DataPresent == 0
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			unlock := lockTable(t, "limits."+tc.table, tc.mode)
			began := time.Now()
			done := make(chan error, 1)
			go func() { done <- sess.Query(tc.query).Consistency(tc.level).Exec() }()
			// While the request waits, its statements are seen waiting on
			// the lock: the count below, once it has timed out, would see
			// them too if they were left waiting.
			waiting := 0
			for waiting == 0 && time.Since(began) < timeout/2 {
				waiting = waitingOnLocks(t, tc.table, time.Now())
			}
			err := <-done
			answered := time.Since(began)
			if waiting == 0 {
				t.Fatalf("no statement of the request seen waiting on the lock before its timeout; answered %v", err)
			}
			if !tc.check(err) {
				t.Fatalf("answered %T %v after %v", err, err, answered)
			}
			if answered < timeout || answered > timeout+time.Second {
				t.Errorf("timed out after %v, want %v", answered, timeout)
			}
			// The statements are cancelled, while the lock is still held.
			deadline := time.Now().Add(2 * time.Second)
			n := waitingOnLocks(t, tc.table, began.Add(timeout))
			for ; n > 0 && time.Now().Before(deadline); n = waitingOnLocks(t, tc.table, began.Add(timeout)) {
				time.Sleep(20 * time.Millisecond)
			}
			gone := time.Since(began)
			if n > 0 {
				t.Fatalf("%d statements still wait on the lock %v after the request", n, gone)
			}
			t.Logf("%v: %d statements waiting, then %v after %v; none left waiting after %v", tc.name, waiting, err,
				answered.Round(time.Millisecond), gone.Round(time.Millisecond))
			unlock()
			// The shards' connections were not broken: the next request
			// succeeds.
			if err := sess.Query(tc.query).Consistency(tc.level).Exec(); err != nil {
				t.Fatalf("after the lock: %v", err)
			}
		})
	}
}
