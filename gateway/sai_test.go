package gateway_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/gocql/gocql"
)

// TestSAIQueries creates storage-attached indexes by each of Cassandra
// 5.0's names and queries through them as Cassandra 5.0 allows: ranges on
// numbers and dates, equality on text, several indexed columns together
// and with a partition key, all without ALLOW FILTERING, where a legacy
// index answers one equality alone. The index shows as CUSTOM, with
// SAI's class, in system_schema.indexes and DESCRIBE.
func TestSAIQueries(t *testing.T) {
	sess := session(t, "")
	exec(t, sess, "CREATE KEYSPACE IF NOT EXISTS sai WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE IF NOT EXISTS sai.t (k int, c int, n int, d date, s text, legacy int, tags set<text>, attrs map<text, int>, "+
			"PRIMARY KEY (k, c))",
		"CREATE INDEX IF NOT EXISTS t_tags ON sai.t (tags) USING 'sai'",
		"CREATE INDEX IF NOT EXISTS t_attrs ON sai.t (KEYS(attrs)) USING 'sai'",
		"CREATE INDEX IF NOT EXISTS t_n ON sai.t (n) USING 'sai'",
		"CREATE CUSTOM INDEX IF NOT EXISTS t_d ON sai.t (d) USING 'StorageAttachedIndex'",
		"CREATE CUSTOM INDEX IF NOT EXISTS t_s ON sai.t (s) USING 'org.apache.cassandra.index.sai.StorageAttachedIndex'",
		"CREATE INDEX IF NOT EXISTS t_legacy ON sai.t (legacy)")
	for k := range 4 {
		for c := range 5 {
			if err := sess.Query("INSERT INTO sai.t (k, c, n, d, s, legacy, tags, attrs) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
				k, c, k*10+c, "2026-01-0"+string(rune('1'+c)), []string{"red", "green"}[c%2], c,
				[]string{"t" + string(rune('0'+k))}, map[string]int{"a" + string(rune('0'+c)): c}).Exec(); err != nil {
				t.Fatal(err)
			}
		}
	}
	rows := func(q string) []string {
		t.Helper()
		iter := sess.Query(q).Iter()
		var out []string
		var k, c int
		for iter.Scan(&k, &c) {
			out = append(out, string(rune('0'+k))+string(rune('0'+c)))
		}
		if err := iter.Close(); err != nil {
			t.Errorf("%s: %v", q, err)
		}
		slices.Sort(out)
		return out
	}
	for q, want := range map[string]string{
		"SELECT k, c FROM sai.t WHERE n > 31":                                    "32 33 34",
		"SELECT k, c FROM sai.t WHERE n >= 10 AND n < 12":                        "10 11",
		"SELECT k, c FROM sai.t WHERE d > '2026-01-04'":                          "04 14 24 34",
		"SELECT k, c FROM sai.t WHERE s = 'green' AND n < 10":                    "01 03",
		"SELECT k, c FROM sai.t WHERE k = 2 AND s = 'red' AND d <= '2026-01-02'": "20",
		"SELECT k, c FROM sai.t WHERE legacy = 4":                                "04 14 24 34",
		"SELECT k, c FROM sai.t WHERE tags CONTAINS 't3' AND n > 32":             "33 34",
		"SELECT k, c FROM sai.t WHERE attrs CONTAINS KEY 'a1' AND s = 'green'":   "01 11 21 31",
	} {
		if got := strings.Join(rows(q), " "); got != want {
			t.Errorf("%s: %q, want %q", q, got, want)
		}
	}
	for q, want := range map[string]string{
		"SELECT k, c FROM sai.t WHERE legacy > 3":           "Cannot execute this query as it might involve data filtering",
		"SELECT k, c FROM sai.t WHERE legacy = 4 AND n > 3": "Cannot execute this query as it might involve data filtering",
		"SELECT k, c FROM sai.t WHERE s > 'a'":              "Cannot execute this query as it might involve data filtering",
	} {
		if err := sess.Query(q).Exec(); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: %v, want %q", q, err, want)
		}
	}
	var kind string
	var options map[string]string
	if err := sess.Query("SELECT kind, options FROM system_schema.indexes WHERE keyspace_name = 'sai' AND table_name = 't' AND index_name = 't_n'").
		Scan(&kind, &options); err != nil || kind != "CUSTOM" || options["class_name"] != "org.apache.cassandra.index.sai.StorageAttachedIndex" {
		t.Errorf("system_schema.indexes: %s %v, %v", kind, options, err)
	}
}

