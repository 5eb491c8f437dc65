package udf

import (
	"testing"

	"github.com/cqlpg/cqlpg/pgschema"
)

// FuzzCompile compiles bodies, and calls the ones that compile with a
// small budget: neither may panic or fault, and a call ends in a result,
// a *Failure or a *Timeout. The seed corpus holds bodies of the other
// tests.
func FuzzCompile(f *testing.F) {
	for _, seed := range []string{
		`return a + b;`,
		`if (s != null) { return s.toUpperCase() + a; } return null;`,
		`int sum = 0; for (Integer i : l) sum += i; return sum;`,
		`Map<String, Integer> m = new HashMap<>(); m.put(s, a); for (Map.Entry<String, Integer> e : m.entrySet()) s += e; return s.length();`,
		`try { return Integer.parseInt(s); } catch (NumberFormatException e) { return -1; } finally { a++; }`,
		`switch (a) { case 1: return 2; default: return String.format("%05d", b).length(); }`,
		`StringBuilder sb = new StringBuilder(); while (a-- > 0) sb.append(a); return sb.length();`,
		`double r = 0; r = a; r /= b; return (int) Math.round(r);`,
		`int[] x = {1, 2, 3}; return x[a % 3] << b >>> 2;`,
		`return new java.math.BigDecimal(s).setScale(2, java.math.RoundingMode.HALF_UP).intValue();`,
	} {
		f.Add(seed)
	}
	// The parameters the seeds use, and results of several types, so that
	// mutated bodies compile often enough to run.
	ps := params(f, "a int, b int, s text, l list<int>, m map<text, int>, t tuple<int, text>, u address, "+
		"d double, n int, x int, val int, state tuple<int, bigint>, input double, key int, i int, f float, "+
		"v varint, arg text, data text, num int, delta bigint, udt address, tup tuple<int, text>, c decimal, e set<text>")
	vals := []any{7, 3, "12", []any{1, 2}, [][2]any{{"a", 1}}, []any{1, "x"}, []any{"st", 5},
		2.5, 4, 5, 6, []any{1, int64(2)}, 0.5, 1, 2, float32(1.5),
		9, "arg", "data", 2, int64(3), []any{"st", 5}, []any{1, "x"}, dec{15, 1}, []any{"a", "b"}}
	args := make([][]byte, len(ps))
	for i, p := range ps {
		args[i] = enc(f, p.Type, vals[i])
	}
	var rets []*pgschema.Type
	for _, r := range []string{"int", "text", "double", "bigint", "list<int>", "boolean", "decimal"} {
		rets = append(rets, cqlType(f, r))
	}
	f.Fuzz(func(t *testing.T, body string) {
		for _, compile := range []func([]Param, *pgschema.Type, string) (*Func, error){Compile, CompileStrict} {
			var fn *Func
			var err error
			for _, ret := range rets {
				if fn, err = compile(ps, ret, body); err == nil {
					break
				}
			}
			if err != nil {
				if _, ok := err.(*CompileError); !ok {
					t.Fatalf("compile error of type %T: %v", err, err)
				}
				continue
			}
			_, err = fn.Call(args, Budget{Steps: 10000, Memory: 1 << 20})
			switch err.(type) {
			case nil, *Failure, *Timeout:
			default:
				t.Fatalf("call error of type %T: %v", err, err)
			}
		}
	})
}
