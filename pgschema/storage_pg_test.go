package pgschema_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/cqlpg/cqlpg/pgschema"
)

// exactSortKey lists the kinds whose sort key is their CQL serialization
// itself; duration's orders the same without being equal, and so do
// text's and ascii's for values holding 0x00 or 0x01, whose key is their
// escaped form (escapeText).
var exactSortKey = map[pgschema.Kind]bool{
	pgschema.Bigint: true, pgschema.Counter: true, pgschema.Int: true,
	pgschema.Smallint: true, pgschema.Tinyint: true, pgschema.Boolean: true, pgschema.Float: true,
	pgschema.Double: true, pgschema.Blob: true, pgschema.UUID: true, pgschema.Timeuuid: true,
	pgschema.Timestamp: true, pgschema.Date: true, pgschema.Time: true, pgschema.Decimal: true,
	pgschema.Varint: true, pgschema.Inet: true,
}

func pgConnect(t *testing.T) *pgconn.PgConn {
	t.Helper()
	ctx := context.Background()
	conn, err := pgconn.Connect(ctx, shardURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(ctx) })
	return conn
}

func pgExec(t *testing.T, conn *pgconn.PgConn, sql string, args [][]byte, oids []uint32) [][][]byte {
	t.Helper()
	formats := make([]int16, len(args))
	for i := range formats {
		formats[i] = 1
	}
	res := conn.ExecParams(context.Background(), sql, args, oids, formats, []int16{1}).Read()
	if res.Err != nil {
		t.Fatalf("%s: %v", sql, res.Err)
	}
	return res.Rows
}

func int4(v int) []byte { return binary.BigEndian.AppendUint32(nil, uint32(v)) }

// pgArray builds the binary form of a one-dimensional array, the way the
// gateway sends IN lists.
func pgArray(elemOID uint32, elems [][]byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, 1)
	b = binary.BigEndian.AppendUint32(b, 0)
	b = binary.BigEndian.AppendUint32(b, elemOID)
	b = binary.BigEndian.AppendUint32(b, uint32(len(elems)))
	b = binary.BigEndian.AppendUint32(b, 1)
	for _, e := range elems {
		b = binary.BigEndian.AppendUint32(b, uint32(len(e)))
		b = append(b, e...)
	}
	return b
}