// TestSAITextOptions matches text through storage-attached indexes that
// are not case-sensitive, or normalize Unicode, as Cassandra 5.0's do,
// and refuses options SAI does not know.
func TestSAITextOptions(t *testing.T) {
	sess := session(t, "")
	exec(t, sess, "CREATE KEYSPACE IF NOT EXISTS sai WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE IF NOT EXISTS sai.words (k int PRIMARY KEY, word text, name text, exact text)",
		"CREATE INDEX IF NOT EXISTS words_word ON sai.words (word) USING 'sai' WITH OPTIONS = {'case_sensitive': 'false'}",
		"CREATE INDEX IF NOT EXISTS words_name ON sai.words (name) USING 'sai' WITH OPTIONS = {'normalize': 'true', 'case_sensitive': 'false'}",
		"CREATE INDEX IF NOT EXISTS words_exact ON sai.words (exact) USING 'sai'",
		"ALTER TABLE sai.words ADD IF NOT EXISTS folded text",
		"CREATE INDEX IF NOT EXISTS words_folded ON sai.words (folded) USING 'sai' WITH OPTIONS = {'ascii': 'true', 'case_sensitive': 'false'}",
		"UPDATE sai.words SET folded = 'Crème Brûlée' WHERE k = 1",
		"UPDATE sai.words SET folded = 'creme brulee' WHERE k = 2",
		"UPDATE sai.words SET folded = 'crême' WHERE k = 3",
		"INSERT INTO sai.words (k, word, name, exact) VALUES (1, 'Apple', 'Caf\u00e9', 'Apple')",
		"INSERT INTO sai.words (k, word, name, exact) VALUES (2, 'APPLE', 'CAFE\u0301', 'APPLE')",
		"INSERT INTO sai.words (k, word, name, exact) VALUES (3, 'pear', 'tea', 'pear')")
	keys := func(q string, args ...any) string {
		t.Helper()
		iter := sess.Query(q, args...).Iter()
		var out []string
		var k int
		for iter.Scan(&k) {
			out = append(out, string(rune('0'+k)))
		}
		if err := iter.Close(); err != nil {
			t.Errorf("%s: %v", q, err)
		}
		slices.Sort(out)
		return strings.Join(out, " ")
	}
	for _, c := range []struct {
		q    string
		args []any
		want string
	}{
		{"SELECT k FROM sai.words WHERE word = 'apple'", nil, "1 2"},
		{"SELECT k FROM sai.words WHERE word = ?", []any{"aPPle"}, "1 2"},
		{"SELECT k FROM sai.words WHERE exact = 'apple'", nil, ""},
		{"SELECT k FROM sai.words WHERE exact = 'Apple'", nil, "1"},
		// é written as one code point and as e with a combining accent.
		{"SELECT k FROM sai.words WHERE name = 'caf\u00e9'", nil, "1 2"},
		{"SELECT k FROM sai.words WHERE name = 'CAFE\u0301' AND word = 'APPLE'", nil, "1 2"},
		// ascii folds accents away, as Cassandra's ASCIIFoldingFilter does.
		{"SELECT k FROM sai.words WHERE folded = 'CREME BRULEE'", nil, "1 2"},
		{"SELECT k FROM sai.words WHERE folded = 'cr\u00e9me br\u00fbl\u00e9e'", nil, "1 2"},
		{"SELECT k FROM sai.words WHERE folded = 'creme'", nil, "3"},
	} {
		if got := keys(c.q, c.args...); got != c.want {
			t.Errorf("%s %v: %q, want %q", c.q, c.args, got, c.want)
		}
	}
	exec(t, sess, "CREATE TABLE IF NOT EXISTS sai.vecs (k int PRIMARY KEY, v vector<float, 2>)")
	for q, want := range map[string]string{
		"CREATE INDEX ON sai.words (name) USING 'sai' WITH OPTIONS = {'source_model': 'x', 'bogus': 'y'}": "Properties specified [bogus, source_model] are not understood by StorageAttachedIndex",
		"CREATE INDEX ON sai.words (name) USING 'sai' WITH OPTIONS = {'similarity_function': 'cosine'}":   "CQL type text cannot have vector options",
		"CREATE INDEX vi ON sai.vecs (v) USING 'sai' WITH OPTIONS = {'similarity_function': 'manhattan'}": "Similarity function MANHATTAN was not recognized for index vi. Valid values are: EUCLIDEAN, DOT_PRODUCT, COSINE",
		"CREATE INDEX vi ON sai.vecs (v) USING 'sai' WITH OPTIONS = {'optimize_for': 'speed'}":            "optimize_for 'SPEED' was not recognized for index vi. Valid values are: LATENCY, RECALL",
	} {
		if err := sess.Query(q).Exec(); err == nil || err.Error() != want {
			t.Errorf("%s: %v\nwant %s", q, err, want)
		}
	}
}

