package gateway_test

import (
	"strings"
	"testing"
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
