package gateway_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlpg/cqlpg/gateway"
)

// gocqlLog collects what a gocql session logs: it logs, rather than
// returns, the peers it ignores, a schema agreement it gave up on, and
// failures to read the ring or the schema or to fill its pool.
type gocqlLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *gocqlLog) add(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, strings.TrimSpace(s))
}

func (l *gocqlLog) Print(v ...any)                 { l.add(fmt.Sprint(v...)) }
func (l *gocqlLog) Printf(format string, v ...any) { l.add(fmt.Sprintf(format, v...)) }
func (l *gocqlLog) Println(v ...any)               { l.add(fmt.Sprintln(v...)) }

func (l *gocqlLog) check(t *testing.T) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range l.lines {
		t.Errorf("gocql logged: %s", line)
	}
}

// gocqlCluster is gocql's configuration as an application writes it: the
// driver's defaults but for the shared gateway's address and port and the
// host selection policy. With no host filter, the driver uses every
// gateway it finds, so the test first waits for the shared one to be
// alone.
func gocqlCluster(s *gateway.Server, keyspace string, policy gocql.HostSelectionPolicy) *gocql.ClusterConfig {
	host, port, _ := net.SplitHostPort(s.Addr().String())
	cfg := gocql.NewCluster(host)
	cfg.Port, _ = strconv.Atoi(port)
	cfg.Keyspace = keyspace
	if policy != nil {
		cfg.PoolConfig.HostSelectionPolicy = policy
	}
	return cfg
}

// connectGocql opens a session and tells how long CreateSession took:
// protocol discovery, the control connection's reads of system.local and
// the peers, the pool, and the keyspace metadata a token-aware policy
// loads. When the test ends, anything the session logged fails it; what
// it logs while closing (pool connections still dialing are cut) does
// not.
func connectGocql(t *testing.T, cfg *gocql.ClusterConfig) (*gocql.Session, time.Duration) {
	t.Helper()
	log := &gocqlLog{}
	cfg.Logger = log
	start := time.Now()
	sess, err := cfg.CreateSession()
	took := time.Since(start)
	if err != nil {
		t.Fatalf("CreateSession: %v", err)
	}
	t.Cleanup(func() {
		log.check(t)
		sess.Close()
	})
	return sess, took
}

// pageCounter counts a query's requests to the gateway: one per page.
type pageCounter struct{ n atomic.Int32 }

func (c *pageCounter) ObserveQuery(context.Context, gocql.ObservedQuery) { c.n.Add(1) }

// requestError asserts that err is the error the gateway answered with
// the code and text Cassandra gives.
func requestError(t *testing.T, what string, err error, code int, msg string) {
	t.Helper()
	var re gocql.RequestError
	if !errors.As(err, &re) {
		t.Errorf("%s: error %v, want %#x %q", what, err, code, msg)
		return
	}
	if re.Code() != code || re.Message() != msg {
		t.Errorf("%s: error %#x %q, want %#x %q", what, re.Code(), re.Message(), code, msg)
	}
}

// TestGocqlDriver drives the gateway with gocql v1.7.0 as applications
// configure it: each common host selection policy, paging by PageSize and
// resumed by PageState (in another session too), prepared statements with
// unset, null, IN and LIMIT markers, batches of each kind, conditional
// batches, and every consistency level with the ones Cassandra refuses.
// It logs how long sessions take to start and DDL takes to reach schema
// agreement.
func TestGocqlDriver(t *testing.T) {
	waitAlone(t)
	gocqlSuite(t, gw)
}

