package gateway_test

import (
	"testing"
)

// TestFrozenKeys writes and reads partition keys and clustering columns of
// frozen collections and tuples, nested too, at QUORUM on three replicas,
// bound and literal: the rows are found by keys given in any order, and a
// DESC clustering column of frozen collections sorts as Cassandra sorts.
func TestFrozenKeys(t *testing.T) {
	sess := session(t, "")
	exec(t, sess,
		"CREATE KEYSPACE frozen_keys WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}",
		"CREATE TABLE frozen_keys.fm (k frozen<map<int, text>> PRIMARY KEY, v int)",
		"CREATE TABLE frozen_keys.fn (k frozen<map<frozen<set<int>>, frozen<list<text>>>> PRIMARY KEY, v int)",
		"CREATE TABLE frozen_keys.ft (k frozen<tuple<int, frozen<map<int, int>>>> PRIMARY KEY, v int)",
		"CREATE TABLE frozen_keys.fd (k int, c frozen<map<int, int>>, v int, PRIMARY KEY (k, c)) WITH CLUSTERING ORDER BY (c DESC)",
		"CREATE TABLE frozen_keys.fdd (k int, c frozen<list<frozen<list<int>>>>, v int, PRIMARY KEY (k, c)) WITH CLUSTERING ORDER BY (c DESC)",
		"INSERT INTO frozen_keys.fm (k, v) VALUES ({1: 'a', 2: 'b'}, 1)",
		"INSERT INTO frozen_keys.fn (k, v) VALUES ({{1, 2}: ['a']}, 2)",
		"INSERT INTO frozen_keys.ft (k, v) VALUES ((1, {2: 3}), 3)",
		"INSERT INTO frozen_keys.fd (k, c, v) VALUES (0, {1: 2}, 1)",
		"INSERT INTO frozen_keys.fd (k, c, v) VALUES (0, {1: 3}, 1)",
		"INSERT INTO frozen_keys.fd (k, c, v) VALUES (0, {0: 9, 5: 5}, 1)",
		"INSERT INTO frozen_keys.fdd (k, c, v) VALUES (0, [[1], [2]], 1)",
		"INSERT INTO frozen_keys.fdd (k, c, v) VALUES (0, [[1, 0]], 1)")
	t.Cleanup(func() { exec(t, sess, "DROP KEYSPACE IF EXISTS frozen_keys") })
	if err := sess.Query("INSERT INTO frozen_keys.fm (k, v) VALUES (?, 4)", map[int]string{4: "d", 3: "c"}).Exec(); err != nil {
		t.Fatalf("bound frozen map key: %v", err)
	}
	for _, tc := range []struct {
		query string
		args  []any
		want  []string
	}{
		{"SELECT v FROM frozen_keys.fm WHERE k = {2: 'b', 1: 'a'}", nil, []string{"1"}},
		{"SELECT v FROM frozen_keys.fm WHERE k = ?", []any{map[int]string{3: "c", 4: "d"}}, []string{"4"}},
		{"SELECT v FROM frozen_keys.fn WHERE k = {{2, 1}: ['a']}", nil, []string{"2"}},
		{"SELECT v FROM frozen_keys.ft WHERE k = (1, {2: 3})", nil, []string{"3"}},
		{"SELECT c FROM frozen_keys.fd WHERE k = 0", nil, []string{"map[1:3]", "map[1:2]", "map[0:9 5:5]"}},
		{"SELECT c FROM frozen_keys.fd WHERE k = 0 AND c > {1: 2}", nil, []string{"map[1:3]"}},
		{"SELECT c FROM frozen_keys.fdd WHERE k = 0", nil, []string{"[[1 0]]", "[[1] [2]]"}},
	} {
		wantRows(t, sess.Query(tc.query, tc.args...), "", tc.want...)
	}
}
