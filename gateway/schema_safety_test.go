package gateway_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/cqlpg/cqlpg/gateway"
	"github.com/cqlpg/cqlpg/pgschema"
)

// loadEveryShard loads the schema from each shard's catalog, as a gateway
// starting on it would, and fails the test if any object is left out.
func loadEveryShard(t *testing.T, after string) {
	t.Helper()
	ctx := context.Background()
	for i, u := range shardURLs {
		conn, err := pgx.Connect(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		s, err := pgschema.Load(ctx, conn)
		conn.Close(ctx)
		if err != nil {
			t.Fatalf("after %s: shard %d: load: %v", after, i, err)
		}
		for _, u := range s.Unloadable() {
			t.Fatalf("after %s: shard %d: %v", after, i, u)
		}
	}
}

// TestAlterTypeCircular refuses, with Cassandra's text, every ALTER TYPE
// that would make a user type contain itself, directly or through
// collections, tuples and other types, and the catalog loads afterwards
// on a new gateway with every table serving.
func TestAlterTypeCircular(t *testing.T) {
	sess := session(t, "")
	exec(t, sess,
		"CREATE KEYSPACE circ WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TYPE circ.a (foo int)",
		"CREATE TYPE circ.b (bar frozen<a>)",
		"CREATE TYPE circ.c (baz frozen<list<frozen<b>>>)",
		"CREATE TABLE circ.t (k int PRIMARY KEY, v frozen<c>)",
		"CREATE TABLE circ.keyed (k frozen<a> PRIMARY KEY, v int)",
		"INSERT INTO circ.t (k, v) VALUES (1, {baz: [{bar: {foo: 7}}]})")
	t.Cleanup(func() { exec(t, sess, "DROP KEYSPACE circ") })
	for _, tc := range []struct{ alter, msg string }{
		{"ALTER TYPE circ.a ADD x frozen<b>", "Cannot add new field x of type frozen<b> to user type circ.a as it would create a circular reference"},
		{"ALTER TYPE circ.a ADD y frozen<list<a>>", "Cannot add new field y of type frozen<list<a>> to user type circ.a as it would create a circular reference"},
		{"ALTER TYPE circ.a ADD s set<frozen<c>>", "Cannot add new field s of type set<frozen<c>> to user type circ.a as it would create a circular reference"},
		{"ALTER TYPE circ.a ADD m map<frozen<b>, int>", "Cannot add new field m of type map<frozen<b>, int> to user type circ.a as it would create a circular reference"},
		{"ALTER TYPE circ.a ADD mv map<int, frozen<c>>", "Cannot add new field mv of type map<int, frozen<c>> to user type circ.a as it would create a circular reference"},
		{"ALTER TYPE circ.b ADD tu tuple<int, frozen<c>>", "Cannot add new field tu of type frozen<tuple<int, frozen<c>>> to user type circ.b as it would create a circular reference"},
		{"ALTER TYPE circ.a ADD z list<frozen<nowhere>>", "Unknown type circ.nowhere"},
		{"ALTER TYPE circ.a ADD w int", "Cannot add new field w of type int to user type circ.a as the type is being used in partition key by the following tables: circ.keyed"},
	} {
		requireCQLError(t, sess.Query(tc.alter).Exec(), 0x2200, tc.msg)
	}
	exec(t, sess, "DROP TABLE circ.keyed", "ALTER TYPE circ.a ADD w int", "ALTER TYPE circ.b ADD w int")
	loadEveryShard(t, "the refused ALTER TYPEs")

	other, _ := startLoggedGateway(t, nil)
	osess := sessionOn(t, other, "")
	if n := rowCount(t, osess, "SELECT * FROM circ.t"); n != 1 {
		t.Errorf("rows of circ.t on a new gateway: %d", n)
	}
}

// TestCatalogDamaged damages catalog rows through SQL, as an operator in
// psql could: a column of an unknown type, a keyspace with a strategy that
// does not exist. A gateway started on that catalog serves every other
// keyspace and table; the statements that touch a damaged object answer
// a server error naming it; the log, /readyz and a metric name them; and
// dropping the damaged objects in CQL clears them.
func TestCatalogDamaged(t *testing.T) {
	sess := session(t, "")
	exec(t, sess,
		"CREATE KEYSPACE dmg WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE KEYSPACE dmg_ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE dmg.good (k int PRIMARY KEY, v int)",
		"CREATE TABLE dmg.bad (k int PRIMARY KEY, v int)",
		"CREATE TABLE dmg_ks.t (k int PRIMARY KEY, v int)",
		"INSERT INTO dmg.good (k, v) VALUES (1, 1)",
		"INSERT INTO dmg.bad (k, v) VALUES (1, 1)")
	t.Cleanup(func() {
		onEveryShard(t, `UPDATE cqlpg.keyspaces SET replication = '{"class": "SimpleStrategy", "replication_factor": "1"}'
			WHERE keyspace_name = 'dmg_ks'`)
		onEveryShard(t, `UPDATE cqlpg.columns SET type = 'int' WHERE keyspace_name = 'dmg' AND table_name = 'bad'`)
		exec(t, session(t, ""), "DROP KEYSPACE IF EXISTS dmg", "DROP KEYSPACE IF EXISTS dmg_ks")
	})
	onEveryShard(t, `UPDATE cqlpg.columns SET type = 'frozen<nowhere>'
		WHERE keyspace_name = 'dmg' AND table_name = 'bad' AND column_name = 'v'`)
	onEveryShard(t, `UPDATE cqlpg.keyspaces SET replication = '{"class": "NoSuchStrategy"}' WHERE keyspace_name = 'dmg_ks'`)

	other, logs := startLoggedGateway(t, func(c *gateway.Config) { c.HTTP = "127.0.0.1:0" })
	osess := sessionOn(t, other, "")
	if n := rowCount(t, osess, "SELECT * FROM dmg.good"); n != 1 {
		t.Errorf("dmg.good: %d rows", n)
	}
	requireCQLError(t, osess.Query("SELECT * FROM dmg.bad").Exec(), 0x0000,
		"table dmg.bad cannot be loaded from the catalog: column v: unknown type dmg.nowhere")
	requireCQLError(t, osess.Query("INSERT INTO dmg_ks.t (k, v) VALUES (1, 1)").Exec(), 0x0000,
		`keyspace dmg_ks cannot be loaded from the catalog: Unable to find replication strategy class 'org.apache.cassandra.locator.NoSuchStrategy'`)
	for _, want := range []string{`object=dmg.bad`, `object=dmg_ks`} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log does not name %s:\n%s", want, logs.String())
		}
	}
	resp, err := http.Get("http://" + other.HTTPAddr().String() + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "table dmg.bad cannot be loaded") ||
		!strings.Contains(string(body), "keyspace dmg_ks cannot be loaded") {
		t.Errorf("/readyz: %s %s", resp.Status, body)
	}
	if got := scrape(t, other)["cqlpg_schema_unloadable_objects"]; got != 2 {
		t.Errorf("cqlpg_schema_unloadable_objects = %v, want 2", got)
	}

	// Dropping the damaged objects through CQL clears them everywhere.
	exec(t, osess, "DROP TABLE dmg.bad", "DROP KEYSPACE dmg_ks")
	eventually(t, "no unloadable objects", func() bool {
		return scrape(t, other)["cqlpg_schema_unloadable_objects"] == 0
	})
	loadEveryShard(t, "dropping the damaged objects")
}

