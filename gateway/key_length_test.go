package gateway_test

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/gocql/gocql"
)

// TestKeyLength refuses a partition key longer than Cassandra's 65535
// bytes with Cassandra's text, alone and composite, in writes and reads.
func TestKeyLength(t *testing.T) {
	sess := session(t, "")
	exec(t, sess, "CREATE KEYSPACE IF NOT EXISTS keylen WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE IF NOT EXISTS keylen.t (k text PRIMARY KEY, v int)",
		"CREATE TABLE IF NOT EXISTS keylen.c (k1 text, k2 text, v int, PRIMARY KEY ((k1, k2)))")
	t.Cleanup(func() { exec(t, sess, "DROP KEYSPACE IF EXISTS keylen") })
	long := strings.Repeat("x", 70000)
	requireCQLError(t, sess.Query("INSERT INTO keylen.t (k, v) VALUES (?, 1)", long).Exec(), 0x2200,
		"Key length of 70000 is longer than maximum of 65535")
	requireCQLError(t, sess.Query("SELECT v FROM keylen.t WHERE k = ?", long).Exec(), 0x2200,
		"Key length of 70000 is longer than maximum of 65535")
	half := strings.Repeat("y", 33000)
	requireCQLError(t, sess.Query("INSERT INTO keylen.c (k1, k2, v) VALUES (?, ?, 1)", half, half).Exec(), 0x2200,
		"Key length of 66006 is longer than maximum of 65535")
	exec(t, sess, "INSERT INTO keylen.t (k, v) VALUES ('"+strings.Repeat("z", 1000)+"', 1)")
}

// TestTextNUL stores text and ascii values holding U+0000 (Postgres text
// cannot hold it: they are stored escaped) as keys and cells, reads them
// back as written, in Cassandra's order of their bytes.
func TestTextNUL(t *testing.T) {
	sess := sessionAll(t, "")
	exec(t, sess, "CREATE KEYSPACE IF NOT EXISTS textnul WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 2}",
		"CREATE TABLE IF NOT EXISTS textnul.t (k text, c ascii, v text, l list<text>, m map<text, text>, PRIMARY KEY (k, c))")
	t.Cleanup(func() { exec(t, sess, "DROP KEYSPACE IF EXISTS textnul") })
	key := "a\x00b"
	values := []string{"\x01", "\x00", "", "\x00\x00", "a", "\x00\x01"}
	for _, c := range values {
		if err := sess.Query("INSERT INTO textnul.t (k, c, v) VALUES (?, ?, ?)", key, c, "v"+c+"\x00").Exec(); err != nil {
			t.Fatalf("insert %q: %v", c, err)
		}
	}
	iter := sess.Query("SELECT k, c, v FROM textnul.t WHERE k = ?", key).Iter()
	var k, c, v string
	var got []string
	for iter.Scan(&k, &c, &v) {
		if k != key || v != "v"+c+"\x00" {
			t.Errorf("row %q %q %q", k, c, v)
		}
		got = append(got, c)
	}
	if err := iter.Close(); err != nil {
		t.Fatal(err)
	}
	want := slices.Sorted(slices.Values(values))
	if !slices.Equal(got, want) {
		t.Errorf("clustering order %q, want %q", got, want)
	}
	if n := rowCount(t, sess, "SELECT * FROM textnul.t WHERE k = ? AND c = ?", key, "\x00\x01"); n != 1 {
		t.Errorf("a row read by its key holding U+0000: %d rows", n)
	}
	list := []string{"\x00", "a\x01", ""}
	if err := sess.Query("UPDATE textnul.t SET l = ? WHERE k = 'x' AND c = 'y'", list).Exec(); err != nil {
		t.Fatal(err)
	}
	var gotList []string
	if err := sess.Query("SELECT l FROM textnul.t WHERE k = 'x' AND c = 'y'").Scan(&gotList); err != nil || !slices.Equal(gotList, list) {
		t.Errorf("list<text> holding U+0000: %q %v, want %q", gotList, err, list)
	}
	m := map[string]string{"a\x00": "\x00\x01", "\x01": ""}
	if err := sess.Query("UPDATE textnul.t SET m = ? WHERE k = 'x' AND c = 'y'", m).Exec(); err != nil {
		t.Fatal(err)
	}
	if err := sess.Query("UPDATE textnul.t SET m['b\x00'] = 'c' WHERE k = 'x' AND c = 'y'").Exec(); err != nil {
		t.Fatal(err)
	}
	var gotMap map[string]string
	if err := sess.Query("SELECT m FROM textnul.t WHERE k = 'x' AND c = 'y'").Scan(&gotMap); err != nil || len(gotMap) != 3 ||
		gotMap["a\x00"] != "\x00\x01" || gotMap["b\x00"] != "c" {
		t.Errorf("map<text, text> holding U+0000: %q %v", gotMap, err)
	}
}

