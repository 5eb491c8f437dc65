package gateway_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/gocql/gocql"
)

// The type tests write every CQL type's boundary values through gocql, as
// bound bytes and as literals, into a regular column, a partition key and a
// clustering key, and read them back as raw bytes: what Cassandra would
// return, bit for bit, except where docs/types.md says otherwise. They run
// in the keyspace "types", with one replica so that a key hashed to the
// wrong token is not found.

var (
	typesOnce sync.Once
	typesErr  error
)

// typesSession returns a session on the keyspace "types", creating its
// user type and its regular table (a column per type, and for each scalar
// a frozen list and a map of its values) on first use.
func typesSession(t *testing.T) *gocql.Session {
	t.Helper()
	typesOnce.Do(func() {
		cols := []string{"k int PRIMARY KEY"}
		for _, c := range regularCases() {
			cols = append(cols, "v_"+c.name+" "+c.cql)
		}
		typesErr = execAll(session(t, ""),
			"CREATE KEYSPACE IF NOT EXISTS types WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
			`CREATE TYPE IF NOT EXISTS types.addr (street text, "Zip" int, tags frozen<set<text>>)`,
			"CREATE TABLE IF NOT EXISTS types.reg ("+strings.Join(cols, ", ")+")",
			"CREATE TABLE IF NOT EXISTS types.ctr (k int PRIMARY KEY, n counter)")
	})
	if typesErr != nil {
		t.Fatal(typesErr)
	}
	return session(t, "types")
}

func execAll(sess *gocql.Session, stmts ...string) error {
	for _, s := range stmts {
		if err := sess.Query(s).Exec(); err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
	}
	return nil
}

// regularCases are the columns of types.reg: every type, and for each
// scalar a frozen list of all its values (lists of scalars are arrays,
// except of durations) and a map from their index to them (jsonb).
func regularCases() []typeCase {
	var out []typeCase
	for _, c := range scalarCases() {
		out = append(out, c)
		list := typeCase{name: "l_" + c.name, cql: "frozen<list<" + c.cql + ">>"}
		m := typeCase{name: "m_" + c.name, cql: "map<int, " + c.cql + ">"}
		var elems, backs, kv, jsonKV [][]byte
		for _, v := range c.values {
			if v.in == nil {
				continue
			}
			if !v.jsonOnly {
				elems, backs = append(elems, v.in), append(backs, v.back())
			}
			key := be32(int32(len(kv) / 2))
			kv, jsonKV = append(kv, key, v.in), append(jsonKV, key, v.jsonBack())
		}
		list.values = []typeValue{{in: collOf(elems...), out: collOf(backs...)}}
		m.values = []typeValue{{in: mapOf(kv...), out: mapOf(jsonKV...)}}
		out = append(out, list, m)
	}
	return append(out, compositeCases()...)
}

// keyCases are the types that may be keys (every scalar but duration, and
// the composite cases marked key), with their values that read back
// exactly and differ from each other in Postgres.
func keyCases() []typeCase {
	var cases []typeCase
	for _, c := range scalarCases() {
		if c.name != "duration" {
			cases = append(cases, c)
		}
	}
	for _, c := range compositeCases() {
		if c.key {
			cases = append(cases, c)
		}
	}
	for i, c := range cases {
		var vals []typeValue
		for _, v := range c.values {
			if !v.noKey && !v.jsonOnly {
				vals = append(vals, v)
			}
		}
		cases[i].values = vals
	}
	return cases
}

// bindText returns the CQL text that binds a value of type c, and its
// arguments: a marker, or for a tuple a tuple of markers, one per
// component, since gocql cannot bind a whole tuple (it counts a tuple
// marker as one value per component). ok is false for a tuple value
// missing components, which only a literal writes. A nil value is null.
func bindText(c typeCase, in []byte) (text string, args []any, ok bool) {
	if !strings.HasPrefix(c.cql, "tuple<") {
		return "?", []any{rawValue(in)}, true
	}
	if in == nil {
		return "null", nil, true
	}
	n := tupleArity(c.cql)
	var marks []string
	for len(in) > 0 {
		size := int32(binary.BigEndian.Uint32(in))
		in = in[4:]
		marks = append(marks, "?")
		if size < 0 {
			args = append(args, nil)
			continue
		}
		args = append(args, rawValue(in[:size]))
		in = in[size:]
	}
	return "(" + strings.Join(marks, ", ") + ")", args, len(args) == n
}

