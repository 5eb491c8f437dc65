package gateway_test

import (
	"io"
	"testing"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqlpg/cqlpg/gateway"
)

// TestIdleKept: by default (no idle timeout, as Cassandra) a connection
// that sends nothing for a while is kept and served.
func TestIdleKept(t *testing.T) {
	c := dialRaw(t)
	c.startup(4)
	time.Sleep(1500 * time.Millisecond)
	c.sendMessage(4, 3, &message.Query{Query: "SELECT release_version FROM system.local",
		Options: &message.QueryOptions{Consistency: primitive.ConsistencyLevelOne}})
	if got := answers(c, 1); got["rows"] != 1 {
		t.Fatalf("a query after 1.5 s idle was answered %v", got)
	}
}

// TestIdleTimeout: with an idle timeout a connection that sends nothing
// for that long is closed, one waiting for an answer longer than that
// is not, and a driver's session goes on over new connections.
func TestIdleTimeout(t *testing.T) {
	createLimitsTable(t)
	const idle = 400 * time.Millisecond
	s := limitedGateway(t, func(c *gateway.Config) {
		c.IdleTimeout = idle
		c.WriteTimeout = 10 * time.Second
	})
	c := dialRawTo(t, s, 10*time.Second)
	c.startup(4)
	began := time.Now()
	if _, err := c.nc.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("an idle connection read %v, want it closed", err)
	}
	// The idle time counts from the gateway's last read, which came
	// before began, after the STARTUP answer was read here.
	if d := time.Since(began); d < idle-100*time.Millisecond || d > idle+time.Second {
		t.Errorf("an idle connection was closed after %v, want %v", d, idle)
	}

	// A request in flight for longer than the timeout keeps the
	// connection.
	busy := dialRawTo(t, s, 10*time.Second)
	busy.startup(4)
	unlock := lockTable(t, "limits.t", "EXCLUSIVE")
	if _, err := busy.nc.Write(insertFrames(t, "limits.t", 10, 1, primitive.ConsistencyLevelOne)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * idle)
	unlock()
	if got := answers(busy, 1); got["void"] != 1 {
		t.Fatalf("a write waiting longer than the idle timeout was answered %v", got)
	}
	began = time.Now()
	if _, err := busy.nc.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("the connection once idle read %v, want it closed", err)
	}
	t.Logf("closed %v after its last answer", time.Since(began).Round(time.Millisecond))

	// gocql reconnects: queries after idle periods succeed.
	sess := sessionOn(t, s, "limits")
	for i := range 3 {
		time.Sleep(2 * idle)
		var err error
		for try := 0; ; try++ {
			if err = sess.Query("SELECT v FROM t WHERE k = 10").Exec(); err == nil || try == 2 {
				break
			}
			t.Logf("after idle period %d: %v, retried", i, err)
			time.Sleep(idle / 2)
		}
		if err != nil {
			t.Fatalf("after idle period %d: %v", i, err)
		}
	}
}