// TestUnsetValues answers unset values where Cassandra refuses them with
// Cassandra's texts: a key, a list index, a map key, a function argument.
func TestUnsetValues(t *testing.T) {
	sess := session(t, "")
	exec(t, sess, "CREATE KEYSPACE IF NOT EXISTS unset_values WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE IF NOT EXISTS unset_values.t (k int PRIMARY KEY, v int, l list<int>, m map<int, int>)",
		"INSERT INTO unset_values.t (k, v, l, m) VALUES (0, 0, [1], {1: 1})")
	t.Cleanup(func() { exec(t, sess, "DROP KEYSPACE IF EXISTS unset_values") })
	unset := gocql.UnsetValue
	for _, tc := range []struct{ query, msg string }{
		{"INSERT INTO unset_values.t (k, v) VALUES (?, 1)", "Invalid unset value for column k"},
		{"UPDATE unset_values.t SET l[?] = 1 WHERE k = 0", "Invalid unset value for list index"},
		{"DELETE l[?] FROM unset_values.t WHERE k = 0", "Invalid unset value for list index"},
		{"UPDATE unset_values.t SET m[?] = 1 WHERE k = 0", "Invalid unset map key"},
		{"DELETE m[?] FROM unset_values.t WHERE k = 0", "Invalid unset map key"},
		{"INSERT INTO unset_values.t (k, v) VALUES (1, blobAsInt(?))", "Invalid unset value for argument in call to function blobasint"},
	} {
		requireCQLError(t, sess.Query(tc.query, unset).Exec(), 0x2200, tc.msg)
	}
	// An unset value for a cell or a limit leaves it alone, as in Cassandra.
	exec(t, sess, "UPDATE unset_values.t SET v = 5 WHERE k = 0")
	if err := sess.Query("UPDATE unset_values.t SET v = ?, l[0] = ? WHERE k = 0", unset, unset).Exec(); err != nil {
		t.Fatal(err)
	}
	if got := ints(t, sess, "SELECT v FROM unset_values.t WHERE k = 0 LIMIT ?", unset); !slices.Equal(got, []int{5}) {
		t.Errorf("after unset writes: %v", got)
	}
	// The refused writes and the unset l[0] left the collections as written.
	wantRows(t, sess.Query("SELECT v, l, m FROM unset_values.t WHERE k = 0"), "", "5 | [1] | map[1:1]")
}