// TestStoragePostgres stores every round-trip case in a column of its
// storage type through binary parameters, reads it back in binary, and
// checks the value, its sort key and IN lists of the type.
func TestStoragePostgres(t *testing.T) {
	conn := pgConnect(t)
	cases := storageCases(t)
	var types []string
	column := map[string]string{}
	for _, c := range cases {
		if _, ok := column[c.typ]; !ok {
			column[c.typ] = fmt.Sprintf("c%d", len(types))
			types = append(types, c.typ)
		}
	}
	var ddl strings.Builder
	ddl.WriteString("CREATE SCHEMA storage_rt; CREATE TABLE storage_rt.v (id integer PRIMARY KEY")
	for _, typ := range types {
		st, err := pgschema.StorageOf(testType(t, typ))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&ddl, ", %s %s", column[typ], st.SQL)
	}
	ddl.WriteString(")")
	if _, err := conn.Exec(context.Background(), ddl.String()).ReadAll(); err != nil {
		t.Fatalf("%s: %v", ddl.String(), err)
	}

	keys := make([][]byte, len(cases))
	for id, c := range cases {
		typ := testType(t, c.typ)
		st := storageOf(t, typ)
		col := column[c.typ]
		pg := c.in
		if st.ToPG != nil {
			var err error
			if pg, err = st.ToPG(nil, c.in); err != nil {
				t.Fatalf("%s %x: ToPG: %v", c.typ, c.in, err)
			}
		}
		pgExec(t, conn, fmt.Sprintf("INSERT INTO storage_rt.v (id, %s) VALUES ($1, $2)", col),
			[][]byte{int4(id), pg}, []uint32{pgschema.OIDInt4, st.OID})
		rows := pgExec(t, conn, fmt.Sprintf("SELECT %s, %s FROM storage_rt.v WHERE id = $1", col,
			fmt.Sprintf(st.SortKey, col)), [][]byte{int4(id)}, []uint32{pgschema.OIDInt4})
		got := rows[0][0]
		if st.FromPG != nil {
			var err error
			if got, err = st.FromPG(nil, got); err != nil {
				t.Errorf("%s %x: FromPG(%x): %v", c.typ, c.in, rows[0][0], err)
				continue
			}
		}
		if !bytes.Equal(got, c.expected()) {
			t.Errorf("%s: stored %x, read back %x (Postgres sent %x), want %x", c.typ, c.in, got, rows[0][0],
				c.expected())
		}
		keys[id] = rows[0][1]
		if keys[id] == nil {
			t.Errorf("%s %x: null sort key", c.typ, c.in)
		}
		exact := exactSortKey[typ.Kind] || (typ.Kind == pgschema.Text || typ.Kind == pgschema.Ascii) &&
			bytes.IndexByte(c.in, 0) < 0 && bytes.IndexByte(c.in, 1) < 0
		if exact && !bytes.Equal(keys[id], c.expected()) {
			t.Errorf("%s %x: sort key %x, want the CQL bytes %x", c.typ, c.in, keys[id], c.expected())
		}
	}

	// Sort keys order values of a type as their CQL bytes do: text's and
	// ascii's too, escaped (escapeText) when they hold 0x00 or 0x01.
	for i, a := range cases {
		for j, b := range cases {
			k := testType(t, a.typ).Kind
			ordered := exactSortKey[k] || k == pgschema.Duration || k == pgschema.Text || k == pgschema.Ascii
			if a.typ != b.typ || !ordered {
				continue
			}
			want := bytes.Compare(a.expected(), b.expected())
			if got := bytes.Compare(keys[i], keys[j]); got != want {
				t.Errorf("%s: sort keys of %x and %x compare %d, their bytes %d", a.typ, a.expected(),
					b.expected(), got, want)
			}
		}
	}

	// IN lists: an array of the column's type finds every value.
	for _, typ := range types {
		st := storageOf(t, testType(t, typ))
		if st.ArrayOID == 0 {
			continue
		}
		var elems [][]byte
		want := 0
		for _, c := range cases {
			if c.typ != typ {
				continue
			}
			elems = append(elems, pgForm(t, st, c.in))
			want++
		}
		rows := pgExec(t, conn, fmt.Sprintf("SELECT count(*)::int FROM storage_rt.v WHERE %s = ANY($1)", column[typ]),
			[][]byte{pgArray(st.OID, elems)}, []uint32{st.ArrayOID})
		// Equal values (NaNs, 0.0 and -0.0, 1.50 and 1.5...) find each other.
		if got := int(binary.BigEndian.Uint32(rows[0][0])); got < want {
			t.Errorf("%s: IN list of its %d values found %d rows", typ, want, got)
		}
	}
}

