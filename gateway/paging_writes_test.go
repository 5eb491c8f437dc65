package gateway_test

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocql/gocql"
)

// The tests of this file page through queries of every shape the gateway
// pages while rows are written and deleted around the page's position,
// between pages and concurrently, and check what paging promises: each
// row that exists throughout is returned once, in order, and no row is
// returned twice.

// pwRow is a row of the tables pwTables defines, as a query returns it:
// the partition key and the values of the clustering columns the query
// identifies rows by (all of them, those of a GROUP BY, or none for a
// partition).
type pwRow struct {
	k  int
	ck []float64
}

func (r pwRow) String() string { return fmt.Sprint(r.k, r.ck) }

// pwTable is one table of the tests: the direction of each clustering
// column (1 ASC, -1 DESC) and the statements writing its rows.
type pwTable struct {
	name   string
	dirs   []int
	insert string
	delete string
	// args returns the key and clustering values of a full row.
	args func(r pwRow) []any
}

var pwTables = map[string]*pwTable{
	// c DESC, a static column and an index on w. Every row has v = w = 1.
	"t": {name: "t", dirs: []int{-1},
		insert: "INSERT INTO t (k, c, v, w) VALUES (?, ?, 1, 1)",
		delete: "DELETE FROM t WHERE k = ? AND c = ?",
		args:   func(r pwRow) []any { return []any{r.k, int(r.ck[0])} }},
	// t in ascending clustering order, which a scan resumes in one
	// statement.
	"u": {name: "u", dirs: []int{1},
		insert: "INSERT INTO u (k, c, v, w) VALUES (?, ?, 1, 1)",
		delete: "DELETE FROM u WHERE k = ? AND c = ?",
		args:   func(r pwRow) []any { return []any{r.k, int(r.ck[0])} }},
	// a DESC then b ASC, b a double, whose order key the index holds.
	"m": {name: "m", dirs: []int{-1, 1},
		insert: "INSERT INTO m (k, a, b, v) VALUES (?, ?, ?, 1)",
		delete: "DELETE FROM m WHERE k = ? AND a = ? AND b = ?",
		args:   func(r pwRow) []any { return []any{r.k, int(r.ck[0]), r.ck[1]} }},
}

// pwData is the rows each run starts with: stable rows, never deleted,
// and doomed ones that runs delete ahead of the position, whole
// partitions among them; t also has partitions holding only static data.
type pwData struct {
	stable, doomed []pwRow
	staticOnly     []int
	doomedParts    []int
}

func pwInitial(table string) pwData {
	var d pwData
	switch table {
	case "t", "u":
		for k := 1; k <= 5; k++ {
			for c := 1000; c <= 6000; c += 1000 {
				d.stable = append(d.stable, pwRow{k, []float64{float64(c)}})
			}
			for _, c := range []float64{1500, 2500, 3500} {
				d.doomed = append(d.doomed, pwRow{k, []float64{c}})
			}
		}
		d.staticOnly = []int{20, 21}
		for _, k := range []int{30, 31} {
			d.doomed = append(d.doomed, pwRow{k, []float64{1000}}, pwRow{k, []float64{2000}})
		}
		d.doomedParts = []int{30, 31}
	case "m":
		for k := 1; k <= 3; k++ {
			for a := 10; a <= 30; a += 10 {
				for _, b := range []float64{1, 2, 3} {
					d.stable = append(d.stable, pwRow{k, []float64{float64(a), b}})
				}
				for _, b := range []float64{1.5, 2.5} {
					d.doomed = append(d.doomed, pwRow{k, []float64{float64(a), b}})
				}
			}
		}
		d.doomed = append(d.doomed, pwRow{30, []float64{10, 1.5}})
		d.doomedParts = []int{30}
	}
	return d
}

// pwShape is a query the gateway pages, and what the test knows of its
// rows: the table, the partitions it reads (keys, in the order of the IN
// list's type, or a token bound for a scan), how deep its rows are
// identified, and its limits.
type pwShape struct {
	name, table, stmt string
	args              []any
	// scan: partitions come in token order, from those past minToken
	// when set; else the query reads keys.
	scan     bool
	minToken *int64
	keys     []int
	reversed bool
	// depth is the number of clustering columns a result row identifies.
	depth int
	// static says partitions holding only static data read as a row.
	static bool
	// perPartition and limit are PER PARTITION LIMIT and LIMIT, 0 for none.
	perPartition, limit int
	// extra is the number of result columns after the key ones (counts).
	extra int
}