// gocqlSuite is TestGocqlDriver's body, on the gateway s.
func gocqlSuite(t *testing.T, s *gateway.Server) {
	ks := fmt.Sprintf("gocql_%d", time.Now().UnixNano())

	admin, connect := connectGocql(t, gocqlCluster(s, "", nil))
	// gocql returns from a DDL statement once every host it knows reports
	// one schema version.
	ddl := map[string]time.Duration{}
	for _, s := range []struct{ name, cql string }{
		{"keyspace", "CREATE KEYSPACE " + ks + " WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}"},
		{"type", "CREATE TYPE " + ks + ".point (x int, y int)"},
		{"table", "CREATE TABLE " + ks + ".events (day text, id int, seq int, at point, payload text, " +
			"PRIMARY KEY ((day, id), seq)) WITH CLUSTERING ORDER BY (seq DESC)"},
		{"readings", "CREATE TABLE " + ks + ".readings (sensor text, seq int, value double, PRIMARY KEY (sensor, seq))"},
		{"kv", "CREATE TABLE " + ks + ".kv (k text, c int, v double, tags set<text>, PRIMARY KEY (k, c))"},
		{"ledger", "CREATE TABLE " + ks + ".ledger (acct text, entry int, amount int, PRIMARY KEY (acct, entry))"},
		{"hits", "CREATE TABLE " + ks + ".hits (page text PRIMARY KEY, n counter)"},
		{"cl", "CREATE TABLE " + ks + ".cl (k int PRIMARY KEY, v text)"},
	} {
		start := time.Now()
		exec(t, admin, s.cql)
		ddl[s.name] = time.Since(start)
	}
	start := time.Now()
	if err := admin.AwaitSchemaAgreement(context.Background()); err != nil {
		t.Fatalf("AwaitSchemaAgreement: %v", err)
	}
	agreement := time.Since(start)
	t.Logf("gocql: CreateSession %v; CREATE TABLE with schema agreement %v, CREATE KEYSPACE %v; AwaitSchemaAgreement %v",
		connect.Round(time.Microsecond), ddl["table"].Round(time.Microsecond), ddl["keyspace"].Round(time.Microsecond),
		agreement.Round(time.Microsecond))

	t.Run("Policies", func(t *testing.T) { gocqlPolicies(t, s, ks) })
	sess, _ := connectGocql(t, gocqlCluster(s, ks, gocql.TokenAwareHostPolicy(gocql.RoundRobinHostPolicy())))
	t.Run("Paging", func(t *testing.T) { gocqlPaging(t, s, sess, ks) })
	t.Run("Prepared", func(t *testing.T) { gocqlPrepared(t, sess, ks) })
	t.Run("Batches", func(t *testing.T) { gocqlBatches(t, sess) })
	t.Run("Consistency", func(t *testing.T) { gocqlConsistency(t, s, sess, ks) })
}

// gocqlPoint is the application's struct for the user type point.
type gocqlPoint struct {
	X int `cql:"x"`
	Y int `cql:"y"`
}

