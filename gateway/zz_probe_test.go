package gateway_test

import (
	"errors"
	"testing"

	"github.com/gocql/gocql"
)

func TestProbeErrors(t *testing.T) {
	sess := session(t, "")
	exec(t, sess, "DROP KEYSPACE IF EXISTS probe", "CREATE KEYSPACE probe WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE probe.t (k int, c int, v int, s int static, l list<int>, m map<int,int>, PRIMARY KEY (k, c))",
		"CREATE TABLE probe.t2 (k1 int, k2 int, v int, PRIMARY KEY ((k1, k2)))",
		"CREATE TYPE probe.ut (a int)",
		"CREATE TABLE probe.kt (k frozen<ut> PRIMARY KEY, v int)",
	)
	for _, q := range []string{
		"CREATE KEYSPACE p2 WITH replication = {'class': 'NetworkTopologyStrategy', 'us-east': 3}",
		"CREATE KEYSPACE p3 WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': 3, 'dc1': 2}",
		"ALTER KEYSPACE probe WITH durable_writes = true",
		"CREATE TABLE probe.c1 (k int PRIMARY KEY, l list<counter>)",
		"CREATE TABLE probe.c2 (k int PRIMARY KEY, l map<int, counter>)",
		"ALTER TYPE probe.ut ADD b int",
		"UPDATE probe.t SET s = 1 WHERE k = 0 IF s = 2",
		"DELETE s FROM probe.t WHERE k = 0 IF s = 2",
		"SELECT * FROM probe.t WHERE k = 0 AND c = 1 ORDER BY c DESC",
		"USE ?",
		"SELECT sum(*) FROM probe.t",
		"SELECT v[0] FROM probe.t",
		"SELECT * FROM probe.t WHERE k = 0 AND (c) IN ((1, 2))",
		"SELECT DISTINCT token(k1, k2) FROM probe.t2",
		"SELECT * FROM probe.t WHERE v NOT IN (1, 2) ALLOW FILTERING",
		"SELECT * FROM probe.t WHERE l NOT CONTAINS 1 ALLOW FILTERING",
		"SELECT * FROM system_auth.roles",
		"SELECT * FROM system_views.clients",
		"SELECT * FROM system_views.settings",
		"SELECT * FROM system_views.nope",
		"SELECT * FROM system.nope",
	} {
		err := sess.Query(q).Exec()
		var re gocql.RequestError
		if errors.As(err, &re) {
			t.Logf("%s => %04x %s", q, re.Code(), re.Message())
		} else {
			t.Logf("%s => %v", q, err)
		}
	}
}
