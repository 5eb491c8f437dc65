package bulk

import (
	"reflect"
	"strings"
	"testing"
)

// TestCSVReader reads fields, telling quoted empty strings from nulls,
// and keeps the offset after each record and the line it began on.
func TestCSVReader(t *testing.T) {
	in := "k,v\r\n1,\"a, \"\"b\"\"\nc\"\n\n2,,\"\"\n3,x"
	r := newCSVReader(strings.NewReader(in), 0, 0)
	type rec struct {
		fields []Field
		line   int
		offset int64
	}
	var got []rec
	for {
		f, line, err := r.read(nil)
		if err != nil {
			break
		}
		got = append(got, rec{f, line, r.offset})
	}
	want := []rec{
		{[]Field{{Text: "k"}, {Text: "v"}}, 1, 5},
		{[]Field{{Text: "1"}, {Text: "a, \"b\"\nc", Quoted: true}}, 2, 20},
		{[]Field{{Text: "2"}, {}, {Quoted: true}}, 5, 27},
		{[]Field{{Text: "3"}, {Text: "x"}}, 6, 30},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
	// Resuming at an offset reads on from there.
	r = newCSVReader(strings.NewReader(in[20:]), 20, 3)
	if f, line, err := r.read(nil); err != nil || line != 5 || f[0].Text != "2" {
		t.Errorf("resumed: %v at line %d, %v", f, line, err)
	}
	for _, bad := range []string{"a,\"b\"c\n", "a,b\"c\n", "\"abc"} {
		if _, _, err := newCSVReader(strings.NewReader(bad), 0, 0).read(nil); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestWriteField(t *testing.T) {
	for _, c := range []struct {
		in   string
		null bool
		want string
	}{
		{"plain", false, "plain"},
		{"", true, ""},
		{"", false, `""`},
		{"a,b", false, `"a,b"`},
		{`say "hi"`, false, `"say ""hi"""`},
		{"two\nlines", false, "\"two\nlines\""},
		{" padded", false, `" padded"`},
	} {
		if got := string(writeField(nil, c.in, c.null)); got != c.want {
			t.Errorf("writeField(%q, %v) = %q, want %q", c.in, c.null, got, c.want)
		}
	}
}