func pwShapes() []pwShape {
	mid := intToken(byToken(1, 2, 3, 4, 5, 20, 21, 30, 31)[4])
	return []pwShape{
		{name: "partition", table: "t", stmt: "SELECT k, c FROM t WHERE k = 3", keys: []int{3}, depth: 1, static: true},
		{name: "partition reversed", table: "t", stmt: "SELECT k, c FROM t WHERE k = 3 ORDER BY c ASC", keys: []int{3},
			reversed: true, depth: 1, static: true},
		{name: "IN list", table: "t", stmt: "SELECT k, c FROM t WHERE k IN (5, 1, 20, 3, 31)", keys: []int{1, 3, 5, 20, 31},
			depth: 1, static: true},
		{name: "token range", table: "t", stmt: "SELECT k, c FROM t WHERE token(k) > ?", args: []any{mid}, scan: true,
			minToken: &mid, depth: 1, static: true},
		{name: "scan", table: "t", stmt: "SELECT k, c FROM t", scan: true, depth: 1, static: true},
		{name: "scan ascending", table: "u", stmt: "SELECT k, c FROM u", scan: true, depth: 1, static: true},
		{name: "ALLOW FILTERING", table: "t", stmt: "SELECT k, c FROM t WHERE v = 1 ALLOW FILTERING", scan: true, depth: 1},
		{name: "secondary index", table: "t", stmt: "SELECT k, c FROM t WHERE w = 1", scan: true, depth: 1},
		{name: "PER PARTITION LIMIT", table: "t", stmt: "SELECT k, c FROM t PER PARTITION LIMIT 3", scan: true, depth: 1,
			static: true, perPartition: 3},
		{name: "PER PARTITION LIMIT ascending", table: "u", stmt: "SELECT k, c FROM u PER PARTITION LIMIT 3", scan: true,
			depth: 1, static: true, perPartition: 3},
		{name: "IN list PER PARTITION LIMIT", table: "t", stmt: "SELECT k, c FROM t WHERE k IN (1, 2, 3) PER PARTITION LIMIT 2",
			keys: []int{1, 2, 3}, depth: 1, perPartition: 2},
		{name: "LIMIT", table: "t", stmt: "SELECT k, c FROM t LIMIT 20", scan: true, depth: 1, static: true, limit: 20},
		{name: "mixed order", table: "m", stmt: "SELECT k, a, b FROM m WHERE k = 2", keys: []int{2}, depth: 2},
		{name: "mixed order reversed", table: "m", stmt: "SELECT k, a, b FROM m WHERE k = 2 ORDER BY a ASC, b DESC",
			keys: []int{2}, reversed: true, depth: 2},
		{name: "mixed order scan", table: "m", stmt: "SELECT k, a, b FROM m", scan: true, depth: 2},
		{name: "GROUP BY", table: "m", stmt: "SELECT k, a, count(*) FROM m WHERE k = 2 GROUP BY k, a", keys: []int{2},
			depth: 1, extra: 1},
		{name: "GROUP BY scan", table: "m", stmt: "SELECT k, a, count(*) FROM m GROUP BY k, a", scan: true, depth: 1, extra: 1},
		{name: "GROUP BY scan ascending", table: "u", stmt: "SELECT k, c, count(*) FROM u GROUP BY k, c", scan: true,
			depth: 1, static: true, extra: 1},
		{name: "GROUP BY partition", table: "t", stmt: "SELECT k, count(*) FROM t GROUP BY k", scan: true, static: true, extra: 1},
		{name: "GROUP BY partition in a list", table: "t", stmt: "SELECT k, count(*) FROM t WHERE k IN (1, 2, 3, 20) GROUP BY k",
			keys: []int{1, 2, 3, 20}, static: true, extra: 1},
		{name: "DISTINCT", table: "t", stmt: "SELECT DISTINCT k FROM t", scan: true, static: true},
		{name: "DISTINCT in a list", table: "t", stmt: "SELECT DISTINCT k FROM t WHERE k IN (1, 2, 20, 30, 31)",
			keys: []int{1, 2, 20, 30, 31}, static: true},
	}
}

