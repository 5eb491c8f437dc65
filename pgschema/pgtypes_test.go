package pgschema

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"
)

func TestStorageTypes(t *testing.T) {
	tests := []struct {
		typ           string
		sql           string
		oid, arrayOID uint32
	}{
		{"ascii", `text COLLATE "C"`, 25, 1009},
		{"text", `text COLLATE "C"`, 25, 1009},
		{"bigint", "bigint", 20, 1016},
		{"counter", "bigint", 20, 1016},
		{"int", "integer", 23, 1007},
		{"smallint", "smallint", 21, 1005},
		{"tinyint", "smallint", 21, 1005},
		{"boolean", "boolean", 16, 1000},
		{"float", "real", 700, 1021},
		{"double", "double precision", 701, 1022},
		{"blob", "bytea", 17, 1001},
		{"uuid", "uuid", 2950, 2951},
		{"timeuuid", "uuid", 2950, 2951},
		{"timestamp", "timestamptz", 1184, 1185},
		{"date", "date", 1082, 1182},
		{"time", "bigint", 20, 1016},
		{"decimal", "numeric", 1700, 1231},
		{"varint", "numeric", 1700, 1231},
		{"inet", "inet", 869, 1041},
		{"duration", "bigint[]", 1016, 0},
		{"list<int>", "integer[]", 1007, 0},
		{"frozen<list<int>>", "integer[]", 1007, 0},
		{"set<text>", `text[] COLLATE "C"`, 1009, 0},
		{"list<ascii>", `text[] COLLATE "C"`, 1009, 0},
		{"set<tinyint>", "smallint[]", 1005, 0},
		{"list<timestamp>", "timestamptz[]", 1185, 0},
		// Dates and decimals need jsonb to hold every value (exact.go).
		{"list<decimal>", "jsonb", 3802, 3807},
		{"list<inet>", "inet[]", 1041, 0},
		{"list<time>", "bigint[]", 1016, 0},
		{"list<uuid>", "uuid[]", 2951, 0},
		{"list<blob>", "bytea[]", 1001, 0},
		{"list<date>", "jsonb", 3802, 3807},
		{"list<boolean>", "boolean[]", 1000, 0},
		{"list<double>", "double precision[]", 1022, 0},
		{"vector<float, 3>", "real[]", 1021, 0},
		{"vector<text, 3>", `text[] COLLATE "C"`, 1009, 0},
		{"map<int, text>", "jsonb", 3802, 3807},
		{"frozen<tuple<int, text>>", "jsonb", 3802, 3807},
		{"frozen<address>", "jsonb", 3802, 3807},
		{"list<duration>", "jsonb", 3802, 3807},
		{"list<frozen<list<int>>>", "jsonb", 3802, 3807},
		{"set<frozen<tuple<int>>>", "jsonb", 3802, 3807},
		{"vector<frozen<list<int>>, 2>", "jsonb", 3802, 3807},
	}
	for _, tt := range tests {
		st, err := StorageOf(mustType(t, tt.typ))
		if err != nil {
			t.Errorf("StorageOf(%s): %v", tt.typ, err)
			continue
		}
		if st.SQL != tt.sql || st.OID != tt.oid || st.ArrayOID != tt.arrayOID {
			t.Errorf("StorageOf(%s) = %s %d %d, want %s %d %d", tt.typ, st.SQL, st.OID, st.ArrayOID, tt.sql, tt.oid, tt.arrayOID)
		}
		if strings.Count(st.SortKey, "%s") != 1 || strings.Count(st.SortKey, "%") != 1 || strings.Contains(st.SortKey, "?") {
			t.Errorf("%s: sort key %q must have one %%s and no other %% or ?", tt.typ, st.SortKey)
		}
	}
	// Columns created before exact companions keep their arrays.
	for typ, sql := range map[string]string{"list<date>": "date[]", "frozen<set<decimal>>": "numeric[]", "vector<decimal, 2>": "numeric[]"} {
		legacy := mustType(t, typ)
		legacy.Legacy = true
		if st, err := StorageOf(legacy); err != nil || st.SQL != sql {
			t.Errorf("StorageOf(legacy %s) = %v, %v; want %s", typ, st, err, sql)
		}
	}
	// The same type is answered from the cache.
	typ := mustType(t, "map<int, text>")
	a, _ := StorageOf(typ)
	b, _ := StorageOf(typ)
	if a != b {
		t.Error("StorageOf does not cache composite storages")
	}
	if n := testing.AllocsPerRun(100, func() { StorageOf(typ) }); n != 0 {
		t.Errorf("StorageOf of a cached type allocates %v times", n)
	}
}

