package main_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"github.com/jackc/pgx/v5"

	"github.com/cqlpg/cqlpg/gateway"
	"github.com/cqlpg/cqlpg/gateway/cluster"
	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/sharding"
	"github.com/cqlpg/cqlpg/sharding/localpg"
)

// elastic is a cluster whose ring the topology tests change under load:
// PostgreSQL servers, the first members of which are the cluster at the
// start and the others spares; two gateways, the second given only the
// first shard, and a gocql session that starts from each and uses both; a keyspace elastic.t at a replication factor; and the keys
// written and acknowledged.
type elastic struct {
	t        testing.TB
	ctx      context.Context
	bin      string
	pg       []*localpg.Cluster
	sessions []*gocql.Session
	// gateways are the gateways' addresses, servers the gateways.
	gateways []string
	servers  []*gateway.Server
	rf       int
	preload  int
	acked    sync.Map
	next     atomic.Int64
}

// startElastic starts servers PostgreSQL servers, a cluster of the first
// members, two gateways and the keyspace at rf, with preload rows.
func startElastic(t testing.TB, servers, members, rf, preload int) *elastic {
	t.Helper()
	e := &elastic{t: t, bin: buildCqlpg(t), rf: rf, preload: preload}
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	t.Cleanup(cancel)
	e.ctx = ctx
	pg, stop, err := localpg.TempClusters(ctx, servers, localpg.Options{})
	if err != nil {
		t.Fatalf("start PostgreSQL: %v", err)
	}
	t.Cleanup(stop)
	e.pg = pg
	for g, given := range [][]*localpg.Cluster{pg[:members], pg[:1]} {
		// Each gateway at an address of its own, as on hosts of their own:
		// gocql tells hosts apart by address alone.
		// The gateways check the ring version once a minute only: they
		// follow each step of an operation as the members notify it.
		cfg := gateway.Config{Listen: fmt.Sprintf("127.0.0.%d:0", g+1), HTTP: "127.0.0.1:0",
			Log: slog.New(slog.NewTextHandler(io.Discard, nil)), RingCheck: time.Minute}
		for _, c := range given {
			cfg.Shards = append(cfg.Shards, cluster.ShardConfig{URL: c.URL()})
		}
		srv, err := gateway.New(ctx, cfg)
		if err != nil {
			t.Fatalf("gateway %d: %v", g, err)
		}
		go srv.Serve()
		t.Cleanup(func() { srv.Shutdown(context.Background()) })
		host, port, _ := net.SplitHostPort(srv.Addr().String())
		cc := gocql.NewCluster(host)
		cc.Port, _ = strconv.Atoi(port)
		cc.Timeout = 10 * time.Second
		cc.Consistency = gocql.Quorum
		sess, err := cc.CreateSession()
		if err != nil {
			t.Fatalf("session on gateway %d: %v", g, err)
		}
		t.Cleanup(sess.Close)
		e.sessions = append(e.sessions, sess)
		e.gateways = append(e.gateways, srv.Addr().String())
		e.servers = append(e.servers, srv)
		if g == 0 {
			for _, q := range []string{
				fmt.Sprintf("CREATE KEYSPACE elastic WITH replication = {'class': 'SimpleStrategy', 'replication_factor': %d}", rf),
				"CREATE TABLE elastic.t (k int PRIMARY KEY, v text)",
			} {
				if err := sess.Query(q).Exec(); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
		}
	}
	for k := range preload {
		if err := e.sessions[k%2].Query("INSERT INTO elastic.t (k, v) VALUES (?, ?)", k, fmt.Sprint(k)).Exec(); err != nil {
			t.Fatalf("preload %d through gateway %d: %v", k, k%2, err)
		}
	}
	e.next.Store(int64(preload))
	return e
}

// underLoad runs op beside two writers of new keys and two readers of
// acknowledged ones on each gateway, at QUORUM, and fails the test for
// every request that failed. It returns how long op took.
func (e *elastic) underLoad(what string, op func()) time.Duration {
	e.t.Helper()
	var (
		ops      atomic.Int64
		failures = make(chan error, 64)
		done     = make(chan struct{})
		wg       sync.WaitGroup
	)
	for w := range 8 {
		sess := e.sessions[w%2]
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-done:
					return
				default:
				}
				var err error
				if w < 4 {
					k := int(e.next.Add(1))
					if err = sess.Query("INSERT INTO elastic.t (k, v) VALUES (?, ?)", k, fmt.Sprint(k)).Exec(); err == nil {
						e.acked.Store(k, true)
					}
				} else {
					k := (i*7 + w) % e.preload
					var v string
					if err = sess.Query("SELECT v FROM elastic.t WHERE k = ?", k).Scan(&v); err == nil && v != fmt.Sprint(k) {
						err = fmt.Errorf("read %d: %q", k, v)
					}
				}
				if err != nil {
					select {
					case failures <- err:
					default:
					}
				}
				ops.Add(1)
				time.Sleep(time.Millisecond)
			}
		})
	}
	start := time.Now()
	op()
	took := time.Since(start)
	close(done)
	wg.Wait()
	close(failures)
	n := 0
	for err := range failures {
		if n++; n <= 5 {
			e.t.Errorf("during %s: %v", what, err)
		}
	}
	e.t.Logf("%s took %v beside %d requests, %d failed", what, took.Round(time.Millisecond), ops.Load(), n)
	return took
}

