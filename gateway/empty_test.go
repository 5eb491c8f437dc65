package gateway_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gocql/gocql"
)

// cellBytes reads a value as the bytes the gateway sent: nil for null,
// zero bytes for the empty value.
type cellBytes struct {
	b    []byte
	null bool
}

func (c *cellBytes) UnmarshalCQL(_ gocql.TypeInfo, data []byte) error {
	c.b, c.null = append([]byte(nil), data...), data == nil
	return nil
}

// TestEmptyValues checks that the empty value (zero bytes, not null) of
// every type that has one is stored and read back as Cassandra does.
func TestEmptyValues(t *testing.T) {
	sess := session(t, "")
	types := []string{"int", "bigint", "boolean", "float", "double", "uuid", "timeuuid", "timestamp",
		"varint", "decimal", "inet", "text", "ascii", "blob"}
	var cols []string
	for i, typ := range types {
		cols = append(cols, fmt.Sprintf("c%d %s", i, typ))
	}
	exec(t, sess,
		"CREATE KEYSPACE empties WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}",
		"CREATE TABLE empties.t (k int PRIMARY KEY, "+strings.Join(cols, ", ")+")",
		"CREATE TABLE empties.s (k int, c int, st int STATIC, PRIMARY KEY (k, c))",
		"CREATE TABLE empties.ck (k int, c int, PRIMARY KEY (k, c))")

	read := func(k int, col string) cellBytes {
		t.Helper()
		var c cellBytes
		if err := sess.Query(fmt.Sprintf("SELECT %s FROM empties.t WHERE k = ?", col), k).Scan(&c); err != nil {
			t.Fatalf("SELECT %s of row %d: %v", col, k, err)
		}
		return c
	}
	for i, typ := range types {
		col := fmt.Sprintf("c%d", i)
		// UPDATE creates a row that lives as long as the empty cell.
		if err := sess.Query(fmt.Sprintf("UPDATE empties.t SET %s = ? WHERE k = ?", col), rawValue{}, i).Exec(); err != nil {
			t.Fatalf("%s: write the empty value: %v", typ, err)
		}
		if c := read(i, col); c.null || len(c.b) != 0 {
			t.Errorf("%s: read back %x (null %v), want the empty value", typ, c.b, c.null)
		}
		var wt int64
		if err := sess.Query(fmt.Sprintf("SELECT writetime(%s) FROM empties.t WHERE k = ?", col), i).Scan(&wt); err != nil || wt == 0 {
			t.Errorf("%s: writetime of the empty cell: %d %v", typ, wt, err)
		}
		// Null replaces it, and the row goes with its only cell.
		exec(t, sess, fmt.Sprintf("UPDATE empties.t SET %s = null WHERE k = %d", col, i))
		var n int
		if err := sess.Query("SELECT count(*) FROM empties.t WHERE k = ?", i).Scan(&n); err != nil || n != 0 {
			t.Errorf("%s: rows after nulling the empty cell: %d %v", typ, n, err)
		}
	}

	// A value written later replaces the empty value, and the reverse.
	exec(t, sess, "INSERT INTO empties.t (k, c0) VALUES (100, blobAsInt(0x))")
	if c := read(100, "c0"); c.null || len(c.b) != 0 {
		t.Errorf("blobAsInt(0x) read back %x (null %v)", c.b, c.null)
	}
	exec(t, sess, "UPDATE empties.t SET c0 = 5 WHERE k = 100")
	if c := read(100, "c0"); string(c.b) != "\x00\x00\x00\x05" {
		t.Errorf("after 5: %x", c.b)
	}
	if err := sess.Query("UPDATE empties.t SET c0 = ? WHERE k = 100", rawValue{}).Exec(); err != nil {
		t.Fatal(err)
	}
	if c := read(100, "c0"); c.null || len(c.b) != 0 {
		t.Errorf("after the empty value again: %x (null %v)", c.b, c.null)
	}
	// At equal timestamps a value beats the empty value, which sorts first.
	for _, v := range []any{rawValue{}, 7, rawValue{}} {
		if err := sess.Query("UPDATE empties.t USING TIMESTAMP 42 SET c1 = ? WHERE k = 101", v).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	if c := read(101, "c1"); string(c.b) != "\x00\x00\x00\x00\x00\x00\x00\x07" {
		t.Errorf("tie between 7 and the empty value kept %x", c.b)
	}
	// Static cells hold it too.
	if err := sess.Query("UPDATE empties.s SET st = ? WHERE k = 1", rawValue{}).Exec(); err != nil {
		t.Fatal(err)
	}
	var st cellBytes
	if err := sess.Query("SELECT st FROM empties.s WHERE k = 1").Scan(&st); err != nil || st.null || len(st.b) != 0 {
		t.Errorf("static empty value: %x %v %v", st.b, st.null, err)
	}

	// Postgres shows the flag beside a null value.
	if got := pgQuery(t, `SELECT coalesce(c0::text, 'null') || ' ' || c0$empty::text FROM empties.t WHERE k = 100`); len(got) != 1 ||
		got[0] != "null true" {
		t.Errorf("Postgres shows %v", got)
	}

	// Types without an empty value, and keys, refuse it.
	for _, tc := range []struct {
		stmt string
		msg  string
	}{
		{"INSERT INTO empties.ck (k, c) VALUES (?, 1)", "Key may not be empty"},
		{"INSERT INTO empties.ck (k, c) VALUES (1, ?)", "Empty values of type int cannot be stored (PostgreSQL has no empty int)"},
	} {
		requireCQLError(t, sess.Query(tc.stmt, rawValue{}).Exec(), 0x2200, tc.msg)
	}
	exec(t, sess, "CREATE TABLE empties.small (k int PRIMARY KEY, v smallint)")
	requireCQLError(t, sess.Query("INSERT INTO empties.small (k, v) VALUES (1, ?)", rawValue{}).Exec(), 0x2200,
		"Expected 2 bytes for a smallint (0)")
}