// tupleArity counts the components of a tuple<…> type.
func tupleArity(cql string) int {
	n, depth := 1, 0
	for _, r := range cql {
		switch r {
		case '<':
			depth++
		case '>':
			depth--
		case ',':
			if depth == 1 {
				n++
			}
		}
	}
	return n
}

// rawCell is a value scanned as its bytes: nil for null, empty for an
// empty value.
type rawCell []byte

func (c *rawCell) UnmarshalCQL(_ gocql.TypeInfo, data []byte) error {
	if data == nil {
		*c = nil
	} else {
		*c = append(rawCell{}, data...)
	}
	return nil
}

// readCells runs q and returns its rows as raw cells. gocql hands a tuple
// column over one component at a time; readCells puts it back together with
// every component written out, nulls as length -1, so a null tuple reads
// as a tuple of nulls.
func readCells(q *gocql.Query) ([][][]byte, error) {
	iter := q.Iter()
	cols := iter.Columns()
	var dests []any
	widths := make([]int, len(cols))
	for i, c := range cols {
		widths[i] = 1
		if tt, ok := c.TypeInfo.(gocql.TupleTypeInfo); ok {
			widths[i] = len(tt.Elems)
		}
		for range widths[i] {
			dests = append(dests, new(rawCell))
		}
	}
	var rows [][][]byte
	for iter.Scan(dests...) {
		row := make([][]byte, len(cols))
		at := 0
		for i, c := range cols {
			if _, ok := c.TypeInfo.(gocql.TupleTypeInfo); ok {
				row[i] = []byte{}
				for _, d := range dests[at : at+widths[i]] {
					row[i] = appendCell(row[i], *d.(*rawCell))
				}
			} else {
				row[i] = *dests[at].(*rawCell)
			}
			at += widths[i]
		}
		rows = append(rows, row)
	}
	return rows, iter.Close()
}

// readOne reads the one row q returns.
func readOne(t *testing.T, q *gocql.Query) [][]byte {
	t.Helper()
	row, ok := readRow(t, q)
	if !ok {
		t.FailNow()
	}
	return row
}

// readRow reads the one row q returns, or reports why it cannot.
func readRow(t *testing.T, q *gocql.Query) ([][]byte, bool) {
	t.Helper()
	rows, err := readCells(q)
	if err != nil {
		t.Errorf("%s: %v", q.Statement(), err)
		return nil, false
	}
	if len(rows) != 1 {
		t.Errorf("%s %x: %d rows, want 1", q.Statement(), q.Values(), len(rows))
		return nil, false
	}
	return rows[0], true
}

// wantBytes checks a cell against the bytes expected, nil meaning null.
func wantBytes(t *testing.T, what string, got, want []byte) {
	t.Helper()
	if (got == nil) != (want == nil) || !bytes.Equal(got, want) {
		t.Errorf("%s: got %s, want %s", what, cellText(got), cellText(want))
	}
}

func cellText(b []byte) string {
	if b == nil {
		return "null"
	}
	return fmt.Sprintf("0x%x", b)
}

// TestTypesMurmur3 checks the test's own Murmur3 against the token
// vectors of Cassandra's partitioner, and the gateway's token() on them.
func TestTypesMurmur3(t *testing.T) {
	vectors := []struct {
		key  []byte
		want int64
	}{
		{uuidOf("41d01b63-244e-435d-bd6d-5dc8a0addb8c"), -2767158835560740559},
		{compositeKey(be32(2000), bstr("1")), -108427357362698080},
		{bstr("best"), 8664726657035972693},
		{be32(1), -4069959284402364209},
		{nil, math.MinInt64},
	}
	for _, v := range vectors {
		if got := murmur3Token(v.key); got != v.want {
			t.Errorf("murmur3Token(%x) = %d, want %d", v.key, got, v.want)
		}
	}
	sess := typesSession(t)
	exec(t, sess, "CREATE TABLE IF NOT EXISTS comp (a int, b text, v int, PRIMARY KEY ((a, b)))",
		"INSERT INTO comp (a, b, v) VALUES (2000, '1', 1)")
	row := readOne(t, sess.Query("SELECT token(a, b) FROM comp WHERE a = 2000 AND b = '1'"))
	wantBytes(t, "token(2000, '1')", row[0], be64(-108427357362698080))
}

