package translate

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"math/big"
	"strings"
	"testing"

	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/translate/cqlfunc"
)

func TestResolveAggregate(t *testing.T) {
	tests := []struct {
		name string
		fn   string
		args []FuncArg
		want string
	}{
		{"sum of int", "sum", []FuncArg{typedArg(pgschema.Int, "v")}, "system.sum : (int) -> int"},
		{"sum of counter", "sum", []FuncArg{typedArg(pgschema.Counter, "c")}, "system.sum : (counter) -> counter"},
		{"avg of decimal", "avg", []FuncArg{typedArg(pgschema.Decimal, "d")}, "system.avg : (decimal) -> decimal"},
		{"avg of varint", "avg", []FuncArg{typedArg(pgschema.Varint, "v")}, "system.avg : (varint) -> varint"},
		{"count of text", "count", []FuncArg{typedArg(pgschema.Text, "s")}, "system.count : (text) -> bigint"},
		{"count of a constant is count(*)", "count", []FuncArg{literalArg(LitInteger, "1")}, `system."countRows" : () -> bigint`},
		{"count(*)", "count", nil, `system."countRows" : () -> bigint`},
		{"count(*) by Cassandra's name", "countRows", nil, `system."countRows" : () -> bigint`},
		{"max of blob", "max", []FuncArg{typedArg(pgschema.Blob, "b")}, "system.max : (blob) -> blob"},
		{"min of a string constant prefers ascii", "min", []FuncArg{literalArg(LitString, "a")}, "system.min : (ascii) -> ascii"},
		{"max of an integer constant prefers int", "max", []FuncArg{literalArg(LitInteger, "1")}, "system.max : (int) -> int"},
		{"sum of a float constant prefers double", "sum", []FuncArg{literalArg(LitFloat, "1.5")},
			"system.sum : (double) -> double"},
		{"a blob reads any type, so count of a list counts blobs", "count",
			[]FuncArg{{Type: pgschema.NewList(pgschema.Scalar(pgschema.Int), false), Text: "l"}},
			"system.count : (blob) -> bigint"},
		{"qualified", "system.min", []FuncArg{typedArg(pgschema.Date, "d")}, "system.min : (date) -> date"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := ResolveAggregate(tt.fn, tt.args)
			if err != nil {
				t.Fatal(err)
			}
			if got := a.String(); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
	for _, name := range []string{"count", "COUNT", "countRows", "sum", "avg", "min", "max", "system.max"} {
		if IsAggregate(name) != (name != "COUNT") {
			t.Errorf("IsAggregate(%s) = %v", name, IsAggregate(name))
		}
	}
	for _, name := range []string{"now", "tojson", "ks.max", "nosuch"} {
		if IsAggregate(name) {
			t.Errorf("IsAggregate(%s) is true", name)
		}
	}
	if got := cqlfunc.CountRows.ColumnName(nil); got != "count" {
		t.Errorf("count(*) column %s", got)
	}
	a, _ := ResolveAggregate("max", []FuncArg{typedArg(pgschema.Int, "v")})
	if got := a.ColumnName([]string{"v"}); got != "system.max(v)" {
		t.Errorf("max column %s", got)
	}
}

func TestResolveAggregateErrors(t *testing.T) {
	list := FuncArg{Type: pgschema.NewList(pgschema.Scalar(pgschema.Int), false), Text: "l"}
	tests := []struct {
		name string
		fn   string
		args []FuncArg
		want string
	}{
		{"unknown", "median", []FuncArg{typedArg(pgschema.Int, "v")}, "Unknown function 'median'"},
		{"sum of text", "sum", []FuncArg{typedArg(pgschema.Text, "s")},
			"Invalid call to function sum, none of its type signatures match (known type signatures: " +
				"system.sum : (tinyint) -> tinyint, system.sum : (smallint) -> smallint, system.sum : (int) -> int, " +
				"system.sum : (bigint) -> bigint, system.sum : (float) -> float, system.sum : (double) -> double, " +
				"system.sum : (decimal) -> decimal, system.sum : (varint) -> varint, system.sum : (counter) -> counter)"},
		{"avg of a marker", "avg", []FuncArg{anyMarker},
			"Ambiguous call to function avg (can be matched by following signatures: " +
				"system.avg : (tinyint) -> tinyint, system.avg : (smallint) -> smallint, system.avg : (int) -> int, " +
				"system.avg : (bigint) -> bigint, system.avg : (float) -> float, system.avg : (double) -> double, " +
				"system.avg : (decimal) -> decimal, system.avg : (varint) -> varint, system.avg : (counter) -> counter): " +
				"use type casts to disambiguate"},
		{"bigint and varint both read timestamps", "sum", []FuncArg{typedArg(pgschema.Timestamp, "t")},
			"Ambiguous call to function sum (can be matched by following signatures: " +
				"system.sum : (bigint) -> bigint, system.sum : (varint) -> varint): use type casts to disambiguate"},
		{"count of a marker", "count", []FuncArg{anyMarker}, "Ambiguous call to function count (can be matched by " +
			"following signatures: system.count : (ascii) -> bigint, system.count : (bigint) -> bigint, " +
			"system.count : (blob) -> bigint, system.count : (boolean) -> bigint, system.count : (counter) -> bigint, " +
			"system.count : (date) -> bigint, system.count : (decimal) -> bigint, system.count : (double) -> bigint, " +
			"system.count : (duration) -> bigint, system.count : (empty) -> bigint, system.count : (float) -> bigint, " +
			"system.count : (inet) -> bigint, system.count : (int) -> bigint, system.count : (smallint) -> bigint, " +
			"system.count : (text) -> bigint, system.count : (time) -> bigint, system.count : (timestamp) -> bigint, " +
			"system.count : (timeuuid) -> bigint, system.count : (tinyint) -> bigint, system.count : (uuid) -> bigint, " +
			"system.count : (varint) -> bigint): use type casts to disambiguate"},
		{"max of a list is max of a blob, but sum has no blob", "sum", []FuncArg{list},
			"Invalid call to function sum, none of its type signatures match"},
		{"count(*) with an argument", "countRows", []FuncArg{typedArg(pgschema.Int, "v")},
			"Invalid number of arguments in call to function system.countRows: 0 required but 1 provided"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := ResolveAggregate(tt.fn, tt.args)
			var inv *InvalidError
			if !errors.As(err, &inv) {
				t.Fatalf("got %v, %v; want an invalid request", a, err)
			}
			if !strings.HasPrefix(inv.Msg, tt.want) || (len(tt.want) > 80 && inv.Msg != tt.want) {
				t.Errorf("got  %q\nwant %q", inv.Msg, tt.want)
			}
		})
	}
	if _, err := ResolveAggregate("now", nil); err == nil || errors.As(err, new(*InvalidError)) {
		t.Errorf("now as an aggregate: %v", err)
	}
}

// aggregate runs one overload over single-argument rows.
func runAggregate(t *testing.T, name string, k pgschema.Kind, rows ...[]byte) []byte {
	t.Helper()
	var a *cqlfunc.Aggregate
	if name == "countRows" {
		a = cqlfunc.CountRows
	} else {
		var err error
		if a, err = ResolveAggregate(name, []FuncArg{{Type: pgschema.Scalar(k)}}); err != nil {
			t.Fatal(err)
		}
	}
	s := a.New()
	for _, r := range rows {
		if err := s.Add([][]byte{r}); err != nil {
			t.Fatalf("%s add %x: %v", a, r, err)
		}
	}
	out, err := s.Result()
	if err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	return out
}

func enc8(v int8) []byte      { return []byte{byte(v)} }
func enc16(v int16) []byte    { return binary.BigEndian.AppendUint16(nil, uint16(v)) }
func enc32(v int32) []byte    { return binary.BigEndian.AppendUint32(nil, uint32(v)) }
func encF32(v float32) []byte { return binary.BigEndian.AppendUint32(nil, math.Float32bits(v)) }
func encF64(v float64) []byte { return binary.BigEndian.AppendUint64(nil, math.Float64bits(v)) }
func encDec(unscaled int64, scale int32) []byte {
	return pgschema.DecimalBytes(big.NewInt(unscaled), scale)
}
func encVarint(s string) []byte {
	n, _ := new(big.Int).SetString(s, 10)
	return varintBytes(n)
}

func TestAggregateValues(t *testing.T) {
	maxLong, minLong := int64(math.MaxInt64), int64(math.MinInt64)
	tests := []struct {
		name string
		fn   string
		kind pgschema.Kind
		rows [][]byte
		want []byte
	}{
		{"count(*) counts nulls", "countRows", 0, [][]byte{nil, enc32(1), nil}, enc64(3)},
		{"count(*) of nothing", "countRows", 0, nil, enc64(0)},
		{"count skips nulls", "count", pgschema.Int, [][]byte{nil, enc32(1), enc32(2)}, enc64(2)},
		{"count counts empty values", "count", pgschema.Text, [][]byte{{}, []byte("a")}, enc64(2)},
		{"count of nothing", "count", pgschema.Counter, nil, enc64(0)},

		{"sum of ints", "sum", pgschema.Int, [][]byte{enc32(1), nil, enc32(2), enc32(3)}, enc32(6)},
		{"sum of ints wraps", "sum", pgschema.Int, [][]byte{enc32(math.MaxInt32), enc32(1)}, enc32(math.MinInt32)},
		{"sum of tinyints wraps", "sum", pgschema.Tinyint, [][]byte{enc8(127), enc8(1)}, enc8(-128)},
		{"sum of smallints wraps", "sum", pgschema.Smallint, [][]byte{enc16(-32768), enc16(-1)}, enc16(32767)},
		{"sum of bigints wraps", "sum", pgschema.Bigint, [][]byte{enc64(maxLong), enc64(1)}, enc64(minLong)},
		{"sum of counters", "sum", pgschema.Counter, [][]byte{enc64(5), enc64(-7)}, enc64(-2)},
		{"sum of nothing", "sum", pgschema.Int, nil, enc32(0)},
		{"sum of only nulls", "sum", pgschema.Bigint, [][]byte{nil, nil}, enc64(0)},

		{"avg of ints divides toward zero", "avg", pgschema.Int, [][]byte{enc32(1), enc32(2)}, enc32(1)},
		{"avg of negative ints", "avg", pgschema.Int, [][]byte{enc32(-1), enc32(-2)}, enc32(-1)},
		{"avg of ints sums in a long", "avg", pgschema.Int, [][]byte{enc32(math.MaxInt32), enc32(math.MaxInt32)},
			enc32(math.MaxInt32)},
		{"avg of tinyints sums in a long", "avg", pgschema.Tinyint, [][]byte{enc8(100), enc8(100), enc8(100)}, enc8(100)},
		{"avg of bigints past a long", "avg", pgschema.Bigint, [][]byte{enc64(maxLong), enc64(maxLong)}, enc64(maxLong)},
		{"avg of bigints past a long, odd", "avg", pgschema.Bigint, [][]byte{enc64(maxLong), enc64(1), enc64(2)},
			enc64(3074457345618258603)}, // (2^63 + 2) / 3
		{"avg of counters", "avg", pgschema.Counter, [][]byte{enc64(10), enc64(5)}, enc64(7)},
		{"avg of nothing", "avg", pgschema.Smallint, nil, enc16(0)},

		{"sum of floats", "sum", pgschema.Float, [][]byte{encF32(1.5), encF32(2.25)}, encF32(3.75)},
		{"sum of doubles, compensated", "sum", pgschema.Double, [][]byte{encF64(0.1), encF64(0.2), encF64(0.3)}, encF64(0.6)},
		{"sum of infinities", "sum", pgschema.Double, [][]byte{encF64(math.Inf(1)), encF64(math.Inf(1))}, encF64(math.Inf(1))},
		{"sum of no doubles", "sum", pgschema.Double, nil, encF64(0)},
		{"avg of doubles", "avg", pgschema.Double, [][]byte{encF64(1), encF64(2)}, encF64(1.5)},
		{"avg of floats", "avg", pgschema.Float, [][]byte{encF32(1), encF32(2)}, encF32(1.5)},
		{"avg of doubles past a double", "avg", pgschema.Double, [][]byte{encF64(math.MaxFloat64), encF64(math.MaxFloat64)},
			encF64(math.MaxFloat64)},
		{"avg of no floats", "avg", pgschema.Float, nil, encF32(0)},

		{"sum of decimals keeps the largest scale", "sum", pgschema.Decimal, [][]byte{encDec(15, 1), encDec(225, 2)}, encDec(375, 2)},
		{"sum of no decimals", "sum", pgschema.Decimal, nil, encDec(0, 0)},
		// Cassandra's running average rounds each step at the values' scale.
		{"avg of decimals", "avg", pgschema.Decimal, [][]byte{encDec(1, 0), encDec(2, 0)}, encDec(1, 0)},
		{"avg of decimals with a scale", "avg", pgschema.Decimal, [][]byte{encDec(10, 1), encDec(20, 1)}, encDec(15, 1)},
		{"avg of decimals, rounding", "avg", pgschema.Decimal, [][]byte{encDec(1, 0), encDec(2, 0), encDec(2, 0)}, encDec(1, 0)},
		{"avg of no decimals", "avg", pgschema.Decimal, nil, encDec(0, 0)},

		{"sum of varints", "sum", pgschema.Varint, [][]byte{encVarint("1180591620717411303424"), encVarint("1180591620717411303424")},
			encVarint("2361183241434822606848")},
		{"avg of varints", "avg", pgschema.Varint, [][]byte{encVarint("-1"), encVarint("-2")}, encVarint("-1")},
		{"avg of no varints", "avg", pgschema.Varint, nil, encVarint("0")},

		{"min of ints", "min", pgschema.Int, [][]byte{enc32(3), enc32(-5), nil, enc32(10)}, enc32(-5)},
		{"max of ints", "max", pgschema.Int, [][]byte{enc32(3), enc32(-5), enc32(10)}, enc32(10)},
		{"min of nothing", "min", pgschema.Int, nil, nil},
		{"max of only nulls", "max", pgschema.Text, [][]byte{nil}, nil},
		{"max of text by bytes", "max", pgschema.Text, [][]byte{[]byte("b"), []byte("é"), []byte("a")}, []byte("é")},
		{"min of text", "min", pgschema.Text, [][]byte{[]byte("b"), []byte("é"), []byte("a")}, []byte("a")},
		{"min of decimals by value", "min", pgschema.Decimal, [][]byte{encDec(2, 0), encDec(15, 1), encDec(150, 2)}, encDec(15, 1)},
		{"max of decimals by value", "max", pgschema.Decimal, [][]byte{encDec(-3, 0), encDec(1, 1), encDec(-1, 0)}, encDec(1, 1)},
		{"max of doubles puts 0.0 above -0.0", "max", pgschema.Double, [][]byte{encF64(math.Copysign(0, -1)), encF64(0)}, encF64(0)},
		{"min of doubles", "min", pgschema.Double, [][]byte{encF64(0), encF64(math.Copysign(0, -1))}, encF64(math.Copysign(0, -1))},
		{"max of doubles with NaN", "max", pgschema.Double, [][]byte{encF64(1), encF64(math.NaN()), encF64(2)}, encF64(math.NaN())},
		{"max of varints", "max", pgschema.Varint, [][]byte{encVarint("-300"), encVarint("2"), encVarint("-1")}, encVarint("2")},
		{"min of counters", "min", pgschema.Counter, [][]byte{enc64(1), enc64(-1)}, enc64(-1)},
		{"max of timestamps", "max", pgschema.Timestamp, [][]byte{enc64(-5), enc64(3)}, enc64(3)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := runAggregate(t, tt.fn, tt.kind, tt.rows...)
			if tt.kind == pgschema.Double && len(got) == 8 && math.IsNaN(math.Float64frombits(binary.BigEndian.Uint64(got))) &&
				math.IsNaN(math.Float64frombits(binary.BigEndian.Uint64(tt.want))) {
				return
			}
			if !bytes.Equal(got, tt.want) || (got == nil) != (tt.want == nil) {
				t.Errorf("got %x, want %x", got, tt.want)
			}
		})
	}
}

func TestAggregateEmptyValue(t *testing.T) {
	a, _ := ResolveAggregate("sum", []FuncArg{typedArg(pgschema.Int, "v")})
	if err := a.New().Add([][]byte{{}}); err == nil {
		t.Error("sum of an empty int accepted")
	}
	m, _ := ResolveAggregate("max", []FuncArg{typedArg(pgschema.Int, "v")})
	s := m.New()
	for _, v := range [][]byte{enc32(1), {}} {
		if err := s.Add([][]byte{v}); err != nil {
			t.Fatal(err)
		}
	}
	// An empty value sorts first.
	if got, _ := s.Result(); !bytes.Equal(got, enc32(1)) {
		t.Errorf("max = %x", got)
	}
}
