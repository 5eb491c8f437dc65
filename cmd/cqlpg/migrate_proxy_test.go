package main_test

import (
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocql/gocql"
)

// proxySession connects to a cqlpg serve alone, with or without client
// timestamps (without, the gateway gives each write its own).
func proxySession(t testing.TB, addr string, clientTimestamps bool) *gocql.Session {
	t.Helper()
	host, port, _ := net.SplitHostPort(addr)
	cc := gocql.NewCluster(host)
	cc.Port, _ = strconv.Atoi(port)
	// Other gateways on the target's shards (the copy's) share this
	// host's address: their comings and goings are not this one's.
	cc.DisableInitialHostLookup = true
	cc.Events.DisableTopologyEvents, cc.Events.DisableNodeStatusEvents = true, true
	cc.DefaultTimestamp = clientTimestamps
	cc.Timeout = 20 * time.Second
	s, err := cc.CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// metric reads one sample of a gateway's /metrics.
func metric(t *testing.T, httpPort int, sample string) float64 {
	t.Helper()
	resp, err := http.Get("http://127.0.0.1:" + strconv.Itoa(httpPort) + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(sample) + ` (\S+)$`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("/metrics has no %s", sample)
	}
	f, _ := strconv.ParseFloat(string(m[1]), 64)
	return f
}

// proxyRow is what a workload last wrote to a row and had acknowledged.
type proxyRow struct {
	deleted bool
	v       string
	n       int64
}

// proxyWorkload writes through the gateway until stop is closed: inserts
// (some with TTLs), updates with TTLs and deletes of the copied rows, and
// logged batches over two partitions. Worker w owns the copied rows whose
// k % workers == w and partitions 1000+w*1000 on, so that its last
// acknowledged write to a row is the row's state.
func proxyWorkload(t *testing.T, sessions []*gocql.Session, stop <-chan struct{}) map[[2]int]proxyRow {
	const workers = 4
	var (
		mu    sync.Mutex
		model = map[[2]int]proxyRow{}
		wg    sync.WaitGroup
	)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := sessions[w%len(sessions)]
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			own := map[[2]int]proxyRow{}
			for i := 0; ; i++ {
				select {
				case <-stop:
					if i >= 200 {
						mu.Lock()
						for k, r := range own {
							model[k] = r
						}
						mu.Unlock()
						return
					}
				default:
				}
				copied := [2]int{rng.IntN(50)*workers + w, rng.IntN(10)}
				fresh := [2]int{1000 + w*1000 + i/10, i % 10}
				v, n := fmt.Sprintf("w%d-%d", w, i), int64(w<<32|i)
				var err error
				var done map[[2]int]proxyRow
				switch i % 5 {
				case 0:
					err = s.Query("INSERT INTO migproxy.t (k, c, v, n) VALUES (?, ?, ?, ?)", fresh[0], fresh[1], v, n).Exec()
					done = map[[2]int]proxyRow{fresh: {v: v, n: n}}
				case 1:
					err = s.Query("INSERT INTO migproxy.t (k, c, v, n) VALUES (?, ?, ?, ?) USING TTL 86400", fresh[0], fresh[1], v, n).Exec()
					done = map[[2]int]proxyRow{fresh: {v: v, n: n}}
				case 2:
					err = s.Query("UPDATE migproxy.t USING TTL 50000 SET v = ?, n = ? WHERE k = ? AND c = ?", v, n, copied[0], copied[1]).Exec()
					done = map[[2]int]proxyRow{copied: {v: v, n: n}}
				case 3:
					err = s.Query("DELETE FROM migproxy.t WHERE k = ? AND c = ?", copied[0], copied[1]).Exec()
					done = map[[2]int]proxyRow{copied: {deleted: true}}
				case 4:
					other := [2]int{fresh[0] + 500, fresh[1]}
					b := s.NewBatch(gocql.LoggedBatch)
					b.Query("INSERT INTO migproxy.t (k, c, v, n) VALUES (?, ?, ?, ?)", fresh[0], fresh[1], v, n)
					b.Query("INSERT INTO migproxy.t (k, c, v, n) VALUES (?, ?, ?, ?) USING TTL 90000", other[0], other[1], v, n)
					err = s.ExecuteBatch(b)
					done = map[[2]int]proxyRow{fresh: {v: v, n: n}, other: {v: v, n: n}}
				}
				if err != nil {
					t.Errorf("worker %d, write %d: %v", w, i, err)
					return
				}
				for k, r := range done {
					own[k] = r
				}
			}
		}()
	}
	wg.Wait()
	return model
}

