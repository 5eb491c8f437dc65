package cqltext_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/pgschema/cqltext"
)

func typ(t *testing.T, s string) *pgschema.Type {
	t.Helper()
	udt := pgschema.NewUDT("ks", "addr", []string{"street", "Zip"},
		[]*pgschema.Type{pgschema.Scalar(pgschema.Text), pgschema.Scalar(pgschema.Int)}, true)
	ty, err := pgschema.ParseType(s, func(name string) (*pgschema.Type, error) { return udt, nil })
	if err != nil {
		t.Fatalf("type %s: %v", s, err)
	}
	return ty
}

// TestRoundTrip parses each text, formats the value back to the same
// text, and parses that to the same bytes.
func TestRoundTrip(t *testing.T) {
	for _, c := range []struct{ typ, text string }{
		{"text", "hello, world"},
		{"text", "it's \"quoted\"\nand on two lines"},
		{"text", ""},
		{"ascii", "abc"},
		{"boolean", "True"},
		{"boolean", "False"},
		{"tinyint", "-128"},
		{"smallint", "32767"},
		{"int", "-2147483648"},
		{"bigint", "9223372036854775807"},
		{"counter", "42"},
		{"float", "1.5"},
		{"float", "3.4028235e+38"},
		{"float", "NaN"},
		{"double", "0.1"},
		{"double", "-Infinity"},
		{"double", "1e+100"},
		{"double", "1.0"},
		{"double", "1.25e-05"},
		{"decimal", "1.50"},
		{"decimal", "-123456789012345678901234567890.000001"},
		{"decimal", "1E+3"},
		{"varint", "-123456789012345678901234567890"},
		{"blob", "0x"},
		{"blob", "0x00ff10"},
		{"uuid", "41d01b63-244e-435d-bd6d-5dc8a0addb8c"},
		{"timeuuid", "e7e07e4a-c9bf-11ee-8c90-0242ac120002"},
		{"timestamp", "2024-01-02 03:04:05.678000+0000"},
		{"timestamp", "1970-01-01 00:00:00.000000+0000"},
		{"timestamp", "-62135596800001"},
		{"date", "2024-01-02"},
		{"date", "-1000000"},
		{"time", "03:04:05.000000001"},
		{"inet", "127.0.0.1"},
		{"inet", "2001:db8::1"},
		{"duration", "1h2m"},
		{"duration", "0s"},
		{"duration", "-1y2mo3d4h5m6s7ms8us9ns"},
		{"list<text>", "['a', 'b''c', 'x, y']"},
		{"list<int>", "[]"},
		{"set<int>", "{1, 2, 3}"},
		{"set<text>", "{'a', 'b'}"},
		{"map<text, int>", "{'k': 1, 'l': -2}"},
		{"map<int, frozen<list<text>>>", "{1: ['a'], 2: []}"},
		{"frozen<set<timestamp>>", "{'2024-01-02 03:04:05.678000+0000'}"},
		{"list<date>", "['2024-01-02']"},
		{"list<inet>", "['10.0.0.1']"},
		{"list<time>", "['00:00:01.000000000']"},
		{"list<boolean>", "[True, False]"},
		{"list<blob>", "[0x01, 0x]"},
		{"list<uuid>", "[41d01b63-244e-435d-bd6d-5dc8a0addb8c]"},
		{"list<duration>", "[1h, 2d]"},
		{"list<decimal>", "[1.5, 2]"},
		{"tuple<int, text>", "(1, 'x')"},
		{"tuple<int, text, double>", "(null, 'x', null)"},
		{"frozen<tuple<int, list<text>>>", "(1, ['a'])"},
		{"frozen<addr>", `{street: 'Main St', "Zip": 12345}`},
		{"frozen<addr>", `{street: null, "Zip": null}`},
		{"vector<float, 3>", "[1.0, -2.5, 3.0]"},
		{"vector<text, 2>", "['a', 'b']"},
	} {
		ty := typ(t, c.typ)
		v, err := cqltext.Parse(ty, c.text)
		if err != nil {
			t.Errorf("Parse(%s, %q): %v", c.typ, c.text, err)
			continue
		}
		got, err := cqltext.Format(ty, v)
		if err != nil {
			t.Errorf("Format(%s, %x): %v", c.typ, v, err)
			continue
		}
		if got != c.text {
			t.Errorf("%s: %q formats back as %q", c.typ, c.text, got)
		}
		again, err := cqltext.Parse(ty, got)
		if err != nil || !bytes.Equal(again, v) {
			t.Errorf("%s: %q reads back as %x, %v; want %x", c.typ, got, again, err, v)
		}
	}
}

