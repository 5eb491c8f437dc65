package pgschema_test

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"math"
	"strings"
	"testing"

	"github.com/cqlpg/cqlpg/pgschema"
)

// storageCase is a CQL value that must survive the trip to Postgres's
// binary form and back: as it is, or as want when Cassandra itself would
// normalize it (sets and maps sorted, a decimal's negative scale).
type storageCase struct {
	typ  string
	in   []byte
	want []byte
}

func (c storageCase) expected() []byte {
	if c.want != nil {
		return c.want
	}
	return c.in
}

// testTypes resolves the user types the cases use.
func testType(t testing.TB, s string) *pgschema.Type {
	t.Helper()
	typ, err := pgschema.ParseType(s, func(name string) (*pgschema.Type, error) {
		switch name {
		case "address":
			return pgschema.NewUDT("ks", "address", []string{"street", "Zip", "tags"},
				[]*pgschema.Type{pgschema.Scalar(pgschema.Text), pgschema.Scalar(pgschema.Int),
					pgschema.NewSet(pgschema.Scalar(pgschema.Text), true)}, true), nil
		}
		t.Fatalf("unknown type %s", name)
		return nil, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return typ
}

// storageOf returns the storage of typ, failing the test on an error.
func storageOf(t testing.TB, typ *pgschema.Type) *pgschema.Storage {
	t.Helper()
	st, err := pgschema.StorageOf(typ)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// pgForm returns a CQL value in its storage's Postgres form.
func pgForm(t testing.TB, st *pgschema.Storage, v []byte) []byte {
	t.Helper()
	if st.ToPG == nil {
		return v
	}
	pg, err := st.ToPG(nil, v)
	if err != nil {
		t.Fatal(err)
	}
	return pg
}

// orderKey returns the order key of a value, failing the test on an error.
func orderKey(t testing.TB, typ *pgschema.Type, v []byte) []byte {
	t.Helper()
	k, err := pgschema.OrderKey(typ, v)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// fj builds a value from its Cassandra JSON.
func fj(t testing.TB, typ, json string) []byte {
	t.Helper()
	v, err := pgschema.FromJSON(testType(t, typ), []byte(json))
	if err != nil {
		t.Fatalf("FromJSON(%s, %s): %v", typ, json, err)
	}
	return v
}

func hx(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func be32(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }
func be64(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }
func s64(v int64) []byte   { return binary.BigEndian.AppendUint64(nil, uint64(v)) }

// storageCases are the round-trip values of every storage type, with the
// boundary values of each.
func storageCases(t testing.TB) []storageCase {
	var cs []storageCase
	add := func(typ string, vals ...[]byte) {
		for _, v := range vals {
			cs = append(cs, storageCase{typ: typ, in: v})
		}
	}
	addJSON := func(typ string, jsons ...string) {
		for _, j := range jsons {
			cs = append(cs, storageCase{typ: typ, in: fj(t, typ, j)})
		}
	}
	addJSON("ascii", `""`, `"hello"`, `"\u0001\u007f"`, `"a\u0000"`, `"\u0000\u0002"`)
	addJSON("text", `""`, `"héllo wörld"`, `"日本語"`, `"😀"`, `"Z"`, `"a"`, `"\u0001"`, `"a\u0000"`, `"a\u0000b"`,
		`"a\u0001\u0002"`, `"\u0000"`)
	addJSON("bigint", "0", "-9223372036854775808", "9223372036854775807", "-1")
	addJSON("counter", "42", "-9223372036854775808")
	addJSON("int", "0", "-2147483648", "2147483647", "-1", "1")
	addJSON("smallint", "-32768", "32767", "0")
	addJSON("tinyint", "-128", "127", "0", "-1")
	addJSON("boolean", "true", "false")
	addJSON("float", "0.0", "-0.0", "1.5", "-3.4028235E38", "3.4028235E38", "1.4E-45", `"NaN"`, `"Infinity"`,
		`"-Infinity"`)
	add("float", be32(0x7fc00001), be32(0xffc00000)) // NaNs with other bits
	addJSON("double", "0.0", "-0.0", "1.7976931348623157E308", "4.9E-324", "-2.5", `"NaN"`, `"Infinity"`,
		`"-Infinity"`, "0.1")
	add("double", be64(0x7ff0000000000001))
	addJSON("blob", `"0x"`, `"0x00"`, `"0xcafebabe"`, `"0xff00ff"`)
	addJSON("uuid", `"00000000-0000-0000-0000-000000000000"`, `"ffffffff-ffff-ffff-ffff-ffffffffffff"`,
		`"6bddc89a-5644-11e4-97fc-56847afe9799"`)
	addJSON("timeuuid", `"6bddc89a-5644-11e4-97fc-56847afe9799"`)
	add("timestamp", be64(0), s64(-1), s64(-62135596800000), // 0001-01-01
		be64(253402300799999),  // 9999-12-31 23:59:59.999
		s64(-210866803200000),  // Postgres's first instant
		be64(9224318015999999), // Postgres's last millisecond
		be64(1698401100123))
	add("date", be32(1<<31), be32(1<<31-1), be32(1<<31+2932896), // 9999-12-31
		be32(1<<31-719162),     // 0001-01-01
		be32(1<<31-2440588),    // Postgres's first date, 4714-11-24 BC
		be32(1<<31+2145042905)) // Postgres's last date, 5874897-12-31
	addJSON("time", `"00:00:00"`, `"23:59:59.999999999"`, `"12:34:56.123456789"`)
	add("time", s64(-1)) // Cassandra does not check the range
	addJSON("varint", "0", "1", "-1", "127", "128", "-128", "-129", "255", "256",
		"1234567890123456789012345678901234567890", "-1234567890123456789012345678901234567890",
		"9223372036854775808", "-9223372036854775809")
	add("varint", hx(t, "0000ff"), hx(t, "ffff80")) // not minimal: read back minimal
	cs[len(cs)-2].want = hx(t, "00ff")
	cs[len(cs)-1].want = hx(t, "80")
	addJSON("decimal", `"0"`, `"0.00"`, `"1"`, `"-1"`, `"1.50"`, `"123.456"`, `"-0.000000001"`,
		`"12345678901234567890.123456789012345678901234567890"`, `"1E-100"`, `"1E-16383"`,
		`"-99999999999999999999999999999999999999.9999"`, `"0.0001"`, `"10000"`, `"100000000"`)
	// Negative scales: Postgres keeps the value, not the exponent.
	cs = append(cs,
		storageCase{typ: "decimal", in: fj(t, "decimal", `"1E+3"`), want: fj(t, "decimal", `"1000"`)},
		storageCase{typ: "decimal", in: fj(t, "decimal", `"-1.23E+10"`), want: fj(t, "decimal", `"-12300000000"`)},
		storageCase{typ: "decimal", in: fj(t, "decimal", `"0E+5"`), want: fj(t, "decimal", `"0"`)})
	addJSON("inet", `"127.0.0.1"`, `"0.0.0.0"`, `"255.255.255.255"`, `"::1"`, `"::"`,
		`"2001:db8::8a2e:370:7334"`)
	add("inet", hx(t, "00000000000000000000ffff01020304")) // IPv4-mapped stays 16 bytes
	addJSON("duration", `"1y2mo3d4h5m6s7ms8us9ns"`, `"-1d"`, `"P0D"`, `"2147483647mo"`,
		`"9223372036854775807ns"`, `"-2147483647d"`)

	// Lists, sets and vectors of scalars are arrays.
	addJSON("list<int>", "[]", "[1, 2, 3]", "[3, 1, 2, 1]", "[-2147483648]")
	addJSON("frozen<list<text>>", `["b", "a", ""]`)
	addJSON("list<tinyint>", "[-128, 127]")
	addJSON("list<timestamp>", `["2023-10-27 10:05:00.123Z", "0001-01-01 00:00:00.000Z"]`)
	addJSON("list<date>", `["2023-10-27", "-4713-11-24"]`)
	addJSON("list<decimal>", `["1.50", "-3", "1E-40"]`)
	addJSON("list<varint>", `[1234567890123456789012345678901234567890, 0]`)
	addJSON("list<inet>", `["10.0.0.1", "::1"]`)
	addJSON("list<blob>", `["0x", "0x01"]`)
	addJSON("list<uuid>", `["6bddc89a-5644-11e4-97fc-56847afe9799"]`)
	addJSON("list<boolean>", "[true, false]")
	addJSON("list<double>", `[1.5, "NaN", "-0.0"]`)
	addJSON("list<time>", `["01:02:03.000000004"]`)
	addJSON("list<smallint>", `[-32768]`)
	addJSON("list<bigint>", `[9223372036854775807]`)
	addJSON("set<int>", "[1, 2, 3]", "[]")
	addJSON("frozen<set<text>>", `["Z", "a", "é"]`)
	addJSON("set<timeuuid>", `["6bddc89a-5644-11e4-97fc-56847afe9799", "6bddc89a-5644-11e4-97fc-56847afe9798"]`)
	// Sets sent unsorted, with repeats, read back sorted and distinct.
	i := func(v int32) []byte { return be32(uint32(v)) }
	cs = append(cs, storageCase{typ: "set<int>",
		in:   pgschema.SerializeCollection([][]byte{i(3), i(-1), i(3), i(2)}),
		want: pgschema.SerializeCollection([][]byte{i(-1), i(2), i(3)})})
	cs = append(cs, storageCase{typ: "set<decimal>",
		in:   pgschema.SerializeCollection([][]byte{fj(t, "decimal", `"2"`), fj(t, "decimal", `"1.0"`), fj(t, "decimal", `"1.00"`)}),
		want: pgschema.SerializeCollection([][]byte{fj(t, "decimal", `"1.0"`), fj(t, "decimal", `"2"`)})})
	addJSON("vector<float, 3>", "[1.5, -0.0, 3.4028235E38]", `["NaN", 0, 1]`)
	addJSON("vector<int, 2>", "[1, -1]")
	addJSON("vector<text, 2>", `["a", ""]`)

	// Everything else is jsonb.
	addJSON("map<int, text>", `{}`, `{"1": "a", "2": "b"}`, `{"-1": "", "10": "x"}`)
	addJSON("map<text, int>", `{"b": 2, "a": 1, "": 0, "é": 3, "Z": 4}`)
	addJSON("frozen<map<timestamp, blob>>", `{"2023-10-27 10:05:00.000Z": "0x01", "-62135596800001": "0x"}`)
	addJSON("map<double, boolean>", `{"NaN": true, "-0.0": false, "1.5": true}`)
	addJSON("map<decimal, varint>", `{"1E+3": 1, "0.001": -99999999999999999999999}`)
	addJSON("map<frozen<list<int>>, frozen<set<text>>>", `{"[1, 2]": ["x", "y"], "[]": []}`)
	addJSON("map<uuid, frozen<map<text, int>>>", `{"6bddc89a-5644-11e4-97fc-56847afe9799": {"a": 1}}`)
	// Maps sent unsorted read back sorted by key.
	cs = append(cs, storageCase{typ: "map<int, text>",
		in:   pgschema.SerializeMap([][]byte{i(10), i(-5), i(2)}, [][]byte{[]byte("x"), []byte("y"), []byte("z")}),
		want: pgschema.SerializeMap([][]byte{i(-5), i(2), i(10)}, [][]byte{[]byte("y"), []byte("z"), []byte("x")})})
	addJSON("frozen<tuple<int, text, double>>", `[1, "a", 2.5]`, `[null, null, null]`, `[-1, "", "NaN"]`)
	addJSON("frozen<tuple<timestamp, inet, duration, time, date>>",
		`["2023-10-27 10:05:00.123Z", "::ffff:1.2.3.4", "1h", "10:00:00", "2023-10-27"]`,
		`["-210866803200000", "1.2.3.4", "P0D", "00:00:00", "-4713-11-24"]`)
	cs = append(cs, storageCase{typ: "frozen<tuple<inet, time, duration>>",
		in: pgschema.SerializeTuple([][]byte{hx(t, "00000000000000000000ffff01020304"), s64(-5),
			fj(t, "duration", `"P0D"`)})})
	addJSON("frozen<address>", `{"street": "Main \"St\"", "\"Zip\"": 12345, "tags": ["b", "a"]}`,
		`{"street": null}`)
	addJSON("list<frozen<list<int>>>", "[[1, 2], [], [3]]")
	addJSON("set<frozen<tuple<int, text>>>", `[[2, "b"], [1, "z"], [1, "a"]]`)
	addJSON("list<frozen<address>>", `[{"street": "x", "\"Zip\"": 1, "tags": []}]`)
	addJSON("list<duration>", `["1d", "-3h"]`)
	addJSON("vector<frozen<list<int>>, 2>", "[[1], [2, 3]]")
	addJSON("frozen<tuple<float, double, decimal, varint, bigint, boolean, blob, uuid>>",
		`["-0.0", "-Infinity", "-1.5E+7", 123456789012345678901234567890, -9223372036854775808, true, "0xff", "00000000-0000-0000-0000-000000000000"]`)
	cs = append(cs, storageCase{typ: "list<double>",
		in: pgschema.SerializeCollection([][]byte{be64(math.Float64bits(math.Inf(1)))})})
	return cs
}

// TestStorageRoundTrip converts every case to Postgres's binary form and
// back, without a server.
func TestStorageRoundTrip(t *testing.T) {
	for _, c := range storageCases(t) {
		typ := testType(t, c.typ)
		st, err := pgschema.StorageOf(typ)
		if err != nil {
			t.Fatalf("%s: %v", c.typ, err)
		}
		if err := pgschema.Validate(typ, c.in); err != nil {
			t.Errorf("%s %x: Validate: %v", c.typ, c.in, err)
			continue
		}
		pg := c.in
		if st.ToPG != nil {
			if pg, err = st.ToPG(nil, c.in); err != nil {
				t.Errorf("%s %x: ToPG: %v", c.typ, c.in, err)
				continue
			}
		}
		back := pg
		if st.FromPG != nil {
			if back, err = st.FromPG([]byte("prefix"), pg); err != nil {
				t.Errorf("%s %x: FromPG(%x): %v", c.typ, c.in, pg, err)
				continue
			}
			if !bytes.HasPrefix(back, []byte("prefix")) {
				t.Errorf("%s: FromPG does not append to dst", c.typ)
				continue
			}
			back = back[len("prefix"):]
		}
		if !bytes.Equal(back, c.expected()) {
			t.Errorf("%s: %x → %x → %x, want %x", c.typ, c.in, pg, back, c.expected())
		}
	}
}