// gocqlPolicies starts a session with each common host selection policy
// and checks that it finds the gateway, the keyspace's metadata, and
// routing keys from the prepared statements' partition key indexes.
func gocqlPolicies(t *testing.T, s *gateway.Server, ks string) {
	addr := s.Addr().(*net.TCPAddr)
	for _, p := range []struct {
		name   string
		policy func() gocql.HostSelectionPolicy
	}{
		{"TokenAware(RoundRobin)", func() gocql.HostSelectionPolicy {
			return gocql.TokenAwareHostPolicy(gocql.RoundRobinHostPolicy())
		}},
		{"RoundRobin", gocql.RoundRobinHostPolicy},
		{"DCAwareRoundRobin", func() gocql.HostSelectionPolicy { return gocql.DCAwareRoundRobinPolicy("datacenter1") }},
		{"TokenAware(DCAwareRoundRobin)", func() gocql.HostSelectionPolicy {
			return gocql.TokenAwareHostPolicy(gocql.DCAwareRoundRobinPolicy("datacenter1"), gocql.ShuffleReplicas())
		}},
	} {
		t.Run(p.name, func(t *testing.T) {
			// A policy holds the ring of one session: each gets its own.
			sess, took := connectGocql(t, gocqlCluster(s, ks, p.policy()))
			t.Logf("CreateSession with %s: %v", p.name, took.Round(time.Microsecond))

			day := p.name
			for seq := range 6 {
				if err := sess.Query("INSERT INTO events (day, id, seq, at, payload) VALUES (?, ?, ?, ?, ?)",
					day, 1, seq, gocqlPoint{seq, -seq}, "p"+strconv.Itoa(seq)).Exec(); err != nil {
					t.Fatal(err)
				}
			}
			q := sess.Query("SELECT seq, at, payload FROM events WHERE day = ? AND id = ?", day, 1)
			iter := q.Iter()
			var got []string
			var seq int
			var at gocqlPoint
			var payload string
			for iter.Scan(&seq, &at, &payload) {
				got = append(got, fmt.Sprintf("%d:%d,%d:%s", seq, at.X, at.Y, payload))
			}
			if err := iter.Close(); err != nil {
				t.Fatal(err)
			}
			want := []string{"5:5,-5:p5", "4:4,-4:p4", "3:3,-3:p3", "2:2,-2:p2", "1:1,-1:p1", "0:0,0:p0"}
			if !slices.Equal(got, want) {
				t.Errorf("rows %q, want %q", got, want)
			}
			if h := iter.Host(); h == nil || !h.ConnectAddress().Equal(addr.IP) || h.Port() != addr.Port ||
				h.DataCenter() != "datacenter1" || h.Rack() != "rack1" {
				t.Errorf("query ran on %v, want the gateway %v in datacenter1, rack1", h, addr)
			}

			// The routing key of a composite partition key: each part
			// with a two-byte length and a zero byte after it.
			key, err := q.GetRoutingKey()
			if err != nil {
				t.Fatal(err)
			}
			wantKey := append(append([]byte{0, byte(len(day))}, day...), 0, 0, 4, 0, 0, 0, 1, 0)
			if !slices.Equal(key, wantKey) {
				t.Errorf("routing key %x, want %x", key, wantKey)
			}

			md, err := sess.KeyspaceMetadata(ks)
			if err != nil {
				t.Fatal(err)
			}
			ev := md.Tables["events"]
			if ev == nil {
				t.Fatalf("no metadata of table events: %v", md.Tables)
			}
			var pk, ck []string
			for _, c := range ev.PartitionKey {
				pk = append(pk, c.Name)
			}
			for _, c := range ev.ClusteringColumns {
				ck = append(ck, c.Name+" "+c.ClusteringOrder)
			}
			if !slices.Equal(pk, []string{"day", "id"}) || !slices.Equal(ck, []string{"seq desc"}) {
				t.Errorf("events keys: partition %q, clustering %q", pk, ck)
			}
			// gocql keeps a user type column's type as the name the
			// schema gives, unresolved.
			if c := ev.Columns["at"]; c == nil || c.Validator != "point" || c.Kind != gocql.ColumnRegular {
				t.Errorf("column at: %+v, want the regular column of type point", c)
			}
			pt := md.UserTypes["point"]
			if pt == nil || !slices.Equal(pt.FieldNames, []string{"x", "y"}) || len(pt.FieldTypes) != 2 ||
				pt.FieldTypes[0].Type() != gocql.TypeInt || pt.FieldTypes[1].Type() != gocql.TypeInt {
				t.Errorf("user type point: %+v", pt)
			}
			if md.StrategyClass != "org.apache.cassandra.locator.SimpleStrategy" || md.StrategyOptions["replication_factor"] != "3" ||
				!md.DurableWrites {
				t.Errorf("keyspace metadata: %s %v durable %v", md.StrategyClass, md.StrategyOptions, md.DurableWrites)
			}
		})
	}
}