// TestTypesRegular writes every value into its column of types.reg, bound
// and as a literal, and reads it back byte for byte.
func TestTypesRegular(t *testing.T) {
	sess := typesSession(t)
	for ci, c := range regularCases() {
		t.Run(c.name, func(t *testing.T) {
			col := "v_" + c.name
			// roundTrip writes expr into row k and reads back want.
			roundTrip := func(what string, k int, expr string, args []any, want []byte) {
				t.Helper()
				exec1(t, sess.Query("INSERT INTO reg (k, "+col+") VALUES (?, "+expr+")", append([]any{k}, args...)...))
				row := readOne(t, sess.Query("SELECT "+col+" FROM reg WHERE k = ?", k))
				wantBytes(t, what, row[0], want)
			}
			for vi, v := range c.values {
				if v.jsonOnly {
					continue
				}
				k := ci*100 + vi
				if text, args, ok := bindText(c, v.in); v.in != nil && ok {
					roundTrip(fmt.Sprintf("%s bound %s", c.name, cellText(v.in)), k, text, args, v.back())
				}
				if v.lit != "" {
					roundTrip(c.name+" literal "+shorten(v.lit), k+50, v.lit, nil, v.back())
				}
			}
		})
	}
}

func exec1(t *testing.T, q *gocql.Query) {
	t.Helper()
	if err := q.Exec(); err != nil {
		t.Fatalf("%s: %v", q.Statement(), err)
	}
}

func shorten(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}

// TestTypesCounter adds the extremes of bigint to counters.
func TestTypesCounter(t *testing.T) {
	sess := typesSession(t)
	for k, d := range []int64{math.MaxInt64, math.MinInt64, -1, 0} {
		exec1(t, sess.Query("UPDATE ctr SET n = n + ? WHERE k = ?", rawValue(be64(d)), k))
		row := readOne(t, sess.Query("SELECT n FROM ctr WHERE k = ?", k))
		wantBytes(t, fmt.Sprintf("counter + %d", d), row[0], be64(d))
	}
	exec(t, sess, "UPDATE ctr SET n = n + 5 WHERE k = 10", "UPDATE ctr SET n = n - 7 WHERE k = 10")
	row := readOne(t, sess.Query("SELECT n FROM ctr WHERE k = 10"))
	wantBytes(t, "counter + 5 - 7", row[0], be64(-2))
}

