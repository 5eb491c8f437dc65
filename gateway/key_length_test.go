package gateway_test

import (
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
