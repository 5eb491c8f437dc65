package udf

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

// TestBudget checks that endless and hungry bodies stop.
func TestBudget(t *testing.T) {
	for _, c := range []struct {
		name     string
		body     string
		budget   Budget
		timeout  bool   // a *Timeout, else a *Failure with want
		want     string // the failure
		deadline time.Duration
	}{
		{"steps", `while (true) {}`, Budget{Steps: 10000}, true, "", time.Second},
		{"steps with calls", `int i = 0; for (;;) { i = Math.max(i, 1); }`, Budget{Steps: 10000}, true, "", time.Second},
		{"time", `while (true) {}`, Budget{Timeout: 50 * time.Millisecond}, true, "", time.Second},
		{"time in a nested loop", `long n = 0; for (int i = 0; ; i++) for (int j = 0; j < 1000; j++) n += j;`,
			Budget{Timeout: 50 * time.Millisecond}, true, "", time.Second},
		{"memory bomb", `String s = "x"; while (true) s = s + s;`, Budget{Steps: 1e9}, false,
			"java.lang.OutOfMemoryError: Java heap space", time.Second},
		{"list bomb", `List<String> l = new ArrayList<>(); while (true) l.add("x");`, Budget{Steps: 1e9}, false,
			"java.lang.OutOfMemoryError: Java heap space", 5 * time.Second},
		{"builder bomb", `StringBuilder b = new StringBuilder("x"); while (true) b.append(b);`, Budget{Steps: 1e9}, false,
			"java.lang.OutOfMemoryError: Java heap space", time.Second},
		{"repeat bomb", `return "x".repeat(1 << 30).length();`, Budget{}, false,
			"java.lang.OutOfMemoryError: Java heap space", time.Second},
		{"array bomb", `int[][] a = new int[1 << 20][1 << 20]; return 1;`, Budget{}, false,
			"java.lang.OutOfMemoryError: Java heap space", time.Second},
		{"bigint bomb", `java.math.BigInteger b = java.math.BigInteger.TEN; return b.pow(1 << 30).bitLength();`, Budget{}, false,
			"java.lang.ArithmeticException: BigInteger would overflow supported range", time.Second},
		{"bigint squares", `java.math.BigInteger b = java.math.BigInteger.valueOf(3); for (;;) b = b.multiply(b);`, Budget{}, false,
			"java.lang.ArithmeticException: BigInteger would overflow supported range", time.Second},
		{"decimal bomb", `return java.math.BigDecimal.ONE.setScale(1 << 30).scale();`, Budget{}, false,
			"java.lang.ArithmeticException: BigInteger would overflow supported range", time.Second},
		{"plain string bomb", `return new java.math.BigDecimal("1E-100000000").toPlainString().length();`, Budget{}, false,
			"java.lang.OutOfMemoryError: Java heap space", time.Second},
		{"caught and continued", `String s = "x"; while (true) { try { s = s + s; } catch (Throwable e) { } }`,
			Budget{Steps: 100000}, true, "", time.Second},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, err := Compile(nil, cqlType(t, "int"), c.body)
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			_, err = f.Call(nil, c.budget)
			if d := time.Since(start); d > c.deadline {
				t.Errorf("stopped after %v", d)
			}
			if c.timeout {
				var to *Timeout
				if !errors.As(err, &to) || to.Limit != c.budget.Timeout {
					t.Fatalf("got %v, want a timeout", err)
				}
				return
			}
			var fail *Failure
			if !errors.As(err, &fail) || fail.Msg != c.want {
				t.Fatalf("got %v, want %q", err, c.want)
			}
		})
	}
}

// TestConcurrentCalls calls one function from many goroutines, as the
// gateway does (run with -race).
func TestConcurrentCalls(t *testing.T) {
	ps := params(t, "l list<int>, s text")
	f, err := Compile(ps, cqlType(t, "text"), `
		Map<Integer, String> m = new HashMap<>();
		for (Integer i : l) m.put(i, s + i);
		StringBuilder b = new StringBuilder();
		for (String v : m.values()) b.append(v);
		return b.toString() + String.format("%.1f", Math.sin(l.size()));`)
	if err != nil {
		t.Fatal(err)
	}
	args := [][]byte{enc(t, ps[0].Type, []any{1, 2, 3}), []byte("x")}
	want := "x1x2x3" + "0.1"
	done := make(chan error)
	for g := 0; g < 8; g++ {
		go func() {
			for i := 0; i < 200; i++ {
				out, err := f.Call(args, Budget{Steps: 1e5, Timeout: time.Second})
				if err != nil || string(out) != want {
					done <- fmt.Errorf("got %q, %v", out, err)
					return
				}
			}
			done <- nil
		}()
	}
	for g := 0; g < 8; g++ {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}
