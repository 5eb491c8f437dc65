package udf

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestFailures runs bodies that throw, with the exception Cassandra
// reports.
func TestFailures(t *testing.T) {
	for _, c := range []struct {
		name   string
		params string
		ret    string
		strict bool
		body   string
		args   []any
		want   string
	}{
		{"divide by zero", "a int, b int", "int", false, `return a / b;`, []any{1, 0}, "java.lang.ArithmeticException: / by zero"},
		{"long modulo zero", "a bigint", "bigint", true, `return a % 0L;`, []any{int64(1)}, "java.lang.ArithmeticException: / by zero"},
		{"unboxing null", "a int, b int", "int", false, `int x = a; return x + b;`, []any{nil, 1}, "java.lang.NullPointerException"},
		{"null receiver", "s text", "int", false, `return s.length();`, []any{nil}, "java.lang.NullPointerException"},
		{"list index", "l list<int>", "int", false, `return l.get(5);`, []any{[]any{1, 2}},
			"java.lang.IndexOutOfBoundsException: Index 5 out of bounds for length 2"},
		{"array index", "a int", "int", true, `int[] x = new int[3]; return x[a];`, []any{-1},
			"java.lang.ArrayIndexOutOfBoundsException: Index -1 out of bounds for length 3"},
		{"charAt", "s text", "text", false, `return "" + s.charAt(9);`, []any{"abc"},
			"java.lang.StringIndexOutOfBoundsException: String index out of range: 9"},
		{"substring", "s text", "text", false, `return s.substring(2, 1);`, []any{"abc"},
			"java.lang.StringIndexOutOfBoundsException: begin 2, end 1, length 3"},
		{"parseInt", "s text", "int", false, `return Integer.parseInt(s);`, []any{"x"},
			`java.lang.NumberFormatException: For input string: "x"`},
		{"parseInt overflow", "s text", "int", false, `return Integer.parseInt(s);`, []any{"99999999999"},
			`java.lang.NumberFormatException: For input string: "99999999999"`},
		{"parseInt null", "s text", "int", false, `return Integer.parseInt(s);`, []any{nil}, "java.lang.NumberFormatException: null"},
		{"parseDouble", "s text", "double", false, `return Double.parseDouble(s);`, []any{"1.2.3"},
			`java.lang.NumberFormatException: For input string: "1.2.3"`},
		{"parseDouble empty", "s text", "double", false, `return Double.parseDouble(s);`, []any{" "},
			"java.lang.NumberFormatException: empty String"},
		{"thrown", "a int", "int", false, `throw new RuntimeException("oh no!");`, []any{1}, "java.lang.RuntimeException: oh no!"},
		{"thrown without message", "a int", "int", false, `throw new IllegalStateException();`, []any{1}, "java.lang.IllegalStateException"},
		{"class cast", "a int", "text", false, `Object o = a; return (String) o;`, []any{1},
			"java.lang.ClassCastException: class java.lang.Integer cannot be cast to class java.lang.String (java.lang.Integer and java.lang.String are in module java.base of loader 'bootstrap')"},
		{"immutable list", "a int", "int", false, `List<Integer> l = List.of(1); l.add(a); return 1;`, []any{1},
			"java.lang.UnsupportedOperationException"},
		{"concurrent modification", "l list<int>", "int", false, `for (Integer i : l) l.add(i); return 1;`, []any{[]any{1, 2}},
			"java.util.ConcurrentModificationException"},
		{"map changed during keySet iteration", "m map<text, int>", "int", false,
			`for (String k : m.keySet()) m.remove(k); return 1;`, []any{[][2]any{{"a", 1}, {"b", 2}}},
			"java.util.ConcurrentModificationException"},
		{"non terminating decimal", "a decimal, b decimal", "decimal", false, `return a.divide(b);`, []any{dec{1, 0}, dec{3, 0}},
			"java.lang.ArithmeticException: Non-terminating decimal expansion; no exact representable decimal result."},
		{"rounding necessary", "a decimal", "decimal", false, `return a.setScale(1);`, []any{dec{125, 2}},
			"java.lang.ArithmeticException: Rounding necessary"},
		{"bigdecimal parse", "s text", "decimal", false, `return new java.math.BigDecimal(s);`, []any{"x"},
			"java.lang.NumberFormatException"},
		{"tuple type mismatch", "t tuple<int, text>", "int", false, `return t.getInt(1);`, []any{[]any{1, "x"}},
			"org.apache.cassandra.cql3.functions.types.exceptions.CodecNotFoundException: Codec not found for requested operation: [text <-> java.lang.Integer]"},
		{"tuple index", "t tuple<int, text>", "int", false, `return t.getInt(2);`, []any{[]any{1, "x"}},
			"java.lang.ArrayIndexOutOfBoundsException: Index 2 out of bounds for length 2"},
		{"udt field", "u address", "text", false, `return u.getString("txt");`, []any{[]any{"a", 1}},
			"java.lang.IllegalArgumentException: txt is not a field defined in this UDT"},
		{"not a tuple argument", "a int", "tuple<int>", false, `return udfContext.newArgTupleValue("a");`, []any{1},
			"java.lang.IllegalStateException: Function argument is not a tuple type but a int"},
		{"unknown argument", "a int", "tuple<int>", false, `return udfContext.newArgTupleValue("b");`, []any{1},
			"java.lang.IllegalArgumentException: Function does not declare an argument named 'b'"},
		{"null in result list", "a int", "list<int>", false, `List<Integer> l = new ArrayList<>(); l.add(null); return l;`,
			[]any{1}, "java.lang.NullPointerException: Collection elements cannot be null"},
		{"uuid fromString", "s text", "uuid", false, `return java.util.UUID.fromString(s);`, []any{"nope"},
			"java.lang.IllegalArgumentException: Invalid UUID string: nope"},
		{"format missing argument", "a int", "text", false, `return String.format("%s %s", a);`, []any{1},
			"java.util.MissingFormatArgumentException: Format specifier '%s'"},
		{"format conversion", "a text", "text", false, `return String.format("%d", a);`, []any{"x"},
			"java.util.IllegalFormatConversionException: d != java.lang.String"},
		{"valueOf null char array", "a int", "text", false, `return String.valueOf((char[]) null);`, []any{1},
			"java.lang.NullPointerException"},
		{"negative array", "a int", "int", true, `int[] x = new int[a]; return 1;`, []any{-2},
			"java.lang.NegativeArraySizeException: -2"},
		{"exact overflow", "a bigint", "bigint", true, `return Math.multiplyExact(a, a);`, []any{int64(1) << 40},
			"java.lang.ArithmeticException: long overflow"},
		{"tree map null key", "a int", "int", false, `Map<String, Integer> m = new TreeMap<>(); m.put(null, a); return 1;`,
			[]any{1}, "java.lang.NullPointerException"},
		{"iterator exhausted", "l list<int>", "int", false, `Iterator<Integer> it = l.iterator(); it.next(); return it.next();`,
			[]any{[]any{1}}, "java.util.NoSuchElementException"},
		{"self-containing list hash", "a int", "int", false, `List<Object> l = new ArrayList<>(); l.add(l); return l.hashCode();`,
			[]any{1}, "java.lang.StackOverflowError"},
		{"self-containing set", "a int", "int", false, `Set<Object> s = new HashSet<>(); s.add(s); s.add(s); return 1;`,
			[]any{1}, "java.lang.StackOverflowError"},
		{"unsupported regex", "s text", "text", false, `return s.replaceAll("(a)\\1", "b");`, []any{"aa"},
			`java.lang.UnsupportedOperationException: the regular expression (a)\1 is not supported by cqlpg user functions`},
	} {
		t.Run(c.name, func(t *testing.T) {
			compile := Compile
			if c.strict {
				compile = CompileStrict
			}
			ps := params(t, c.params)
			f, err := compile(ps, cqlType(t, c.ret), c.body)
			if err != nil {
				t.Fatalf("compile: %v", err)
			}
			args := make([][]byte, len(ps))
			for i, p := range ps {
				args[i] = enc(t, p.Type, c.args[i])
			}
			_, err = f.Call(args, Budget{Steps: 1e6})
			var fail *Failure
			if !errors.As(err, &fail) {
				t.Fatalf("got %v, want a failure", err)
			}
			if fail.Msg != c.want {
				t.Fatalf("got %q, want %q", fail.Msg, c.want)
			}
		})
	}
}