// TestStorageOrderPostgres checks that ORDER BY on the columns of types
// whose Postgres order is Cassandra's gives Cassandra's order.
func TestStorageOrderPostgres(t *testing.T) {
	conn := pgConnect(t)
	ordered := []struct {
		typ    string
		values []string // JSON, in any order
	}{
		// Text holding 0x00 or 0x01 is stored escaped (escapeText), in an
		// order that must stay the bytes' order.
		{"ascii", []string{`""`, `"a"`, `"B"`, `"b"`, `"ab"`, `" "`, `"~"`, `"a\u0000"`, `"a\u0000b"`, `"a\u0001"`,
			`"a\u0001\u0002"`, `"\u0000"`, `"\u0001"`, `"\u0002"`}},
		{"text", []string{`""`, `"a"`, `"Z"`, `"é"`, `"e"`, `"日本"`, `"😀"`, `"ab"`, `"\u0001"`, `"a\u0000"`,
			`"a\u0000b"`, `"a\u0001"`, `"a\u0001\u0002"`, `"b"`, `"\u0000"`, `"\u0000\u0002"`, `"\u0002"`}},
		{"blob", []string{`"0x"`, `"0x00"`, `"0x0000"`, `"0xff"`, `"0x7f"`, `"0x80"`, `"0x01ff"`}},
		{"bigint", []string{"0", "-1", "1", "-9223372036854775808", "9223372036854775807", "256", "-256"}},
		{"int", []string{"0", "-1", "1", "-2147483648", "2147483647", "65536", "-65536"}},
		{"smallint", []string{"0", "-1", "1", "-32768", "32767", "255", "-255"}},
		{"tinyint", []string{"0", "-1", "1", "-128", "127"}},
		{"varint", []string{"0", "-1", "1", "128", "-129", "1234567890123456789012345678901234567890",
			"-1234567890123456789012345678901234567890", "255"}},
		{"decimal", []string{`"0"`, `"-1.5"`, `"1.25"`, `"1E+10"`, `"-1E-10"`, `"99999999999999999999.9"`, `"0.001"`}},
		{"double", []string{"0.0", "-1.5", "1.5", `"Infinity"`, `"-Infinity"`, `"NaN"`, "4.9E-324", "-1.7976931348623157E308"}},
		{"float", []string{"0.0", "-1.5", "1.5", `"Infinity"`, `"-Infinity"`, `"NaN"`, "1.4E-45"}},
		{"boolean", []string{"true", "false"}},
		{"timestamp", []string{`"2023-10-27 10:05:00.000Z"`, `"1969-12-31 23:59:59.999Z"`, `"0001-01-01 00:00:00.000Z"`,
			`"9999-12-31 23:59:59.999Z"`, `"1970-01-01 00:00:00.000Z"`}},
		{"date", []string{`"2023-10-27"`, `"1969-12-31"`, `"-4713-11-24"`, `"9999-12-31"`, `"1970-01-01"`}},
		{"time", []string{`"00:00:00"`, `"23:59:59.999999999"`, `"12:00:00.000000001"`, `"12:00:00"`}},
		{"frozen<list<int>>", []string{"[]", "[1]", "[1, 2]", "[-1, 5]", "[2]", "[1, 1]"}},
		{"frozen<list<text>>", []string{`[]`, `["a"]`, `["B"]`, `["a", ""]`, `["b"]`}},
		{"frozen<set<bigint>>", []string{"[]", "[1]", "[1, 2]", "[-1, 5]", "[2]"}},
	}
	for _, o := range ordered {
		typ := testType(t, o.typ)
		st, err := pgschema.StorageOf(typ)
		if err != nil {
			t.Fatal(err)
		}
		table := "storage_order_" + strings.NewReplacer("<", "_", ">", "_", ", ", "_").Replace(o.typ)
		if _, err := conn.Exec(context.Background(),
			fmt.Sprintf("CREATE TABLE %s (id integer, v %s)", table, st.SQL)).ReadAll(); err != nil {
			t.Fatal(err)
		}
		var values [][]byte
		for id, j := range o.values {
			v := fj(t, o.typ, j)
			values = append(values, v)
			pg := v
			if st.ToPG != nil {
				if pg, err = st.ToPG(nil, v); err != nil {
					t.Fatal(err)
				}
			}
			pgExec(t, conn, fmt.Sprintf("INSERT INTO %s VALUES ($1, $2)", table), [][]byte{int4(id), pg},
				[]uint32{pgschema.OIDInt4, st.OID})
		}
		rows := pgExec(t, conn, fmt.Sprintf("SELECT id FROM %s ORDER BY v", table), nil, nil)
		var got [][]byte
		for _, r := range rows {
			got = append(got, values[binary.BigEndian.Uint32(r[0])])
		}
		want := slices.Clone(values)
		slices.SortStableFunc(want, func(a, b []byte) int { return pgschema.Compare(typ, a, b) })
		for i := range want {
			if pgschema.Compare(typ, got[i], want[i]) != 0 {
				t.Errorf("%s: ORDER BY gives %s, Cassandra orders %s", o.typ, jsonList(t, typ, got), jsonList(t, typ, want))
				break
			}
		}
	}
}

func jsonList(t *testing.T, typ *pgschema.Type, vals [][]byte) string {
	var parts []string
	for _, v := range vals {
		j, err := pgschema.ToJSON(typ, v)
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, string(j))
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// TestTextBytesPostgres checks that cqlpg.text_bytes, which gives SQL the
// CQL bytes of a stored text value, undoes the escape as the gateway's
// reads do: for the values the gateway stores, and for the 0x01 not
// followed by 0x01 or 0x02 that only SQL can write.
func TestTextBytesPostgres(t *testing.T) {
	conn := connect(t)
	st := storageOf(t, pgschema.Scalar(pgschema.Text))
	stored := []string{"", "a", "é\x01", "\x01", "a\x01", "\x01\x03", "\x01\x01\x01", "\x01\x02\x01", "\x01é\x01\x01"}
	for _, v := range []string{"a\x00", "a\x00b", "a\x01", "a\x01\x02", "\x00", "\x00\x01\x02", "日\x00本"} {
		stored = append(stored, string(pgForm(t, st, []byte(v))))
	}
	for _, s := range stored {
		want, err := st.FromPG(nil, []byte(s))
		if err != nil {
			t.Fatalf("FromPG(%q): %v", s, err)
		}
		var got []byte
		if err := conn.QueryRow(context.Background(), "SELECT cqlpg.text_bytes($1::text)", s).Scan(&got); err != nil {
			t.Fatalf("text_bytes(%q): %v", s, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("text_bytes(%q) = %q, the gateway reads %q", s, got, want)
		}
	}
}