func TestNumericBinary(t *testing.T) {
	tests := []struct {
		cql  []byte
		pg   string // ndigits weight sign dscale digits...
		back []byte // nil: cql
	}{
		{dec("150", 2), "0002 0000 0000 0002 0001 1388", nil},
		{dec("0", 0), "0000 0000 0000 0000", nil},
		{dec("0", 2), "0000 0000 0000 0002", nil},
		{dec("-12345678", 3), "0003 0001 4000 0003 0001 0929 1a7c", nil},
		{dec("10000", 0), "0001 0001 0000 0000 0001", nil},
		{dec("1", 4), "0001 ffff 0000 0004 0001", nil},
		{dec("1", 5), "0001 fffe 0000 0005 03e8", nil},
		{dec("1", -3), "0001 0000 0000 0000 03e8", dec("1000", 0)},
		{dec("-1", -4), "0001 0001 4000 0000 0001", dec("-10000", 0)},
		{dec("123456789", 0), "0003 0002 0000 0000 0001 0929 1a85", nil},
	}
	for _, tt := range tests {
		pg, err := decimalToPG(nil, tt.cql)
		if err != nil {
			t.Errorf("decimalToPG(%x): %v", tt.cql, err)
			continue
		}
		if want := strings.ReplaceAll(tt.pg, " ", ""); hex.EncodeToString(pg) != want {
			t.Errorf("decimalToPG(%x) = %x, want %s", tt.cql, pg, want)
		}
		back, err := decimalFromPG(nil, pg)
		want := tt.back
		if want == nil {
			want = tt.cql
		}
		if err != nil || !bytes.Equal(back, want) {
			t.Errorf("decimalFromPG(%x) = %x, %v; want %x", pg, back, err, want)
		}
	}
	// 2^64 as a varint.
	pg, err := varintToPG(nil, vint("18446744073709551616"))
	if err != nil || hex.EncodeToString(pg) != "00050004000000000734"+"1a5802e103bb0650" {
		t.Errorf("varintToPG(2^64) = %x, %v", pg, err)
	}
	// Postgres may send more digits than the scale shows, in zeros.
	if back, err := decimalFromPG(nil, unhex(t, "000200000000000100011388")); err != nil ||
		!bytes.Equal(back, dec("15", 1)) {
		t.Errorf("1.5000 with dscale 1 reads as %x, %v", back, err)
	}
	// A varint column holding 5.00 (written through SQL) reads as 5.
	if back, err := varintFromPG(nil, unhex(t, "00010000000000020005")); err != nil || !bytes.Equal(back, vint("5")) {
		t.Errorf("5.00 as a varint reads as %x, %v", back, err)
	}
}

