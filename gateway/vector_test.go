package gateway_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gocql/gocql"
)

// TestVectorSearch runs ORDER BY v ANN OF [...] LIMIT k through gocql on a
// table with a storage-attached index on a float vector: the rows come
// back most similar first, exactly the top k a brute-force scoring of
// every row gives, under the index's similarity function, alone, within
// a partition and with another SAI restriction; with Cassandra 5.0's
// refusals.
func TestVectorSearch(t *testing.T) {
	sess := session(t, "")
	exec(t, sess, "CREATE KEYSPACE IF NOT EXISTS vec WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE IF NOT EXISTS vec.t (k int, c int, v vector<float, 4>, tag text, plain vector<float, 4>, PRIMARY KEY (k, c))",
		"CREATE INDEX IF NOT EXISTS t_v ON vec.t (v) USING 'sai'",
		"CREATE INDEX IF NOT EXISTS t_tag ON vec.t (tag) USING 'sai'",
		"CREATE TABLE IF NOT EXISTS vec.e (k int PRIMARY KEY, v vector<float, 4>, big vector<float, 1536>)",
		"CREATE CUSTOM INDEX IF NOT EXISTS e_v ON vec.e (v) USING 'StorageAttachedIndex' WITH OPTIONS = {'similarity_function': 'euclidean'}",
		// Embeddings' usual size, past what a B-tree entry holds.
		"CREATE INDEX IF NOT EXISTS e_big ON vec.e (big) USING 'sai'")
	rng := rand.New(rand.NewPCG(1, 2))
	type row struct {
		k, c int
		v    []float32
		tag  string
	}
	var rows []row
	b := sess.NewBatch(gocql.UnloggedBatch)
	for i := range 400 {
		r := row{k: i % 40, c: i / 40, tag: []string{"a", "b"}[i%3%2]}
		for range 4 {
			r.v = append(r.v, rng.Float32()*2-1)
		}
		rows = append(rows, r)
		// gocql cannot bind vectors: they go as literals.
		b.Query("INSERT INTO vec.t (k, c, v, tag) VALUES (?, ?, "+vectorLiteral(r.v)+", ?)", r.k, r.c, r.tag)
		b.Query("INSERT INTO vec.e (k, v) VALUES (?, "+vectorLiteral(r.v)+")", i)
		if b.Size() >= 50 {
			if err := sess.ExecuteBatch(b); err != nil {
				t.Fatal(err)
			}
			b = sess.NewBatch(gocql.UnloggedBatch)
		}
	}
	if err := sess.ExecuteBatch(b); err != nil {
		t.Fatal(err)
	}
	query := []float32{0.5, -0.25, 0.75, 0.1}
	ql := vectorLiteral(query)
	big := make([]float32, 1536)
	for i := range big {
		big[i] = rng.Float32()
	}
	exec(t, sess, "INSERT INTO vec.e (k, big) VALUES (1000, "+vectorLiteral(big)+")")
	var bigK int
	if err := sess.Query("SELECT k FROM vec.e ORDER BY big ANN OF " + vectorLiteral(big) + " LIMIT 1").Scan(&bigK); err != nil || bigK != 1000 {
		t.Errorf("ANN over 1536 dimensions: %d, %v", bigK, err)
	}
	cosine := func(a []float32) float64 {
		var d, n1, n2 float64
		for i := range a {
			d += float64(a[i] * query[i])
			n1 += float64(a[i] * a[i])
			n2 += float64(query[i] * query[i])
		}
		return d / math.Sqrt(n1*n2)
	}
	euclid := func(a []float32) float64 {
		var d float64
		for i := range a {
			d += float64((a[i] - query[i]) * (a[i] - query[i]))
		}
		return -d
	}
	// want is the brute-force top k of the rows keep admits, by score.
	want := func(k int, score func([]float32) float64, keep func(row) bool, key func(row) string) []string {
		var cand []row
		for _, r := range rows {
			if keep(r) {
				cand = append(cand, r)
			}
		}
		slices.SortStableFunc(cand, func(a, b row) int {
			sa, sb := score(a.v), score(b.v)
			switch {
			case sa > sb:
				return -1
			case sa < sb:
				return 1
			}
			return 0
		})
		var out []string
		for _, r := range cand[:min(k, len(cand))] {
			out = append(out, key(r))
		}
		return out
	}
	got := func(q string, args ...any) []string {
		t.Helper()
		iter := sess.Query(q, args...).Iter()
		var out []string
		var a, c int
		for iter.Scan(&a, &c) {
			out = append(out, fmt.Sprint(a, c))
		}
		if err := iter.Close(); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return out
	}
	kc := func(r row) string { return fmt.Sprint(r.k, r.c) }
	all := func(row) bool { return true }
	for _, c := range []struct {
		name string
		got  []string
		want []string
	}{
		{"top 10", got("SELECT k, c FROM vec.t ORDER BY v ANN OF " + ql + " LIMIT 10"), want(10, cosine, all, kc)},
		{"top 3 in a partition", got("SELECT k, c FROM vec.t WHERE k = 7 ORDER BY v ANN OF [0.5, -0.25, 0.75, 0.1] LIMIT 3"),
			want(3, cosine, func(r row) bool { return r.k == 7 }, kc)},
		{"top 5 with another index", got("SELECT k, c FROM vec.t WHERE tag = 'b' ORDER BY v ANN OF " + ql + " LIMIT 5"),
			want(5, cosine, func(r row) bool { return r.tag == "b" }, kc)},
	} {
		if strings.Join(c.got, "|") != strings.Join(c.want, "|") {
			t.Errorf("%s:\n got %v\nwant %v", c.name, c.got, c.want)
		}
	}
	// Euclidean, as the index's option says.
	iter := sess.Query("SELECT k, similarity_euclidean(v, " + ql + ") FROM vec.e ORDER BY v ANN OF " + ql + " LIMIT 4").Iter()
	var gotE []string
	var k int
	var sim float32
	prev := float32(math.Inf(1))
	for iter.Scan(&k, &sim) {
		gotE = append(gotE, fmt.Sprint(rows[k].k, rows[k].c))
		if sim > prev {
			t.Errorf("similarities not descending: %v after %v", sim, prev)
		}
		prev = sim
	}
	if err := iter.Close(); err != nil {
		t.Fatal(err)
	}
	if wantE := want(4, euclid, all, kc); strings.Join(gotE, "|") != strings.Join(wantE, "|") {
		t.Errorf("euclidean:\n got %v\nwant %v", gotE, wantE)
	}
	for q, wantErr := range map[string]string{
		"SELECT k FROM vec.t ORDER BY v ANN OF [1, 0, 0, 0]":                     "Use of ANN OF in an ORDER BY clause requires a LIMIT that is not greater than 1000. LIMIT was NO LIMIT",
		"SELECT k FROM vec.t ORDER BY v ANN OF [1, 0, 0, 0] LIMIT 1001":          "Use of ANN OF in an ORDER BY clause requires a LIMIT that is not greater than 1000. LIMIT was 1001",
		"SELECT k FROM vec.t ORDER BY plain ANN OF [1, 0, 0, 0] LIMIT 3":         "ANN ordering by vector requires the column to be indexed",
		"SELECT k FROM vec.t ORDER BY tag ANN OF [1, 0, 0, 0] LIMIT 3":           "ANN ordering is only supported on float vector indexes",
		"SELECT k FROM vec.t ORDER BY v ANN OF [1, 0, 0, 0], c ASC LIMIT 3":      "ANN ordering does not support any other ordering",
		"SELECT k FROM vec.t WHERE c = 1 ORDER BY v ANN OF [1, 0, 0, 0] LIMIT 3": "ANN ordering by vector requires all restricted column(s) to be indexed",
	} {
		if err := sess.Query(q).Exec(); err == nil || err.Error() != wantErr {
			t.Errorf("%s: %v\nwant %s", q, err, wantErr)
		}
	}
}