var pagingWritesOnce sync.Once

// pagingWritesSession returns a session on keyspace pagingw, whose
// replication factor of 2 makes reads at QUORUM merge two replicas.
func pagingWritesSession(t testing.TB) *gocql.Session {
	t.Helper()
	pagingWritesOnce.Do(func() {
		exec(t, session(t, ""),
			"CREATE KEYSPACE IF NOT EXISTS pagingw WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 2}",
			"CREATE TABLE IF NOT EXISTS pagingw.t (k int, c int, v int, w int, s int static, PRIMARY KEY (k, c)) "+
				"WITH CLUSTERING ORDER BY (c DESC)",
			"CREATE INDEX IF NOT EXISTS ON pagingw.t (w)",
			"CREATE TABLE IF NOT EXISTS pagingw.u (k int, c int, v int, w int, s int static, PRIMARY KEY (k, c))",
			"CREATE TABLE IF NOT EXISTS pagingw.m (k int, a int, b double, v int, PRIMARY KEY (k, a, b)) "+
				"WITH CLUSTERING ORDER BY (a DESC, b ASC)")
	})
	return session(t, "pagingw")
}

// TestPagingWhileWriting pages through each shape with pages of one and
// of four rows. After each page it inserts rows just before the page's
// last row and just after it, in that row's partition and in partitions
// before and after, and deletes rows ahead; meanwhile another goroutine
// writes and deletes partitions of its own. Every stable row must come
// once, rows must come in the query's order without repeats, no row
// deleted ahead may come, and LIMIT and PER PARTITION LIMIT must hold.
func TestPagingWhileWriting(t *testing.T) {
	sess := pagingWritesSession(t)
	for _, sh := range pwShapes() {
		for _, size := range []int{1, 4} {
			t.Run(fmt.Sprintf("%s/pages of %d", sh.name, size), func(t *testing.T) {
				r := newPWRun(t, sess, sh)
				r.page(size)
			})
		}
	}
}

// pwRun is one paging of one shape.
type pwRun struct {
	t    *testing.T
	sess *gocql.Session
	sh   pwShape
	tab  *pwTable
	data pwData
	// known holds every full row ever written, which new rows avoid;
	// deleted holds the rows deleted ahead of the position.
	known   map[string]bool
	deleted map[string]bool
	n       int
}

func newPWRun(t *testing.T, sess *gocql.Session, sh pwShape) *pwRun {
	r := &pwRun{t: t, sess: sess, sh: sh, tab: pwTables[sh.table], data: pwInitial(sh.table),
		known: map[string]bool{}, deleted: map[string]bool{}}
	exec(t, sess, "TRUNCATE "+sh.table)
	b := sess.NewBatch(gocql.UnloggedBatch)
	for _, row := range append(slices.Clone(r.data.stable), r.data.doomed...) {
		r.known[row.String()] = true
		b.Query(r.tab.insert, r.tab.args(row)...)
	}
	for _, k := range r.data.staticOnly {
		b.Query("UPDATE "+sh.table+" SET s = 1 WHERE k = ?", k)
	}
	if err := sess.ExecuteBatch(b); err != nil {
		t.Fatal(err)
	}
	return r
}

// dirs returns the direction in which the query reads each clustering
// column.
func (r *pwRun) dir(i int) float64 {
	d := r.tab.dirs[i]
	if r.sh.reversed {
		d = -d
	}
	return float64(d)
}

// place compares two rows in the order the query returns them: partition
// (by token for a scan, by key for a list of keys), then clustering values
// in the query's directions, a row identifying fewer first.
func (r *pwRun) place(a, b pwRow) int {
	part := func(k int) int64 {
		if r.sh.scan {
			return intToken(k)
		}
		return int64(k)
	}
	if c := cmp.Or(cmp.Compare(part(a.k), part(b.k)), cmp.Compare(a.k, b.k)); c != 0 {
		return c
	}
	for i := 0; i < len(a.ck) && i < len(b.ck); i++ {
		if c := cmp.Compare(r.dir(i)*a.ck[i], r.dir(i)*b.ck[i]); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(a.ck), len(b.ck))
}

