package udf

import (
	"testing"

	"github.com/cqlpg/cqlpg/pgschema"
)

// FuzzCompile compiles bodies, and calls the ones that compile with a
// small budget: neither may panic, and a call ends in a result, a
// *Failure or a *Timeout.
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
	intT := pgschema.Scalar(pgschema.Int)
	ps := []Param{
		{Name: "a", Type: intT},
		{Name: "b", Type: intT},
		{Name: "s", Type: pgschema.Scalar(pgschema.Text)},
		{Name: "l", Type: pgschema.NewList(intT, false)},
	}
	args := [][]byte{{0, 0, 0, 7}, {0, 0, 0, 3}, []byte("12"), pgschema.SerializeCollection([][]byte{{0, 0, 0, 1}})}
	f.Fuzz(func(t *testing.T, body string) {
		for _, compile := range []func([]Param, *pgschema.Type, string) (*Func, error){Compile, CompileStrict} {
			fn, err := compile(ps, intT, body)
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
