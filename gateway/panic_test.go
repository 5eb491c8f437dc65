package gateway_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gocql/gocql"

	"github.com/cqlpg/cqlpg/gateway"
)

// startLoggedGateway starts a gateway on the shared shards whose log goes
// to the returned buffer, and shuts it down when the test ends.
func startLoggedGateway(t *testing.T, change func(*gateway.Config)) (*gateway.Server, *lockedBuffer) {
	t.Helper()
	logs := &lockedBuffer{}
	s := startGatewayWith(t, func(c *gateway.Config) {
		c.Log = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		if change != nil {
			change(c)
		}
	})
	t.Cleanup(func() { s.Shutdown(context.Background()) })
	return s, logs
}

// requireServerError checks that err is a CQL server error (0x0000).
func requireServerError(t *testing.T, what string, err error) {
	t.Helper()
	var re gocql.RequestError
	if !errors.As(err, &re) || re.Code() != gocql.ErrCodeServer {
		t.Fatalf("%s: %v (%T), want a server error", what, err, err)
	}
}

// TestPanicRecovered makes requests panic on each of their paths: a
// handler goroutine (a QUERY), the reader binding an EXECUTE it answers
// asynchronously, and a shard pool's goroutine completing one. Each is
// answered with a server error and logged with its stack, while requests
// running at the same time succeed and the gateway goes on serving.
func TestPanicRecovered(t *testing.T) {
	s, logs := startLoggedGateway(t, nil)
	sess := sessionOn(t, s, "")
	exec(t, sess, "CREATE KEYSPACE IF NOT EXISTS panics WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
	for _, tbl := range []string{"ok", "on_handler", "on_reader", "on_completion"} {
		exec(t, sess, "CREATE TABLE IF NOT EXISTS panics."+tbl+" (k int PRIMARY KEY, v int)")
	}
	s.PanicAt(func(point, text string) bool { return strings.Contains(text, "panics.on_"+point) })
	t.Cleanup(func() { s.PanicAt(nil) })

	// Other requests run all along, on the same connections.
	stop := make(chan struct{})
	var (
		wg       sync.WaitGroup
		ok       atomic.Int64
		failures = make(chan error, 16)
	)
	for w := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				k := w*100000 + i
				if err := sess.Query("INSERT INTO panics.ok (k, v) VALUES (?, ?)", k, i).Exec(); err != nil {
					failures <- err
					return
				}
				var v int
				if err := sess.Query("SELECT v FROM panics.ok WHERE k = ?", k).Scan(&v); err != nil || v != i {
					failures <- errors.Join(err, errors.New("read back another value"))
					return
				}
				ok.Add(1)
			}
		})
	}

	const rounds = 20
	for i := range rounds {
		// A QUERY panics in its handler goroutine.
		requireServerError(t, "QUERY", sess.Query("SELECT v FROM panics.on_handler WHERE k = 1").Exec())
		// EXECUTEs of a read at ONE replica: the reader binds them and
		// panics there.
		requireServerError(t, "EXECUTE on the reader",
			sess.Query("SELECT v FROM panics.on_reader WHERE k = ?", i).Consistency(gocql.One).Exec())
		// A write of one row: its op completes in a pool's goroutine,
		// which panics.
		requireServerError(t, "EXECUTE completing in a pool",
			sess.Query("INSERT INTO panics.on_completion (k, v) VALUES (?, ?)", i, i).Exec())
		requireServerError(t, "EXECUTE of a read completing in a pool",
			sess.Query("SELECT v FROM panics.on_completion WHERE k = ?", i).Consistency(gocql.One).Exec())
	}
	close(stop)
	wg.Wait()
	close(failures)
	for err := range failures {
		t.Errorf("a request beside the panics failed: %v", err)
	}
	if ok.Load() == 0 {
		t.Error("no request ran beside the panics")
	}

	// The gateway goes on serving, the statements that panicked included.
	s.PanicAt(nil)
	exec(t, sess, "INSERT INTO panics.on_completion (k, v) VALUES (1, 1)")
	var v int
	if err := sess.Query("SELECT v FROM panics.on_completion WHERE k = ?", 1).Consistency(gocql.One).Scan(&v); err != nil || v != 1 {
		t.Fatalf("after the panics: %d, %v", v, err)
	}
	fresh := sessionOn(t, s, "")
	if err := fresh.Query("SELECT v FROM panics.on_reader WHERE k = ?", 1).Exec(); err != nil {
		t.Fatalf("a new connection after the panics: %v", err)
	}

	out := logs.String()
	for _, point := range []string{"handler", "reader", "completion"} {
		if !strings.Contains(out, "test hook: panic at "+point) {
			t.Errorf("no panic at the %s logged", point)
		}
	}
	if n := strings.Count(out, "request panicked"); n < 4*rounds {
		t.Errorf("%d panics logged, want at least %d", n, 4*rounds)
	}
	if !strings.Contains(out, "stack=") || !strings.Contains(out, "exec.MaybePanic") {
		t.Errorf("the panics were logged without their stack:\n%.2000s", out)
	}
	t.Logf("%d requests succeeded beside %d that panicked", ok.Load(), 4*rounds)
}