// vectorLiteral writes a vector as a CQL literal, each float exactly.
func vectorLiteral(v []float32) string {
	parts := make([]string, len(v))
	for i, f := range v {
		parts[i] = strconv.FormatFloat(float64(f), 'g', -1, 32)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// BenchmarkVectorSearch times top-10 ANN queries over rows of
// vector<float, dims> at one client, 10,000 rows by default:
//
//	go test ./gateway -run '^$' -bench VectorSearch -benchtime 50x
func BenchmarkVectorSearch(b *testing.B) {
	for _, c := range []struct{ rows, dims int }{{10000, 128}, {10000, 32}, {20000, 128}} {
		b.Run(fmt.Sprintf("rows=%d/dims=%d", c.rows, c.dims), func(b *testing.B) {
			sess := session(b, "")
			table := fmt.Sprintf("vec.bench_%d_%d", c.rows, c.dims)
			exec(b, sess, "CREATE KEYSPACE IF NOT EXISTS vec WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
				"CREATE TABLE IF NOT EXISTS "+table+fmt.Sprintf(" (k int PRIMARY KEY, v vector<float, %d>)", c.dims),
				"CREATE INDEX IF NOT EXISTS ON "+table+" (v) USING 'sai'")
			var n int
			if err := sess.Query("SELECT count(*) FROM " + table).Scan(&n); err != nil {
				b.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(3, 4))
			vec := func() string {
				v := make([]float32, c.dims)
				for i := range v {
					v[i] = rng.Float32()*2 - 1
				}
				return vectorLiteral(v)
			}
			for k := n; k < c.rows; k += 50 {
				batch := sess.NewBatch(gocql.UnloggedBatch)
				for j := k; j < min(k+50, c.rows); j++ {
					batch.Query("INSERT INTO "+table+" (k, v) VALUES (?, "+vec()+")", j)
				}
				if err := sess.ExecuteBatch(batch); err != nil {
					b.Fatal(err)
				}
			}
			q := "SELECT k FROM " + table + " ORDER BY v ANN OF " + vec() + " LIMIT 10"
			b.ResetTimer()
			for range b.N {
				iter := sess.Query(q).Iter()
				if iter.NumRows() != 10 {
					b.Fatalf("%d rows", iter.NumRows())
				}
				if err := iter.Close(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/query")
		})
	}
}