// TestTypesPartitionKeys writes every key value as the partition key of a
// table of its own and finds the row again by the key: bound as written,
// as a literal, and bound in Cassandra's normal form (sets and maps
// sorted). token(k) must be Cassandra's Murmur3 of the key's normal form,
// and a scan returns every row in token order.
func TestTypesPartitionKeys(t *testing.T) {
	sess := typesSession(t)
	for _, c := range keyCases() {
		t.Run(c.name, func(t *testing.T) {
			table := "p_" + c.name
			exec(t, sess, fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s (k %s PRIMARY KEY, v int)", table, c.cql))
			keys := map[string]bool{}
			for vi, v := range c.values {
				key := v.back()
				if len(key) == 0 { // Key may not be empty
					continue
				}
				keys[string(key)] = true
				what := fmt.Sprintf("%s key %s", c.name, cellText(key))
				check := func(cond string, args ...any) {
					t.Helper()
					row, ok := readRow(t, sess.Query("SELECT k, token(k), v FROM "+table+" WHERE k = "+cond, args...))
					if !ok {
						return
					}
					wantBytes(t, what+" found by "+shorten(cond), row[0], key)
					wantBytes(t, what+": token", row[1], be64(murmur3Token(key)))
					wantBytes(t, what+": v", row[2], be32(int32(vi)))
				}
				text, args, ok := bindText(c, v.in)
				if v.in != nil && ok {
					exec1(t, sess.Query("INSERT INTO "+table+" (k, v) VALUES ("+text+", ?)", append(args, vi)...))
					check(text, args...)
				} else {
					exec1(t, sess.Query("INSERT INTO "+table+" (k, v) VALUES ("+v.lit+", ?)", vi))
				}
				if v.lit != "" {
					check(v.lit)
				}
				if text, args, ok := bindText(c, key); !bytes.Equal(key, v.in) && ok {
					check(text, args...)
				}
			}
			n := len(keys)
			rows, err := readCells(sess.Query("SELECT k, token(k) FROM " + table))
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != n {
				t.Errorf("scan: %d rows, want %d", len(rows), n)
			}
			last := int64(math.MinInt64)
			for _, r := range rows {
				tok := int64(binary.BigEndian.Uint64(r[1]))
				if want := murmur3Token(r[0]); tok != want {
					t.Errorf("scan: key %s has token %d, want %d", cellText(r[0]), tok, want)
				}
				if tok < last {
					t.Errorf("scan: token %d after %d", tok, last)
				}
				last = tok
			}
		})
	}
}

// TestTypesClusteringKeys writes every key value as a clustering key of
// one partition and finds each row again by it, the same three ways as
// TestTypesPartitionKeys: a bound set or map matches whatever the order of
// its elements, as in Cassandra. It does not look at the order of rows.
func TestTypesClusteringKeys(t *testing.T) {
	sess := typesSession(t)
	for _, c := range keyCases() {
		t.Run(c.name, func(t *testing.T) {
			table := "c_" + c.name
			exec(t, sess, fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s (k int, c %s, v int, PRIMARY KEY (k, c))", table, c.cql))
			keys := map[string]bool{}
			for vi, v := range c.values {
				keys[string(v.back())] = true
				what := fmt.Sprintf("%s clustering %s", c.name, cellText(v.back()))
				check := func(cond string, args ...any) {
					t.Helper()
					row, ok := readRow(t, sess.Query("SELECT c, v FROM "+table+" WHERE k = 0 AND c = "+cond, args...))
					if !ok {
						return
					}
					wantBytes(t, what+" found by "+shorten(cond), row[0], v.back())
					wantBytes(t, what+": v", row[1], be32(int32(vi)))
				}
				text, args, ok := bindText(c, v.in)
				if v.in != nil && ok {
					exec1(t, sess.Query("INSERT INTO "+table+" (k, c, v) VALUES (0, "+text+", ?)", append(args, vi)...))
					check(text, args...)
				} else {
					exec1(t, sess.Query("INSERT INTO "+table+" (k, c, v) VALUES (0, "+v.lit+", ?)", vi))
				}
				if v.lit != "" {
					check(v.lit)
				}
				if text, args, ok := bindText(c, v.back()); !bytes.Equal(v.back(), v.in) && ok {
					check(text, args...)
				}
			}
			rows, err := readCells(sess.Query("SELECT c FROM " + table + " WHERE k = 0"))
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != len(keys) {
				t.Errorf("partition: %d rows, want %d", len(rows), len(keys))
			}
		})
	}
}

// TestTypesNulls reads back null from every column: never written, bound
// as null, overwritten with null, and deleted.
func TestTypesNulls(t *testing.T) {
	sess := typesSession(t)
	cases := regularCases()
	var names []string
	for _, c := range cases {
		names = append(names, "v_"+c.name)
	}
	// write inserts row k with the first value of every type, or nulls.
	write := func(k int, null bool) {
		t.Helper()
		var marks []string
		args := []any{k}
		for _, c := range cases {
			var in []byte
			if !null {
				in = c.values[0].in
			}
			text, a, _ := bindText(c, in)
			marks, args = append(marks, text), append(args, a...)
		}
		exec1(t, sess.Query("INSERT INTO reg (k, "+strings.Join(names, ", ")+") VALUES (?, "+strings.Join(marks, ", ")+")", args...))
	}
	exec1(t, sess.Query("INSERT INTO reg (k) VALUES (-1)"))
	write(-2, true)
	write(-3, false)
	write(-3, true)
	write(-4, false)
	exec1(t, sess.Query("DELETE "+strings.Join(names, ", ")+" FROM reg WHERE k = -4"))
	exec1(t, sess.Query("INSERT INTO reg (k) VALUES (-4)"))
	for _, k := range []int{-1, -2, -3, -4} {
		row := readOne(t, sess.Query("SELECT "+strings.Join(names, ", ")+" FROM reg WHERE k = ?", k))
		for i, c := range cases {
			if !strings.HasPrefix(c.cql, "tuple<") {
				wantBytes(t, fmt.Sprintf("row %d: %s", k, c.name), row[i], nil)
				continue
			}
			// A null tuple reaches the test as a tuple of nulls.
			var js string
			if err := sess.Query("SELECT toJson(v_"+c.name+") FROM reg WHERE k = ?", k).Scan(&js); err != nil {
				t.Fatal(err)
			}
			if js != "null" {
				t.Errorf("row %d: %s is %s, want null", k, c.name, js)
			}
		}
	}
}

// TestTypesBadValues binds malformed values and checks Cassandra's error
// texts (its serializers' MarshalException messages).
func TestTypesBadValues(t *testing.T) {
	sess := typesSession(t)
	cases := []struct {
		col string
		in  []byte
		msg string
	}{
		{"int", hexBytes("000001"), "Expected 4 or 0 byte int (3)"},
		{"int", hexBytes("0000000001"), "Expected 4 or 0 byte int (5)"},
		{"bigint", be32(1), "Expected 8 or 0 byte long (4)"},
		{"smallint", hexBytes("000001"), "Expected 2 bytes for a smallint (3)"},
		{"smallint", bstr(""), "Expected 2 bytes for a smallint (0)"},
		{"tinyint", be16(1), "Expected 1 byte for a tinyint (2)"},
		{"tinyint", bstr(""), "Expected 1 byte for a tinyint (0)"},
		{"boolean", be16(1), "Expected 1 or 0 byte value for a boolean (2)"},
		{"float", be64(1), "Expected 4 or 0 byte value for a float (8)"},
		{"double", be32(1), "Expected 8 or 0 byte value for a double (4)"},
		{"double", hexBytes("000000000000000000"), "Expected 8 or 0 byte value for a double (9)"},
		{"uuid", make([]byte, 15), "UUID should be 16 or 0 bytes (15)"},
		{"timeuuid", make([]byte, 17), "UUID should be 16 or 0 bytes (17)"},
		{"timeuuid", uuidOf("41d01b63-244e-435d-bd6d-5dc8a0addb8c"), "Invalid version for TimeUUID type: 0x4"},
		{"timeuuid", uuidOf("c1d01b63-244e-035d-bd6d-5dc8a0addb8c"), "Invalid version for TimeUUID type: 0xc"},
		{"timestamp", be32(1), "Expected 8 or 0 byte long for date (4)"},
		{"date", be64(1), "Expected 4 byte long for date (8)"},
		{"date", bstr(""), "Expected 4 byte long for date (0)"},
		{"time", be32(1), "Expected 8 byte long for time (4)"},
		{"time", bstr(""), "Expected 8 byte long for time (0)"},
		{"inet", hexBytes("0102030405"), "Expected 4 or 16 byte inetaddress; got 0102030405"},
		{"inet", hexBytes("01"), "Expected 4 or 16 byte inetaddress; got 01"},
		{"decimal", hexBytes("000001"), "Expected 0 or at least 4 bytes (3)"},
		{"duration", hexBytes("0002"), "Expected at least 3 bytes for a duration (2)"},
		{"duration", durationOf(1, -1, 0), "The duration months, days and nanoseconds must be all of the same sign (1, -1, 0)"},
		{"duration", durationOf(math.MaxInt32+1, 0, 0), "The duration months must be a 32 bits integer but was: 2147483648"},
		{"duration", durationOf(0, math.MinInt32-1, 0), "The duration days must be a 32 bits integer but was: -2147483649"},
		{"text", hexBytes("ff"), "String didn't validate."},
		{"text", hexBytes("61c3"), "String didn't validate."},
		{"text", hexBytes("c1bf"), "String didn't validate."},
		{"text", hexBytes("e08080"), "String didn't validate."},
		{"text", hexBytes("f8808080"), "String didn't validate."},
		{"varchar", hexBytes("80"), "String didn't validate."},
		{"ascii", bstr("é"), "Invalid byte for ascii: -61"},
		{"ascii", hexBytes("61ff"), "Invalid byte for ascii: -1"},
		// Collections (ListSerializer, SetSerializer, MapSerializer).
		{"list_int", hexBytes("000001"), "Not enough bytes to read a list"},
		{"list_int", bstr(""), "Not enough bytes to read a list"},
		{"set_text", bstr(""), "Not enough bytes to read a set"},
		{"list_int", append(be32(2), appendCell(nil, be32(1))...), "Not enough bytes to read a list"},
		{"list_int", append(be32(1), appendCell(nil, hexBytes("000001"))...), "Expected 4 or 0 byte int (3)"},
		{"list_int", append(collOf(be32(1)), 0), "Unexpected extraneous bytes after list value"},
		{"list_int", be32(-1), "The data cannot be deserialized as a list"},
		{"flist_int", append(be32(1), appendCell(nil, be16(1))...), "Expected 4 or 0 byte int (2)"},
		{"set_text", collOf(bstr("a"), hexBytes("ff")), "String didn't validate."},
		{"set_text", hexBytes("0000000100000002"), "Not enough bytes to read a set"},
		{"set_text", append(collOf(bstr("a")), 1, 2), "Unexpected extraneous bytes after set value"},
		{"set_text", be32(-2), "The data cannot be deserialized as a set"},
		{"map_text_int", mapOf(bstr("a"), hexBytes("000001")), "Expected 4 or 0 byte int (3)"},
		{"map_text_int", append(be32(1), appendCell(nil, bstr("a"))...), "Not enough bytes to read a map"},
		{"map_text_int", append(mapOf(bstr("a"), be32(1)), 0), "Unexpected extraneous bytes after map value"},
		{"map_int_text", mapOf(be32(1), hexBytes("c0")), "String didn't validate."},
		{"map_text_int", be32(-1), "The data cannot be deserialized as a map"},
		// Tuples and user types (TupleSerializer, UserTypeSerializer).
		// gocql binds no whole tuple column, so these tuples are elements.
		{"list_tuple", collOf(append(tupleOf(be32(1), bstr("a")), 0, 0, 0, 0)), "Invalid remaining data after end of tuple value"},
		{"list_tuple", collOf(tupleOf(be32(1), hexBytes("ff"))), "String didn't validate."},
		{"list_tuple", collOf(hexBytes("000000")), "Not enough bytes to read size of 0th component"},
		{"list_tuple", collOf(append(be32(4), 0, 0)), "Not enough bytes to read 0th component"},
		{"map_timeuuid_tuple", mapOf(uuidOf(timeA), tupleOf(be16(1))), "Expected 4 or 0 byte int (2)"},
		{"faddr", append(tupleOf(bstr("s")), 0, 0), "Not enough bytes to read size of 1th field Zip"},
		{"addr", append(tupleOf(bstr("s"), be32(1)), hexBytes("00000009")...), "Not enough bytes to read 2th field tags"},
		{"addr", append(tupleOf(bstr("s"), be32(1), collOf()), 0, 0, 0, 0), "Invalid remaining data after end of UDT value"},
		{"faddr", tupleOf(hexBytes("ff")), "String didn't validate."},
		{"list_tuple", collOf(tupleOf(be16(1))), "Expected 4 or 0 byte int (2)"},
	}
	for _, c := range cases {
		t.Run(c.col+"/"+cellText(c.in), func(t *testing.T) {
			err := sess.Query("INSERT INTO reg (k, v_"+c.col+") VALUES (0, ?)", rawValue(c.in)).Exec()
			requireCQLError(t, err, 0x2200, c.msg)
		})
	}
	// A tuple column is bound one component at a time.
	requireCQLError(t, sess.Query("INSERT INTO reg (k, v_tuple) VALUES (0, (?, ?, ?))",
		rawValue(be32(1)), rawValue(bstr("a")), rawValue(be32(0))).Exec(), 0x2200, "Expected 8 or 0 byte value for a double (4)")
	// The same checks hold for keys and for values in WHERE.
	exec(t, sess, "CREATE TABLE IF NOT EXISTS p_int (k int PRIMARY KEY, v int)",
		"CREATE TABLE IF NOT EXISTS c_text (k int, c text, v int, PRIMARY KEY (k, c))")
	requireCQLError(t, sess.Query("INSERT INTO p_int (k, v) VALUES (?, 1)", rawValue(hexBytes("01"))).Exec(),
		0x2200, "Expected 4 or 0 byte int (1)")
	requireCQLError(t, sess.Query("SELECT * FROM c_text WHERE k = 0 AND c = ?", rawValue(hexBytes("fe"))).Exec(),
		0x2200, "String didn't validate.")
	requireCQLError(t, sess.Query("INSERT INTO c_text (k, c, v) VALUES (0, ?, 1)", rawValue(hexBytes("fe"))).Exec(),
		0x2200, "String didn't validate.")
}

// TestTypesUnstorable binds values Cassandra accepts and Postgres cannot
// hold, and checks the refusals docs/types.md lists.
func TestTypesUnstorable(t *testing.T) {
	sess := typesSession(t)
	const notUTF8 = "Text values that are not well-formed UTF-8 cannot be stored (PostgreSQL text holds only UTF-8)"
	cases := []struct {
		col string
		in  []byte
		msg string
	}{
		{"l_int", collOf(be32(1), bstr("")), "Empty values of type int cannot be stored in a collection " +
			"(PostgreSQL has no empty int)"},
		// Text holds U+0000 everywhere (TestTextNUL).
		// Cassandra's validator takes modified UTF-8's 0xc080, surrogates
		// and code points past U+10FFFF.
		{"text", hexBytes("c080"), notUTF8},
		{"text", hexBytes("eda080"), notUTF8},
		{"text", hexBytes("f4908080"), notUTF8},
		{"set_text", collOf(hexBytes("eda080")), notUTF8},
		{"timestamp", be64(-210866803200001), "timestamp -4713-11-23T23:59:59.999Z is out of the range PostgreSQL " +
			"can store (4714-11-24 00:00:00 BC to 294276-12-31 23:59:59.999 UTC)"},
		{"timestamp", be64(9224318016000000), "timestamp +294277-01-01T00:00:00.000Z is out of the range PostgreSQL " +
			"can store (4714-11-24 00:00:00 BC to 294276-12-31 23:59:59.999 UTC)"},
		// Dates and decimals Postgres cannot hold are kept exactly
		// (TestTypesRegular, TestTypesKeys).
	}
	for _, c := range cases {
		t.Run(c.col+"/"+cellText(c.in), func(t *testing.T) {
			err := sess.Query("INSERT INTO reg (k, v_"+c.col+") VALUES (0, ?)", rawValue(c.in)).Exec()
			requireCQLError(t, err, 0x2200, c.msg)
		})
	}
	// Clustering keys have no empty value but for text, ascii and blob.
	exec(t, sess, "CREATE TABLE IF NOT EXISTS c_int (k int, c int, v int, PRIMARY KEY (k, c))")
	requireCQLError(t, sess.Query("INSERT INTO c_int (k, c, v) VALUES (0, ?, 1)", rawValue{}).Exec(),
		0x2200, "Empty values of type int cannot be stored (PostgreSQL has no empty int)")
	exec(t, sess, "CREATE TABLE IF NOT EXISTS p_int (k int PRIMARY KEY, v int)")
	requireCQLError(t, sess.Query("INSERT INTO p_int (k, v) VALUES (?, 1)", rawValue{}).Exec(), 0x2200, "Key may not be empty")
}