var (
	catalogFuzzSeed  = flag.Uint64("catalogfuzz.seed", 17, "TestCatalogFuzz: the seed of its random DDL")
	catalogFuzzSteps = flag.Int("catalogfuzz.steps", 160, "TestCatalogFuzz: how many statements it runs")
)

// TestCatalogFuzz runs random sequences of valid and invalid DDL (types,
// tables, indexes, ALTERs, DROPs) on one gateway. After each step the
// catalog of every shard loads whole, and every table answers a SELECT
// on a second gateway.
func TestCatalogFuzz(t *testing.T) {
	sess := session(t, "")
	other, _ := startLoggedGateway(t, nil)
	osess := sessionOn(t, other, "")
	exec(t, sess, "CREATE KEYSPACE catfuzz WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
	t.Cleanup(func() { exec(t, sess, "DROP KEYSPACE IF EXISTS catfuzz") })
	g := &ddlGen{rng: rand.New(rand.NewPCG(*catalogFuzzSeed, 42))}
	accepted := 0
	for step := range *catalogFuzzSteps {
		stmt := g.next()
		if err := sess.Query(stmt).Exec(); err != nil {
			var re gocql.RequestError
			if !errors.As(err, &re) || re.Code() == gocql.ErrCodeServer {
				t.Fatalf("step %d: %s: %v", step, stmt, err)
			}
			continue
		}
		accepted++
		loadEveryShard(t, stmt)
		var tables []string
		iter := sess.Query("SELECT table_name FROM system_schema.tables WHERE keyspace_name = 'catfuzz'").Iter()
		for name := ""; iter.Scan(&name); {
			tables = append(tables, name)
		}
		if err := iter.Close(); err != nil {
			t.Fatal(err)
		}
		for _, tbl := range tables {
			var err error
			eventually(t, "SELECT from catfuzz."+tbl+" after "+stmt, func() bool {
				if err = osess.Query("SELECT * FROM catfuzz." + tbl + " LIMIT 1").Exec(); err != nil {
					t.Logf("SELECT from catfuzz.%s after %s: %v", tbl, stmt, err)
				}
				return err == nil
			})
		}
	}
	t.Logf("%d of %d statements accepted", accepted, *catalogFuzzSteps)
	if accepted < *catalogFuzzSteps/5 {
		t.Errorf("only %d statements accepted: the generator tries too little", accepted)
	}
}

// ddlGen writes random DDL over a small set of names in keyspace catfuzz,
// so that statements meet each other's objects: types that nest types,
// tables that use them, ALTERs and DROPs of both. Many are invalid.
type ddlGen struct {
	rng *rand.Rand
	col int
}

func (g *ddlGen) pick(options ...string) string { return options[g.rng.IntN(len(options))] }

func (g *ddlGen) typeName() string  { return g.pick("ta", "tb", "tc", "td") }
func (g *ddlGen) tableName() string { return g.pick("x", "y", "z") }

// cqlType writes a column or field type, nesting up to depth.
func (g *ddlGen) cqlType(depth int) string {
	if depth == 0 || g.rng.IntN(3) == 0 {
		return g.pick("int", "text", "bigint", "uuid", "timestamp", "blob", "duration", "counter")
	}
	switch g.rng.IntN(6) {
	case 0:
		return "frozen<" + g.typeName() + ">"
	case 1:
		return "list<" + g.frozen(depth-1) + ">"
	case 2:
		return "set<" + g.frozen(depth-1) + ">"
	case 3:
		return "map<" + g.frozen(depth-1) + ", " + g.cqlType(depth-1) + ">"
	case 4:
		return "tuple<" + g.cqlType(depth-1) + ", " + g.cqlType(depth-1) + ">"
	}
	return g.typeName()
}

func (g *ddlGen) frozen(depth int) string {
	t := g.cqlType(depth)
	if g.rng.IntN(4) > 0 && !strings.HasPrefix(t, "tuple") {
		return "frozen<" + t + ">"
	}
	return t
}

func (g *ddlGen) column() string {
	g.col++
	return "c" + strconv.Itoa(g.col%7)
}

func (g *ddlGen) next() string {
	ks := "catfuzz."
	switch g.rng.IntN(12) {
	case 0, 1:
		return "CREATE TYPE " + ks + g.typeName() + " (f1 " + g.cqlType(2) + ", f2 " + g.cqlType(1) + ")"
	case 2:
		return "ALTER TYPE " + ks + g.typeName() + " ADD " + g.pick("f3", "f4", "f5") + " " + g.cqlType(2)
	case 3:
		return "ALTER TYPE " + ks + g.typeName() + " RENAME " + g.pick("f1", "f2", "f3") + " TO " + g.pick("g1", "g2", "f1")
	case 4:
		return "DROP TYPE " + ks + g.typeName()
	case 5, 6:
		key := g.pick("k int", "k text", "k frozen<"+g.typeName()+">", "k "+g.frozen(2))
		clustering := g.pick("", ", c0 int", ", c0 "+g.frozen(1))
		pk := "k"
		if clustering != "" {
			pk = "k, c0"
		}
		static := ""
		if clustering != "" && g.rng.IntN(2) == 0 {
			static = ", s " + g.cqlType(1) + " STATIC"
		}
		return "CREATE TABLE " + ks + g.tableName() + " (" + key + clustering + static + ", v " + g.cqlType(2) +
			", PRIMARY KEY (" + pk + "))"
	case 7:
		return "ALTER TABLE " + ks + g.tableName() + " ADD " + g.column() + " " + g.cqlType(2)
	case 8:
		return "ALTER TABLE " + ks + g.tableName() + " DROP " + g.pick("v", "s", g.column())
	case 9:
		return "ALTER TABLE " + ks + g.tableName() + " RENAME " + g.pick("k", "c0") + " TO " + g.pick("kk", "cc", "v")
	case 10:
		return "CREATE INDEX ON " + ks + g.tableName() + " (" + g.pick("v", "c0", "s", "keys(v)", "values(v)", "full(v)", g.column()) + ")"
	}
	return "DROP TABLE " + ks + g.tableName()
}

// TestAlterUnderLoad runs prepared reads and writes through gocql at full
// speed on a table while another session adds and drops columns of it:
// no request fails, and every read returns the columns of the schema of
// its moment (the client's prepared shape, refreshed when the gateway
// answers UNPREPARED): that after the ALTERs done when it started, or
// after one of those running meanwhile; keys first, and only rows of the
// partition asked for.
func TestAlterUnderLoad(t *testing.T) {
	sess := session(t, "")
	exec(t, sess,
		"CREATE KEYSPACE alter_load WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 2}",
		"CREATE TYPE alter_load.pt (x int, y int)",
		"CREATE TABLE alter_load.t (k int, c int, v int, p frozen<pt>, s int STATIC, PRIMARY KEY (k, c))")
	t.Cleanup(func() { exec(t, sess, "DROP KEYSPACE IF EXISTS alter_load") })
	load := session(t, "alter_load")
	alters := []string{
		"ALTER TABLE t ADD a1 int", "ALTER TABLE t ADD a2 text", "ALTER TYPE pt ADD z int",
		"ALTER TABLE t DROP a1", "ALTER TABLE t ADD (a3 int, a4 bigint)", "ALTER TABLE t DROP s",
		"ALTER TABLE t ADD s int STATIC", "ALTER TABLE t DROP a2", "ALTER TABLE t ADD a1 int",
		"ALTER TABLE t DROP (a3, a4)", "ALTER TABLE t ADD a5 frozen<pt>", "ALTER TABLE t DROP a1",
		"ALTER TABLE t DROP a5", "ALTER TABLE t ADD a6 list<int>", "ALTER TYPE pt RENAME z TO zz",
		"ALTER TABLE t DROP a6", "ALTER TABLE t ADD a7 int", "ALTER TABLE t DROP a7",
		"ALTER TABLE t ADD a8 set<text>", "ALTER TABLE t DROP a8",
	}
	// states[i] is the table's columns, sorted, after the first i ALTERs.
	cols := []string{"c", "k", "p", "s", "v"}
	states := []string{strings.Join(cols, " ")}
	for _, a := range alters {
		for _, op := range []string{"ADD", "DROP"} {
			rest, ok := strings.CutPrefix(a, "ALTER TABLE t "+op+" ")
			if !ok {
				continue
			}
			for _, def := range strings.Split(strings.Trim(rest, "()"), ", ") {
				name := strings.Fields(def)[0]
				if op == "ADD" {
					cols = append(cols, name)
				} else {
					cols = slices.DeleteFunc(cols, func(c string) bool { return c == name })
				}
			}
			slices.Sort(cols)
		}
		states = append(states, strings.Join(cols, " "))
	}
	// The ALTERs started and finished so far.
	var started, done atomic.Int64
	// read checks a read's columns, and that its rows are of partition k.
	var seen sync.Map
	read := func(k int) error {
		first := done.Load()
		iter := load.Query("SELECT * FROM t WHERE k = ?", k).Iter()
		var names []string
		for _, c := range iter.Columns() {
			names = append(names, c.Name)
		}
		var rows []map[string]any
		for {
			row := map[string]any{}
			if !iter.MapScan(row) {
				break
			}
			rows = append(rows, row)
		}
		if err := iter.Close(); err != nil {
			return err
		}
		// The schema of the read's moment is that after the ALTERs done
		// when it started, or one of those running meanwhile.
		last := started.Load()
		if len(names) < 2 || names[0] != "k" || names[1] != "c" ||
			!slices.Contains(states[first:last+1], strings.Join(slices.Sorted(slices.Values(names)), " ")) {
			return fmt.Errorf("columns %v, want those of one of %q", names, states[first:last+1])
		}
		seen.Store(strings.Join(names, " "), true)
		for _, row := range rows {
			if c, ok := row["c"].(int); row["k"] != k || !ok || c < 0 || c >= 7 {
				return fmt.Errorf("read of partition %d: row %v", k, row)
			}
		}
		return nil
	}
	stop := make(chan struct{})
	var (
		wg            sync.WaitGroup
		reads, writes atomic.Int64
		undefined     atomic.Int64
		failures      = make(chan error, 100)
	)
	for w := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				k := w*1000 + i%50
				var err error
				switch i % 3 {
				case 0:
					err = load.Query("INSERT INTO t (k, c, v, p) VALUES (?, ?, ?, {x: 1, y: 2})", k, i%7, i).Exec()
					writes.Add(1)
				case 1:
					err = load.Query("UPDATE t SET v = ?, s = ? WHERE k = ? AND c = ?", i, i, k, i%7).Exec()
					writes.Add(1)
				default:
					err = read(k)
					reads.Add(1)
				}
				// While s is dropped, an UPDATE of it is refused as
				// Cassandra refuses it: the schema of the moment.
				var re gocql.RequestError
				if errors.As(err, &re) && re.Code() == gocql.ErrCodeInvalid &&
					re.Message() == "Undefined column name s in table alter_load.t" {
					undefined.Add(1)
					err = nil
				}
				if err != nil {
					select {
					case failures <- fmt.Errorf("%d: %w", i%3, err):
					default:
					}
				}
			}
		})
	}
	ddl := session(t, "alter_load")
	for _, a := range alters {
		time.Sleep(50 * time.Millisecond)
		started.Add(1)
		exec(t, ddl, a)
		done.Add(1)
	}
	time.Sleep(100 * time.Millisecond)
	close(stop)
	wg.Wait()
	close(failures)
	for err := range failures {
		t.Errorf("request failed during ALTERs: %v", err)
	}
	distinct := map[string]bool{}
	for _, st := range states {
		distinct[st] = true
	}
	nseen := 0
	seen.Range(func(any, any) bool { nseen++; return true })
	t.Logf("%d reads and %d writes during %d ALTERs, %d updates of s refused while it was dropped, reads saw %d of %d schemas",
		reads.Load(), writes.Load(), len(alters), undefined.Load(), nseen, len(distinct))
	if reads.Load() < 100 || writes.Load() < 100 {
		t.Errorf("too little load ran: %d reads, %d writes", reads.Load(), writes.Load())
	}
}

