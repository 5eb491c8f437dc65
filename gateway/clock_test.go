package gateway_test

import (
	"testing"
	"time"
)

// TestSkewClock: a gateway whose clock is skewed gives the writes that
// bring no timestamp one that far off, and its timestamps never go back
// when the skew is undone. The skew is small: the last timestamp given is
// the process's, which the package's other gateways share.
func TestSkewClock(t *testing.T) {
	s, err := startGateway(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Shutdown(t.Context()); waitAlone(t) })
	cfg := clusterConfig(s, "")
	cfg.DefaultTimestamp = false // the gateway gives the timestamps
	sess, err := cfg.CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	exec(t, sess,
		"CREATE KEYSPACE IF NOT EXISTS skew WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE IF NOT EXISTS skew.t (k int PRIMARY KEY, v int)")
	writetime := func(k int) time.Time {
		t.Helper()
		if err := sess.Query("INSERT INTO skew.t (k, v) VALUES (?, 1)", k).Exec(); err != nil {
			t.Fatal(err)
		}
		var us int64
		if err := sess.Query("SELECT writetime(v) FROM skew.t WHERE k = ?", k).Scan(&us); err != nil {
			t.Fatal(err)
		}
		return time.UnixMicro(us)
	}
	const skew = time.Second
	if d := time.Until(writetime(1)); d > skew/2 {
		t.Fatalf("unskewed write is %v ahead", d)
	}
	s.SkewClock(skew)
	skewed := writetime(2)
	if d := time.Until(skewed); d < skew/2 || d > 3*skew/2 {
		t.Fatalf("write under a skew of %v is %v ahead", skew, d)
	}
	s.SkewClock(0)
	if w := writetime(3); !w.After(skewed) {
		t.Fatalf("timestamps went back when the skew was undone: %v after %v", w, skewed)
	}
	time.Sleep(time.Until(skewed)) // the other tests' gateways give timestamps from now again
}
