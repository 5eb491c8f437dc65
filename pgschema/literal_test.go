package pgschema

import (
	"encoding/binary"
	"testing"
)

func TestCQLLiteral(t *testing.T) {
	i32 := func(n int32) []byte { return binary.BigEndian.AppendUint32(nil, uint32(n)) }
	i64 := func(n int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(n)) }
	for _, tc := range []struct {
		typ  string
		v    []byte
		want string
	}{
		{"tuple<int, bigint>", SerializeTuple([][]byte{i32(0), i64(0)}), "(0, 0)"},
		{"tuple<int, text>", SerializeTuple([][]byte{i32(-3), nil}), "(-3, null)"},
		{"text", []byte("it's"), "'it''s'"},
		{"list<int>", SerializeCollection([][]byte{i32(1), i32(2)}), "[1, 2]"},
		{"map<text, int>", SerializeMap([][]byte{[]byte("a")}, [][]byte{i32(1)}), "{'a': 1}"},
		{"double", binary.BigEndian.AppendUint64(nil, 0x3ff8000000000000), "1.5"},
		{"blob", []byte{1, 2}, "0x0102"},
		{"int", nil, "null"},
	} {
		typ, err := ParseType(tc.typ, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := CQLLiteral(typ, tc.v)
		if err != nil || got != tc.want {
			t.Errorf("%s: %q, %v; want %q", tc.typ, got, err, tc.want)
		}
	}
}