// cqlpg runs the command and fails the test unless it exits 0.
func (e *elastic) cqlpg(args ...string) string {
	e.t.Helper()
	out, err := exec.CommandContext(e.ctx, e.bin, args...).CombinedOutput()
	if err != nil {
		e.t.Fatalf("cqlpg %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// refused runs the command and fails the test unless it exits non-zero
// saying want.
func (e *elastic) refused(want string, args ...string) {
	e.t.Helper()
	out, err := exec.CommandContext(e.ctx, e.bin, args...).CombinedOutput()
	if err == nil || !strings.Contains(string(out), want) {
		e.t.Errorf("cqlpg %s: %v, want a refusal saying %q:\n%s", strings.Join(args, " "), err, want, out)
	}
}

// killAfter starts the command and kills it once a line of its output
// holds want, and fails the test if none does.
func (e *elastic) killAfter(want string, args ...string) string {
	e.t.Helper()
	cmd := exec.CommandContext(e.ctx, e.bin, args...)
	pipe, _ := cmd.StderrPipe()
	cmd.Stdout = cmd.Stderr
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	var seen strings.Builder
	sc := bufio.NewScanner(pipe)
	for sc.Scan() {
		seen.WriteString(sc.Text() + "\n")
		if strings.Contains(sc.Text(), want) {
			cmd.Process.Kill()
			break
		}
	}
	io.Copy(io.Discard, pipe)
	cmd.Wait()
	if !strings.Contains(seen.String(), want) {
		e.t.Fatalf("cqlpg %s never said %q:\n%s", strings.Join(args, " "), want, seen.String())
	}
	return seen.String()
}

// keys returns every key preloaded or acknowledged.
func (e *elastic) keys() []int {
	var keys []int
	for k := range e.preload {
		keys = append(keys, k)
	}
	e.acked.Range(func(k, _ any) bool { keys = append(keys, k.(int)); return true })
	return keys
}

// check reads the membership from server from (a member), and checks that
// no topology operation is in progress, that every key is on each of its
// replicas on the ring, and, with exact (after a cleanup), on no other
// member; and that both gateways read every key. It returns the members.
func (e *elastic) check(from int, exact bool) []pgschema.Member {
	e.t.Helper()
	conn, err := pgx.Connect(e.ctx, pgschema.GatewayConnString(e.pg[from].URL()))
	if err != nil {
		e.t.Fatal(err)
	}
	members, _, err := pgschema.LoadMembers(e.ctx, conn)
	conn.Close(e.ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	var infos []sharding.ShardInfo
	for _, m := range members {
		if m.State != pgschema.MemberNormal {
			e.t.Fatalf("%s is %s after the operation", m.Name, m.State)
		}
		infos = append(infos, sharding.ShardInfo{HostID: m.HostID, Name: m.Name, DC: m.Datacenter, Rack: m.Rack,
			Tokens: m.RingTokens()})
	}
	ring, err := sharding.NewRing(infos)
	if err != nil {
		e.t.Fatal(err)
	}
	placement := ring.Placement(sharding.Replication{Class: sharding.SimpleStrategyClass, Factor: e.rf})
	held := make([]map[int]bool, len(members))
	for i, m := range members {
		held[i] = map[int]bool{}
		conn, err := pgx.Connect(e.ctx, pgschema.GatewayConnString(pgschema.MemberURL(m.Address, e.pg[0].URL())))
		if err != nil {
			e.t.Fatalf("member %s: %v", m.Name, err)
		}
		rows, err := conn.Query(e.ctx, "SELECT k FROM elastic.t")
		if err != nil {
			e.t.Fatal(err)
		}
		for rows.Next() {
			var k int
			rows.Scan(&k)
			held[i][k] = true
		}
		if rows.Err() != nil {
			e.t.Fatal(rows.Err())
		}
		conn.Close(e.ctx)
	}
	keys := e.keys()
	missing, extra := 0, 0
	for _, k := range keys {
		replicas := placement.Replicas(sharding.KeyToken([][]byte{{byte(k >> 24), byte(k >> 16), byte(k >> 8), byte(k)}}))
		for i := range members {
			switch in := slices.Contains(replicas, i); {
			case in && !held[i][k]:
				if missing++; missing <= 3 {
					e.t.Errorf("key %d is not on its replica %s", k, members[i].Name)
				}
			case !in && held[i][k] && exact:
				if extra++; extra <= 3 {
					e.t.Errorf("key %d is still on %s, not a replica, after the cleanup", k, members[i].Name)
				}
			}
		}
	}
	if missing+extra > 0 {
		e.t.Fatalf("of %d keys at RF %d on %d members, %d replicas miss their row and %d rows are left on shards that are not replicas",
			len(keys), e.rf, len(members), missing, extra)
	}
	var wrong atomic.Int64
	var wg sync.WaitGroup
	for w := range 16 {
		sess := e.sessions[w%2]
		wg.Go(func() {
			for i := w; i < len(keys); i += 16 {
				var v string
				if err := sess.Query("SELECT v FROM elastic.t WHERE k = ?", keys[i]).Scan(&v); err != nil || v != fmt.Sprint(keys[i]) {
					if wrong.Add(1) <= 3 {
						e.t.Errorf("key %d: %q, %v", keys[i], v, err)
					}
				}
			}
		})
	}
	wg.Wait()
	if wrong.Load() > 0 {
		e.t.Fatalf("%d keys read wrong", wrong.Load())
	}
	e.t.Logf("%d keys on their %d replicas of %d members", len(keys), e.rf, len(members))
	return members
}

// hints counts the hints the members up hold for the members named.
func (e *elastic) hints(members []pgschema.Member, names ...string) int {
	e.t.Helper()
	var targets [][16]byte
	for _, m := range members {
		if slices.Contains(names, m.Name) {
			targets = append(targets, m.HostID)
		}
	}
	total := 0
	for _, m := range members {
		conn, err := pgx.Connect(e.ctx, pgschema.MemberURL(m.Address, e.pg[0].URL()))
		if err != nil {
			continue // down
		}
		var n int
		if err := conn.QueryRow(e.ctx, "SELECT count(*) FROM cqlpg.hints WHERE target = ANY($1::uuid[])", targets).Scan(&n); err != nil {
			e.t.Fatal(err)
		}
		total += n
		conn.Close(e.ctx)
	}
	return total
}

// sessionOn returns a session that uses gateway g alone.
func (e *elastic) sessionOn(g int) *gocql.Session {
	e.t.Helper()
	host, port, _ := net.SplitHostPort(e.gateways[g])
	cc := gocql.NewCluster(host)
	cc.Port, _ = strconv.Atoi(port)
	cc.HostFilter = gocql.WhiteListHostFilter(host)
	sess, err := cc.CreateSession()
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(sess.Close)
	return sess
}

// repairFindsNothing runs cqlpg repair of the keyspace, once the load's
// hints have had time to replay, and fails the test unless the replicas
// already agreed.
func (e *elastic) repairFindsNothing() {
	e.t.Helper()
	time.Sleep(2 * time.Second)
	out := e.cqlpg("repair", "--shard", e.pg[0].URL(), "elastic")
	if !regexp.MustCompile(` 0 differed, 0 rows moved`).MatchString(out) {
		e.t.Errorf("a repair after the operation found differences:\n%s", out)
	}
}

// metric returns the value gateway g's /metrics gives the series named
// (with its labels), and whether it gives one.
func (e *elastic) metric(g int, series string) (float64, bool) {
	e.t.Helper()
	resp, err := http.Get("http://" + e.servers[g].HTTPAddr().String() + "/metrics")
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			return f, err == nil
		}
	}
	return 0, false
}

// restartDuring runs the command, restarts server pg once a line of its
// output holds want, waits for the command to end, and returns what it
// printed. It fails the test if the command ends without that line.
func (e *elastic) restartDuring(want string, pg int, args ...string) string {
	e.t.Helper()
	cmd := exec.CommandContext(e.ctx, e.bin, args...)
	var out lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	for !strings.Contains(out.String(), want) {
		select {
		case <-done:
			e.t.Fatalf("cqlpg %s ended without saying %q:\n%s", strings.Join(args, " "), want, out.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	if err := e.pg[pg].Restart(e.ctx); err != nil {
		e.t.Fatal(err)
	}
	<-done
	return out.String()
}

// counters reads the counters elastic.c holds on member m, by key.
func (e *elastic) counters(m pgschema.Member) map[int]int64 {
	e.t.Helper()
	conn, err := pgx.Connect(e.ctx, pgschema.MemberURL(m.Address, e.pg[0].URL()))
	if err != nil {
		e.t.Fatal(err)
	}
	defer conn.Close(e.ctx)
	held := map[int]int64{}
	rows, _ := conn.Query(e.ctx, "SELECT k, n FROM elastic.c")
	var k int
	var n int64
	if _, err := pgx.ForEachRow(rows, []any{&k, &n}, func() error { held[k] = n; return nil }); err != nil {
		e.t.Fatal(err)
	}
	return held
}
