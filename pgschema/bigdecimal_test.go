package pgschema

import (
	"math"
	"math/big"
	"testing"
)

// TestBigDecimal checks BigDecimal's arithmetic and conversions against
// what Java's BigDecimal gives.
func TestBigDecimal(t *testing.T) {
	parse := func(s string) BigDecimal {
		d, ok := ParseBigDecimal(s)
		if !ok {
			t.Fatalf("ParseBigDecimal(%q) refused", s)
		}
		return d
	}
	for _, c := range []struct{ got, want string }{
		{parse("1.5").Add(parse("2.25")).PlainString(), "3.75"},
		{parse("1E+3").Add(parse("1")).PlainString(), "1001"},
		{parse("1").Sub(parse("0.001")).PlainString(), "0.999"},
		{parse("2.5").DivHalfEven(2).PlainString(), "1.2"},
		{parse("3.5").DivHalfEven(2).PlainString(), "1.8"},
		{parse("-2.5").DivHalfEven(2).PlainString(), "-1.2"},
		{parse("1E+3").PlainString(), "1000"},
		{parse("0E+3").PlainString(), "0"},
		{parse("-0.00012").PlainString(), "-0.00012"},
	} {
		if c.got != c.want {
			t.Errorf("got %s, want %s", c.got, c.want)
		}
	}
	for _, c := range []struct {
		in   string
		want int64
	}{{"12.9", 12}, {"-12.9", -12}, {"0.5", 0}, {"1E+2", 100}, {"18446744073709551617", 1}, {"1E-100", 0}} {
		if got := parse(c.in).LongValue(); got != c.want {
			t.Errorf("%s.longValue() = %d, want %d", c.in, got, c.want)
		}
	}
	if got := parse("0.1").Float(64); got != 0.1 {
		t.Errorf("0.1.doubleValue() = %v", got)
	}
	if got := parse("1E+400").Float(64); !math.IsInf(got, 1) {
		t.Errorf("1E+400.doubleValue() = %v", got)
	}
	if got := parse("0.1").Float(32); got != float64(float32(0.1)) {
		t.Errorf("0.1.floatValue() = %v", got)
	}

	if d, err := BigDecimalOfFloat(0.1, 64); err != nil || d.Unscaled.Cmp(big.NewInt(1)) != 0 || d.Scale != 1 {
		t.Errorf("BigDecimal.valueOf(0.1) = %v, %d, %v", d.Unscaled, d.Scale, err)
	}
	if _, err := BigDecimalOfFloat(math.Inf(-1), 64); err == nil || err.Error() != "java.lang.NumberFormatException: -Infinity has no decimal value" {
		t.Errorf("BigDecimal.valueOf(-Infinity): %v", err)
	}
	d, err := DecodeBigDecimal(parse("-123.45").Bytes())
	if err != nil || d.PlainString() != "-123.45" {
		t.Errorf("-123.45 round trips to %v, %v", d.PlainString(), err)
	}
	if _, err := DecodeBigDecimal([]byte{0, 0}); err == nil {
		t.Errorf("a 2-byte decimal decoded")
	}
}

// TestLowInt64 checks BigInteger.longValue's wrap-around.
func TestLowInt64(t *testing.T) {
	n, _ := new(big.Int).SetString("-18446744073709551617", 10)
	if got := LowInt64(n); got != -1 {
		t.Errorf("longValue of -(2^64+1) = %d, want -1", got)
	}
	if got := LowInt64(VarintValue([]byte{0x80})); got != -128 {
		t.Errorf("longValue of varint 0x80 = %d, want -128", got)
	}
}