// reads reports whether the query reads partition k.
func (r *pwRun) reads(k int) bool {
	if !r.sh.scan {
		return slices.Contains(r.sh.keys, k)
	}
	return r.sh.minToken == nil || intToken(k) > *r.sh.minToken
}

// project returns a full row as the query identifies it.
func (r *pwRun) project(row pwRow) pwRow {
	return pwRow{row.k, row.ck[:min(len(row.ck), r.sh.depth)]}
}

// expected returns the stable rows the query must return, in its order:
// for PER PARTITION LIMIT, the first rows of each partition, of which none
// is deleted.
func (r *pwRun) expected() []pwRow {
	seen := map[string]bool{}
	var out []pwRow
	add := func(row pwRow) {
		if r.reads(row.k) && !seen[row.String()] {
			seen[row.String()] = true
			out = append(out, row)
		}
	}
	rows := r.data.stable
	if r.sh.perPartition > 0 {
		rows = append(slices.Clone(rows), r.data.doomed...)
	}
	for _, row := range rows {
		add(r.project(row))
	}
	if r.sh.static {
		for _, k := range r.data.staticOnly {
			add(pwRow{k: k})
		}
	}
	slices.SortFunc(out, r.place)
	if n := r.sh.perPartition; n > 0 {
		inPartition := map[int]int{}
		out = slices.DeleteFunc(out, func(row pwRow) bool {
			inPartition[row.k]++
			return inPartition[row.k] > n
		})
	}
	return out
}

// page reads the query size rows a page, writing around each page's last
// row, and checks the rows.
func (r *pwRun) page(size int) {
	t, sh := r.t, r.sh
	stop := r.churn()
	var got []pwRow
	var state []byte
	pages := 0
	for {
		iter := r.sess.Query(sh.stmt, sh.args...).PageSize(size).PageState(state).Iter()
		var k int
		var ck [2]*float64
		var ci *int
		var count int64
		dests := []any{&k}
		switch {
		case sh.table != "m" && sh.depth == 1:
			dests = append(dests, &ci)
		case sh.table == "m" && sh.depth >= 1:
			dests = append(dests, &ci)
			if sh.depth == 2 {
				dests = append(dests, &ck[1])
			}
		}
		if sh.extra > 0 {
			dests = append(dests, &count)
		}
		n := 0
		for iter.Scan(dests...) {
			row := pwRow{k: k}
			if ci != nil {
				row.ck = append(row.ck, float64(*ci))
			}
			if ck[1] != nil {
				row.ck = append(row.ck, *ck[1])
			}
			got = append(got, row)
			ci, ck[1] = nil, nil
			n++
		}
		state = iter.PageState()
		if err := iter.Close(); err != nil {
			stop()
			t.Fatalf("page %d: %v", pages+1, err)
		}
		pages++
		if n > size || len(state) > 0 && n != size {
			t.Errorf("page %d holds %d rows, pages of %d", pages, n, size)
		}
		if len(state) == 0 {
			break
		}
		if i := len(got) - 1; i > 0 && r.place(got[i-1], got[i]) >= 0 {
			stop()
			t.Fatalf("page %d: row %v comes after %v: not in order, or repeated", pages, got[i], got[i-1])
		}
		if pages > 500 {
			stop()
			t.Fatal("more than 500 pages")
		}
		r.writeAround(got[len(got)-1], got[0])
	}
	stop()
	r.check(got, pages)
}