// TestDDLGuard runs DDL in SQL on a shard, as an operator in psql would:
// what would break cqlpg's picture of a CQL table is refused by Postgres
// with a hint naming the CQL statement to use instead; what leaves it as
// it was stays allowed; CQL DDL still passes.
func TestDDLGuard(t *testing.T) {
	sess := session(t, "")
	exec(t, sess,
		"CREATE KEYSPACE guard WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}",
		"CREATE TABLE guard.t (k int, c int, v int, s int STATIC, PRIMARY KEY (k, c)) WITH CLUSTERING ORDER BY (c DESC)",
		"CREATE INDEX t_v ON guard.t (v)",
		"INSERT INTO guard.t (k, c, v, s) VALUES (1, 2, 3, 4)",
		// The layout the gateway's own ALTER leaves is recorded too.
		"ALTER TABLE guard.t ADD added int")
	t.Cleanup(func() { exec(t, sess, "DROP KEYSPACE IF EXISTS guard") })
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, shardURLs[0])
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, tc := range []struct{ sql, hint string }{
		{"ALTER TABLE guard.t RENAME COLUMN v TO w", "ALTER TABLE guard.t DROP column"},
		{"ALTER TABLE guard.t DROP COLUMN v", "ALTER TABLE guard.t DROP column"},
		{"ALTER TABLE guard.t DROP COLUMN added", "ALTER TABLE guard.t DROP column"},
		{`ALTER TABLE guard.t DROP COLUMN "v$wt"`, "ALTER TABLE guard.t DROP column"},
		{"ALTER TABLE guard.t ALTER COLUMN v TYPE bigint", "A CQL column's type cannot change"},
		{`ALTER TABLE guard."t$static" DROP COLUMN s`, "ALTER TABLE guard.t DROP column"},
		{`DROP INDEX guard."t$key"`, "DROP TABLE guard.t"},
		{`DROP INDEX guard.t_v`, "DROP INDEX guard.name"},
		{`DROP TABLE guard."t$static"`, "DROP TABLE guard.t"},
		{"ALTER TABLE guard.t RENAME TO u", "DROP TABLE guard.t"},
		{"ALTER TABLE guard.t SET SCHEMA public", "DROP TABLE guard.t"},
		{"DROP TABLE guard.t", "DROP TABLE guard.t"},
		{"DROP SCHEMA guard CASCADE", "DROP KEYSPACE guard"},
		{"ALTER SCHEMA guard RENAME TO guard2", "DROP KEYSPACE guard"},
	} {
		_, err := conn.Exec(ctx, tc.sql)
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "55006" || !strings.Contains(pgErr.Hint, tc.hint) {
			t.Errorf("%s: %v (hint %q), want SQLSTATE 55006 with a hint naming %q", tc.sql, err, hintOf(err), tc.hint)
		}
	}
	for _, sql := range []string{
		"CREATE INDEX my_v ON guard.t (v, k)",
		"DROP INDEX guard.my_v",
		"COMMENT ON COLUMN guard.t.v IS 'my note'",
		"GRANT SELECT ON guard.t TO PUBLIC",
		"ALTER TABLE guard.t ALTER COLUMN v SET STATISTICS 500",
		"ALTER TABLE guard.t SET (fillfactor = 90)",
		"CREATE STATISTICS guard.t_stats ON k, v FROM guard.t",
		"DROP STATISTICS guard.t_stats",
		"VACUUM guard.t",
		"ANALYZE guard.t",
		"CREATE TABLE public.guard_other (a int)",
		"ALTER TABLE public.guard_other RENAME COLUMN a TO b",
		"DROP TABLE public.guard_other",
	} {
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Errorf("%s: %v", sql, err)
		}
	}
	if got := ints(t, sess, "SELECT v FROM guard.t WHERE k = 1"); !slices.Equal(got, []int{3}) {
		t.Errorf("rows after the refused DDL: %v", got)
	}
	exec(t, sess, "ALTER TABLE guard.t ADD w int", "DROP INDEX guard.t_v", "ALTER TABLE guard.t DROP v",
		"ALTER TABLE guard.t RENAME c TO cc", "DROP TABLE guard.t")
}

