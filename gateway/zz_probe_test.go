package gateway_test

import (
	"errors"
	"testing"

	"github.com/gocql/gocql"
)

func TestProbeTypes(t *testing.T) {
	sess := session(t, "")
	exec(t, sess, "DROP KEYSPACE IF EXISTS probe", "CREATE KEYSPACE probe WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
	for _, q := range []string{
		"CREATE TABLE probe.fm (k frozen<map<int, text>> PRIMARY KEY, v int)",
		"INSERT INTO probe.fm (k, v) VALUES ({1: 'a'}, 1)",
		"SELECT * FROM probe.fm WHERE k = {1: 'a'}",
		"CREATE TABLE probe.fn (k frozen<list<frozen<set<int>>>> PRIMARY KEY, v int)",
		"INSERT INTO probe.fn (k, v) VALUES ([{1}], 1)",
		"CREATE TABLE probe.fd (k int, c frozen<map<int, int>>, v int, PRIMARY KEY (k, c)) WITH CLUSTERING ORDER BY (c DESC)",
		"INSERT INTO probe.fd (k, c, v) VALUES (0, {1: 2}, 1)",
		"SELECT * FROM probe.fd WHERE k = 0",
		"CREATE TABLE probe.fdd (k int, c frozen<list<frozen<list<int>>>>, v int, PRIMARY KEY (k, c)) WITH CLUSTERING ORDER BY (c DESC)",
		"CREATE TABLE probe.tup (k int PRIMARY KEY, t tuple<int, text>)",
		"INSERT INTO probe.tup (k, t) VALUES (0, '0:1')",
		"INSERT INTO probe.tup (k, t) VALUES (1, '1:1\\:1')",
		"CREATE TABLE probe.d (k int PRIMARY KEY, d date)",
		"INSERT INTO probe.d (k, d) VALUES (0, '-5877641-06-23')",
		"INSERT INTO probe.d (k, d) VALUES (1, '5881580-07-11')",
		"INSERT INTO probe.d (k, d) VALUES (2, 0)",
		"INSERT INTO probe.d (k, d) VALUES (3, 4294967295)",
		"SELECT * FROM probe.d",
		"CREATE TABLE probe.tx (k int PRIMARY KEY, v text)",
		"INSERT INTO probe.tx (k, v) VALUES (0, 'a' + 'b')",
		"CREATE TABLE probe.dec (k int, c decimal, v decimal, PRIMARY KEY (k, c))",
		"INSERT INTO probe.dec (k, c, v) VALUES (0, 1E+1000000, 1E+1000000)",
		"INSERT INTO probe.dec (k, c, v) VALUES (0, 2, -1E-1000000)",
		"SELECT * FROM probe.dec",
		"CREATE TABLE probe.big (k text PRIMARY KEY, v int)",
		"CREATE TABLE probe.ascii (k int PRIMARY KEY, v text)",
		"INSERT INTO probe.ascii (k, v) VALUES (0, (ascii)'x')",
	} {
		var err error
		if len(q) > 6 && q[:6] == "SELECT" {
			var rows []string
			rows, err = queryRows(sess.Query(q))
			t.Logf("%s => %v", q, rows)
		} else {
			err = sess.Query(q).Exec()
		}
		var re gocql.RequestError
		if errors.As(err, &re) {
			t.Logf("%s => %04x %s", q, re.Code(), re.Message())
		} else if err != nil {
			t.Logf("%s => %v", q, err)
		}
	}
	nul := "a\x00b"
	t.Log("nul text:", sess.Query("INSERT INTO probe.tx (k, v) VALUES (1, ?)", nul).Exec())
	long := make([]byte, 3000)
	for i := range long { long[i] = 'x' }
	t.Log("3000-byte key:", sess.Query("INSERT INTO probe.big (k, v) VALUES (?, 1)", string(long)).Exec())
	long = make([]byte, 70000)
	for i := range long { long[i] = 'x' }
	t.Log("70000-byte key:", sess.Query("INSERT INTO probe.big (k, v) VALUES (?, 1)", string(long)).Exec())
}