// gocqlPaging pages a partition and a full scan by PageSize, and resumes
// from a PageState, in the same session and in another one.
func gocqlPaging(t *testing.T, s *gateway.Server, sess *gocql.Session, ks string) {
	const rows = 23
	for seq := range rows {
		if err := sess.Query("INSERT INTO readings (sensor, seq, value) VALUES (?, ?, ?)",
			"p", seq, float64(seq)/2).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range []string{"q", "r", "s"} {
		if err := sess.Query("INSERT INTO readings (sensor, seq, value) VALUES (?, 0, 0)", s).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	const sel = "SELECT seq, value FROM readings WHERE sensor = ?"
	var all []int
	for i := range rows {
		all = append(all, i)
	}

	// The iterator fetches the pages itself.
	pages := &pageCounter{}
	iter := sess.Query(sel, "p").PageSize(5).Observer(pages).Iter()
	var got []int
	var seq int
	var value float64
	for iter.Scan(&seq, &value) {
		if value != float64(seq)/2 {
			t.Errorf("seq %d: value %v", seq, value)
		}
		got = append(got, seq)
	}
	if err := iter.Close(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, all) || pages.n.Load() != 5 {
		t.Errorf("pages of 5: %v in %d requests, want %v in 5", got, pages.n.Load(), all)
	}

	// A page at a time, each request resuming from the last page state;
	// the second page is read through another session, since a page
	// state is valid on any connection.
	other, _ := connectGocql(t, gocqlCluster(s, ks, gocql.RoundRobinHostPolicy()))
	var state []byte
	var sizes []int
	got = nil
	for i := 0; ; i++ {
		s := sess
		if i == 1 {
			s = other
		}
		iter := s.Query(sel, "p").PageSize(7).PageState(state).Iter()
		state = iter.PageState()
		n := 0
		for iter.Scan(&seq, &value) {
			got = append(got, seq)
			n++
		}
		if err := iter.Close(); err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, n)
		if len(state) == 0 || i > 10 {
			break
		}
	}
	if !slices.Equal(got, all) || !slices.Equal(sizes, []int{7, 7, 7, 2}) {
		t.Errorf("pages of 7 by page state: %v in pages of %v, want %v in 7, 7, 7, 2", got, sizes, all)
	}

	// A scan pages across partitions in token order, and a page state
	// taken in the middle of a partition resumes there.
	var scan []string
	var tokens []int64
	state = nil
	for i := 0; i < 20; i++ {
		iter := sess.Query("SELECT token(sensor), sensor, seq FROM readings").PageSize(4).PageState(state).Iter()
		state = iter.PageState()
		var tok int64
		var sensor string
		for iter.Scan(&tok, &sensor, &seq) {
			tokens = append(tokens, tok)
			scan = append(scan, sensor+strconv.Itoa(seq))
		}
		if err := iter.Close(); err != nil {
			t.Fatal(err)
		}
		if len(state) == 0 {
			break
		}
	}
	if !slices.IsSorted(tokens) {
		t.Errorf("scan out of token order: %v", tokens)
	}
	var want []string
	for i := range rows {
		want = append(want, "p"+strconv.Itoa(i))
	}
	want = append(want, "q0", "r0", "s0")
	if slices.Sort(scan); !slices.Equal(scan, slices.Sorted(slices.Values(want))) {
		t.Errorf("scan in pages of 4 read %q, want %q", scan, want)
	}
}

// gocqlPrepared runs prepared statements (gocql prepares every DML
// statement) with unset and null values, collections, IN and LIMIT
// markers, one query bound again and again, and a prepare that fails.
func gocqlPrepared(t *testing.T, sess *gocql.Session, ks string) {
	insert := sess.Query("INSERT INTO kv (k, c, v, tags) VALUES (?, ?, ?, ?)")
	for _, args := range [][]any{
		{"x", 1, 1.5, []string{"b", "a"}},
		{"x", 2, nil, nil},
		{"x", 3, 3.5, []string{}},
		{"y", 1, 9.0, []string{"y"}},
	} {
		if err := insert.Bind(args...).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	// An unset value leaves the cell as it is.
	if err := sess.Query("UPDATE kv SET v = ?, tags = tags + ? WHERE k = ? AND c = ?",
		gocql.UnsetValue, []string{"c"}, "x", 1).Exec(); err != nil {
		t.Fatal(err)
	}
	iter := sess.Query("SELECT c, v, tags FROM kv WHERE k = ? AND c IN ? LIMIT ?", "x", []int{3, 1, 2, 9}, 3).Iter()
	var got []string
	var c int
	var v *float64
	var tags []string
	for iter.Scan(&c, &v, &tags) {
		val := "null"
		if v != nil {
			val = strconv.FormatFloat(*v, 'g', -1, 64)
		}
		got = append(got, fmt.Sprintf("%d %s %q", c, val, tags))
		v, tags = nil, nil
	}
	if err := iter.Close(); err != nil {
		t.Fatal(err)
	}
	// An empty set is no set: Cassandra stores no cells for it.
	want := []string{`1 1.5 ["a" "b" "c"]`, `2 null []`, `3 3.5 []`}
	if !slices.Equal(got, want) {
		t.Errorf("rows %q, want %q", got, want)
	}

	var n int
	if err := sess.Query("SELECT count(*) FROM kv WHERE k IN ?", []string{"x", "y"}).Scan(&n); err != nil || n != 4 {
		t.Errorf("count of partitions x, y: %d, %v; want 4", n, err)
	}
	requestError(t, "prepare of an unknown column", sess.Query("SELECT nope FROM kv WHERE k = ?", "x").Exec(),
		gocql.ErrCodeInvalid, "Undefined column name nope in table "+ks+".kv")
}

// gocqlBatches runs logged, unlogged and counter batches and a
// conditional one, and the batch Cassandra refuses.
func gocqlBatches(t *testing.T, sess *gocql.Session) {
	const ins = "INSERT INTO ledger (acct, entry, amount) VALUES (?, ?, ?)"
	logged := sess.NewBatch(gocql.LoggedBatch)
	// Across partitions, so across shards: the batch goes through the
	// batch log.
	for i, acct := range []string{"a1", "a2", "a3", "a4"} {
		logged.Query(ins, acct, 1, 10*(i+1))
	}
	logged.Query("DELETE FROM ledger WHERE acct = ? AND entry = ?", "a4", 1)
	if err := sess.ExecuteBatch(logged); err != nil {
		t.Fatal(err)
	}
	unlogged := sess.NewBatch(gocql.UnloggedBatch)
	unlogged.SetConsistency(gocql.All)
	for entry := range 3 {
		unlogged.Query(ins, "u1", entry, -entry)
	}
	if err := sess.ExecuteBatch(unlogged); err != nil {
		t.Fatal(err)
	}
	counter := sess.NewBatch(gocql.CounterBatch)
	counter.Query("UPDATE hits SET n = n + ? WHERE page = ?", 3, "home")
	counter.Query("UPDATE hits SET n = n + ? WHERE page = ?", 4, "home")
	counter.Query("UPDATE hits SET n = n - ? WHERE page = ?", 2, "about")
	if err := sess.ExecuteBatch(counter); err != nil {
		t.Fatal(err)
	}

	amounts := map[string]int{}
	iter := sess.Query("SELECT acct, entry, amount FROM ledger").Iter()
	var acct string
	var entry, amount int
	for iter.Scan(&acct, &entry, &amount) {
		amounts[acct+"/"+strconv.Itoa(entry)] = amount
	}
	if err := iter.Close(); err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"a1/1": 10, "a2/1": 20, "a3/1": 30, "u1/0": 0, "u1/1": -1, "u1/2": -2}
	if !reflect.DeepEqual(amounts, want) {
		t.Errorf("ledger after the batches: %v, want %v", amounts, want)
	}
	hits := map[string]int64{}
	iter = sess.Query("SELECT page, n FROM hits").Iter()
	var page string
	var n int64
	for iter.Scan(&page, &n) {
		hits[page] = n
	}
	if err := iter.Close(); err != nil {
		t.Fatal(err)
	}
	if want := map[string]int64{"home": 7, "about": -2}; !reflect.DeepEqual(hits, want) {
		t.Errorf("counters after the counter batch: %v, want %v", hits, want)
	}

	bad := sess.NewBatch(gocql.LoggedBatch)
	bad.Query("UPDATE hits SET n = n + 1 WHERE page = ?", "home")
	requestError(t, "counter in a logged batch", sess.ExecuteBatch(bad), gocql.ErrCodeInvalid,
		"Cannot include a counter statement in a logged batch")

	// A conditional batch on one partition: applied once, then refused
	// with the row that stands.
	for i, wantApplied := range []bool{true, false} {
		cas := sess.NewBatch(gocql.LoggedBatch)
		cas.Query("INSERT INTO ledger (acct, entry, amount) VALUES (?, ?, ?) IF NOT EXISTS", "c1", 1, 100+i)
		cas.Query("INSERT INTO ledger (acct, entry, amount) VALUES (?, ?, ?) IF NOT EXISTS", "c1", 2, 200+i)
		row := map[string]any{}
		applied, iter, err := sess.MapExecuteBatchCAS(cas, row)
		if err != nil {
			t.Fatal(err)
		}
		var existing []string
		for ok := true; ok && !applied; ok = iter.MapScan(row) {
			existing = append(existing, fmt.Sprintf("%v/%v=%v", row["acct"], row["entry"], row["amount"]))
			row = map[string]any{}
		}
		if err := iter.Close(); err != nil {
			t.Fatal(err)
		}
		if applied != wantApplied {
			t.Errorf("conditional batch %d: applied %v, want %v", i, applied, wantApplied)
		}
		if !applied && !slices.Equal(existing, []string{"c1/1=100", "c1/2=200"}) {
			t.Errorf("conditional batch not applied: rows %q, want c1/1=100 and c1/2=200", existing)
		}
	}
}

// gocqlConsistency reads and writes at every consistency level with
// three replicas up, refuses what Cassandra refuses, and runs
// lightweight transactions at both serial levels, one of them the
// session's default.
func gocqlConsistency(t *testing.T, s *gateway.Server, sess *gocql.Session, ks string) {
	levels := []gocql.Consistency{gocql.Any, gocql.One, gocql.Two, gocql.Three, gocql.Quorum, gocql.All,
		gocql.LocalQuorum, gocql.EachQuorum, gocql.LocalOne}
	// A row every replica has reads the same at every level.
	if err := sess.Query("INSERT INTO cl (k, v) VALUES (0, 'everywhere')").Consistency(gocql.All).Exec(); err != nil {
		t.Fatal(err)
	}
	for _, cl := range levels[1:] {
		var got string
		if err := sess.Query("SELECT v FROM cl WHERE k = 0").Consistency(cl).Scan(&got); err != nil || got != "everywhere" {
			t.Errorf("read at %v: %q, %v", cl, got, err)
		}
	}
	// A write at any level reads back at ALL, which asks every replica
	// and so meets the one that acknowledged it. (Read back at ONE, it
	// could meet one that the write has not reached yet.)
	for i, cl := range levels {
		k, want := i+1, "v"+cl.String()
		if err := sess.Query("INSERT INTO cl (k, v) VALUES (?, ?)", k, want).Consistency(cl).Exec(); err != nil {
			t.Errorf("write at %v: %v", cl, err)
			continue
		}
		var got string
		if err := sess.Query("SELECT v FROM cl WHERE k = ?", k).Consistency(gocql.All).Scan(&got); err != nil || got != want {
			t.Errorf("write at %v read back at ALL: %q, %v; want %q", cl, got, err, want)
		}
	}
	requestError(t, "read at ANY", sess.Query("SELECT v FROM cl WHERE k = 1").Consistency(gocql.Any).Exec(),
		gocql.ErrCodeInvalid, "ANY ConsistencyLevel is only supported for writes")
	requestError(t, "write at SERIAL", sess.Query("INSERT INTO cl (k, v) VALUES (1, 'x')").
		Consistency(gocql.Consistency(gocql.Serial)).Exec(),
		gocql.ErrCodeInvalid, "You must use conditional updates for serializable writes")
	requestError(t, "counter at ANY", sess.Query("UPDATE hits SET n = n + 1 WHERE page = 'x'").Consistency(gocql.Any).Exec(),
		gocql.ErrCodeInvalid, "Consistency level ANY is not yet supported for counter table hits")

	// A session whose defaults are LOCAL_QUORUM and LOCAL_SERIAL, as a
	// single-datacenter application sets them.
	cfg := gocqlCluster(s, ks, gocql.TokenAwareHostPolicy(gocql.DCAwareRoundRobinPolicy("datacenter1")))
	cfg.Consistency = gocql.LocalQuorum
	cfg.SerialConsistency = gocql.LocalSerial
	local, _ := connectGocql(t, cfg)
	if err := local.Query("INSERT INTO cl (k, v) VALUES (100, 'start')").Exec(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		session  *gocql.Session
		serial   gocql.SerialConsistency
		from, to string
	}{
		{local, 0, "start", "local serial"},
		{sess, gocql.Serial, "local serial", "serial"},
	} {
		q := c.session.Query("UPDATE cl SET v = ? WHERE k = 100 IF v = ?", c.to, c.from)
		if c.serial != 0 {
			q.SerialConsistency(c.serial)
		}
		applied, err := q.ScanCAS()
		if err != nil || !applied {
			t.Errorf("UPDATE IF v = %q: applied %v, %v", c.from, applied, err)
		}
	}
	var v string
	if err := local.Query("SELECT v FROM cl WHERE k = 100").Consistency(gocql.Consistency(gocql.Serial)).Scan(&v); err != nil || v != "serial" {
		t.Errorf("SERIAL read: %q, %v; want \"serial\"", v, err)
	}
	var existing string
	applied, err := local.Query("UPDATE cl SET v = 'no' WHERE k = 100 IF v = 'yes'").ScanCAS(&existing)
	if err != nil || applied || existing != "serial" {
		t.Errorf("UPDATE IF v = 'yes': applied %v with v %q, %v; want not applied with v \"serial\"", applied, existing, err)
	}
}

// hostLog records the gateways, as address:port, that a session's queries
// ran on.
type hostLog struct {
	mu    sync.Mutex
	hosts []string
}

func (l *hostLog) ObserveQuery(_ context.Context, q gocql.ObservedQuery) {
	if q.Err != nil || q.Host == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.hosts = append(l.hosts, net.JoinHostPort(q.Host.ConnectAddress().String(), strconv.Itoa(q.Host.Port())))
}

func (l *hostLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.hosts
	l.hosts = nil
	return out
}

// TestGocqlDriverGateways runs gocql with token-aware routing on two
// gateways: it finds the second in system.peers_v2, waits after DDL until
// both report the new schema version, and sends each key of a keyspace
// with one replica to the gateway whose tokens own it.
func TestGocqlDriverGateways(t *testing.T) {
	waitAlone(t)
	b := startPeerGateway(t)
	ks := fmt.Sprintf("gocql_gw_%d", time.Now().UnixNano())
	hosts := &hostLog{}
	cfg := gocqlCluster(gw, "", gocql.TokenAwareHostPolicy(gocql.RoundRobinHostPolicy()))
	cfg.QueryObserver = hosts
	sess, connect := connectGocql(t, cfg)

	// Until both pools hold a connection, the policy passes over the
	// gateway without one; statements without a routing key go round
	// robin, so both serve these once both are connected.
	eventually(t, "both gateways serving the session", func() bool {
		for range 4 {
			exec(t, sess, "SELECT key FROM system.local")
		}
		seen := hosts.take()
		slices.Sort(seen)
		return len(slices.Compact(seen)) == 2
	})

	ddl := map[string]time.Duration{}
	for _, s := range []struct{ name, cql string }{
		{"keyspace", "CREATE KEYSPACE " + ks + " WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"},
		{"table", "CREATE TABLE " + ks + ".kv (k text PRIMARY KEY, v int)"},
	} {
		start := time.Now()
		exec(t, sess, s.cql)
		ddl[s.name] = time.Since(start)
	}
	t.Logf("gocql on two gateways: CreateSession %v; CREATE TABLE with schema agreement %v, CREATE KEYSPACE %v",
		connect.Round(time.Microsecond), ddl["table"].Round(time.Microsecond), ddl["keyspace"].Round(time.Microsecond))
	// Both gateways serve the new version by the time gocql returns.
	versions := map[string]bool{}
	for _, s := range []*gateway.Server{gw, b} {
		var v gocql.UUID
		if err := sessionOn(t, s, "").Query("SELECT schema_version FROM system.local").Scan(&v); err != nil {
			t.Fatal(err)
		}
		versions[v.String()] = true
	}
	if len(versions) != 1 {
		t.Errorf("after CREATE TABLE returned, the gateways serve schema versions %v", slices.Collect(maps.Keys(versions)))
	}

	// The ring as each gateway describes its own share in system.local.
	owner := map[int64]string{}
	for _, s := range []*gateway.Server{gw, b} {
		var tokens []string
		if err := sessionOn(t, s, "").Query("SELECT tokens FROM system.local").Scan(&tokens); err != nil {
			t.Fatal(err)
		}
		for _, tok := range tokens {
			v, _ := strconv.ParseInt(tok, 10, 64)
			owner[v] = s.Addr().String()
		}
	}
	ring := slices.Sorted(maps.Keys(owner))

	served := map[string]int{}
	hosts.take()
	for i := range 24 {
		k := "key" + strconv.Itoa(i)
		if err := sess.Query("INSERT INTO "+ks+".kv (k, v) VALUES (?, ?)", k, i).Exec(); err != nil {
			t.Fatal(err)
		}
		ran := hosts.take()
		var tok int64
		var v int
		if err := sess.Query("SELECT token(k), v FROM "+ks+".kv WHERE k = ?", k).Scan(&tok, &v); err != nil || v != i {
			t.Fatalf("%s: v %d, %v; want %d", k, v, err, i)
		}
		hosts.take()
		j, _ := slices.BinarySearch(ring, tok)
		want := owner[ring[j%len(ring)]]
		if !slices.Equal(ran, []string{want}) {
			t.Errorf("%s (token %d) ran on %q, want the owner of its token, %s", k, tok, ran, want)
		}
		served[want]++
	}
	if len(served) != 2 {
		t.Errorf("keys by owner %v: want both gateways to own some", served)
	}
}