// check checks the rows a paging returned.
func (r *pwRun) check(got []pwRow, pages int) {
	t, sh := r.t, r.sh
	want := r.expected()
	if pages < 2 && len(want) > len(got) {
		t.Errorf("read in %d page", pages)
	}
	for i := 1; i < len(got); i++ {
		if r.place(got[i-1], got[i]) >= 0 {
			t.Errorf("row %d, %v, comes after %v: not in order, or repeated", i, got[i], got[i-1])
		}
	}
	for _, row := range got {
		if r.deleted[row.String()] {
			t.Errorf("row %v, deleted ahead of the position, was returned", row)
		}
	}
	returned := map[string]bool{}
	for _, row := range got {
		returned[row.String()] = true
	}
	if sh.limit > 0 {
		if len(got) != sh.limit {
			t.Errorf("%d rows with LIMIT %d", len(got), sh.limit)
		}
		want = slices.DeleteFunc(want, func(row pwRow) bool { return len(got) > 0 && r.place(row, got[len(got)-1]) > 0 })
	}
	var missing []string
	for _, row := range want {
		if !returned[row.String()] {
			missing = append(missing, row.String())
		}
	}
	if len(missing) > 0 {
		t.Errorf("stable rows not returned: %s\ngot %v", strings.Join(missing, ", "), got)
	}
	if sh.perPartition > 0 {
		// The rows of each partition are its first: those written behind
		// the position neither come nor count. Partitions of concurrent
		// writes are left out.
		var stable []string
		for _, row := range got {
			if row.k < 100 {
				stable = append(stable, row.String())
			}
		}
		var wantRows []string
		for _, row := range want {
			wantRows = append(wantRows, row.String())
		}
		if !slices.Equal(stable, wantRows) {
			t.Errorf("rows of stable partitions\n got %v\nwant %v", stable, wantRows)
		}
	}
}

// fresh returns a new value for clustering column i, far from the others.
func (r *pwRun) fresh(i int) float64 {
	r.n++
	if r.tab.name == "m" && i == 1 {
		return 7 + float64(r.n)/1024
	}
	return float64(100000 + r.n)
}

// near returns a new full row in the partition of row, just before it
// (side -1) or just after it (side 1) in the query's order: the row's last
// identified column moves by a little, the columns past it are new. Just
// before a row that identifies a group or a partition is inside it.
func (r *pwRun) near(row pwRow, side int) pwRow {
	full := len(r.tab.dirs)
	for {
		ck := make([]float64, full)
		copy(ck, row.ck)
		for j := len(row.ck); j < full; j++ {
			ck[j] = r.fresh(j)
		}
		if d := len(row.ck); d > 0 && (side > 0 || d == full) {
			r.n++
			step := float64(r.n)
			if r.tab.name == "m" && d == 2 {
				step /= 1024
			}
			ck[d-1] = row.ck[d-1] + float64(side)*r.dir(d-1)*step
		}
		if out := (pwRow{row.k, ck}); !r.known[out.String()] {
			return out
		}
	}
}

func (r *pwRun) insert(row pwRow) {
	r.known[row.String()] = true
	execArgs(r.t, r.sess, r.tab.insert, r.tab.args(row)...)
}

// exec2 runs one statement with values, failing the test on error.
func execArgs(t *testing.T, sess *gocql.Session, stmt string, args ...any) {
	t.Helper()
	if err := sess.Query(stmt, args...).Exec(); err != nil {
		t.Fatalf("%s %v: %v", stmt, args, err)
	}
}

// writeAround writes around the last row of a page: rows just before and
// just after it, in a partition read before and in one read after, and
// deletes the next doomed rows or partition. Rows are written ahead only
// after rows the run started with, so that the paging ends; with PER
// PARTITION LIMIT none are written ahead nor deleted, which would change
// which rows of a partition come first.
func (r *pwRun) writeAround(last, first pwRow) {
	sh := r.sh
	r.insert(r.near(last, -1))
	ahead := sh.perPartition == 0 && r.initial(last)
	if ahead && len(last.ck) > 0 {
		r.insert(r.near(last, 1))
	}
	if first.k != last.k && r.place(pwRow{k: first.k}, pwRow{k: last.k}) < 0 && slices.Contains(r.partitions(), first.k) {
		r.insert(r.near(pwRow{k: first.k}, -1))
	}
	if ahead {
		for _, k := range r.partitions() {
			if r.reads(k) && r.place(pwRow{k: k}, pwRow{k: last.k}) > 0 {
				r.insert(r.near(pwRow{k: k}, -1))
				break
			}
		}
	}
	if sh.perPartition > 0 {
		return
	}
	if sh.depth == 0 {
		for _, k := range r.data.doomedParts {
			if !r.deleted[pwRow{k: k}.String()] && r.reads(k) && r.place(pwRow{k: k}, last) > 0 {
				execArgs(r.t, r.sess, "DELETE FROM "+r.tab.name+" WHERE k = ?", k)
				r.deleted[pwRow{k: k}.String()] = true
				break
			}
		}
		return
	}
	deletes := 0
	for _, row := range r.data.doomed {
		p := r.project(row)
		if deletes < 2 && !r.deleted[row.String()] && r.reads(row.k) && r.place(p, last) > 0 {
			execArgs(r.t, r.sess, r.tab.delete, r.tab.args(row)...)
			r.deleted[row.String()] = true
			deletes++
		}
	}
}

