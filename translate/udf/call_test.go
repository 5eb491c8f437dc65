package udf

import (
	"bytes"
	"testing"
)

// callCase is a body called with arguments and the result it gives.
type callCase struct {
	name   string
	params string // "a int, b text"
	ret    string
	strict bool // RETURNS NULL ON NULL INPUT
	body   string
	args   []any
	want   any // in enc's form; nil is null
}

func runCalls(t *testing.T, cases []callCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ps := params(t, c.params)
			ret := cqlType(t, c.ret)
			compile := Compile
			if c.strict {
				compile = CompileStrict
			}
			f, err := compile(ps, ret, c.body)
			if err != nil {
				t.Fatalf("compile: %v", err)
			}
			args := make([][]byte, len(ps))
			for i, p := range ps {
				args[i] = enc(t, p.Type, c.args[i])
			}
			got, err := f.Call(args, Budget{Steps: 1e6})
			if err != nil {
				t.Fatalf("call: %v", err)
			}
			want := enc(t, ret, c.want)
			if !bytes.Equal(got, want) || (got == nil) != (want == nil) {
				t.Fatalf("got %x, want %x", got, want)
			}
		})
	}
}

// TestDriverBodies runs the functions the drivers' test suites, and
// Cassandra's own, declare.
func TestDriverBodies(t *testing.T) {
	state := "state tuple<int, bigint>"
	runCalls(t, []callCase{
		// gocql's average aggregate.
		{"avgState", state + ", val int", "tuple<int, bigint>", false,
			`if (val !=null) {state.setInt(0, state.getInt(0)+1); state.setLong(1, state.getLong(1)+val.intValue());}return state;`,
			[]any{[]any{2, int64(7)}, 5}, []any{3, int64(12)}},
		{"avgState null", state + ", val int", "tuple<int, bigint>", false,
			`if (val !=null) {state.setInt(0, state.getInt(0)+1); state.setLong(1, state.getLong(1)+val.intValue());}return state;`,
			[]any{[]any{2, int64(7)}, nil}, []any{2, int64(7)}},
		{"avgState null components", state + ", val int", "tuple<int, bigint>", false,
			`if (val !=null) {state.setInt(0, state.getInt(0)+1); state.setLong(1, state.getLong(1)+val.intValue());}return state;`,
			[]any{[]any{nil, nil}, 4}, []any{1, int64(4)}},
		{"avgFinal", state, "double", false,
			`double r = 0; if (state.getInt(0) == 0) return null; r = state.getLong(1); r/= state.getInt(0); return Double.valueOf(r);`,
			[]any{[]any{4, int64(10)}}, 2.5},
		{"avgFinal empty", state, "double", false,
			`double r = 0; if (state.getInt(0) == 0) return null; r = state.getLong(1); r/= state.getInt(0); return Double.valueOf(r);`,
			[]any{[]any{0, int64(0)}}, nil},
		{"gocql uniq", "state set<text>, val text", "set<text>", false,
			`state.add(val); return state;`, []any{[]any{"a", "b"}, "c"}, []any{"a", "b", "c"}},
		{"gocql schema events", "input int", "int", true,
			`return Integer.valueOf(input + 1);`, []any{41}, 42},
		// The Python driver's metadata tests.
		{"python sum_int", "key int, val int", "int", true, `return key + val;`, []any{3, 4}, 7},
		{"python sum_int_two", "s int, i int, j int", "int", true, `return s + i + j;`, []any{1, 2, 3}, 6},
		{"python List_As_String", "l list<text>", "int", true, `return l.size();`, []any{[]any{"a", "b"}}, 2},
		{"python extend_list", "s list<text>, i int", "list<text>", false,
			`if (i != null) s.add(i.toString()); return s;`, []any{[]any{"1"}, 2}, []any{"1", "2"}},
		{"python update_map", "s map<int, int>, i int", "map<int, int>", true,
			`s.put(new Integer(i), new Integer(i)); return s;`, []any{[][2]any{{1, 2}}, 3}, [][2]any{{1, 2}, {3, 3}}},
		{"python new Double", "d double, i int", "double", false, `return new Double(0.0);`, []any{1.5, 2}, 0.0},
		// The Java driver's metadata tests.
		{"java plus", "s int, v int", "int", true, `return s+v;`, []any{2, 3}, 5},
		{"java pi", "", "double", false, `return Math.PI;`, nil, 3.141592653589793},
		{"java inc", "i int", "int", true, `return i+1;`, []any{41}, 42},
		{"java announce", "i int", "int", true, `return i;`, []any{7}, 7},
		{"java plus2", "i int, j int", "int", false, `return i+j;`, []any{4, 5}, 9},
		// Cassandra's dtests and unit tests.
		{"x_sin", "input double", "double", false,
			"if (input==null) return null;\n            return Double.valueOf(Math.sin(input.doubleValue()));",
			[]any{1.0}, 0.8414709848078965},
		{"x_cos", "input double", "double", false,
			"if (input==null) return null;\n            return Double.valueOf(Math.cos(input.doubleValue()));",
			[]any{1.0}, 0.5403023058681398},
		{"x_tan", "input double", "double", false,
			"if (input==null) return null;\n            return Double.valueOf(Math.tan(input.doubleValue()));",
			[]any{1.0}, 1.5574077246549023},
		{"overloaded", "v text", "text", false, `return "f1";`, []any{"x"}, "f1"},
		{"plus", "key int, val int", "int", false,
			`return Integer.valueOf(key.intValue() + val.intValue());`, []any{10, 6}, 16},
		{"stri", "key int", "text", false, `return key.toString();`, []any{16}, "16"},
		{"funk", "udt address", "int", false, `return Integer.valueOf(udt.getInt("zip"));`,
			[]any{[]any{"main", 75}}, 75},
		{"no parameters", "", "bigint", true, "\n  return 1L;\n", nil, int64(1)},
		{"sin with comments", "val double", "double", false,
			"\n  // parameter val is of type java.lang.Double\n  /* return type is of type java.lang.Double */\n  if (val == null) {\n    return null;\n  }\n  return Math.sin(val);\n",
			[]any{2.0}, 0.9092974268256817},
		{"counter", "val counter", "bigint", false, `return val + 1;`, []any{int64(4)}, int64(5)},
		{"dollar quoted", "input double", "text", false,
			"\n  if (input == null) {\n    return null;\n  }\n  return \"'\"+Math.sin(input)+'\\'';\n",
			[]any{0.0}, "'0.0'"},
		{"tuple getDouble", "tup tuple<double, list<double>, set<text>, map<int, boolean>>", "double", false,
			`return Double.valueOf(tup.getDouble(0));`,
			[]any{[]any{1.0, []any{1.0, 2.0}, []any{"one"}, [][2]any{{1, true}}}}, 1.0},
		{"tuple getList", "tup tuple<double, list<double>, set<text>, map<int, boolean>>", "list<double>", true,
			`return tup.getList(1, Double.class);`,
			[]any{[]any{1.0, []any{1.0, 2.0}, []any{"one"}, [][2]any{{1, true}}}}, []any{1.0, 2.0}},
		{"tuple getSet", "tup tuple<double, list<double>, set<text>, map<int, boolean>>", "set<text>", true,
			`return tup.getSet(2, String.class);`,
			[]any{[]any{1.0, []any{1.0}, []any{"one", "two"}, [][2]any{{1, true}}}}, []any{"one", "two"}},
		{"tuple getMap", "tup tuple<double, list<double>, set<text>, map<int, boolean>>", "map<int, boolean>", true,
			`return tup.getMap(3, Integer.class, Boolean.class);`,
			[]any{[]any{1.0, []any{1.0}, []any{"one"}, [][2]any{{1, true}, {2, false}}}}, [][2]any{{1, true}, {2, false}}},
		{"udt identity", "udt address", "address", true, "return\n     udt;", []any{[]any{"one", 1}}, []any{"one", 1}},
		{"udt getString", "udt address", "text", true, `return udt.getString("street");`, []any{[]any{"one", 1}}, "one"},
		{"to_string", "a int", "text", false, ` return a.toString(); `, []any{7}, "7"},
		{"new String", "a text", "text", false, ` return new String(a); `, []any{"x"}, "x"},
		{"substring", "data text, num int", "text", true, ` return data.substring(0,num); `, []any{"hello", 3}, "hel"},
		{"downcase", "arg text", "text", true, " return arg.toLowerCase();\n    ", []any{"HeLLo"}, "hello"},
		{"contains ternary", "input text", "int", false, `return input.contains("you")?1:0;`, []any{"thank you"}, 1},
		{"countGroupState", "state map<int, int>, val int", "map<int, int>", false,
			`if (val == null) return state; Integer current = state.get(val); if (current==null) current =0; state.put(val, current +1); return state;`,
			[]any{[][2]any{{1, 1}}, 1}, [][2]any{{1, 2}}},
		{"timeDelta", "arg bigint, delta bigint", "bigint", true, ` return arg - delta;`, []any{int64(10), int64(3)}, int64(7)},
		{"twice", "x int", "int", false, `return x==null?null:x*2;`, []any{21}, 42},
		{"twice null", "x int", "int", false, `return x==null?null:x*2;`, []any{nil}, nil},
		{"id", "i int", "int", true, `return i;`, []any{5}, 5},
		{"cat", "s text, v int", "text", true, `return s+v;`, []any{"0", 1}, "01"},
		{"fSumChargePrice", "l_extendedprice double, l_discount double, l_tax double", "double", false,
			`return (Double.valueOf( l_extendedprice.doubleValue() *  (1.0 - l_discount.doubleValue() ) * (1.0 + l_tax.doubleValue()) ));`,
			[]any{100.0, 0.5, 0.25}, 62.5},
		{"seeded random", "i int", "int", true, `return new java.util.Random(42).nextInt() + new java.util.Random(42).nextInt(i) * 0;`, []any{100}, -1170105035},
		{"seeded random bound", "i int", "int", true, `return new java.util.Random(42).nextInt(i);`, []any{100}, 30},
	})
}

// TestRandomBody runs the DSE driver's non-deterministic function.
func TestRandomBody(t *testing.T) {
	ps := params(t, "i int")
	f, err := CompileStrict(ps, cqlType(t, "int"), `return new java.util.Random().nextInt(i);`)
	if err != nil {
		t.Fatal(err)
	}
	for n := 0; n < 100; n++ {
		out, err := f.Call([][]byte{enc(t, ps[0].Type, 10)}, Budget{})
		if err != nil || len(out) != 4 || out[0] != 0 || out[1] != 0 || out[2] != 0 || out[3] >= 10 {
			t.Fatalf("got %x, %v; want an int in [0, 10)", out, err)
		}
	}
}
