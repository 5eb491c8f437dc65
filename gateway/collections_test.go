package gateway_test

import (
	"strings"
	"testing"
	"time"

	"github.com/gocql/gocql"
)

// jsonOf returns toJson(expr) of row k of coll.t.
func jsonOf(t *testing.T, sess *gocql.Session, expr string, k int) string {
	t.Helper()
	var s string
	if err := sess.Query("SELECT toJson("+expr+") FROM coll.t WHERE k = ?", k).Scan(&s); err != nil {
		t.Fatalf("SELECT toJson(%s): %v", expr, err)
	}
	return s
}

func TestCollectionOperations(t *testing.T) {
	sess := session(t, "")
	exec(t, sess,
		"CREATE KEYSPACE coll WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}",
		`CREATE TYPE coll.addr (street text, zip int, "Apt" text)`,
		`CREATE TABLE coll.t (k int PRIMARY KEY, l list<int>, s set<text>, m map<text, int>, u addr,
			jl list<frozen<list<int>>>, js set<frozen<tuple<int, text>>>, d list<duration>, fl frozen<list<int>>,
			im map<int, text>, si set<int>)`,
		// The row marker keeps row 1 alive while its collections come and go.
		"INSERT INTO coll.t (k) VALUES (1)")
	steps := []struct {
		stmt string
		args []any
		expr string
		want string
	}{
		// Lists of scalars are arrays.
		{"UPDATE coll.t SET l = l + [1, 2] WHERE k = 1", nil, "l", "[1, 2]"},
		{"UPDATE coll.t SET l = l + ? WHERE k = 1", []any{[]int{3, 1}}, "l", "[1, 2, 3, 1]"},
		{"UPDATE coll.t SET l = [0] + l WHERE k = 1", nil, "l", "[0, 1, 2, 3, 1]"},
		{"UPDATE coll.t SET l = l - [1] WHERE k = 1", nil, "l", "[0, 2, 3]"},
		{"UPDATE coll.t SET l[1] = 20 WHERE k = 1", nil, "l", "[0, 20, 3]"},
		{"UPDATE coll.t SET l[0] = null WHERE k = 1", nil, "l", "[20, 3]"},
		{"DELETE l[1] FROM coll.t WHERE k = 1", nil, "l", "[20]"},
		{"UPDATE coll.t SET l = l + ? WHERE k = 1", []any{gocql.UnsetValue}, "l", "[20]"},
		{"UPDATE coll.t SET l = l - [20] WHERE k = 1", nil, "l", "null"},
		{"UPDATE coll.t SET l = l + [6], l = [7] + l WHERE k = 1", nil, "l", "[7, 6]"},
		{"UPDATE coll.t SET l = [] WHERE k = 1", nil, "l", "null"},
		// Sets of scalars are sorted arrays without repeats.
		{"UPDATE coll.t SET s = s + {'b', 'a'} WHERE k = 1", nil, "s", `["a", "b"]`},
		{"UPDATE coll.t SET s = s + {'c', 'a'} WHERE k = 1", nil, "s", `["a", "b", "c"]`},
		{"UPDATE coll.t SET s = s - {'b', 'zz'} WHERE k = 1", nil, "s", `["a", "c"]`},
		{"DELETE s['a'] FROM coll.t WHERE k = 1", nil, "s", `["c"]`},
		{"UPDATE coll.t SET s = {} WHERE k = 1", nil, "s", "null"},
		// A set of another element type: a removal alone, on a null set
		// and on one with elements, adds a null of the column's type.
		{"UPDATE coll.t SET si = si - {2} WHERE k = 1", nil, "si", "null"},
		{"UPDATE coll.t SET si = si + {3, 1, 2} WHERE k = 1", nil, "si", "[1, 2, 3]"},
		{"UPDATE coll.t SET si = si - {2} WHERE k = 1", nil, "si", "[1, 3]"},
		{"UPDATE coll.t SET si = si - ? WHERE k = 1", []any{[]int{3}}, "si", "[1]"},
		{"DELETE si[1] FROM coll.t WHERE k = 1", nil, "si", "null"},
		// Maps are jsonb objects.
		{"UPDATE coll.t SET m = m + {'x': 1, 'y': 2} WHERE k = 1", nil, "m", `{"x": 1, "y": 2}`},
		{"UPDATE coll.t SET m['z'] = 3 WHERE k = 1", nil, "m", `{"x": 1, "y": 2, "z": 3}`},
		{"UPDATE coll.t SET m['x'] = null WHERE k = 1", nil, "m", `{"y": 2, "z": 3}`},
		{"UPDATE coll.t SET m = m - {'y'} WHERE k = 1", nil, "m", `{"z": 3}`},
		{"DELETE m['z'] FROM coll.t WHERE k = 1", nil, "m", "null"},
		{"UPDATE coll.t SET m[?] = ? WHERE k = 1", []any{"it's", 7}, "m", `{"it's": 7}`},
		{"UPDATE coll.t SET im = im + {10: 'a', 2: 'b'} WHERE k = 1", nil, "im", `{"2": "b", "10": "a"}`},
		{"UPDATE coll.t SET im = im - {10} WHERE k = 1", nil, "im", `{"2": "b"}`},
		// User type fields.
		{"UPDATE coll.t SET u.street = 'Main' WHERE k = 1", nil, "u", `{"street": "Main", "zip": null, "\"Apt\"": null}`},
		{`UPDATE coll.t SET u.zip = 5, u."Apt" = '4b' WHERE k = 1`, nil, "u", `{"street": "Main", "zip": 5, "\"Apt\"": "4b"}`},
		{"DELETE u.street FROM coll.t WHERE k = 1", nil, "u", `{"street": null, "zip": 5, "\"Apt\"": "4b"}`},
		// Collections of non-scalars are jsonb arrays.
		{"UPDATE coll.t SET jl = jl + [[1, 2], [3]] WHERE k = 1", nil, "jl", "[[1, 2], [3]]"},
		{"UPDATE coll.t SET jl = [[0]] + jl WHERE k = 1", nil, "jl", "[[0], [1, 2], [3]]"},
		{"UPDATE coll.t SET jl[2] = [4, 4] WHERE k = 1", nil, "jl", "[[0], [1, 2], [4, 4]]"},
		{"UPDATE coll.t SET jl = jl - [[1, 2]] WHERE k = 1", nil, "jl", "[[0], [4, 4]]"},
		{"DELETE jl[0] FROM coll.t WHERE k = 1", nil, "jl", "[[4, 4]]"},
		{"UPDATE coll.t SET js = js + {(2, 'b'), (1, 'a')} WHERE k = 1", nil, "js", `[[1, "a"], [2, "b"]]`},
		{"UPDATE coll.t SET js = js + {(1, 'a')} WHERE k = 1", nil, "js", `[[1, "a"], [2, "b"]]`},
		{"DELETE js[(1, 'a')] FROM coll.t WHERE k = 1", nil, "js", `[[2, "b"]]`},
		{"UPDATE coll.t SET d = d + [1h, 2d] WHERE k = 1", nil, "d", `["1h", "2d"]`},
		// A change to a row that does not exist creates it.
		{"UPDATE coll.t SET l = l + [9], m['a'] = 1 WHERE k = 2", nil, "l", "[9]"},
	}
	for _, s := range steps {
		if err := sess.Query(s.stmt, s.args...).Exec(); err != nil {
			t.Fatalf("%s: %v", s.stmt, err)
		}
		k := 1
		if strings.HasSuffix(s.stmt, "k = 2") {
			k = 2
		}
		if got := jsonOf(t, sess, s.expr, k); got != s.want {
			t.Fatalf("after %s: %s = %s, want %s", s.stmt, s.expr, got, s.want)
		}
	}
	if got := jsonOf(t, sess, "m", 2); got != `{"a": 1}` {
		t.Errorf("map of a created row: %s", got)
	}
	// Removing from nothing leaves nothing.
	exec(t, sess, "UPDATE coll.t SET l = l - [9] WHERE k = 3")
	var n int
	if err := sess.Query("SELECT count(*) FROM coll.t WHERE k = 3").Scan(&n); err != nil || n != 0 {
		t.Errorf("removal from a missing list made a row: %d %v", n, err)
	}

	// Postgres holds natural values: arrays for lists and sets of
	// scalars, jsonb for the rest. With RF 3 every shard holds every row.
	exec(t, sess, "UPDATE coll.t SET l = [1, 2], s = {'q'} WHERE k = 4")
	if got := pgQuery(t, "SELECT l::text || ' ' || s::text FROM coll.t WHERE k = 4"); len(got) != 1 || got[0] != "{1,2} {q}" {
		t.Errorf("Postgres shows %v", got)
	}

	errs := []struct {
		stmt string
		msg  string
	}{
		{"UPDATE coll.t SET l[0] = 1 WHERE k = 5", "Attempted to set an element on a list which is null"},
		{"UPDATE coll.t SET l[5] = 1 WHERE k = 4", "List index 5 out of bound, list has size 2"},
		{"DELETE l[0] FROM coll.t WHERE k = 5", "Attempted to delete an element from a list which is null"},
		{"DELETE l[-1] FROM coll.t WHERE k = 4", "List index -1 out of bound, list has size 2"},
		{"UPDATE coll.t SET jl[0] = [1] WHERE k = 5", "Attempted to set an element on a list which is null"},
		{"UPDATE coll.t SET fl = fl + [1] WHERE k = 1", "Invalid operation (fl = fl + [1]) for frozen collection column fl"},
		{"UPDATE coll.t SET fl[0] = 1 WHERE k = 1", "Invalid operation (fl[0] = 1) for frozen collection column fl"},
		{"UPDATE coll.t SET s[0] = 'a' WHERE k = 1", "Invalid operation (s[0] = 'a') for set column s"},
		{"UPDATE coll.t SET s = {'a'} + s WHERE k = 1", "Invalid operation (s = {'a'} - s) for non list column s"},
		{"UPDATE coll.t SET m = m + {'a'} WHERE k = 1", "Value for a map addition has to be a map, but was: '{'a'}'"},
		{"UPDATE coll.t SET m = m - {'a': 1} WHERE k = 1", "Value for a map substraction has to be a set, but was: '{'a': 1}'"},
		{"UPDATE coll.t SET u.nope = 1 WHERE k = 1", "UDT column u does not have a field named nope"},
		{"UPDATE coll.t SET l.f = 1 WHERE k = 1", "Invalid operation (l.f = 1) for non-UDT column l"},
		{"UPDATE coll.t SET u.zip = 1, u.zip = 2 WHERE k = 1", "Multiple incompatible setting of column u"},
		{"UPDATE coll.t SET l = [5], l = l + [6] WHERE k = 1", "Multiple incompatible setting of column l"},
		{"DELETE fl[0] FROM coll.t WHERE k = 1", "Invalid deletion operation for frozen collection column fl"},
		{"DELETE u[0] FROM coll.t WHERE k = 1", "Invalid deletion operation for non collection column u"},
		{"DELETE l.f FROM coll.t WHERE k = 1", "Invalid field deletion operation for non-UDT column l"},
		{"UPDATE coll.t SET u[0] = 1 WHERE k = 1", "Invalid operation (u[0] = 1) for non collection column u"},
	}
	for _, e := range errs {
		requireCQLError(t, sess.Query(e.stmt).Exec(), 0x2200, e.msg)
	}
	if err := sess.Query("SELECT count(*) FROM coll.t WHERE k = 5").Scan(&n); err != nil || n != 0 {
		t.Errorf("a refused change created row 5: %d %v", n, err)
	}
}

