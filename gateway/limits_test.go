package gateway_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/frame"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
	"github.com/gocql/gocql"
	"github.com/jackc/pgx/v5"

	"github.com/cqlpg/cqlpg/gateway"
)

// limitedGateway starts a gateway of the test's own on the shared
// shards, with set applied to its configuration, and shuts it down at the
// test's end.
func limitedGateway(t *testing.T, set func(*gateway.Config)) *gateway.Server {
	t.Helper()
	s := startGatewayWith(t, set)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		s.Shutdown(ctx)
		waitAlone(t)
	})
	return s
}

// dialRawTo opens a raw connection to s, with a deadline on every
// exchange.
func dialRawTo(t *testing.T, s *gateway.Server, timeout time.Duration) *rawConn {
	t.Helper()
	nc, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(timeout))
	return &rawConn{t: t, nc: nc, codec: frame.NewCodec()}
}

// lockTable holds table locked in mode on every shard until the returned
// function is called (or the test ends): statements on it wait.
func lockTable(t *testing.T, table, mode string) (unlock func()) {
	t.Helper()
	ctx := context.Background()
	var txs []pgx.Tx
	for _, u := range shardURLs {
		conn, err := pgx.Connect(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close(ctx) })
		tx, err := conn.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, "LOCK TABLE "+table+" IN "+mode+" MODE"); err != nil {
			t.Fatal(err)
		}
		txs = append(txs, tx)
	}
	var once sync.Once
	unlock = func() {
		once.Do(func() {
			for _, tx := range txs {
				tx.Rollback(ctx)
			}
		})
	}
	t.Cleanup(unlock)
	return unlock
}

// insertFrames encodes n pipelined INSERTs into table, on streams from
// first: one text with bound values, as drivers send, so that the
// statement cache holds one statement however many are sent.
func insertFrames(t *testing.T, table string, first, n int, level primitive.ConsistencyLevel) []byte {
	t.Helper()
	var b bytes.Buffer
	codec := frame.NewCodec()
	for i := range n {
		v := binary.BigEndian.AppendUint32(nil, uint32(i))
		q := &message.Query{Query: "INSERT INTO " + table + " (k, v) VALUES (?, ?)",
			Options: &message.QueryOptions{Consistency: level,
				PositionalValues: []*primitive.Value{primitive.NewValue(v), primitive.NewValue(v)}}}
		if err := codec.EncodeFrame(frame.NewFrame(4, int16(first+i), q), &b); err != nil {
			t.Fatal(err)
		}
	}
	return b.Bytes()
}

// answers counts the answers to n requests on c by kind: "void" for a
// RESULT, else the error's code.
func answers(c *rawConn, n int) map[string]int {
	c.t.Helper()
	got := map[string]int{}
	for range n {
		switch m := c.receive().Body.Message.(type) {
		case *message.VoidResult:
			got["void"]++
		case *message.RowsResult:
			got["rows"]++
		case message.Error:
			got[fmt.Sprintf("0x%04x", uint32(m.GetErrorCode()))]++
			if o, ok := m.(*message.Overloaded); ok && !strings.Contains(o.ErrorMessage, "overloaded") {
				c.t.Errorf("Overloaded answered with %q", o.ErrorMessage)
			}
		default:
			c.t.Fatalf("unexpected answer %T", m)
		}
	}
	return got
}

const overloadedCode = "0x1001"

func createLimitsTable(t *testing.T) {
	t.Helper()
	exec(t, session(t, ""), "CREATE KEYSPACE IF NOT EXISTS limits WITH replication = "+
		"{'class': 'SimpleStrategy', 'replication_factor': 2}",
		"CREATE TABLE IF NOT EXISTS limits.t (k int PRIMARY KEY, v int)",
		"CREATE TABLE IF NOT EXISTS limits.big (k int PRIMARY KEY, v blob)")
}

