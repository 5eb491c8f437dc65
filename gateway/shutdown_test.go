package gateway_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/frame"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
	"github.com/gocql/gocql"
	"github.com/jackc/pgx/v5"
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
	nc, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(30 * time.Second))
	c := &rawConn{t: t, nc: nc, codec: frame.NewCodec()}
	c.startup(4)

	// Hold the table locked on every shard, so that the writes below are
	// all still running when the shutdown starts.
	var locks []pgx.Tx
	for _, u := range shardURLs {
		conn, err := pgx.Connect(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		tx, err := conn.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, "LOCK TABLE drain.t IN EXCLUSIVE MODE"); err != nil {
			t.Fatal(err)
		}
		locks = append(locks, tx)
	}
	const n = 300
	var frames bytes.Buffer
	for i := range n {
		q := &message.Query{Query: fmt.Sprintf("INSERT INTO drain.t (k, v) VALUES (%d, %d)", i, i),
			Options: &message.QueryOptions{Consistency: primitive.ConsistencyLevelQuorum}}
		if err := c.codec.EncodeFrame(frame.NewFrame(4, int16(10+i), q), &frames); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := nc.Write(frames.Bytes()); err != nil {
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
	for _, tx := range locks {
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	acked := map[int]bool{}
	for {
		f, err := c.codec.DecodeFrame(nc)
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