func hintOf(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Hint
	}
	return ""
}

// TestRecreatedTable drops a table and creates it again under the same
// name with other column types, as a suite of tests run one after another
// does: the statements of the old table, prepared on the shards'
// connections for its types, are never used for the new one.
func TestRecreatedTable(t *testing.T) {
	sess := session(t, "")
	exec(t, sess, "CREATE KEYSPACE recreated WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}")
	t.Cleanup(func() { exec(t, sess, "DROP KEYSPACE IF EXISTS recreated") })
	query := "SELECT * FROM recreated.t WHERE k = 0 AND c1 = ? AND c2 IN (?, ?) ORDER BY c1 DESC"
	for round, typ := range []string{"text", "int", "bigint", "blob", "ascii", "int"} {
		// A driver keeps the types of the statements it prepared: a new
		// session learns the new ones, as a new test's would.
		sess := session(t, "")
		exec(t, sess, "DROP TABLE IF EXISTS recreated.t",
			"CREATE TABLE recreated.t (k int, c1 "+typ+", c2 "+typ+", v "+typ+", PRIMARY KEY (k, c1, c2))")
		lit := map[string]func(int) any{
			"text":   func(n int) any { return strconv.Itoa(n) },
			"ascii":  func(n int) any { return strconv.Itoa(n) },
			"int":    func(n int) any { return n },
			"bigint": func(n int) any { return int64(n) },
			"blob":   func(n int) any { return []byte{byte(n)} },
		}[typ]
		for c2 := range 3 {
			if err := sess.Query("INSERT INTO recreated.t (k, c1, c2, v) VALUES (0, ?, ?, ?)", lit(0), lit(c2), lit(c2)).Exec(); err != nil {
				t.Fatalf("round %d (%s): insert: %v", round, typ, err)
			}
		}
		for _, q := range []string{query, strings.NewReplacer("= ?", "= "+cqlLiteral(lit(0)), "(?, ?)", "("+cqlLiteral(lit(2))+", "+cqlLiteral(lit(0))+")").Replace(query)} {
			args := []any{lit(0), lit(2), lit(0)}
			if !strings.Contains(q, "?") {
				args = nil
			}
			rows, err := queryRows(sess.Query(q, args...))
			if err != nil {
				t.Fatalf("round %d (%s): %s: %v", round, typ, q, err)
			}
			want := []string{fmt.Sprintf("0 %v %v %v", lit(0), lit(2), lit(2)), fmt.Sprintf("0 %v %v %v", lit(0), lit(0), lit(0))}
			if !slices.Equal(rows, want) {
				t.Errorf("round %d (%s): %s: %v, want rows (0, 0, 2) then (0, 0, 0)", round, typ, q, rows)
			}
		}
	}
}