func TestCollectionHelpers(t *testing.T) {
	if got := hex.EncodeToString(SerializeCollection([][]byte{i32(1), str("")})); got != "00000002"+"0000000400000001"+"00000000" {
		t.Errorf("SerializeCollection = %s", got)
	}
	if got := hex.EncodeToString(SerializeMap([][]byte{str("a")}, [][]byte{i8(1)})); got != "00000001"+"0000000161"+"0000000101" {
		t.Errorf("SerializeMap = %s", got)
	}
	if got := hex.EncodeToString(SerializeTuple([][]byte{i8(1), nil, str("")})); got != "0000000101"+"ffffffff"+"00000000" {
		t.Errorf("SerializeTuple = %s", got)
	}
	if got := hex.EncodeToString(SerializeVector(Scalar(Float), [][]byte{f32(1), f32(2)})); got != "3f80000040000000" {
		t.Errorf("SerializeVector(float) = %s", got)
	}
	if got := hex.EncodeToString(SerializeVector(Scalar(Text), [][]byte{str("ab"), str("")})); got != "02616200" {
		t.Errorf("SerializeVector(text) = %s", got)
	}

	m := mapv(i32(1), str("a"), i32(3), str("c"))
	keys, values, err := MapEntries(m)
	if err != nil || len(keys) != 2 || !bytes.Equal(keys[1], i32(3)) || !bytes.Equal(values[1], str("c")) {
		t.Errorf("MapEntries = %x %x %v", keys, values, err)
	}
	mt := mustType(t, "map<int, text>")
	if v, err := Element(mt, m, i32(3)); err != nil || !bytes.Equal(v, str("c")) {
		t.Errorf("m[3] = %x, %v", v, err)
	}
	if v, err := Element(mt, m, i32(2)); err != nil || v != nil {
		t.Errorf("m[2] = %x, %v", v, err)
	}
	st := mustType(t, "set<decimal>")
	if v, err := Element(st, list(dec("15", 1)), dec("150", 2)); err != nil || !bytes.Equal(v, dec("15", 1)) {
		t.Errorf("s[1.50] = %x, %v", v, err)
	}
	lt := mustType(t, "list<text>")
	if v, err := Element(lt, list(str("a"), str("b")), i32(1)); err != nil || !bytes.Equal(v, str("b")) {
		t.Errorf("l[1] = %x, %v", v, err)
	}
	if v, err := Element(lt, list(str("a")), i32(5)); err != nil || v != nil {
		t.Errorf("l[5] = %x, %v", v, err)
	}

	tt := mustType(t, "frozen<tuple<int, text, int>>")
	if e, err := Elements(tt, tuple(i32(1), nil)); err != nil || len(e) != 2 || e[1] != nil {
		t.Errorf("Elements(short tuple) = %x, %v", e, err)
	}
	if _, err := Elements(tt, tuple(i32(1), nil, nil, nil)); err == nil ||
		err.Error() != "Expected 3 values for frozen<tuple<int, text, int>> column, but got more" {
		t.Errorf("Elements(long tuple): %v", err)
	}
	if e, err := Elements(mustType(t, "vector<text, 2>"), []byte{1, 'x', 0}); err != nil || len(e) != 2 || string(e[0]) != "x" {
		t.Errorf("Elements(vector) = %q, %v", e, err)
	}
	if _, err := Elements(Scalar(Int), i32(1)); err == nil {
		t.Error("Elements of an int")
	}

	// Normalize sorts sets and maps at every level, as Cassandra does for
	// bound values.
	nt := mustType(t, "map<frozen<set<int>>, frozen<list<frozen<set<text>>>>>")
	in := mapv(list(i32(2), i32(1), i32(2)), list(list(str("b"), str("a"))),
		list(i32(0)), list(),
		list(i32(1), i32(2)), list(list(str("z"))))
	want := mapv(list(i32(0)), list(),
		list(i32(1), i32(2)), list(list(str("z"))))
	got, err := Normalize(nt, in)
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("Normalize = %x, %v\nwant %x", got, err, want)
	}
	// Of equal map keys the first stays, with the last value.
	dm := mustType(t, "map<decimal, int>")
	got, _ = Normalize(dm, mapv(dec("10", 1), i32(1), dec("1", 0), i32(2)))
	if !bytes.Equal(got, mapv(dec("10", 1), i32(2))) {
		t.Errorf("Normalize of equal keys = %x", got)
	}
	plain := list(i32(2), i32(1))
	if got, _ := Normalize(mustType(t, "list<int>"), plain); &got[0] != &plain[0] {
		t.Error("Normalize copies a value without sets or maps")
	}
}

// TestTextEscape stores text holding U+0000 and reads it back: the escape
// round-trips, keeps byte order, and leaves other text as it is.
func TestTextEscape(t *testing.T) {
	values := []string{"", "a", "\x00", "\x01", "\x02", "a\x00b", "a\x01b", "\x00\x00", "\x00\x01", "\x01\x00", "é\x00日本"}
	for _, v := range values {
		stored, err := escapeText(nil, []byte(v))
		if err != nil || stored == nil || bytes.IndexByte(stored, 0) >= 0 {
			t.Fatalf("%q stored as %q (%v)", v, stored, err)
		}
		back, err := unescapeText(nil, stored)
		if err != nil || string(back) != v || back == nil {
			t.Errorf("%q stored as %q reads back as %q (%v)", v, stored, back, err)
		}
	}
	for _, a := range values {
		for _, b := range values {
			sa, _ := escapeText(nil, []byte(a))
			sb, _ := escapeText(nil, []byte(b))
			if got, want := bytes.Compare(sa, sb), strings.Compare(a, b); got != want {
				t.Errorf("%q vs %q: stored compare %d, values %d", a, b, got, want)
			}
		}
	}
	// In an array of text too, where each element is escaped.
	st, err := StorageOf(NewList(Scalar(Text), false))
	if err != nil {
		t.Fatal(err)
	}
	list := SerializeCollection([][]byte{[]byte("a\x00"), []byte("\x01"), []byte("")})
	stored, err := st.ToPG(nil, list)
	if err != nil {
		t.Fatalf("list stored: %v", err)
	}
	if back, err := st.FromPG(nil, stored); err != nil || !bytes.Equal(back, list) {
		t.Errorf("list<text> holding U+0000 reads back as %x (%v), want %x", back, err, list)
	}
	if got, _ := escapeText(nil, []byte("plain")); string(got) != "plain" {
		t.Errorf("plain text stored as %q", got)
	}
	// A 0x01 that SQL wrote, not followed by 0x01 or 0x02, is itself.
	if got, _ := unescapeText(nil, []byte("a\x01z")); string(got) != "a\x01z" {
		t.Errorf("a lone 0x01 reads as %q", got)
	}
}
