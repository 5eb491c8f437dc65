package translate

import (
	"errors"
	"testing"

	"github.com/cqlpg/cqlpg/pgschema"
)

func typedArg(k pgschema.Kind, text string) FuncArg {
	return FuncArg{Type: pgschema.Scalar(k), Text: text}
}
func literalArg(kind LiteralKind, text string) FuncArg {
	return FuncArg{Literal: &Literal{Kind: kind, Text: text}}
}

var anyMarker = FuncArg{Marker: true}

func TestResolveFunction(t *testing.T) {
	ts, tu, date, bigint := pgschema.Scalar(pgschema.Timestamp), pgschema.Scalar(pgschema.Timeuuid),
		pgschema.Scalar(pgschema.Date), pgschema.Scalar(pgschema.Bigint)
	tests := []struct {
		name     string
		fn       string
		args     []FuncArg
		receiver *pgschema.Type
		want     string // the chosen signature
	}{
		{"no arguments", "now", nil, nil, "system.now : () -> timeuuid"},
		{"qualified by system", "system.now", nil, nil, "system.now : () -> timeuuid"},
		{"exact type", "totimestamp", []FuncArg{typedArg(pgschema.Timeuuid, "t")}, nil,
			"system.totimestamp : (timeuuid) -> timestamp"},
		{"exact type, second overload", "totimestamp", []FuncArg{typedArg(pgschema.Date, "d")}, nil,
			"system.totimestamp : (date) -> timestamp"},
		{"nested call result", "todate", []FuncArg{{Type: tu, Text: "system.now()"}}, date,
			"system.todate : (timeuuid) -> date"},
		{"value-compatible type", "tounixtimestamp", []FuncArg{typedArg(pgschema.Bigint, "b")}, nil,
			"system.tounixtimestamp : (timestamp) -> bigint"},
		{"date reads int", "totimestamp", []FuncArg{typedArg(pgschema.Int, "i")}, nil,
			"system.totimestamp : (date) -> timestamp"},
		{"string literal to the only overload taking strings", "todate", []FuncArg{literalArg(LitString, "2020-01-01")}, nil,
			"system.todate : (timestamp) -> date"},
		{"marker, single overload", "intasblob", []FuncArg{anyMarker}, nil, "system.intasblob : (int) -> blob"},
		{"marker, single overload with receiver", "blobasint", []FuncArg{anyMarker}, pgschema.Scalar(pgschema.Int),
			"system.blobasint : (blob) -> int"},
		{"integer literal", "intasblob", []FuncArg{literalArg(LitInteger, "1")}, nil, "system.intasblob : (int) -> blob"},
		{"integer literal to bigint", "bigintasblob", []FuncArg{literalArg(LitInteger, "1")}, nil,
			"system.bigintasblob : (bigint) -> blob"},
		{"hex literal", "blobastext", []FuncArg{literalArg(LitHex, "0x61")}, nil, "system.blobastext : (blob) -> text"},
		{"any type to a blob parameter", "blobasint", []FuncArg{typedArg(pgschema.Text, "s")}, nil,
			"system.blobasint : (blob) -> int"},
		{"ascii to text", "textasblob", []FuncArg{typedArg(pgschema.Ascii, "a")}, nil, "system.textasblob : (text) -> blob"},
		{"varchar functions", "varcharasblob", []FuncArg{typedArg(pgschema.Text, "s")}, nil,
			"system.varcharasblob : (text) -> blob"},
		{"null literal", "mintimeuuid", []FuncArg{literalArg(LitNull, "null")}, nil,
			"system.mintimeuuid : (timestamp) -> timeuuid"},
		{"floor with start", "floor", []FuncArg{typedArg(pgschema.Timestamp, "t"), literalArg(LitDuration, "1h"),
			literalArg(LitString, "2020-01-01")}, nil, "system.floor : (timestamp, duration, timestamp) -> timestamp"},
		{"floor of a date", "floor", []FuncArg{typedArg(pgschema.Date, "d"), literalArg(LitDuration, "2d")}, nil,
			"system.floor : (date, duration) -> date"},
		{"receiver filters overloads", "tounixtimestamp", []FuncArg{anyMarker}, nil, ""},
		{"quoted cast function", "castAsInt", []FuncArg{typedArg(pgschema.Bigint, "b")}, nil,
			`system."castAsInt" : (bigint) -> int`},
		{"uuid", "uuid", nil, pgschema.Scalar(pgschema.UUID), "system.uuid : () -> uuid"},
		{"dateof", "dateof", []FuncArg{typedArg(pgschema.Timeuuid, "t")}, ts, "system.dateof : (timeuuid) -> timestamp"},
		{"unixtimestampof", "unixtimestampof", []FuncArg{typedArg(pgschema.Timeuuid, "t")}, bigint,
			"system.unixtimestampof : (timeuuid) -> bigint"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := ResolveFunction(tt.fn, tt.args, tt.receiver)
			if tt.want == "" {
				if err == nil {
					t.Fatalf("resolved %s, want an ambiguity", f)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := f.String(); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

func TestResolveFunctionErrors(t *testing.T) {
	ts, text := pgschema.Scalar(pgschema.Timestamp), pgschema.Scalar(pgschema.Text)
	tests := []struct {
		name     string
		fn       string
		args     []FuncArg
		receiver *pgschema.Type
		want     string
	}{
		{"unknown in a selection", "nosuch", nil, nil, "Unknown function 'nosuch'"},
		{"unknown in a term", "nosuch", nil, ts, "Unknown function nosuch called"},
		{"names are case sensitive once quoted", "toTimestamp", []FuncArg{anyMarker}, nil, "Unknown function 'toTimestamp'"},
		{"user keyspace", "ks.now", nil, nil, "Unknown function 'ks.now'"},
		{"wrong count", "now", []FuncArg{literalArg(LitInteger, "1")}, nil,
			"Invalid number of arguments in call to function system.now: 0 required but 1 provided"},
		{"wrong count, one parameter", "intasblob", nil, nil,
			"Invalid number of arguments in call to function system.intasblob: 1 required but 0 provided"},
		{"type error, literal", "intasblob", []FuncArg{literalArg(LitString, "a")}, nil,
			"Type error: 'a' cannot be passed as argument 0 of function system.intasblob of type int"},
		{"type error, column", "mintimeuuid", []FuncArg{typedArg(pgschema.Int, "v")}, nil,
			"Type error: v cannot be passed as argument 0 of function system.mintimeuuid of type timestamp"},
		{"type error, float literal", "bigintasblob", []FuncArg{literalArg(LitFloat, "1.5")}, nil,
			"Type error: 1.5 cannot be passed as argument 0 of function system.bigintasblob of type bigint"},
		{"no overload matches", "totimestamp", []FuncArg{typedArg(pgschema.Text, "v")}, nil,
			"Invalid call to function totimestamp, none of its type signatures match (known type signatures: " +
				"system.totimestamp : (timeuuid) -> timestamp, system.totimestamp : (date) -> timestamp)"},
		{"no overload matches, qualified name as called", "system.todate", []FuncArg{typedArg(pgschema.Int, "v")}, nil,
			"Invalid call to function system.todate, none of its type signatures match (known type signatures: " +
				"system.todate : (timeuuid) -> date, system.todate : (timestamp) -> date)"},
		{"ambiguous marker", "totimestamp", []FuncArg{anyMarker}, ts,
			"Ambiguous call to function totimestamp (can be matched by following signatures: " +
				"system.totimestamp : (timeuuid) -> timestamp, system.totimestamp : (date) -> timestamp): use type casts to disambiguate"},
		{"ambiguous integer", "tounixtimestamp", []FuncArg{literalArg(LitInteger, "1")}, nil,
			"Ambiguous call to function tounixtimestamp (can be matched by following signatures: " +
				"system.tounixtimestamp : (timestamp) -> bigint, system.tounixtimestamp : (date) -> bigint): use type casts to disambiguate"},
		{"receiver rules out every overload", "totimestamp", []FuncArg{typedArg(pgschema.Timeuuid, "t")}, text,
			"Invalid call to function totimestamp, none of its type signatures match (known type signatures: " +
				"system.totimestamp : (timeuuid) -> timestamp, system.totimestamp : (date) -> timestamp)"},
		{"toJson in a term", "tojson", []FuncArg{typedArg(pgschema.Int, "v")}, text,
			"toJson() may only be used within the selection clause of SELECT statements"},
		{"toJson arity", "tojson", []FuncArg{typedArg(pgschema.Int, "a"), typedArg(pgschema.Int, "b")}, nil,
			"toJson() only accepts one argument (got 2)"},
		{"toJson of a marker", "tojson", []FuncArg{{Marker: true, Text: "?"}}, nil,
			"Cannot infer type for term ? in selection clause (try using a cast to force a type)"},
		{"fromJson in a selection", "fromjson", []FuncArg{literalArg(LitString, "1")}, nil,
			"fromJson() cannot be used in the selection clause of a SELECT statement"},
		{"fromJson arity", "fromjson", nil, pgschema.Scalar(pgschema.Int),
			"Incorrect number of arguments specified for function system.fromjson : (text) -> int (expected 1, found 0)"},
		{"aggregate in a term", "max", []FuncArg{literalArg(LitInteger, "1")}, pgschema.Scalar(pgschema.Int),
			"Aggregation function are not supported in the where clause"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := ResolveFunction(tt.fn, tt.args, tt.receiver)
			if err == nil {
				t.Fatalf("resolved %s, want error %q", f, tt.want)
			}
			var inv *InvalidError
			if !errors.As(err, &inv) {
				t.Fatalf("error %v is %T, want *InvalidError", err, err)
			}
			if inv.Msg != tt.want {
				t.Errorf("got  %q\nwant %q", inv.Msg, tt.want)
			}
		})
	}
}

func TestResolveFunctionInternalErrors(t *testing.T) {
	for _, name := range []string{"token", "count"} {
		_, err := ResolveFunction(name, []FuncArg{typedArg(pgschema.Int, "v")}, nil)
		var inv *InvalidError
		if err == nil || errors.As(err, &inv) {
			t.Errorf("%s: got %v, want an internal error", name, err)
		}
	}
}

func TestLiteralAssignment(t *testing.T) {
	tests := []struct {
		kind  LiteralKind
		text  string
		param pgschema.Kind
		want  matchResult
	}{
		{LitInteger, "1", pgschema.Int, exactMatch},
		{LitInteger, "1", pgschema.Bigint, weaklyAssignable},
		{LitInteger, "3000000000", pgschema.Bigint, exactMatch},
		{LitInteger, "30000000000000000000", pgschema.Varint, exactMatch},
		{LitInteger, "1", pgschema.Timestamp, weaklyAssignable},
		{LitInteger, "1", pgschema.Text, notAssignable},
		{LitString, "abc", pgschema.Ascii, exactMatch},
		{LitString, "abc", pgschema.Text, weaklyAssignable},
		{LitString, "été", pgschema.Text, exactMatch},
		{LitString, "2020-01-01", pgschema.Date, weaklyAssignable},
		{LitString, "abc", pgschema.Blob, notAssignable},
		{LitFloat, "0.5", pgschema.Double, exactMatch},
		{LitFloat, "0.1", pgschema.Double, exactMatch},
		{LitFloat, "0.10000000000000001", pgschema.Decimal, exactMatch},
		{LitFloat, "0.10000000000000001", pgschema.Double, weaklyAssignable},
		{LitFloat, "NaN", pgschema.Double, exactMatch},
		{LitFloat, "1.5", pgschema.Float, weaklyAssignable},
		{LitFloat, "1.5", pgschema.Int, notAssignable},
		{LitUUID, "4b0ac5a0-2b0c-11ee-be56-0242ac120002", pgschema.Timeuuid, exactMatch},
		{LitUUID, "4b0ac5a0-2b0c-11ee-be56-0242ac120002", pgschema.UUID, weaklyAssignable},
		{LitUUID, "c2e8d4ac-3d43-4d52-9d0e-3a5c5c1f1b7e", pgschema.UUID, exactMatch},
		{LitBoolean, "true", pgschema.Boolean, exactMatch},
		{LitHex, "0x01", pgschema.Blob, weaklyAssignable},
		{LitHex, "0x01", pgschema.Tinyint, exactMatch}, // Cassandra prefers ByteType for hex
		{LitDuration, "1h", pgschema.Duration, exactMatch},
		{LitNull, "null", pgschema.Int, weaklyAssignable},
		{LitNull, "null", pgschema.Counter, notAssignable},
	}
	for _, tt := range tests {
		got := literalAssignment(&Literal{Kind: tt.kind, Text: tt.text}, pgschema.Scalar(tt.param))
		if got != tt.want {
			t.Errorf("%s %s to %s: got %d, want %d", tt.kind, tt.text, pgschema.Scalar(tt.param), got, tt.want)
		}
	}
	if got := literalAssignment(&Literal{Kind: LitInteger, Text: "1"},
		pgschema.NewList(pgschema.Scalar(pgschema.Int), false)); got != notAssignable {
		t.Errorf("integer to a list: got %d", got)
	}
}

func TestValueCompatible(t *testing.T) {
	yes := [][2]pgschema.Kind{
		{pgschema.Blob, pgschema.Int}, {pgschema.Blob, pgschema.Text}, {pgschema.Text, pgschema.Ascii},
		{pgschema.Bigint, pgschema.Timestamp}, {pgschema.Timestamp, pgschema.Bigint},
		{pgschema.Varint, pgschema.Int}, {pgschema.Varint, pgschema.Bigint}, {pgschema.Varint, pgschema.Timestamp},
		{pgschema.Date, pgschema.Int}, {pgschema.Time, pgschema.Bigint}, {pgschema.UUID, pgschema.Timeuuid},
		{pgschema.Int, pgschema.Int},
	}
	no := [][2]pgschema.Kind{
		{pgschema.Ascii, pgschema.Text}, {pgschema.Int, pgschema.Smallint}, {pgschema.Timeuuid, pgschema.UUID},
		{pgschema.Int, pgschema.Blob}, {pgschema.Varint, pgschema.Smallint}, {pgschema.Bigint, pgschema.Counter},
	}
	for _, p := range yes {
		if !valueCompatible(pgschema.Scalar(p[0]), pgschema.Scalar(p[1])) {
			t.Errorf("%s should read %s", pgschema.Scalar(p[0]), pgschema.Scalar(p[1]))
		}
	}
	for _, p := range no {
		if valueCompatible(pgschema.Scalar(p[0]), pgschema.Scalar(p[1])) {
			t.Errorf("%s should not read %s", pgschema.Scalar(p[0]), pgschema.Scalar(p[1]))
		}
	}
}

func TestFunctionNames(t *testing.T) {
	f, err := ResolveFunction("blobasint", []FuncArg{anyMarker}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.ArgName(0); got != "arg0(system.blobasint)" {
		t.Errorf("ArgName: %s", got)
	}
	if got := f.ColumnName([]string{"b"}); got != "system.blobasint(b)" {
		t.Errorf("ColumnName: %s", got)
	}
	if got := f.UnsetArgument().Error(); got != "Invalid unset value for argument in call to function blobasint" {
		t.Errorf("UnsetArgument: %s", got)
	}
	c, err := CastFunction(pgschema.Scalar(pgschema.Int), pgschema.Scalar(pgschema.Text), "v")
	if err != nil {
		t.Fatal(err)
	}
	if got := c.ColumnName([]string{"v"}); got != "cast(v as text)" {
		t.Errorf("cast ColumnName: %s", got)
	}
	if got := c.ArgName(0); got != "arg0(system.castastext)" {
		t.Errorf("cast ArgName: %s", got)
	}
}

func TestAssignTo(t *testing.T) {
	f, err := ResolveFunction("now", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []pgschema.Kind{pgschema.Timeuuid, pgschema.UUID, pgschema.Blob} {
		if err := assignResult(f, "c", pgschema.Scalar(k)); err != nil {
			t.Errorf("now() to %s: %v", pgschema.Scalar(k), err)
		}
	}
	err = assignResult(f, "k", pgschema.Scalar(pgschema.Int))
	want := "Type error: cannot assign result of function system.now (type timeuuid) to k (type int)"
	if err == nil || err.Error() != want {
		t.Errorf("now() to int: got %v, want %s", err, want)
	}
}