// TestLimitRequestsPerConn: past MaxRequestsPerConn requests in flight on
// a connection, the next are answered Overloaded at once; those admitted
// complete, and other connections are served meanwhile.
func TestLimitRequestsPerConn(t *testing.T) {
	createLimitsTable(t)
	s := limitedGateway(t, func(c *gateway.Config) {
		c.MaxRequestsPerConn = 10
		c.WriteTimeout = 20 * time.Second
	})
	unlock := lockTable(t, "limits.t", "EXCLUSIVE")
	c := dialRawTo(t, s, 30*time.Second)
	c.startup(4)
	if _, err := c.nc.Write(insertFrames(t, "limits.t", 100, 30, primitive.ConsistencyLevelQuorum)); err != nil {
		t.Fatal(err)
	}
	// The 10 admitted wait on the lock: the 20 others are answered first.
	if got := answers(c, 20); got[overloadedCode] != 20 {
		t.Fatalf("with 10 writes waiting, 20 more were answered %v, want 20 Overloaded", got)
	}
	other := dialRawTo(t, s, 30*time.Second)
	other.startup(4)
	other.sendMessage(4, 3, &message.Query{Query: "SELECT release_version FROM system.local",
		Options: &message.QueryOptions{Consistency: primitive.ConsistencyLevelOne}})
	if got := answers(other, 1); got["rows"] != 1 {
		t.Fatalf("another connection's query was answered %v", got)
	}
	unlock()
	if got := answers(c, 10); got["void"] != 10 {
		t.Fatalf("the 10 admitted writes were answered %v, want 10 RESULTs", got)
	}
	// The places are given back: the connection takes 10 again.
	if _, err := c.nc.Write(insertFrames(t, "limits.t", 200, 10, primitive.ConsistencyLevelQuorum)); err != nil {
		t.Fatal(err)
	}
	if got := answers(c, 10); got["void"] != 10 {
		t.Fatalf("10 writes after the first were answered %v", got)
	}
}

// TestLimitOverloadedGocql: gocql gets Overloaded, with its code, as the
// error of the requests past the limit, and the admitted ones succeed.
func TestLimitOverloadedGocql(t *testing.T) {
	createLimitsTable(t)
	s := limitedGateway(t, func(c *gateway.Config) {
		c.MaxRequestsPerConn = 10
		c.WriteTimeout = 20 * time.Second
	})
	cfg := clusterConfig(s, "limits")
	cfg.NumConns = 1
	sess, err := cfg.CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	stmt := "INSERT INTO t (k, v) VALUES (?, ?)"
	if err := sess.Query(stmt, 0, 0).Exec(); err != nil { // prepared before the lock
		t.Fatal(err)
	}
	unlock := lockTable(t, "limits.t", "EXCLUSIVE")
	errs := make(chan error, 30)
	for i := range 30 {
		go func() { errs <- sess.Query(stmt, i, i).Exec() }()
	}
	// The 10 admitted wait on the lock: the 20 others fail first.
	for range 20 {
		err := <-errs
		var re gocql.RequestError
		if !errors.As(err, &re) || re.Code() != gocql.ErrCodeOverloaded {
			t.Fatalf("a write past the limit failed with %v, want Overloaded", err)
		}
	}
	unlock()
	for range 10 {
		if err := <-errs; err != nil {
			t.Fatalf("an admitted write: %v", err)
		}
	}
}

