package main

import "testing"

func TestParseTableName(t *testing.T) {
	for in, want := range map[string][2]string{
		"ks":               {"ks", ""},
		"KS.Tbl":           {"ks", "tbl"},
		`"MyKs"."My.T"`:    {"MyKs", "My.T"},
		`"a""b".c`:         {`a"b`, "c"},
		`ks."Quoted Name"`: {"ks", "Quoted Name"},
	} {
		ks, table, err := parseTableName(in)
		if err != nil || ks != want[0] || table != want[1] {
			t.Errorf("parseTableName(%q) = %q, %q, %v; want %q", in, ks, table, err, want)
		}
	}

	for _, in := range []string{"", "a.b.c", ".t", "ks.", `"unterminated`, `"ks"x`, `ks.""`} {
		if ks, table, err := parseTableName(in); err == nil {
			t.Errorf("parseTableName(%q) = %q, %q, want an error", in, ks, table)
		}
	}
}