// TestIndexedLongValues indexes text and blob values longer than a
// Postgres B-tree entry holds (2704 bytes), with a legacy index and a
// storage-attached one: Cassandra indexes values up to 64 KiB, and so
// does cqlpg, whose Postgres index holds their prefixes. Values sharing
// a long prefix stay apart.
func TestIndexedLongValues(t *testing.T) {
	sess := session(t, "")
	exec(t, sess, "CREATE KEYSPACE IF NOT EXISTS sai WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE IF NOT EXISTS sai.docs (k int PRIMARY KEY, body text, raw blob, note text)",
		"CREATE INDEX IF NOT EXISTS docs_body ON sai.docs (body)",
		"CREATE INDEX IF NOT EXISTS docs_raw ON sai.docs (raw)",
		"CREATE INDEX IF NOT EXISTS docs_note ON sai.docs (note) USING 'sai' WITH OPTIONS = {'case_sensitive': 'false'}")
	long := func(i int) string {
		var b strings.Builder
		for b.Len() < 20000 {
			fmt.Fprintf(&b, "%08x", b.Len()*2654435761) // incompressible enough
		}
		return b.String() + fmt.Sprint(i) // a shared 20,000-character prefix
	}
	for i := range 3 {
		if err := sess.Query("INSERT INTO sai.docs (k, body, raw, note) VALUES (?, ?, ?, ?)", i, long(i), []byte(long(i)),
			strings.ToUpper(long(i))).Exec(); err != nil {
			t.Fatalf("row %d: %v", i, err)
		}
	}
	for _, c := range []struct {
		q   string
		arg any
	}{
		{"SELECT k FROM sai.docs WHERE body = ?", long(1)},
		{"SELECT k FROM sai.docs WHERE raw = ?", []byte(long(1))},
		{"SELECT k FROM sai.docs WHERE note = ?", long(1)},
	} {
		var ks []int
		iter := sess.Query(c.q, c.arg).Iter()
		for k := 0; iter.Scan(&k); {
			ks = append(ks, k)
		}
		if err := iter.Close(); err != nil || len(ks) != 1 || ks[0] != 1 {
			t.Errorf("%s: %v, %v", c.q, ks, err)
		}
	}
}

// BenchmarkSAIPaging pages through a query answered by a storage-attached
// index, 100 rows a page, at one client: the time of one page, the first
// and one further in (the 2nd of a predicate that keeps 1% of the rows,
// the 151st of one that keeps 99%), on tables of 20,000 and 80,000 rows. A page's cost should not grow with the table or with how far in
// it is:
//
//	go test ./gateway -run '^$' -bench SAIPaging -benchtime 20x
func BenchmarkSAIPaging(b *testing.B) {
	for _, rows := range []int{20000, 80000} {
		sess := session(b, "")
		table := fmt.Sprintf("sai.paging_%d", rows)
		exec(b, sess, "CREATE KEYSPACE IF NOT EXISTS sai WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
			"CREATE TABLE IF NOT EXISTS "+table+" (k int PRIMARY KEY, n int)",
			"CREATE INDEX IF NOT EXISTS ON "+table+" (n) USING 'sai'")
		var have int
		if err := sess.Query("SELECT count(*) FROM " + table).Scan(&have); err != nil {
			b.Fatal(err)
		}
		for k := have; k < rows; k += 100 {
			batch := sess.NewBatch(gocql.UnloggedBatch)
			for j := k; j < min(k+100, rows); j++ {
				batch.Query("INSERT INTO "+table+" (k, n) VALUES (?, ?)", j, j%100)
			}
			if err := sess.ExecuteBatch(batch); err != nil {
				b.Fatal(err)
			}
		}
		for _, c := range []struct {
			name, where string
			deep        int // a page the results have, on both tables
		}{{"1pct", "n = 7", 1}, {"99pct", "n > 0", 150}} {
			for _, skip := range []int{0, c.deep} {
				b.Run(fmt.Sprintf("rows=%d/%s/page=%d", rows, c.name, skip+1), func(b *testing.B) {
					q := "SELECT k FROM " + table + " WHERE " + c.where
					// The paging state of the page wanted.
					var state []byte
					for range skip {
						iter := sess.Query(q).PageSize(100).PageState(state).Iter()
						state = iter.PageState()
						if err := iter.Close(); err != nil {
							b.Fatal(err)
						}
					}
					b.ResetTimer()
					for range b.N {
						iter := sess.Query(q).PageSize(100).PageState(state).Iter()
						if iter.NumRows() == 0 {
							b.Fatal("empty page")
						}
						if err := iter.Close(); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/1000, "ms/page")
				})
			}
		}
	}
}