// initial reports whether a row returned is one the run started with.
func (r *pwRun) initial(row pwRow) bool {
	for _, rows := range [][]pwRow{r.data.stable, r.data.doomed} {
		for _, o := range rows {
			if r.project(o).String() == row.String() {
				return true
			}
		}
	}
	return len(row.ck) == 0 && slices.Contains(r.data.staticOnly, row.k)
}

// partitions returns the partitions of stable rows, which writes around
// the position add rows to.
func (r *pwRun) partitions() []int {
	var out []int
	for _, row := range r.data.stable {
		if !slices.Contains(out, row.k) {
			out = append(out, row.k)
		}
	}
	return out
}

// churn writes and deletes rows of partitions 100 to 139 of the run's
// table until the returned function is called, concurrently with the
// paging: partitions that come and go before and after the position.
func (r *pwRun) churn() (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
		var written []pwRow
		for i := 0; ctx.Err() == nil; i++ {
			row := pwRow{100 + rng.IntN(40), []float64{float64(rng.IntN(50))}}
			if r.tab.name == "m" {
				row.ck = append(row.ck, float64(rng.IntN(50)))
			}
			stmt, args := r.tab.insert, r.tab.args(row)
			if i%3 == 2 && len(written) > 0 {
				j := rng.IntN(len(written))
				stmt, args = r.tab.delete, r.tab.args(written[j])
				written = slices.Delete(written, j, j+1)
			} else {
				written = append(written, row)
			}
			if err := r.sess.Query(stmt, args...).WithContext(ctx).Exec(); err != nil && ctx.Err() == nil {
				done <- fmt.Errorf("%s %v: %w", stmt, args, err)
				return
			}
		}
		done <- nil
	}()
	return func() {
		cancel()
		if err := <-done; err != nil {
			r.t.Errorf("concurrent writes: %v", err)
		}
	}
}