// cqlLiteral writes a value of TestRecreatedTable as a CQL literal.
func cqlLiteral(v any) string {
	switch v := v.(type) {
	case string:
		return "'" + v + "'"
	case []byte:
		return fmt.Sprintf("0x%x", v)
	}
	return fmt.Sprint(v)
}

// TestDropColumnUsingTimestamp follows Cassandra's dropped-column rule: a
// column dropped USING TIMESTAMP and added again shows the cells written
// after the drop time, and not those written at or before it; a static
// column dropped and added again starts empty.
func TestDropColumnUsingTimestamp(t *testing.T) {
	sess := sessionAll(t, "")
	exec(t, sess,
		"CREATE KEYSPACE dropts WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}",
		"CREATE TABLE dropts.t (id int, c1 int, v1 int, todrop int, s int STATIC, PRIMARY KEY (id, c1))")
	t.Cleanup(func() { exec(t, sess, "DROP KEYSPACE IF EXISTS dropts") })
	for i := range 5 {
		if err := sess.Query("INSERT INTO dropts.t (id, c1, v1, todrop, s) VALUES (?, ?, ?, ?, ?) USING TIMESTAMP ?",
			1, i, i, i, i, 10000*i).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	exec(t, sess, "ALTER TABLE dropts.t DROP todrop USING TIMESTAMP 20000")
	// The static column holds the value of the newest write, 4.
	wantRows(t, sess.Query("SELECT * FROM dropts.t"), "id int, c1 int, s int, v1 int",
		"1 | 0 | 4 | 0", "1 | 1 | 4 | 1", "1 | 2 | 4 | 2", "1 | 3 | 4 | 3", "1 | 4 | 4 | 4")
	exec(t, sess, "ALTER TABLE dropts.t ADD todrop int",
		"INSERT INTO dropts.t (id, c1, v1, todrop) VALUES (1, 100, 100, 100) USING TIMESTAMP 30000")
	wantRows(t, sess.Query("SELECT * FROM dropts.t"), "id int, c1 int, s int, todrop int, v1 int",
		"1 | 0 | 4 | null | 0", "1 | 1 | 4 | null | 1", "1 | 2 | 4 | null | 2", "1 | 3 | 4 | 3 | 3", "1 | 4 | 4 | 4 | 4",
		"1 | 100 | 4 | 100 | 100")
	// The drop's record outlives the re-add: new writes at or before the
	// drop time stay hidden, whatever the statement; the row's other
	// cells and its marker are written.
	exec(t, sess,
		"INSERT INTO dropts.t (id, c1, v1, todrop) VALUES (1, 101, 101, 101) USING TIMESTAMP 20000",
		"UPDATE dropts.t USING TIMESTAMP 15000 SET todrop = 102 WHERE id = 1 AND c1 = 102",
		"UPDATE dropts.t USING TIMESTAMP 20000 SET todrop = 10, v1 = 10 WHERE id = 1 AND c1 = 0",
		"UPDATE dropts.t USING TIMESTAMP 20001 SET todrop = 11 WHERE id = 1 AND c1 = 1",
		"BEGIN BATCH USING TIMESTAMP 19999 INSERT INTO dropts.t (id, c1, todrop) VALUES (1, 103, 103); APPLY BATCH")
	if err := sess.Query("UPDATE dropts.t USING TIMESTAMP ? SET todrop = ? WHERE id = 1 AND c1 = 2", 20000, 12).Exec(); err != nil {
		t.Fatal(err)
	}
	wantRows(t, sess.Query("SELECT * FROM dropts.t"), "id int, c1 int, s int, todrop int, v1 int",
		"1 | 0 | 4 | null | 10", "1 | 1 | 4 | 11 | 1", "1 | 2 | 4 | null | 2", "1 | 3 | 4 | 3 | 3", "1 | 4 | 4 | 4 | 4",
		"1 | 100 | 4 | 100 | 100", "1 | 101 | 4 | null | 101", "1 | 103 | 4 | null | null")
	exec(t, sess, "DELETE FROM dropts.t WHERE id = 1 AND c1 IN (101, 103)")

	// So do a collection's: appends and element writes.
	exec(t, sess, "CREATE TABLE dropts.c (k int PRIMARY KEY, v int, l list<int>, m map<int, text>)",
		"INSERT INTO dropts.c (k, v, l, m) VALUES (1, 1, [1], {1: 'a'}) USING TIMESTAMP 10000",
		"ALTER TABLE dropts.c DROP l USING TIMESTAMP 20000", "ALTER TABLE dropts.c DROP m USING TIMESTAMP 20000",
		"ALTER TABLE dropts.c ADD l list<int>", "ALTER TABLE dropts.c ADD m map<int, text>",
		"UPDATE dropts.c USING TIMESTAMP 15000 SET l = l + [2], m[2] = 'b' WHERE k = 1",
		"UPDATE dropts.c USING TIMESTAMP 15000 SET l = [3], m = m + {3: 'c'} WHERE k = 2",
		"UPDATE dropts.c USING TIMESTAMP 25000 SET l = l + [4], m[4] = 'd' WHERE k = 3")
	wantRows(t, sess.Query("SELECT k, v, l, m FROM dropts.c"), "k int, v int, l list(int), m map(int, varchar)",
		"1 | 1 | null | null", "3 | null | [4] | map[4:d]")
	exec(t, sess, "ALTER TABLE dropts.t DROP s", "ALTER TABLE dropts.t ADD s int STATIC")
	wantRows(t, sess.Query("SELECT id, c1, s FROM dropts.t WHERE id = 1 LIMIT 1"), "id int, c1 int, s int", "1 | 0 | null")
	exec(t, sess, "ALTER TABLE dropts.t DROP todrop", "ALTER TABLE dropts.t ADD todrop int")
	wantRows(t, sess.Query("SELECT * FROM dropts.t WHERE id = 1 AND c1 = 4"), "id int, c1 int, s int, todrop int, v1 int",
		"1 | 4 | null | null | 4")
}

// TestKeyspaceValidation: NetworkTopologyStrategy naming a datacenter no
// shard is in is accepted with a client warning that names it (the seeds
// need it), the same datacenter twice is a syntax error, and ALTER
// KEYSPACE of durable_writes alone is accepted, as in Cassandra.
func TestKeyspaceValidation(t *testing.T) {
	sess := session(t, "")
	t.Cleanup(func() { exec(t, sess, "DROP KEYSPACE IF EXISTS ks_nodc") })
	iter := sess.Query("CREATE KEYSPACE ks_nodc WITH replication = {'class': 'NetworkTopologyStrategy', 'us-east': 3, 'datacenter1': 1}").Iter()
	warnings := iter.Warnings()
	if err := iter.Close(); err != nil {
		t.Fatal(err)
	}
	want := "Datacenter us-east of the replication of keyspace ks_nodc has no shard: its replicas there are not written until a shard of datacenter us-east joins the ring"
	if !slices.Equal(warnings, []string{want}) {
		t.Errorf("warnings %q, want %q", warnings, want)
	}
	exec(t, sess, "ALTER KEYSPACE ks_nodc WITH durable_writes = true", "CREATE TABLE ks_nodc.t (k int PRIMARY KEY)",
		"INSERT INTO ks_nodc.t (k) VALUES (1)")
	requireCQLError(t, sess.Query("CREATE KEYSPACE ks_dup WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': 3, 'dc1': 2}").Exec(),
		0x2000, "Multiple definition for property dc1")
	requireCQLError(t, sess.Query("ALTER KEYSPACE ks_nodc WITH replication = {'dc1': 1}").Exec(),
		0x2300, "Missing replication strategy class")
}