// checkAcknowledged checks that each row the workload wrote holds what
// its last acknowledged write left, on the cluster at addr.
func checkAcknowledged(t *testing.T, addr, name string, model map[[2]int]proxyRow) {
	t.Helper()
	s := proxySession(t, addr, true)
	for key, want := range model {
		var v *string
		var n *int64
		err := s.Query("SELECT v, n FROM migproxy.t WHERE k = ? AND c = ?", key[0], key[1]).Scan(&v, &n)
		switch {
		case want.deleted && err == gocql.ErrNotFound:
		case want.deleted && err == nil && v == nil && n == nil:
			// The row's key lives on (a copied row with its marker older
			// than the delete cannot: the delete removes the row whole).
			t.Errorf("%s: row %v was deleted, and its key is still there", name, key)
		case err != nil:
			t.Errorf("%s: row %v: %v", name, key, err)
		case want.deleted:
			t.Errorf("%s: row %v was deleted, and holds v %v", name, key, deref(v))
		case v == nil || *v != want.v || n == nil || *n != want.n:
			t.Errorf("%s: row %v holds v %v, n %v; the last acknowledged write wrote %s, %d", name, key, deref(v), deref(n), want.v, want.n)
		}
	}
}

// proxyCells reads every cell of migproxy.t with its write time and TTL,
// by row.
func proxyCells(t *testing.T, addr string) map[string][]int64 {
	t.Helper()
	s := proxySession(t, addr, true)
	iter := s.Query("SELECT k, c, v, WRITETIME(v), TTL(v), n, WRITETIME(n), TTL(n) FROM migproxy.t").PageSize(5000).Iter()
	out := map[string][]int64{}
	for {
		var k, c int
		var v *string
		var vwt, n, nwt *int64
		var vttl, nttl *int
		if !iter.Scan(&k, &c, &v, &vwt, &vttl, &n, &nwt, &nttl) {
			break
		}
		num := func(p *int64) int64 {
			if p == nil {
				return -1
			}
			return *p
		}
		ttl := func(p *int) int64 {
			if p == nil {
				return -1
			}
			return int64(*p)
		}
		out[fmt.Sprintf("%d,%d,%s", k, c, deref(v))] = []int64{num(vwt), ttl(vttl), num(n), num(nwt), ttl(nttl)}
	}
	if err := iter.Close(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestMigrateProxy runs a migration's sequence against a live origin
// (another cqlpg): the schema; cqlpg serve --origin with a workload of
// inserts, TTL updates, deletes and batches through it, half of it
// without client timestamps, while migrate copy runs; then migrate diff
// finds nothing, every cell has the same write time and TTL on both
// sides, and every acknowledged write is on both. Then the proxy reads
// from both (mirrored reads all match) and from the target, and runs
// the writes that cannot be given a timestamp (counters, LWT) and DDL on
// both sides.
func TestMigrateProxy(t *testing.T) {
	e := sharedBulkEnv(t)
	bin := buildCqlpg(t)
	e.exec(t, "CREATE KEYSPACE IF NOT EXISTS migproxy WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE IF NOT EXISTS migproxy.t (k int, c int, v text, n bigint, s text STATIC, tags set<text>, PRIMARY KEY (k, c))",
		"CREATE TABLE IF NOT EXISTS migproxy.hits (k int PRIMARY KEY, n counter)")
	writeCopyRows(t, e, "migproxy.t", 2000)
	dst := startMigrateTarget(t)
	base := []string{"--origin", e.addr, "--shard", dst.shard}
	if out, errOut, code := runCqlpg(bin, append([]string{"migrate", "schema", "--keyspaces", "migproxy"}, base...)...); code != 0 {
		t.Fatalf("schema: exit %d, %q %q", code, out, errOut)
	}

	// Dual writes, reads from the origin, during a throttled copy.
	p := startServeWith(t, bin, base...)
	proxy := "127.0.0.1:" + strconv.Itoa(p.cqlPort)
	sessions := []*gocql.Session{proxySession(t, proxy, true), proxySession(t, proxy, false)}
	stop := make(chan struct{})
	var model map[[2]int]proxyRow
	worked := make(chan struct{})
	go func() { model = proxyWorkload(t, sessions, stop); close(worked) }()
	out, errOut, code := runCqlpg(bin, append([]string{"migrate", "copy", "migproxy.t", "--splits", "32", "--page-size", "100",
		"--rate", "1000"}, base...)...)
	close(stop)
	<-worked
	if code != 0 || !strings.HasPrefix(out, "copied ") {
		t.Fatalf("copy: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if t.Failed() {
		t.Fatalf("the proxy's log:\n%s", p.output.String())
	}
	// A counter table while dual writes run: refused, naming the gateway.
	out, errOut, code = runCqlpg(bin, append([]string{"migrate", "copy", "migproxy.hits"}, base...)...)
	if code != 1 || !strings.Contains(errOut, "table migproxy.hits has counters, and dual writes run ("+proxy+" from "+e.addr+")") ||
		!strings.Contains(errOut, "nothing was copied") {
		t.Errorf("copy of a counter table during dual writes: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	for _, side := range []string{"origin", "target"} {
		if n := metric(t, p.httpPort, `cqlpg_dual_write_failures_total{side="`+side+`"}`); n != 0 {
			t.Errorf("%v writes failed on the %s\n%s", n, side, p.output.String())
		}
	}
	out, errOut, code = runCqlpg(bin, append([]string{"migrate", "diff", "migproxy.t", "--splits", "32"}, base...)...)
	if code != 0 || !strings.Contains(out, " 0 missing, 0 extra, 0 differ") {
		t.Fatalf("diff after the copy and the dual writes: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	checkAcknowledged(t, e.addr, "origin", model)
	checkAcknowledged(t, dst.addr, "target", model)
	want, got := proxyCells(t, e.addr), proxyCells(t, dst.addr)
	if len(want) < 2000 || len(got) != len(want) {
		t.Errorf("the origin has %d rows, the target %d", len(want), len(got))
	}
	differ := 0
	for key, w := range want {
		g, ok := got[key]
		// Write times equal; TTLs equal but for the seconds between the
		// two reads, and the second each cluster's clock turned at the
		// write.
		if !ok || g[0] != w[0] || g[2] != w[2] || g[3] != w[3] || (g[1] < 0) != (w[1] < 0) || (g[4] < 0) != (w[4] < 0) ||
			abs(w[1]-g[1]) > 5 || abs(w[4]-g[4]) > 5 {
			if differ++; differ <= 5 {
				t.Errorf("row %s: origin %v, target %v", key, w, g)
			}
		}
	}

	// Reads from both: the origin answers, and the target's answers match.
	for _, s := range sessions {
		s.Close()
	}
	p.stop(t)
	p = startServeWith(t, bin, append(base, "--read-from", "both")...)
	s := proxySession(t, "127.0.0.1:"+strconv.Itoa(p.cqlPort), true)
	for k := range 40 {
		iter := s.Query("SELECT k, c, v, n FROM migproxy.t WHERE k = ?", k).Iter()
		if _, err := iter.SliceMap(); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for metric(t, p.httpPort, `cqlpg_dual_reads_total{outcome="match"}`) < 40 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	for outcome, want := range map[string]float64{"match": 40, "mismatch": 0, "failed": 0} {
		if n := metric(t, p.httpPort, `cqlpg_dual_reads_total{outcome="`+outcome+`"}`); n != want {
			t.Errorf("mirrored reads %s: %v, want %v", outcome, n, want)
		}
	}

	// Reads from the target; counters, LWT and DDL on both sides.
	s.Close()
	p.stop(t)
	p = startServeWith(t, bin, append(base, "--read-from", "target")...)
	s = proxySession(t, "127.0.0.1:"+strconv.Itoa(p.cqlPort), false)
	for range 3 {
		if err := s.Query("UPDATE migproxy.hits SET n = n + 2 WHERE k = 7").Exec(); err != nil {
			t.Fatal(err)
		}
	}
	applied, err := s.Query("INSERT INTO migproxy.t (k, c, v) VALUES (77777, 1, 'lwt') IF NOT EXISTS").ScanCAS()
	if err != nil || !applied {
		t.Fatalf("LWT through the proxy: applied %v, %v", applied, err)
	}
	if err := s.Query("CREATE TABLE migproxy.later (k int PRIMARY KEY, v text)").Exec(); err != nil {
		t.Fatal(err)
	}
	if err := s.Query("INSERT INTO migproxy.later (k, v) VALUES (1, 'x')").Exec(); err != nil {
		t.Fatal(err)
	}
	for name, addr := range map[string]string{"origin": e.addr, "target": dst.addr} {
		d := proxySession(t, addr, true)
		var n int64
		var v string
		if err := d.Query("SELECT n FROM migproxy.hits WHERE k = 7").Scan(&n); err != nil || n != 6 {
			t.Errorf("%s: counter %d, %v; want 6", name, n, err)
		}
		if err := d.Query("SELECT v FROM migproxy.t WHERE k = 77777 AND c = 1").Scan(&v); err != nil || v != "lwt" {
			t.Errorf("%s: LWT row %q, %v", name, v, err)
		}
		if err := d.Query("SELECT v FROM migproxy.later WHERE k = 1").Scan(&v); err != nil || v != "x" {
			t.Errorf("%s: table made through the proxy: %q, %v", name, v, err)
		}
	}
	var v string
	if err := s.Query("SELECT v FROM migproxy.t WHERE k = 77777 AND c = 1").Scan(&v); err != nil || v != "lwt" {
		t.Errorf("read from the target: %q, %v", v, err)
	}
}

func abs(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

// originLink is a stand-in for an origin the test can take down: it
// forwards connections to a real cluster until cut, then refuses them,
// and with v4Only it refuses protocol v5 as Cassandra 3.11 does.
type originLink struct {
	ln     net.Listener
	to     string
	mu     sync.Mutex
	down   bool
	v4Only bool
	// stall accepts connections and never answers them.
	stall bool
	open  []net.Conn
}

func startOriginLink(t *testing.T, to string) *originLink {
	o := &originLink{to: to}
	o.ln = serveConns(t, o.serve)
	t.Cleanup(o.cut)
	return o
}

// serveConns listens on a port of the loopback address and serves each
// connection with serve, until the test ends.
func serveConns(t *testing.T, serve func(net.Conn)) net.Listener {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go serve(c)
		}
	}()
	return ln
}

func (o *originLink) addr() string { return o.ln.Addr().String() }

func (o *originLink) serve(c net.Conn) {
	o.mu.Lock()
	down, v4Only, stall := o.down, o.v4Only, o.stall
	if stall {
		o.open = append(o.open, c)
	}
	o.mu.Unlock()
	if down {
		c.Close()
		return
	}
	if stall {
		io.Copy(io.Discard, c)
		return
	}
	var head [9]byte
	if _, err := io.ReadFull(c, head[:]); err != nil {
		c.Close()
		return
	}
	if v4Only && head[0] == 5 {
		refuseV5(c, head[:])
		c.Close()
		return
	}
	up, err := net.Dial("tcp", o.to)
	if err != nil {
		c.Close()
		return
	}
	o.mu.Lock()
	if o.down { // cut meanwhile
		o.mu.Unlock()
		c.Close()
		up.Close()
		return
	}
	o.open = append(o.open, c, up)
	o.mu.Unlock()
	up.Write(head[:])
	go func() { io.Copy(up, c); up.Close() }()
	io.Copy(c, up)
	c.Close()
}

// refuseV5 answers a v5 request, whose header is head, as Cassandra
// 3.11 does: a protocol error, at v4.
func refuseV5(c net.Conn, head []byte) {
	msg := "Invalid or unsupported protocol version (5); supported versions are (3/v3, 4/v4, 5/v5-beta)"
	body := append([]byte{0, 0, 0, 0x0a, byte(len(msg) >> 8), byte(len(msg))}, msg...)
	c.Write(frameOf([]byte{0x84, 0, head[2], head[3], 0, 0, 0, 0, 0}, body))
}

// cut takes the origin down: open connections end, new ones are refused.
func (o *originLink) cut() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.down = true
	for _, c := range o.open {
		c.Close()
	}
	o.open = nil
}

func (o *originLink) restore() {
	o.mu.Lock()
	o.down, o.stall = false, false
	o.mu.Unlock()
}

// stallNow makes the origin one that accepts connections and never
// answers: open connections end, new ones hang.
func (o *originLink) stallNow() {
	o.cut()
	o.mu.Lock()
	o.down, o.stall = false, true
	o.mu.Unlock()
}

// migrateKeyspace creates keyspace ks (RF 1) with tables on the origin e
// and the same schema on a fresh target, through migrate schema.
func migrateKeyspace(t *testing.T, e *bulkEnv, bin, ks string, tables ...string) *migrateTarget {
	t.Helper()
	e.exec(t, append([]string{"CREATE KEYSPACE IF NOT EXISTS " + ks +
		" WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"}, tables...)...)
	dst := startMigrateTarget(t)
	if out, errOut, code := runCqlpg(bin, "migrate", "schema", "--keyspaces", ks, "--origin", e.addr, "--shard", dst.shard); code != 0 {
		t.Fatalf("schema: exit %d, %q %q", code, out, errOut)
	}
	return dst
}

// TestMigrateProxyOriginDown takes the origin away from cqlpg serve
// --origin. Reading from the target, clients go on being served, and the
// writes the origin missed are counted and logged with their table;
// once the origin is back, writes reach both again. Reading from the
// origin, clients get the origin's unavailability as errors. A gateway
// whose origin cannot be reached or logged in to does not start, and a
// protocol version the origin refuses is refused to the client, as the
// origin words it, so that drivers fall back to one both speak.
func TestMigrateProxyOriginDown(t *testing.T) {
	e := sharedBulkEnv(t)
	bin := buildCqlpg(t)
	dst := migrateKeyspace(t, e, bin, "migdown", "CREATE TABLE IF NOT EXISTS migdown.t (k int PRIMARY KEY, v text)")
	link := startOriginLink(t, e.addr)

	// Refused at start: an origin nobody listens on, credentials the
	// origin does not take (it asks for none, so none are checked: an
	// origin with authentication is another cqlpg, with --auth).
	closed, _ := net.Listen("tcp", "127.0.0.1:0")
	closedAddr := closed.Addr().String()
	closed.Close()
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--origin", closedAddr}, 1, "origin " + closedAddr + ": cannot reach the origin " + closedAddr},
		{[]string{"--origin", "nowhere"}, 2, `--origin: "nowhere" is not HOST:PORT`},
		{[]string{"--origin", link.addr(), "--origin-auth", "nopassword"}, 2, "--origin-auth: the origin's credentials are not USER:PASSWORD"},
		{[]string{"--origin", link.addr(), "--read-from", "elsewhere"}, 2, `--read-from: "elsewhere" is not a side to read from`},
	} {
		out, errOut, code := runCqlpg(bin, append([]string{"serve", "--listen", "127.0.0.1:0", "--http", "", "--shard", dst.shard}, c.args...)...)
		if code != c.code || !strings.Contains(out+errOut, c.want) {
			t.Errorf("serve %v: exit %d, want %d and %q; output %q %q", c.args, code, c.code, c.want, out, errOut)
		}
	}

	p := startServeWith(t, bin, "--shard", dst.shard, "--origin", link.addr(), "--read-from", "target")
	proxy := "127.0.0.1:" + strconv.Itoa(p.cqlPort)
	s := proxySession(t, proxy, false)
	write := func(from, to int) {
		t.Helper()
		for k := from; k < to; k++ {
			if err := s.Query("INSERT INTO migdown.t (k, v) VALUES (?, ?)", k, fmt.Sprint("v", k)).Exec(); err != nil {
				t.Fatalf("write %d: %v", k, err)
			}
		}
	}
	write(0, 10)
	link.cut()
	write(10, 20)
	var v string
	if err := s.Query("SELECT v FROM migdown.t WHERE k = 15").Scan(&v); err != nil || v != "v15" {
		t.Errorf("read from the target while the origin is down: %q, %v", v, err)
	}
	if n := metric(t, p.httpPort, `cqlpg_dual_write_failures_total{side="origin"}`); n != 10 {
		t.Errorf("writes the origin missed: %v, want 10", n)
	}
	if got := strings.Count(p.output.String(), "the origin missed a write"); got != 10 ||
		!strings.Contains(p.output.String(), "table=migdown.t") {
		t.Errorf("the log has %d writes the origin missed, want 10 naming table=migdown.t:\n%s", got, p.output.String())
	}
	link.restore()
	time.Sleep(1100 * time.Millisecond) // the connection's next dial
	write(20, 30)
	for name, addr := range map[string]string{"origin": e.addr, "target": dst.addr} {
		d := proxySession(t, addr, true)
		var got []int
		iter := d.Query("SELECT k FROM migdown.t").Iter()
		for k := 0; iter.Scan(&k); {
			got = append(got, k)
		}
		if err := iter.Close(); err != nil {
			t.Fatal(err)
		}
		want := 30
		if name == "origin" {
			want = 20
		}
		if len(got) != want {
			t.Errorf("%s holds %d rows, want %d: %v", name, len(got), want, got)
		}
	}
	// An origin that takes connections and never answers holds up no
	// client of the target: a request waits a moment for the dial, which
	// goes on in the background, and the writes the origin misses are
	// counted.
	link.stallNow()
	time.Sleep(1100 * time.Millisecond) // past the last dial's second: the next write dials
	began := time.Now()
	write(40, 50)
	t.Logf("10 writes with the origin stalled: %v", time.Since(began))
	if took := time.Since(began); took > 3*time.Second {
		t.Errorf("10 writes with the origin stalled took %v", took)
	}
	link.restore()
	s.Close()
	p.stop(t)

	// Reading from the origin, a client meets its outage.
	p = startServeWith(t, bin, "--shard", dst.shard, "--origin", link.addr())
	s = proxySession(t, "127.0.0.1:"+strconv.Itoa(p.cqlPort), false)
	link.cut()
	err := s.Query("INSERT INTO migdown.t (k, v) VALUES (100, 'x')").Exec()
	if err == nil || !strings.Contains(err.Error(), "the origin "+link.addr()) {
		t.Errorf("write with the origin primary and down: %v", err)
	}
	err = s.Query("SELECT v FROM migdown.t WHERE k = 1").Scan(&v)
	if err == nil || !strings.Contains(err.Error(), "the origin "+link.addr()) {
		t.Errorf("read with the origin primary and down: %v, %q\n%s", err, v, p.output.String())
	}
	s.Close()
	p.stop(t)

	// An origin that does not speak v5 refuses it through the gateway.
	link.restore()
	link.mu.Lock()
	link.v4Only = true
	link.mu.Unlock()
	p = startServeWith(t, bin, "--shard", dst.shard, "--origin", link.addr())
	c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(p.cqlPort))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	startup := []byte{0, 1, 0, 11, 'C', 'Q', 'L', '_', 'V', 'E', 'R', 'S', 'I', 'O', 'N', 0, 5, '3', '.', '0', '.', '0'}
	c.Write(append([]byte{5, 0, 0, 1, 1, 0, 0, 0, byte(len(startup))}, startup...))
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	var head [9]byte
	if _, err := io.ReadFull(c, head[:]); err != nil {
		t.Fatal(err)
	}
	body := make([]byte, int(head[5])<<24|int(head[6])<<16|int(head[7])<<8|int(head[8]))
	io.ReadFull(c, body)
	if head[4] != 0 || len(body) < 6 || body[3] != 0x0a || !strings.Contains(string(body), "Invalid or unsupported protocol version (5)") {
		t.Errorf("STARTUP v5 to a gateway whose origin speaks v4: opcode %d, body %q", head[4], body)
	}
	s = proxySession(t, "127.0.0.1:"+strconv.Itoa(p.cqlPort), true)
	if err := s.Query("INSERT INTO migdown.t (k, v) VALUES (200, 'v4')").Exec(); err != nil {
		t.Errorf("a v4 client of a gateway whose origin speaks v4: %v", err)
	}

	// The writes the origin missed while reading from the target (10 to
	// 19, down, and 40 to 49, stalled), back on it.
	base := []string{"migrate", "diff", "migdown.t", "--origin", e.addr, "--shard", dst.shard, "--splits", "8"}
	out, errOut, code := runCqlpg(bin, append(base, "--fix-origin")...)
	if code != 3 || !strings.HasSuffix(out, "migdown.t: 21 rows compared, 0 missing, 20 extra, 0 differ; 20 written back to the origin\n") {
		t.Errorf("diff --fix-origin: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if out, errOut, code := runCqlpg(bin, base...); code != 0 {
		t.Errorf("diff after --fix-origin: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// idOrigin is an origin whose prepared ids are not cqlpg's, as a
// Cassandra origin's are not: it stands between the gateway and a cqlpg
// origin, speaking v4 only, and gives each prepared statement the id
// cqlpg gives it reversed and one byte longer, mapping it back on EXECUTE
// and BATCH. forget makes it forget them, as an origin that restarted
// does: it answers UNPREPARED until a statement is prepared again.
type idOrigin struct {
	*originLink
	real      map[string][]byte // by the id it gives
	forgotten map[string]bool
	unknown   int // UNPREPARED answers given
}

func startIDOrigin(t *testing.T, to string) *idOrigin {
	o := &idOrigin{real: map[string][]byte{}, forgotten: map[string]bool{}}
	o.originLink = &originLink{to: to, ln: serveConns(t, o.serve)}
	return o
}

func (o *idOrigin) forget() {
	o.mu.Lock()
	for id := range o.real {
		o.forgotten[id] = true
	}
	o.mu.Unlock()
}

// readFrame reads one v4 frame, header and body.
func readFrame(r io.Reader) ([]byte, error) {
	head := make([]byte, 9)
	if _, err := io.ReadFull(r, head); err != nil {
		return nil, err
	}
	body := make([]byte, int(head[5])<<24|int(head[6])<<16|int(head[7])<<8|int(head[8]))
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, err
	}
	return append(head, body...), nil
}

func frameOf(head []byte, body []byte) []byte {
	h := slices.Clone(head[:9])
	n := len(body)
	h[5], h[6], h[7], h[8] = byte(n>>24), byte(n>>16), byte(n>>8), byte(n)
	return append(h, body...)
}

func shortBytes(b []byte, at int) ([]byte, int) {
	n := int(b[at])<<8 | int(b[at+1])
	return b[at+2 : at+2+n], at + 2 + n
}

func appendShortBytes(b, v []byte) []byte {
	return append(append(b, byte(len(v)>>8), byte(len(v))), v...)
}

func (o *idOrigin) serve(c net.Conn) {
	defer c.Close()
	up, err := net.Dial("tcp", o.to)
	if err != nil {
		return
	}
	defer up.Close()
	var wmu sync.Mutex // the answers to c: the origin's and this one's
	go func() {
		for {
			f, err := readFrame(up)
			if err != nil {
				c.Close()
				return
			}
			body := f[9:]
			if f[4] == 0x08 && f[1] == 0 && len(body) >= 4 && body[3] == 0x04 { // RESULT Prepared
				real, end := shortBytes(body, 4)
				fake := append(slices.Clone(real), 0xff)
				slices.Reverse(fake[:len(real)])
				o.mu.Lock()
				o.real[string(fake)] = slices.Clone(real)
				delete(o.forgotten, string(fake))
				o.mu.Unlock()
				f = frameOf(f, append(appendShortBytes(slices.Clone(body[:4]), fake), body[end:]...))
			}
			wmu.Lock()
			c.Write(f)
			wmu.Unlock()
		}
	}()
	for {
		f, err := readFrame(c)
		if err != nil {
			return
		}
		if f[0] == 5 {
			refuseV5(c, f)
			return
		}
		body := f[9:]
		// unprepared answers an id it did not give, or forgot, as
		// Cassandra does.
		unprepared := func(fake []byte) {
			o.unknown++
			o.mu.Unlock()
			msg := "Prepared query with ID " + fmt.Sprintf("%x", fake) + " not found"
			e := append([]byte{0, 0, 0x25, 0, byte(len(msg) >> 8), byte(len(msg))}, msg...)
			wmu.Lock()
			c.Write(frameOf([]byte{0x84, 0, f[2], f[3], 0, 0, 0, 0, 0}, appendShortBytes(e, fake)))
			wmu.Unlock()
		}
		o.mu.Lock()
		switch f[4] {
		case 0x0A: // EXECUTE
			fake, end := shortBytes(body, 0)
			real, ok := o.real[string(fake)]
			if !ok || o.forgotten[string(fake)] {
				unprepared(fake)
				continue
			}
			f = frameOf(f, append(appendShortBytes(nil, real), body[end:]...))
		case 0x0D: // BATCH
			out := []byte{body[0], body[1], body[2]}
			at := 3
			var unknown []byte
			for n := int(body[1])<<8 | int(body[2]); n > 0; n-- {
				kind := body[at]
				at++
				if kind == 0 {
					l := int(body[at])<<24 | int(body[at+1])<<16 | int(body[at+2])<<8 | int(body[at+3])
					out = append(append(out, 0), body[at:at+4+l]...)
					at += 4 + l
				} else {
					fake, end := shortBytes(body, at)
					real, ok := o.real[string(fake)]
					if !ok || o.forgotten[string(fake)] {
						unknown = fake
					}
					out = appendShortBytes(append(out, 1), real)
					at = end
				}
				start := at
				nv := int(body[at])<<8 | int(body[at+1])
				at += 2
				for ; nv > 0; nv-- {
					l := int32(uint32(body[at])<<24 | uint32(body[at+1])<<16 | uint32(body[at+2])<<8 | uint32(body[at+3]))
					at += 4 + max(int(l), 0)
				}
				out = append(out, body[start:at]...)
			}
			if unknown != nil {
				unprepared(unknown)
				continue
			}
			f = frameOf(f, append(out, body[at:]...))
		}
		o.mu.Unlock()
		if _, err := up.Write(f); err != nil {
			return
		}
	}
}

// TestMigrateProxyPreparedIDs runs prepared statements and batches of
// them through cqlpg serve --origin in front of an origin whose ids are
// not cqlpg's, reading from each side: each side executes its own id.
// When the origin forgets its statements, the gateway prepares them
// there again itself: clients never see UNPREPARED for it.
func TestMigrateProxyPreparedIDs(t *testing.T) {
	e := sharedBulkEnv(t)
	bin := buildCqlpg(t)
	dst := migrateKeyspace(t, e, bin, "migids", "CREATE TABLE IF NOT EXISTS migids.t (k int, c int, v text, PRIMARY KEY (k, c))")
	o := startIDOrigin(t, e.addr)
	for i, readFrom := range []string{"origin", "target"} {
		p := startServeWith(t, bin, "--shard", dst.shard, "--origin", o.addr(), "--read-from", readFrom)
		s := proxySession(t, "127.0.0.1:"+strconv.Itoa(p.cqlPort), true)
		base := i * 100
		for round := range 2 {
			for k := base + round*10; k < base+round*10+10; k++ {
				if err := s.Query("INSERT INTO migids.t (k, c, v) VALUES (?, ?, ?)", k, 0, "one").Exec(); err != nil {
					t.Fatalf("read from %s, insert %d: %v", readFrom, k, err)
				}
				b := s.NewBatch(gocql.LoggedBatch)
				b.Query("INSERT INTO migids.t (k, c, v) VALUES (?, ?, ?)", k, 1, "batched")
				b.Query("UPDATE migids.t SET v = ? WHERE k = ? AND c = ?", "updated", k, 2)
				if err := s.ExecuteBatch(b); err != nil {
					t.Fatalf("read from %s, batch %d: %v", readFrom, k, err)
				}
				var n int
				if err := s.Query("SELECT count(*) FROM migids.t WHERE k = ?", k).Scan(&n); err != nil || n != 3 {
					t.Fatalf("read from %s, row count of %d: %d, %v", readFrom, k, n, err)
				}
			}
			if round == 0 {
				o.forget()
			}
		}
		o.mu.Lock()
		unknown, ids := o.unknown, len(o.real)
		o.mu.Unlock()
		if unknown == 0 || ids == 0 {
			t.Errorf("read from %s: the origin gave %d ids of its own and answered UNPREPARED %d times", readFrom, ids, unknown)
		}
		if n := metric(t, p.httpPort, `cqlpg_dual_write_failures_total{side="origin"}`) +
			metric(t, p.httpPort, `cqlpg_dual_write_failures_total{side="target"}`); n != 0 {
			t.Errorf("read from %s: %v writes failed on one side\n%s", readFrom, n, p.output.String())
		}
		s.Close()
		p.stop(t)
		for name, addr := range map[string]string{"origin": e.addr, "target": dst.addr} {
			d := proxySession(t, addr, true)
			var n int
			if err := d.Query("SELECT count(*) FROM migids.t WHERE k IN ? ", []int{base, base + 5, base + 15, base + 19}).Scan(&n); err != nil || n != 12 {
				t.Errorf("read from %s: the %s holds %d of 12 rows (%v)", readFrom, name, n, err)
			}
		}
	}
}

// TestMigrateProxyAuth runs dual writes with authentication on: the
// gateway logs in to the origin with credentials of its own, so each
// statement is checked against the client's role before it goes there.
// A role that may only read gets Unauthorized for a write, which reaches
// neither side; role statements are cqlpg's alone.
func TestMigrateProxyAuth(t *testing.T) {
	e := sharedBulkEnv(t)
	bin := buildCqlpg(t)
	dst := migrateKeyspace(t, e, bin, "migauth", "CREATE TABLE IF NOT EXISTS migauth.t (k int PRIMARY KEY, v text)")
	p := startServeWith(t, bin, "--shard", dst.shard, "--origin", e.addr, "--auth", "--superuser-password", "s3cret")
	login := func(user, password string) *gocql.Session {
		cc := gocql.NewCluster("127.0.0.1")
		cc.Port = p.cqlPort
		cc.DisableInitialHostLookup = true
		cc.Events.DisableTopologyEvents, cc.Events.DisableNodeStatusEvents = true, true
		cc.Authenticator = gocql.PasswordAuthenticator{Username: user, Password: password}
		s, err := cc.CreateSession()
		if err != nil {
			t.Fatalf("log in as %s: %v", user, err)
		}
		t.Cleanup(s.Close)
		return s
	}
	admin := login("cassandra", "s3cret")
	for _, q := range []string{
		"CREATE ROLE IF NOT EXISTS reader WITH PASSWORD = 'r3ad' AND LOGIN = true",
		"GRANT SELECT ON KEYSPACE migauth TO reader",
		"INSERT INTO migauth.t (k, v) VALUES (1, 'admin')",
	} {
		if err := admin.Query(q).Exec(); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	reader := login("reader", "r3ad")
	var v string
	if err := reader.Query("SELECT v FROM migauth.t WHERE k = 1").Scan(&v); err != nil || v != "admin" {
		t.Errorf("reader's read: %q, %v", v, err)
	}
	for _, q := range []string{
		"INSERT INTO migauth.t (k, v) VALUES (2, 'reader')",
		"BEGIN BATCH INSERT INTO migauth.t (k, v) VALUES (3, 'reader') APPLY BATCH",
	} {
		err := reader.Query(q).Exec()
		if err == nil || !strings.Contains(err.Error(), "has no MODIFY permission") {
			t.Errorf("reader's %s: %v, want Unauthorized", q, err)
		}
	}
	direct := proxySession(t, e.addr, true)
	var n int
	if err := direct.Query("SELECT count(*) FROM migauth.t").Scan(&n); err != nil || n != 1 {
		t.Errorf("the origin holds %d rows (%v), want the admin's one", n, err)
	}
	// A gateway whose origin refuses its credentials (this one, which
	// asks for a login) does not start.
	for _, auth := range []string{"cassandra:wrong", ""} {
		args := []string{"serve", "--listen", "127.0.0.1:0", "--http", "", "--shard", dst.shard,
			"--origin", "127.0.0.1:" + strconv.Itoa(p.cqlPort)}
		if auth != "" {
			args = append(args, "--origin-auth", auth)
		}
		out, errOut, code := runCqlpg(bin, args...)
		want := "Provided username cassandra and/or password are incorrect"
		if auth == "" {
			want = "asks for a login: give the origin's credentials (--origin-auth USER:PASSWORD)"
		}
		if code != 1 || !strings.Contains(out+errOut, want) {
			t.Errorf("serve with --origin-auth %q: exit %d, output %q %q", auth, code, out, errOut)
		}
	}
	// The role is cqlpg's alone.
	for name, s := range map[string]*gocql.Session{"origin": direct, "target": admin} {
		roles, err := s.Query("SELECT role FROM system_auth.roles").Iter().SliceMap()
		found := slices.ContainsFunc(roles, func(r map[string]any) bool { return r["role"] == "reader" })
		if err != nil || found != (name == "target") {
			t.Errorf("the %s's roles: %v (%v)", name, roles, err)
		}
	}
}