// TestParseForms reads forms other than the ones Format writes.
func TestParseForms(t *testing.T) {
	for _, c := range []struct{ typ, text, want string }{
		{"boolean", "true", "True"},
		{"timestamp", "2024-01-02 03:04:05+0000", "2024-01-02 03:04:05.000000+0000"},
		{"timestamp", "2024-01-02T03:04:05.678Z", "2024-01-02 03:04:05.678000+0000"},
		{"timestamp", "2024-01-02", "2024-01-02 00:00:00.000000+0000"},
		{"set<int>", "{3, 1, 2, 1}", "{1, 2, 3}"},
		{"map<text, int>", "{ 'b' : 2 ,'a':1 }", "{'a': 1, 'b': 2}"},
		{"duration", "P1DT2H", "1d2h"},
		{"tuple<int, text>", "(1)", "(1, null)"},
		{"frozen<addr>", `{"Zip": 1}`, `{street: null, "Zip": 1}`},
		{"list<timestamp>", "['2024-01-02 03:04:05.678+0000']", "['2024-01-02 03:04:05.678000+0000']"},
	} {
		ty := typ(t, c.typ)
		v, err := cqltext.Parse(ty, c.text)
		if err != nil {
			t.Errorf("Parse(%s, %q): %v", c.typ, c.text, err)
			continue
		}
		if got, _ := cqltext.Format(ty, v); got != c.want {
			t.Errorf("%s %q: got %q, want %q", c.typ, c.text, got, c.want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, c := range []struct{ typ, text, want string }{
		{"int", "abc", `invalid int "abc"`},
		{"int", "2147483648", "out of range"},
		{"tinyint", "200", "out of range"},
		{"boolean", "yes", "invalid boolean"},
		{"double", "inf", "invalid double"},
		{"blob", "abc", "invalid blob"},
		{"blob", "0xzz", "invalid blob"},
		{"uuid", "41d01b63", "invalid uuid"},
		{"timeuuid", "41d01b63-244e-435d-bd6d-5dc8a0addb8c", ""},
		{"timestamp", "yesterday", "invalid timestamp"},
		{"date", "2024-13-40", ""},
		{"inet", "not-an-ip", ""},
		{"decimal", "1.2.3", ""},
		{"duration", "1x", ""},
		{"list<int>", "[1, 2", "expected"},
		{"list<int>", "[1, 'a']", "at character"},
		{"list<int>", "[1, null]", "null is not allowed"},
		{"list<int>", "[1] x", "unexpected"},
		{"list<text>", "['abc", "unterminated string"},
		{"map<text, int>", "{'a' 1}", `expected ':'`},
		{"tuple<int, int>", "(1, 2, 3)", "too many components"},
		{"frozen<addr>", "{city: 'x'}", "unknown field city"},
		{"vector<float, 3>", "[1.0]", "expected 3 elements"},
	} {
		ty := typ(t, c.typ)
		v, err := cqltext.Parse(ty, c.text)
		if err == nil {
			t.Errorf("Parse(%s, %q) = %x, want an error", c.typ, c.text, v)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%s, %q): %v, want %q", c.typ, c.text, err, c.want)
		}
	}
}

// TestTableStyle checks cqlsh's display forms.
func TestTableStyle(t *testing.T) {
	for _, c := range []struct{ typ, text, want string }{
		{"double", "0.1", "0.1"},
		{"double", "3.141592653589793", "3.14159265359"},
		{"double", "-2", "-2"},
		{"double", "123456789012345", "1.23456789012e+14"},
		{"double", "0.000123456", "0.000123456"},
		{"float", "3.14159", "3.14159"},
		{"float", "123.456", "123.456"},
		{"float", "123456.7", "1.2346e+05"},
		{"text", "a\nb\\c", `a\nb\\c`},
	} {
		ty := typ(t, c.typ)
		v, err := cqltext.Parse(ty, c.text)
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := cqltext.Table.Format(ty, v); got != c.want {
			t.Errorf("%s %q: got %q, want %q", c.typ, c.text, got, c.want)
		}
	}
}