// TestPagingStateRefused checks that a paging state altered anywhere, cut
// short, or sent with another query is refused with Cassandra's answer,
// and that another gateway on the same shards takes the state up.
func TestPagingStateRefused(t *testing.T) {
	sess := pagingWritesSession(t)
	exec(t, sess, "CREATE TABLE IF NOT EXISTS refused (k int, c int, PRIMARY KEY (k, c))")
	for c := range 10 {
		execArgs(t, sess, "INSERT INTO refused (k, c) VALUES (1, ?)", c)
	}
	const stmt = "SELECT c FROM refused WHERE k = 1"
	page := func(sess *gocql.Session, stmt string, state []byte) ([]int, []byte, error) {
		iter := sess.Query(stmt).PageSize(3).PageState(state).Iter()
		var rows []int
		var c int
		for iter.Scan(&c) {
			rows = append(rows, c)
		}
		next := iter.PageState()
		return rows, next, iter.Close()
	}
	first, state, err := page(sess, stmt, nil)
	if err != nil || !slices.Equal(first, []int{0, 1, 2}) || len(state) == 0 {
		t.Fatalf("first page %v, state %x: %v", first, state, err)
	}
	refused := map[string][]byte{"truncated": state[:len(state)-1], "lengthened": append(slices.Clone(state), 0)}
	for _, i := range []int{0, 1, len(state) / 2, len(state) - 1} {
		b := slices.Clone(state)
		b[i] ^= 0x10
		refused[fmt.Sprintf("byte %d flipped", i)] = b
	}
	for name, b := range refused {
		_, _, err := page(sess, stmt, b)
		t.Run(name, func(t *testing.T) { requireCQLError(t, err, 0x000A, "Invalid value for the paging state") })
	}
	_, _, err = page(sess, "SELECT c, k FROM refused WHERE k = 1", state)
	t.Run("other query", func(t *testing.T) { requireCQLError(t, err, 0x000A, "Invalid value for the paging state") })

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	other, err := startGateway(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Shutdown(context.Background())
	rows, _, err := page(sessionOn(t, other, "pagingw"), stmt, state)
	if err != nil || !slices.Equal(rows, []int{3, 4, 5}) {
		t.Errorf("the next page from another gateway: %v, %v; want [3 4 5]", rows, err)
	}
}

// BenchmarkPagedRead measures reading one page of 100 rows through gocql:
// the first page of a partition of 5,000 rows, a page deep into it (after
// 4,000 rows), a page deep into a scan of 500 partitions of 10 rows, and
// one deep into a scan of 5 partitions of 1,000 rows in descending
// clustering order, halfway through the third.
func BenchmarkPagedRead(b *testing.B) {
	sess := session(b, "")
	exec(b, sess,
		"CREATE KEYSPACE IF NOT EXISTS pgbench WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE IF NOT EXISTS pgbench.part (k int, c int, v text, PRIMARY KEY (k, c))",
		"CREATE TABLE IF NOT EXISTS pgbench.scan (k int, c int, v text, PRIMARY KEY (k, c))",
		"CREATE TABLE IF NOT EXISTS pgbench.scandesc (k int, c int, v text, PRIMARY KEY (k, c)) "+
			"WITH CLUSTERING ORDER BY (c DESC)")
	var n int
	if err := sess.Query("SELECT count(*) FROM pgbench.part WHERE k = 1").Scan(&n); err != nil {
		b.Fatal(err)
	}
	if n == 0 {
		for c := 0; c < 5000; c += 100 {
			batch := sess.NewBatch(gocql.UnloggedBatch)
			for i := c; i < c+100; i++ {
				batch.Query("INSERT INTO pgbench.part (k, c, v) VALUES (1, ?, 'value')", i)
				batch.Query("INSERT INTO pgbench.scan (k, c, v) VALUES (?, ?, 'value')", i/10, i%10)
				batch.Query("INSERT INTO pgbench.scandesc (k, c, v) VALUES (?, ?, 'value')", i/1000, i%1000)
			}
			if err := sess.ExecuteBatch(batch); err != nil {
				b.Fatal(err)
			}
		}
	}
	// stateAfter pages through stmt, 100 rows a page, until rows have been
	// read, and returns the paging state there.
	stateAfter := func(stmt string, rows int) []byte {
		var state []byte
		for read := 0; read < rows; read += 100 {
			iter := sess.Query(stmt).PageSize(100).PageState(state).Iter()
			state = iter.PageState()
			if err := iter.Close(); err != nil || len(state) == 0 {
				b.Fatalf("%s after %d rows: %v", stmt, read, err)
			}
		}
		return state
	}
	for _, bc := range []struct {
		name, stmt string
		after      int
	}{
		{"partition/first-page", "SELECT k, c, v FROM pgbench.part WHERE k = 1", 0},
		{"partition/deep-page", "SELECT k, c, v FROM pgbench.part WHERE k = 1", 4000},
		{"scan/deep-page", "SELECT k, c, v FROM pgbench.scan", 2500},
		{"scan-desc/deep-page", "SELECT k, c, v FROM pgbench.scandesc", 2500},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var state []byte
			if bc.after > 0 {
				state = stateAfter(bc.stmt, bc.after)
			}
			var k, c int
			var v string
			for b.Loop() {
				iter := sess.Query(bc.stmt).PageSize(100).PageState(state).Iter()
				got := 0
				for iter.Scan(&k, &c, &v) {
					got++
				}
				if err := iter.Close(); err != nil || got != 100 {
					b.Fatalf("%d rows: %v", got, err)
				}
			}
		})
	}
}