func TestFailureText(t *testing.T) {
	f := &Failure{Msg: "java.lang.ArithmeticException: / by zero"}
	if got, want := f.Text("ks.f", []string{"int", "int"}), "execution of 'ks.f[int, int]' failed: java.lang.ArithmeticException: / by zero"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	to := &Timeout{Limit: 1500 * time.Millisecond}
	want := "execution of 'ks.f[int]' failed: java.util.concurrent.TimeoutException: User defined function ks.f : (int) -> int ran longer than 1500ms"
	if got := to.Text("ks.f", []string{"int"}, "ks.f : (int) -> int"); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestStrictNull checks that a RETURNS NULL ON NULL INPUT function is not
// run on a null argument, and that an empty int is null.
func TestStrictNull(t *testing.T) {
	ps := params(t, "a int, b text")
	f, err := CompileStrict(ps, cqlType(t, "int"), `throw new RuntimeException("ran");`)
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][][]byte{{nil, []byte("x")}, {{}, []byte("x")}} {
		if out, err := f.Call(args, Budget{}); out != nil || err != nil {
			t.Errorf("Call(%q) = %x, %v; want null", args, out, err)
		}
	}
	_, err = f.Call([][]byte{{0, 0, 0, 1}, {}}, Budget{})
	if err == nil || !strings.Contains(err.Error(), "ran") {
		t.Errorf("an empty text is not null, got %v", err)
	}
	if _, err := f.Call(nil, Budget{}); err == nil {
		t.Error("a call with too few arguments succeeded")
	}
}
