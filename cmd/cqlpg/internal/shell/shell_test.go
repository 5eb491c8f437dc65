package shell

import (
	"reflect"
	"strings"
	"testing"
)

func TestSplit(t *testing.T) {
	script := `-- a comment; not a statement
SELECT * FROM t WHERE v = 'a;b' AND w = 'it''s;';
// another; comment
INSERT INTO "Odd;Name" (k) VALUES (1); /* block;
comment */ CREATE FUNCTION f(x int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE java AS $$ return x; $$;
;;
SELECT 1 -- trailing
`
	got := Split(script)
	want := []Statement{
		{"SELECT * FROM t WHERE v = 'a;b' AND w = 'it''s;'", 2},
		{`INSERT INTO "Odd;Name" (k) VALUES (1)`, 4},
		{"CREATE FUNCTION f(x int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE java AS $$ return x; $$", 5},
		{"SELECT 1", 8},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Split:\n%v\nwant\n%v", got, want)
	}
	if got := Split("  \n-- nothing\n"); len(got) != 0 {
		t.Errorf("empty script: %v", got)
	}
}

// TestWriteTable prints a result of the shape of the seed documents,
// which show cqlsh's output.
func TestWriteTable(t *testing.T) {
	var b strings.Builder
	WriteTable(&b, []string{"system.token(race_year, race_name)", "race_year", "race_name", "cyclist_name", "rank"},
		[][]string{{"-108427357362698080", "2000", "1", "A", "1"}})
	want := `
 system.token(race_year, race_name) | race_year | race_name | cyclist_name | rank
------------------------------------+-----------+-----------+--------------+------
                -108427357362698080 |      2000 |         1 |            A |    1

(1 rows)
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	WriteTable(&b, []string{"k", "value"}, nil)
	if want := "\n k | value\n---+-------\n\n(0 rows)\n"; b.String() != want {
		t.Errorf("no rows: %q, want %q", b.String(), want)
	}
}