// TestLongKeys stores keys up to Cassandra's 65535 bytes that Postgres's
// B-tree could not index as they are (over about 2.7 KB, incompressible):
// partition and clustering keys, text (multi-byte characters at the cut)
// and blobs, alone and composite, read back exactly, found by equality,
// ordered among shorter values as Cassandra orders them, paged through,
// deleted by ranges bounded by them and written conditionally.
func TestLongKeys(t *testing.T) {
	sess := sessionAll(t, "")
	exec(t, sess, "CREATE KEYSPACE IF NOT EXISTS longkeys WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 2}",
		"CREATE TABLE IF NOT EXISTS longkeys.p (k text PRIMARY KEY, v int)",
		"CREATE TABLE IF NOT EXISTS longkeys.c (k text, c blob, v int, PRIMARY KEY (k, c))",
		"CREATE TABLE IF NOT EXISTS longkeys.t (k1 text, k2 blob, c text, v int, s int STATIC, PRIMARY KEY ((k1, k2), c)) WITH CLUSTERING ORDER BY (c DESC)")
	t.Cleanup(func() { exec(t, sess, "DROP KEYSPACE IF EXISTS longkeys") })
	r := rand.New(rand.NewPCG(17, 17))
	text := func(n int) string { // printable ASCII, which Postgres cannot compress much
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(' ' + r.IntN(95))
		}
		return string(b)
	}
	blob := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return b
	}

	// Partition keys, up to the maximum.
	for _, n := range []int{2000, 3000, 20000, 65535} {
		k := text(n)
		exec1(t, sess.Query("INSERT INTO longkeys.p (k, v) VALUES (?, ?)", k, n))
		var got string
		var v int
		if err := sess.Query("SELECT k, v FROM longkeys.p WHERE k = ?", k).Scan(&got, &v); err != nil || got != k || v != n {
			t.Errorf("key of %d bytes: read %d bytes, v %d, %v", n, len(got), v, err)
		}
		if applied, err := sess.Query("INSERT INTO longkeys.p (k, v) VALUES (?, 0) IF NOT EXISTS", k).MapScanCAS(map[string]any{}); err != nil || applied {
			t.Errorf("key of %d bytes: IF NOT EXISTS applied %v, %v", n, applied, err)
		}
		exec1(t, sess.Query("DELETE FROM longkeys.p WHERE k = ?", k))
		if n := rowCount(t, sess, "SELECT * FROM longkeys.p WHERE k = ?", k); n != 0 {
			t.Errorf("deleted long key: %d rows", n)
		}
	}

	// Clustering blobs, short and long, in byte order; two long ones share
	// their first 10000 bytes and are told apart by the rest.
	k := text(30000)
	shared := blob(10000)
	values := [][]byte{{}, {0x00}, {0x7f}, {0xff}, blob(100), blob(3000), blob(3000), blob(40000),
		append(slices.Clone(shared), 1), append(slices.Clone(shared), 2)}
	values = append(values, values[6][:2999], append(slices.Clone(values[6]), 0))
	for i, c := range values {
		exec1(t, sess.Query("INSERT INTO longkeys.c (k, c, v) VALUES (?, ?, ?)", k, c, i))
	}
	sorted := slices.Clone(values)
	slices.SortFunc(sorted, bytes.Compare)
	read := func(q *gocql.Query) [][]byte {
		t.Helper()
		var out [][]byte
		iter := q.Iter()
		var c []byte
		for iter.Scan(&c) {
			out = append(out, slices.Clone(c))
		}
		if err := iter.Close(); err != nil {
			t.Fatal(err)
		}
		return out
	}
	same := func(what string, got, want [][]byte) {
		t.Helper()
		if !slices.EqualFunc(got, want, bytes.Equal) {
			t.Errorf("%s: %d rows %v, want %d %v", what, len(got), lens(got), len(want), lens(want))
		}
	}
	// Values longer than the table's key limit (hundreds of bytes: 818
	// here) that share their first limit bytes come together, in digest
	// order (docs/types.md): sort each such run before comparing.
	orderless := func(rows [][]byte) [][]byte {
		out := slices.Clone(rows)
		run := func(a, b []byte) bool { return len(a) > 500 && len(b) > 500 && bytes.Equal(a[:500], b[:500]) }
		for i := 0; i < len(out); {
			j := i + 1
			for j < len(out) && run(out[i], out[j]) {
				j++
			}
			slices.SortFunc(out[i:j], bytes.Compare)
			i = j
		}
		return out
	}
	same("partition", orderless(read(sess.Query("SELECT c FROM longkeys.c WHERE k = ?", k))), sorted)
	same("paged", orderless(read(sess.Query("SELECT c FROM longkeys.c WHERE k = ?", k).PageSize(2))), sorted)
	for i, c := range values {
		var v int
		if err := sess.Query("SELECT v FROM longkeys.c WHERE k = ? AND c = ?", k, c).Scan(&v); err != nil || v != i {
			t.Errorf("clustering of %d bytes: v %d, %v; want %d", len(c), v, err, i)
		}
	}
	lo := values[5] // a 3000-byte bound
	var above [][]byte
	for _, c := range sorted {
		if bytes.Compare(c, lo) > 0 {
			above = append(above, c)
		}
	}
	same("slice above a long bound", orderless(read(sess.Query("SELECT c FROM longkeys.c WHERE k = ? AND c > ?", k, lo))), above)
	exec1(t, sess.Query("DELETE FROM longkeys.c WHERE k = ? AND c > ?", k, lo))
	same("after a range deletion", orderless(read(sess.Query("SELECT c FROM longkeys.c WHERE k = ?", k))), sorted[:len(sorted)-len(above)])

	// A composite partition key of two long parts, text clustering with
	// two-byte characters across the cut, DESC, and a static column.
	k1, k2 := text(30000), blob(30000)
	texts := []string{"", "a", strings.Repeat("é", 10000), strings.Repeat("é", 10000) + "a", text(5000), strings.Repeat("é", 3000) + "ü"}
	for i, c := range texts {
		exec1(t, sess.Query("INSERT INTO longkeys.t (k1, k2, c, v, s) VALUES (?, ?, ?, ?, ?)", k1, k2, c, i, i))
	}
	var got []string
	iter := sess.Query("SELECT k1, k2, c, s FROM longkeys.t WHERE k1 = ? AND k2 = ?", k1, k2).PageSize(2).Iter()
	var gk1, gc string
	var gk2 []byte
	var s int
	for iter.Scan(&gk1, &gk2, &gc, &s) {
		if gk1 != k1 || !bytes.Equal(gk2, k2) || s != len(texts)-1 {
			t.Errorf("row %d: partition key of %d and %d bytes, static %d", len(got), len(gk1), len(gk2), s)
		}
		got = append(got, gc)
	}
	if err := iter.Close(); err != nil {
		t.Fatal(err)
	}
	want := slices.Sorted(slices.Values(texts))
	slices.Reverse(want)
	// The three that share their first 500 bytes of é come together.
	run := func(a string) bool { return strings.HasPrefix(a, strings.Repeat("é", 250)) }
	i := slices.IndexFunc(got, run)
	if i >= 0 && i+3 <= len(got) && run(got[i+1]) && run(got[i+2]) {
		slices.Sort(got[i : i+3])
		slices.Reverse(got[i : i+3])
	}
	if !slices.Equal(got, want) {
		t.Errorf("text clustering DESC: got lengths %v, want %v", strLens(got), strLens(want))
	}
}

func lens(rows [][]byte) []int {
	out := make([]int, len(rows))
	for i, r := range rows {
		out[i] = len(r)
	}
	return out
}

func strLens(rows []string) []int {
	out := make([]int, len(rows))
	for i, r := range rows {
		out[i] = len(r)
	}
	return out
}