func TestCollectionTimestamps(t *testing.T) {
	sess := session(t, "")
	exec(t, sess,
		"CREATE KEYSPACE collts WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}",
		"CREATE TABLE collts.t (k int, c int, l list<int>, sl set<int> static, PRIMARY KEY (k, c))")
	exec(t, sess,
		"UPDATE collts.t USING TIMESTAMP 100 SET l = l + [1] WHERE k = 1 AND c = 1",
		// A deletion shadows changes no newer than itself.
		"DELETE l FROM collts.t USING TIMESTAMP 200 WHERE k = 1 AND c = 1",
		"UPDATE collts.t USING TIMESTAMP 150 SET l = l + [2] WHERE k = 1 AND c = 1",
		"UPDATE collts.t USING TIMESTAMP 200 SET l = l + [3] WHERE k = 1 AND c = 1",
		"UPDATE collts.t USING TIMESTAMP 300 SET l = l + [4] WHERE k = 1 AND c = 1",
		// Static collections change the partition's static row.
		"UPDATE collts.t SET sl = sl + {3, 1} WHERE k = 1",
		"UPDATE collts.t SET sl = sl + {2} WHERE k = 1")
	var l []int
	var sl []int
	if err := sess.Query("SELECT l, sl FROM collts.t WHERE k = 1 AND c = 1").Scan(&l, &sl); err != nil {
		t.Fatal(err)
	}
	if len(l) != 1 || l[0] != 4 || len(sl) != 3 || sl[0] != 1 || sl[2] != 3 {
		t.Errorf("l = %v, sl = %v; want [4] and [1 2 3]", l, sl)
	}
	var wt int64
	if err := sess.Query("SELECT writetime(l) FROM collts.t WHERE k = 1 AND c = 1").Scan(&wt); err == nil {
		t.Errorf("writetime of a non-frozen collection was accepted: %d", wt)
	}

	// A TTL on a change expires the collection.
	exec(t, sess, "UPDATE collts.t USING TTL 1 SET l = l + [5] WHERE k = 2 AND c = 1")
	time.Sleep(2100 * time.Millisecond)
	var n int
	if err := sess.Query("SELECT count(*) FROM collts.t WHERE k = 2").Scan(&n); err != nil || n != 0 {
		t.Errorf("rows after the TTL: %d %v", n, err)
	}
}