// TestLimitRequestsTotal: MaxRequests bounds the requests in flight on
// every connection together.
func TestLimitRequestsTotal(t *testing.T) {
	createLimitsTable(t)
	s := limitedGateway(t, func(c *gateway.Config) {
		c.MaxRequests = 12
		c.WriteTimeout = 20 * time.Second
	})
	unlock := lockTable(t, "limits.t", "EXCLUSIVE")
	a, b := dialRawTo(t, s, 30*time.Second), dialRawTo(t, s, 30*time.Second)
	a.startup(4)
	b.startup(4)
	if _, err := a.nc.Write(insertFrames(t, "limits.t", 100, 8, primitive.ConsistencyLevelQuorum)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // a's 8 are read and waiting
	if _, err := b.nc.Write(insertFrames(t, "limits.t", 100, 8, primitive.ConsistencyLevelQuorum)); err != nil {
		t.Fatal(err)
	}
	if got := answers(b, 4); got[overloadedCode] != 4 {
		t.Fatalf("with 12 of 12 places taken, 4 more were answered %v, want Overloaded", got)
	}
	unlock()
	if got := answers(a, 8); got["void"] != 8 {
		t.Fatalf("a's writes were answered %v", got)
	}
	if got := answers(b, 4); got["void"] != 4 {
		t.Fatalf("b's admitted writes were answered %v", got)
	}
}

// TestLimitConnections: a connection past MaxConnections has its OPTIONS
// answered and its STARTUP answered Overloaded, and is closed; gocql's and
// the Python driver's sessions fail to connect while the gateway is full,
// with the reason, and connect once a connection has gone.
func TestLimitConnections(t *testing.T) {
	s := limitedGateway(t, func(c *gateway.Config) { c.MaxConnections = 3 })
	var held []*rawConn
	for range 3 {
		c := dialRawTo(t, s, 10*time.Second)
		c.startup(4)
		held = append(held, c)
	}
	for _, v := range []primitive.ProtocolVersion{3, 4, 5} {
		c := dialRawTo(t, s, 10*time.Second)
		c.sendMessage(v, 1, &message.Options{})
		if _, ok := c.receive().Body.Message.(*message.Supported); !ok {
			t.Fatalf("v%d: OPTIONS past the limit not answered SUPPORTED", v)
		}
		c.sendMessage(v, 2, &message.Startup{Options: map[string]string{"CQL_VERSION": "3.0.0"}})
		f := c.receive()
		o, ok := f.Body.Message.(*message.Overloaded)
		if !ok || f.Header.StreamId != 2 || f.Header.Version != v {
			t.Fatalf("v%d: STARTUP past the limit answered %v on stream %d, version %d", v, f.Body.Message, f.Header.StreamId, f.Header.Version)
		}
		t.Logf("v%d: %s", v, o.ErrorMessage)
		if _, err := c.nc.Read(make([]byte, 1)); err != io.EOF {
			t.Fatalf("v%d: the refused connection was not closed: %v", v, err)
		}
	}
	cfg := clusterConfig(s, "")
	cfg.ConnectTimeout, cfg.Timeout = 2*time.Second, 2*time.Second
	if sess, err := cfg.CreateSession(); err == nil {
		sess.Close()
		t.Fatal("gocql connected to a full gateway")
	} else if !strings.Contains(err.Error(), "overloaded") {
		t.Errorf("gocql on a full gateway: %v, want the reason", err)
	} else {
		t.Logf("gocql on a full gateway: %v", err)
	}
	if err := installPythonDriver(); err != nil {
		t.Fatal(err)
	}
	host, port, _ := net.SplitHostPort(s.Addr().String())
	var py struct {
		Connected bool
		Error     string
	}
	runPython(t, &py, "testdata/python/overloaded.py", host, port)
	if py.Connected || !strings.Contains(py.Error, "overloaded") {
		t.Fatalf("the Python driver on a full gateway: %+v, want its error to name the overload", py)
	}
	t.Logf("the Python driver on a full gateway: %s", py.Error)
	for _, c := range held {
		c.nc.Close()
	}
	time.Sleep(100 * time.Millisecond)
	py.Connected, py.Error = false, ""
	runPython(t, &py, "testdata/python/overloaded.py", host, port)
	if !py.Connected {
		t.Fatalf("the Python driver once the gateway has room: %s", py.Error)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		sess, err := cfg.CreateSession()
		if err == nil {
			var v string
			err = sess.Query("SELECT release_version FROM system.local").Scan(&v)
			sess.Close()
			if err == nil {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("gocql still cannot connect once the gateway has room: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// memStats samples the process's live heap (in use after a collection,
// so that garbage not yet collected does not count) and goroutines until
// stop is closed, and returns their peaks.
func memStats(stop <-chan struct{}) (peakHeap *atomic.Uint64, peakG *atomic.Int64, done <-chan struct{}) {
	peakHeap, peakG = new(atomic.Uint64), new(atomic.Int64)
	d := make(chan struct{})
	go func() {
		defer close(d)
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			if h := heapInuse(); h > peakHeap.Load() {
				peakHeap.Store(h)
			}
			if g := int64(runtime.NumGoroutine()); g > peakG.Load() {
				peakG.Store(g)
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	return peakHeap, peakG, d
}

// resetPeakRSS resets the process's peak resident memory (VmHWM) and
// returns its resident memory now (VmRSS), in bytes.
func resetPeakRSS(t *testing.T) int64 {
	t.Helper()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Fatalf("resetting the peak resident memory: %v", err)
	}
	return procStatus(t, "VmRSS:")
}

// peakRSS returns the process's peak resident memory since the last
// resetPeakRSS, in bytes.
func peakRSS(t *testing.T) int64 { return procStatus(t, "VmHWM:") }

// procStatus reads a size in kB from /proc/self/status.
func procStatus(t *testing.T, field string) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("%s %q: %v", field, rest, err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no %s in /proc/self/status", field)
	return 0
}

// heapInuse returns the heap in use after a collection.
func heapInuse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// TestFloodOverloaded floods a gateway with far more pipelined requests
// than its limits over many connections: it answers every one, many with
// Overloaded, its heap stays within a bound set by the limits and not by
// the flood, and once the flood stops a driver's query succeeds at once.
func TestFloodOverloaded(t *testing.T) {
	createLimitsTable(t)
	const (
		conns        = 48
		perConn      = 4000
		perConnLimit = 64
		maxRequests  = 1024
		// The bound on the live heap the flood may add, set by the limits
		// and not by the flood (4 times the requests add about 10% more):
		// each request in flight holds a pooled body and answer of 4 KiB
		// and its execution, some 12 KiB in all measured, allowed 24 here;
		// each connection its read and write buffers of 64 KiB and up to
		// 256 Overloaded answers queued of ~100 bytes; and the runtime its
		// own, 16 MiB.
		heapBound = maxRequests*24<<10 + conns*256<<10 + 16<<20
	)
	s := limitedGateway(t, func(c *gateway.Config) {
		c.MaxConnections = 64
		c.MaxRequestsPerConn = perConnLimit
		c.MaxRequests = maxRequests
	})
	frames := insertFrames(t, "limits.t", 0, perConn, primitive.ConsistencyLevelOne)
	var clients []*rawConn
	for range conns {
		c := dialRawTo(t, s, 60*time.Second)
		c.startup(4)
		clients = append(clients, c)
	}
	before := heapInuse()
	rssBefore := resetPeakRSS(t)
	stop := make(chan struct{})
	peakHeap, peakG, sampled := memStats(stop)
	gBefore := runtime.NumGoroutine()
	var (
		mu    sync.Mutex
		total = map[string]int{}
		wg    sync.WaitGroup
	)
	began := time.Now()
	for _, c := range clients {
		wg.Go(func() {
			go c.nc.Write(frames) // all at once, however fast answers come
			got := countAnswers(t, c.nc, perConn)
			mu.Lock()
			for k, n := range got {
				total[k] += n
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	flooded := time.Since(began)
	close(stop)
	<-sampled
	recovered := time.Now()
	if err := sessionOn(t, s, "").Query("SELECT v FROM limits.t WHERE k = 1").Scan(new(int)); err != nil && err != gocql.ErrNotFound {
		t.Fatalf("a query after the flood: %v", err)
	}
	recovery := time.Since(recovered)
	grown := int64(peakHeap.Load()) - int64(before)
	t.Logf("%d connections x %d requests in %v: %v; heap %d MiB before, peak %d MiB (+%d MiB); goroutines %d before, peak %d; "+
		"a new session's first query %v after", conns, perConn, flooded.Round(time.Millisecond), total, before>>20,
		peakHeap.Load()>>20, grown>>20, gBefore, peakG.Load(), recovery.Round(time.Millisecond))
	n := 0
	for _, k := range total {
		n += k
	}
	if n != conns*perConn {
		t.Errorf("%d answers, want %d", n, conns*perConn)
	}
	if total[overloadedCode] == 0 {
		t.Error("no request was answered Overloaded")
	}
	if total["void"] == 0 {
		t.Error("no write succeeded")
	}
	if gateway.RaceEnabled {
		t.Log("memory and goroutine bounds not checked: the race detector multiplies both")
		return
	}
	if grown > heapBound {
		t.Errorf("the heap grew by %d MiB, over the bound of %d MiB", grown>>20, heapBound>>20)
	}
	// The process's resident memory: the heap may reach twice what is
	// live between collections, plus the runtime's stacks and buffers.
	rssGrown := peakRSS(t) - rssBefore
	t.Logf("resident memory %d MiB before, peak +%d MiB", rssBefore>>20, rssGrown>>20)
	if rssBound := int64(2*heapBound + 64<<20); rssGrown > rssBound {
		t.Errorf("resident memory grew by %d MiB, over the bound of %d MiB", rssGrown>>20, rssBound>>20)
	}
	// A handler per request in flight and up to 64 idle per connection
	// (conn.handleLoop), a reader and a writer per connection, and the
	// test's own two per connection.
	if g, bound := peakG.Load()-int64(gBefore), int64(maxRequests+conns*(64+4)); g > bound {
		t.Errorf("%d goroutines more at the peak, over the bound of %d", g, bound)
	}
}

// countAnswers reads n answers from nc and counts them as answers does,
// from their headers and error codes alone: decoding each fully would
// make garbage enough to hide the gateway's own use of the heap.
func countAnswers(t *testing.T, nc net.Conn, n int) map[string]int {
	got := map[string]int{}
	br := bufio.NewReaderSize(nc, 64<<10)
	var hdr [9]byte
	body := make([]byte, 0, 4096)
	for range n {
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			t.Errorf("read an answer: %v", err)
			return got
		}
		body = slices.Grow(body[:0], int(binary.BigEndian.Uint32(hdr[5:])))[:binary.BigEndian.Uint32(hdr[5:])]
		if _, err := io.ReadFull(br, body); err != nil {
			t.Errorf("read an answer: %v", err)
			return got
		}
		switch {
		case hdr[4] == 0x08 && len(body) >= 4 && binary.BigEndian.Uint32(body) == 1:
			got["void"]++
		case hdr[4] == 0x08:
			got["rows"]++
		case hdr[4] == 0x00 && len(body) >= 4:
			got[fmt.Sprintf("0x%04x", binary.BigEndian.Uint32(body))]++
		default:
			t.Errorf("unexpected answer of opcode %#x", hdr[4])
			return got
		}
	}
	return got
}

// TestSlowClient: a client that sends requests without end and never
// reads its answers holds the gateway's memory and goroutines within the
// per-connection limit, is no longer read from once its answers back up,
// and the gateway serves other connections meanwhile; once it leaves,
// what it held is let go.
func TestSlowClient(t *testing.T) {
	createLimitsTable(t)
	const (
		valueSize = 16 << 10
		perConn   = 1024 // the default
		// Answers of 16 KiB waiting: the requests in flight (each in a
		// goroutine of sendAsync's once the writer's queue is full) and
		// the 256 of the writer's queue, in pooled buffers grown to hold
		// them (20 KiB), with their requests and executions; as many
		// again of those written last, back in the buffer pool until the
		// next collection; and room for the runtime's own. Measured:
		// 12-59 MiB, whether 130,000 or 218,000 requests were sent.
		heapBound = (perConn+256)*3*valueSize + 16<<20
	)
	s := limitedGateway(t, func(c *gateway.Config) {})
	sess := sessionOn(t, s, "limits")
	if err := sess.Query("INSERT INTO big (k, v) VALUES (1, ?)", make([]byte, valueSize)).Exec(); err != nil {
		t.Fatal(err)
	}
	c := dialRawTo(t, s, time.Minute)
	c.nc.(*net.TCPConn).SetReadBuffer(4096)
	c.startup(4)
	c.sendMessage(4, 3, &message.Register{EventTypes: []primitive.EventType{primitive.EventTypeSchemaChange}})
	if _, ok := c.receive().Body.Message.(*message.Ready); !ok {
		t.Fatal("REGISTER not answered with READY")
	}
	c.sendMessage(4, 3, &message.Prepare{Query: "SELECT v FROM limits.big WHERE k = 1"})
	prepared, ok := c.receive().Body.Message.(*message.PreparedResult)
	if !ok {
		t.Fatal("PREPARE not answered with its id")
	}
	var one bytes.Buffer
	codec := frame.NewCodec()
	ex := &message.Execute{QueryId: prepared.PreparedQueryId,
		Options: &message.QueryOptions{Consistency: primitive.ConsistencyLevelOne, SkipMetadata: true}}
	for i := range 1000 {
		if err := codec.EncodeFrame(frame.NewFrame(4, int16(10+i), ex), &one); err != nil {
			t.Fatal(err)
		}
	}
	before := heapInuse()
	gBefore := runtime.NumGoroutine()
	stop := make(chan struct{})
	peakHeap, peakG, sampled := memStats(stop)
	// Send until the gateway stops reading: the writes then time out.
	sent := 0
	for {
		c.nc.SetWriteDeadline(time.Now().Add(2 * time.Second))
		if _, err := c.nc.Write(one.Bytes()); err != nil {
			if !isTimeout(err) {
				t.Fatal(err)
			}
			break
		}
		sent += 1000
		if sent > 10_000_000 {
			t.Fatal("the gateway reads a client that never reads without end")
		}
	}
	// Other connections are served meanwhile.
	served := time.Now()
	for range 20 {
		var v []byte
		if err := sess.Query("SELECT v FROM big WHERE k = 1").Scan(&v); err != nil || len(v) != valueSize {
			t.Fatalf("another connection's read: %d bytes, %v", len(v), err)
		}
	}
	servedIn := time.Since(served)
	// A schema change, whose event the slow client registered for and
	// cannot take, and a new connection.
	exec(t, sess, "DROP TABLE IF EXISTS slow_ddl", "CREATE TABLE slow_ddl (k int PRIMARY KEY)")
	if s2, err := clusterConfig(s, "limits").CreateSession(); err != nil {
		t.Fatalf("a new connection while the slow client waits: %v", err)
	} else {
		s2.Close()
	}
	close(stop)
	<-sampled
	grown := int64(peakHeap.Load()) - int64(before)
	gGrown := peakG.Load() - int64(gBefore)
	t.Logf("sent %d requests of which answers of %d KiB are never read before the gateway stopped reading; heap +%d MiB "+
		"(bound %d MiB), goroutines +%d; 20 reads on another connection meanwhile in %v",
		sent, valueSize>>10, grown>>20, heapBound>>20, gGrown, servedIn.Round(time.Millisecond))
	if grown > heapBound {
		t.Errorf("the heap grew by %d MiB, over the bound of %d MiB", grown>>20, heapBound>>20)
	}
	if gGrown > perConn+64 {
		t.Errorf("%d goroutines more, over the bound of %d", gGrown, perConn+64)
	}
	// Once the client leaves, its answers and goroutines go.
	c.nc.Close()
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > gBefore+20 {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines left after the slow client closed, %d before it sent", runtime.NumGoroutine(), gBefore)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// isTimeout reports whether err is a deadline passing.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
