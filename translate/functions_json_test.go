package translate

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/translate/cqlfunc"
)

func TestToJSONFunction(t *testing.T) {
	values := []struct {
		kind pgschema.Kind
		v    []byte
	}{
		{pgschema.Int, enc32(3)},
		{pgschema.Text, []byte(`a"b`)},
		{pgschema.Timestamp, enc64(1432206182000)},
		{pgschema.Double, encF64(1.5)},
		{pgschema.Boolean, []byte{1}},
	}
	for _, c := range values {
		f, err := ResolveFunction("tojson", []FuncArg{typedArg(c.kind, "v")}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if f.String() != "system.tojson : ("+pgschema.Scalar(c.kind).String()+") -> text" || !f.Deterministic {
			t.Errorf("toJson over %s is %s", pgschema.Scalar(c.kind), f)
		}
		got, err := f.Eval(nil, [][]byte{c.v})
		if err != nil {
			t.Fatalf("toJson(%x): %v", c.v, err)
		}
		want, err := pgschema.ToJSON(pgschema.Scalar(c.kind), c.v)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("toJson(%x) = %s, want %s (%v)", c.v, got, want, err)
		}
		if got, _ := f.Eval(nil, [][]byte{nil}); string(got) != "null" {
			t.Errorf("toJson(null) = %q, want the text null", got)
		}
	}
	f, _ := ResolveFunction("tojson", []FuncArg{typedArg(pgschema.Int, "v")}, nil)
	if got, _ := f.Eval(nil, [][]byte{enc32(3)}); string(got) != "3" {
		t.Errorf("toJson(3) = %s", got)
	}
	if got := f.ColumnName([]string{"v"}); got != "system.tojson(v)" {
		t.Errorf("toJson column %s", got)
	}
}

func TestFromJSONFunction(t *testing.T) {
	intT := pgschema.Scalar(pgschema.Int)
	f, err := ResolveFunction("fromjson", []FuncArg{literalArg(LitString, "3")}, intT)
	if err != nil {
		t.Fatal(err)
	}
	if f.String() != "system.fromjson : (text) -> int" || f.ArgName(0) != "arg0(system.fromjson)" {
		t.Errorf("fromJson is %s", f)
	}
	for _, c := range []struct {
		in   []byte
		want []byte
	}{
		{[]byte("3"), enc32(3)},
		{[]byte(" 3 "), enc32(3)},
		{[]byte("null"), nil},
		{[]byte(" null\n"), nil},
		{nil, nil},
	} {
		got, err := f.Eval(nil, [][]byte{c.in})
		if err != nil || !bytes.Equal(got, c.want) || (got == nil) != (c.want == nil) {
			t.Errorf("fromJson(%q) = %x, %v; want %x", c.in, got, err, c.want)
		}
	}
	for bad, prefix := range map[string]string{
		"abc": "Could not decode JSON string 'abc'",
		"{":   "Could not decode JSON string '{'",
		`"x"`: "org.apache.cassandra.serializers.MarshalException: ",
	} {
		_, err := f.Eval(nil, [][]byte{[]byte(bad)})
		var fe *cqlfunc.FunctionFailureError
		if !errors.As(err, &fe) || !strings.HasPrefix(fe.Msg, "execution of 'system.fromjson[text]' failed: "+prefix) ||
			fe.Keyspace != "system" || fe.Function != "fromjson" || len(fe.ArgTypes) != 1 || fe.ArgTypes[0] != "text" {
			t.Errorf("fromJson(%q): %v", bad, err)
		}
	}
	m := pgschema.NewMap(pgschema.Scalar(pgschema.Text), intT, false)
	g, err := ResolveFunction("system.fromjson", []FuncArg{anyMarker}, m)
	if err != nil || !g.Returns.Equal(m) {
		t.Fatalf("fromJson for a map: %v, %v", g, err)
	}
	want, err := pgschema.FromJSON(m, []byte(`{"a": 1}`))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := g.Eval(nil, [][]byte{[]byte(`{"a": 1}`)}); err != nil || !bytes.Equal(got, want) {
		t.Errorf("fromJson map = %x, %v; want %x", got, err, want)
	}
}
