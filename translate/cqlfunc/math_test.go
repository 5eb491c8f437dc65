package cqlfunc

import (
	"encoding/binary"
	"math"
	"math/big"
	"testing"

	"github.com/cqlpg/cqlpg/pgschema"
)

// call runs the math function op of kind k on v.
func call(t *testing.T, op string, k pgschema.Kind, v []byte) ([]byte, error) {
	t.Helper()
	for _, f := range Natives(op) {
		if f.Args[0].Kind == k {
			return f.Eval(nil, [][]byte{v})
		}
	}
	t.Fatalf("no %s for %v", op, k)
	return nil, nil
}

func decimal(t *testing.T, s string) []byte {
	d, ok := pgschema.ParseBigDecimal(s)
	if !ok {
		t.Fatalf("bad decimal %q", s)
	}
	return d.Bytes()
}

func decimalText(t *testing.T, b []byte) string {
	d, err := pgschema.DecodeBigDecimal(b)
	if err != nil {
		t.Fatal(err)
	}
	return d.PlainString()
}

// TestMathDecimal checks decimal exp, log, log10 and round against the
// values of Cassandra's own tests, digit for digit, and varint's.
func TestMathDecimal(t *testing.T) {
	for _, c := range []struct{ op, in, want string }{
		{"exp", "5", "148.41315910257660342111558004055"},
		{"exp", "1", "2.7182818284590452353602874713527"},
		{"exp", "0", "1"},
		{"exp", "-1", "0.36787944117144232159552377016146"},
		{"log", "5", "1.6094379124341003746007593332262"},
		{"log", "1", "0"},
		{"log10", "5", "0.69897000433601880478626110527551"},
		{"log10", "1", "0"},
		{"round", "5.5", "6"},
		{"round", "-1.5", "-2"},
		{"round", "1", "1"},
		{"abs", "-3.7", "3.7"},
	} {
		got, err := call(t, c.op, pgschema.Decimal, decimal(t, c.in))
		if err != nil || decimalText(t, got) != c.want {
			t.Errorf("%s(%s) = %s, %v; want %s", c.op, c.in, decimalText(t, got), err, c.want)
		}
	}
	if _, err := call(t, "log", pgschema.Decimal, decimal(t, "0")); err == nil ||
		err.Error() != "execution of 'system.log[decimal]' failed: java.lang.ArithmeticException: Natural log of number zero or less" {
		t.Errorf("log(0): %v", err)
	}
	for _, c := range []struct {
		op      string
		in, out int64
	}{{"exp", 5, 148}, {"exp", -1, 0}, {"log", 5, 1}, {"log10", 5, 0}, {"abs", -3, 3}, {"round", -1, -1}} {
		got, err := call(t, c.op, pgschema.Varint, pgschema.VarintBytes(big.NewInt(c.in)))
		if err != nil || pgschema.VarintValue(got).Int64() != c.out {
			t.Errorf("varint %s(%d) = %v, %v; want %d", c.op, c.in, got, err, c.out)
		}
	}
	if _, err := call(t, "log10", pgschema.Varint, pgschema.VarintBytes(big.NewInt(-1))); err == nil {
		t.Error("varint log10(-1) did not fail")
	}
}

// TestMathJavaCasts checks the integer and float functions narrow as
// Java's casts do.
func TestMathJavaCasts(t *testing.T) {
	b := func(v int8) []byte { return []byte{byte(v)} }
	i := func(v int32) []byte { return binary.BigEndian.AppendUint32(nil, uint32(v)) }
	l := func(v int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(v)) }
	for _, c := range []struct {
		op   string
		k    pgschema.Kind
		in   []byte
		want int64
	}{
		{"exp", pgschema.Int, i(5), int64(int32(math.Exp(5)))},
		{"exp", pgschema.Tinyint, b(5), int64(int8(int32(math.Exp(5))))}, // 148 wraps to -108
		{"abs", pgschema.Tinyint, b(-128), -128},
		{"abs", pgschema.Int, i(math.MinInt32), math.MinInt32},
		{"log", pgschema.Int, i(0), math.MinInt32},      // -Infinity saturates
		{"log", pgschema.Tinyint, b(0), 0},              // then keeps the low byte
		{"log", pgschema.Bigint, l(-1), 0},              // NaN
		{"exp", pgschema.Bigint, l(100), math.MaxInt64}, // saturates
		{"round", pgschema.Counter, l(-7), -7},
	} {
		got, err := call(t, c.op, c.k, c.in)
		if err != nil || decodeInteger(got) != c.want {
			t.Errorf("%s(%v %x) = %x, %v; want %d", c.op, c.k, c.in, got, err, c.want)
		}
	}
	f := func(v float32) []byte { return binary.BigEndian.AppendUint32(nil, math.Float32bits(v)) }
	d := func(v float64) []byte { return binary.BigEndian.AppendUint64(nil, math.Float64bits(v)) }
	for _, c := range []struct {
		op   string
		in   float64
		want float64
	}{{"round", -1.5, -1}, {"round", 2.5, 3}, {"round", 0.49999999999999994, 0}, {"abs", -3.7, 3.7}} {
		got, _ := call(t, c.op, pgschema.Double, d(c.in))
		if r := math.Float64frombits(binary.BigEndian.Uint64(got)); r != c.want {
			t.Errorf("double %s(%v) = %v, want %v", c.op, c.in, r, c.want)
		}
		got, _ = call(t, c.op, pgschema.Float, f(float32(c.in)))
		if r := math.Float32frombits(binary.BigEndian.Uint32(got)); float64(r) != float64(float32(c.want)) && c.in != 0.49999999999999994 {
			t.Errorf("float %s(%v) = %v, want %v", c.op, c.in, r, c.want)
		}
	}
}
