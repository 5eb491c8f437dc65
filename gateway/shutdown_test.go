package gateway_test

import (
	"context"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
	"github.com/gocql/gocql"
)

// TestShutdownDrains: a gateway shutting down stops accepting
// connections, answers the requests it has read, then closes; every write
// it acknowledged is on the shards.
func TestShutdownDrains(t *testing.T) {
	exec(t, session(t, ""), "CREATE KEYSPACE IF NOT EXISTS drain WITH replication = "+
		"{'class': 'SimpleStrategy', 'replication_factor': 2}",
		"CREATE TABLE IF NOT EXISTS drain.t (k int PRIMARY KEY, v int)")
	ctx := context.Background()
	s, err := startGateway(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c := dialRawTo(t, s, 30*time.Second)
	c.startup(4)

	// Hold the table locked on every shard, so that the writes below are
	// all still running when the shutdown starts.
	unlock := lockTable(t, "drain.t", "EXCLUSIVE")
	const n = 300
	if _, err := c.nc.Write(insertFrames(t, "drain.t", 10, n, primitive.ConsistencyLevelQuorum)); err != nil {
		t.Fatal(err)
	}
	// Let the gateway read them, start shutting down, then let the
	// writes go on.
	time.Sleep(200 * time.Millisecond)
	shutdown := make(chan error, 1)
	go func() {
		sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		shutdown <- s.Shutdown(sctx)
	}()
	time.Sleep(300 * time.Millisecond)
	unlock()
	acked := map[int]bool{}
	for {
		f, err := c.codec.DecodeFrame(c.nc)
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("connection ended with %v, want the gateway to close it", err)
			}
			break
		}
		if _, ok := f.Body.Message.(*message.VoidResult); ok {
			acked[int(f.Header.StreamId)-10] = true
		} else {
			t.Errorf("stream %d answered %v", f.Header.StreamId, f.Body.Message)
		}
	}
	if err := <-shutdown; err != nil {
		t.Errorf("shutdown: %v", err)
	}
	if nc2, err := net.DialTimeout("tcp", s.Addr().String(), time.Second); err == nil {
		nc2.Close()
		t.Error("the gateway still accepts connections after shutting down")
	}
	// Every write was read and waiting on the locks when the shutdown
	// started: a shutdown that dropped them instead of finishing them
	// would leave them unanswered.
	t.Logf("%d of %d writes acknowledged before the connection closed", len(acked), n)
	if len(acked) != n {
		t.Errorf("%d of %d writes answered: the shutdown did not finish the requests in flight", len(acked), n)
	}

	iter := sessionAll(t, "drain").Query("SELECT k FROM t").Consistency(gocql.All).Iter()
	stored := map[int]bool{}
	var k int
	for iter.Scan(&k) {
		stored[k] = true
	}
	if err := iter.Close(); err != nil {
		t.Fatal(err)
	}
	for k := range acked {
		if !stored[k] {
			t.Errorf("write %d was acknowledged but is not on every replica", k)
		}
	}
}
