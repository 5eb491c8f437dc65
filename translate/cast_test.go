package translate

import (
	"bytes"
	"errors"
	"math"
	"net"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlpg/cqlpg/pgschema"
)

func mustCast(t *testing.T, from, to pgschema.Kind, v []byte) []byte {
	t.Helper()
	conv, err := Cast(pgschema.Scalar(from), pgschema.Scalar(to))
	if err != nil {
		t.Fatalf("cast %s to %s: %v", pgschema.Scalar(from), pgschema.Scalar(to), err)
	}
	out, err := conv(v)
	if err != nil {
		t.Fatalf("cast %s to %s of %x: %v", pgschema.Scalar(from), pgschema.Scalar(to), v, err)
	}
	return out
}

func TestNumericCasts(t *testing.T) {
	const (
		ti = pgschema.Tinyint
		si = pgschema.Smallint
		in = pgschema.Int
		bi = pgschema.Bigint
		fl = pgschema.Float
		do = pgschema.Double
		de = pgschema.Decimal
		vi = pgschema.Varint
		co = pgschema.Counter
	)
	tests := []struct {
		from, to pgschema.Kind
		in, want []byte
	}{
		// Cassandra's CastFctsTest row: 1, 2, 3, 4, 5.2f, 6.3, 6.3, 4.
		{ti, si, enc8(1), enc16(1)},
		{ti, in, enc8(1), enc32(1)},
		{si, bi, enc16(2), enc64(2)},
		{in, fl, enc32(3), encF32(3)},
		{bi, do, enc64(4), encF64(4)},
		{fl, ti, encF32(5.2), enc8(5)},
		{fl, do, encF32(5.2), encF64(float64(float32(5.2)))},
		{fl, de, encF32(5.2), encDec(52, 1)}, // through Float.toString, not the double
		{do, fl, encF64(6.3), encF32(6.3)},
		{do, de, encF64(6.3), encDec(63, 1)},
		{do, in, encF64(6.3), enc32(6)},
		{de, ti, encDec(63, 1), enc8(6)},
		{de, fl, encDec(63, 1), encF32(6.3)},
		{de, do, encDec(63, 1), encF64(6.3)},
		{de, vi, encDec(63, 1), encVarint("6")},
		{vi, de, encVarint("4"), encDec(4, 0)},
		{vi, do, encVarint("4"), encF64(4)},
		{in, de, enc32(3), encDec(3, 0)},
		{co, ti, enc64(2), enc8(2)},
		{co, de, enc64(2), encDec(2, 0)},
		{co, vi, enc64(2), encVarint("2")},
		{co, bi, enc64(2), enc64(2)},
		// Java's narrowing keeps low bits and saturates floating point.
		{in, ti, enc32(300), enc8(44)},
		{bi, in, enc64(1<<32 + 5), enc32(5)},
		{do, in, encF64(1e20), enc32(math.MaxInt32)},
		{do, bi, encF64(-1e20), enc64(math.MinInt64)},
		{do, ti, encF64(1e20), enc8(-1)},
		{do, si, encF64(-70000.9), enc16(-4464)},
		{do, in, encF64(math.NaN()), enc32(0)},
		{fl, bi, encF32(float32(math.Inf(1))), enc64(math.MaxInt64)},
		{de, bi, encDec(1, -30), enc64(5076944270305263616)}, // 10^30 mod 2^64
		{de, in, encDec(-25, 1), enc32(-2)},
		{de, bi, encDec(5, 100), enc64(0)},
		{de, bi, encDec(7, -70), enc64(0)}, // 10^70 is a multiple of 2^64
		{vi, bi, encVarint("18446744073709551619"), enc64(3)},
		{vi, fl, encVarint("16777217"), encF32(16777216)},
		{bi, fl, enc64(math.MaxInt64), encF32(9.223372e18)},
		{vi, do, encVarint("1" + string(bytes.Repeat([]byte("0"), 400))), encF64(math.Inf(1))},
		{fl, vi, encF32(-5.7), encVarint("-5")},
		{de, vi, encDec(-57, 1), encVarint("-5")},
		{fl, de, encF32(1e10), encDec(10, -9)},
		{fl, de, encF32(0.1), encDec(1, 1)},
		{do, de, encF64(1e-5), encDec(10, 6)},
	}
	for _, tt := range tests {
		if got := mustCast(t, tt.from, tt.to, tt.in); !bytes.Equal(got, tt.want) {
			t.Errorf("cast %s %x to %s = %x, want %x", pgschema.Scalar(tt.from), tt.in, pgschema.Scalar(tt.to), got, tt.want)
		}
	}
}

func TestTextCasts(t *testing.T) {
	at := time.Date(2015, 5, 21, 11, 3, 2, 0, time.UTC)
	u, _ := gocql.ParseUUID("C2E8D4AC-3D43-4D52-9D0E-3A5C5C1F1B7E")
	tu, _ := gocql.ParseUUID("50554d6e-29bb-11e5-b345-feff819cdc9f")
	tests := []struct {
		from pgschema.Kind
		in   []byte
		want string
	}{
		{pgschema.Tinyint, enc8(-1), "-1"},
		{pgschema.Smallint, enc16(2), "2"},
		{pgschema.Int, enc32(3), "3"},
		{pgschema.Bigint, enc64(math.MinInt64), "-9223372036854775808"},
		{pgschema.Counter, enc64(2), "2"},
		{pgschema.Float, encF32(5.2), "5.2"},
		{pgschema.Float, encF32(1e10), "1.0E10"},
		{pgschema.Float, encF32(float32(math.NaN())), "NaN"},
		{pgschema.Double, encF64(6.3), "6.3"},
		{pgschema.Double, encF64(1), "1.0"},
		{pgschema.Double, encF64(100), "100.0"},
		{pgschema.Double, encF64(1e7), "1.0E7"},
		{pgschema.Double, encF64(9999999), "9999999.0"},
		{pgschema.Double, encF64(0.001), "0.001"},
		{pgschema.Double, encF64(0.0001), "1.0E-4"},
		{pgschema.Double, encF64(123456789), "1.23456789E8"},
		{pgschema.Double, encF64(-1.5e-300), "-1.5E-300"},
		{pgschema.Double, encF64(math.Copysign(0, -1)), "-0.0"},
		{pgschema.Double, encF64(math.Inf(-1)), "-Infinity"},
		{pgschema.Double, encF64(math.Nextafter(0.3, 1)), "0.30000000000000004"},
		{pgschema.Decimal, encDec(63, 1), "6.3"},
		{pgschema.Decimal, encDec(123, -2), "12300"},
		{pgschema.Decimal, encDec(5, 3), "0.005"},
		{pgschema.Decimal, encDec(-5, 3), "-0.005"},
		{pgschema.Decimal, encDec(-1234, 2), "-12.34"},
		{pgschema.Decimal, encDec(0, 2), "0.00"},
		{pgschema.Decimal, encDec(0, -2), "0"},
		{pgschema.Varint, encVarint("-123456789012345678901234567890"), "-123456789012345678901234567890"},
		{pgschema.Inet, net.ParseIP("127.0.0.1").To4(), "127.0.0.1"},
		{pgschema.Inet, net.ParseIP("::1"), "0:0:0:0:0:0:0:1"},
		{pgschema.Inet, net.ParseIP("2001:db8::ff00:42:8329"), "2001:db8:0:0:0:ff00:42:8329"},
		{pgschema.Inet, net.ParseIP("::ffff:10.0.0.1").To16(), "10.0.0.1"},
		{pgschema.Boolean, []byte{1}, "true"},
		{pgschema.Boolean, []byte{0}, "false"},
		{pgschema.Timestamp, tsMillis(at), "2015-05-21T11:03:02.000Z"},
		{pgschema.Date, cqlDate(2015, 5, 21), "2015-05-21"},
		{pgschema.Time, enc64(((11*60+3)*60 + 2) * 1e9), "11:03:02.000000000"},
		{pgschema.UUID, u.Bytes(), "c2e8d4ac-3d43-4d52-9d0e-3a5c5c1f1b7e"},
		{pgschema.Timeuuid, tu.Bytes(), "50554d6e-29bb-11e5-b345-feff819cdc9f"},
		{pgschema.Ascii, []byte("abc"), "abc"},
		{pgschema.Int, []byte{}, "null"}, // an empty value prints as Cassandra's toCQLLiteral writes it
	}
	for _, tt := range tests {
		if got := mustCast(t, tt.from, pgschema.Text, tt.in); string(got) != tt.want {
			t.Errorf("cast %s %x as text = %q, want %q", pgschema.Scalar(tt.from), tt.in, got, tt.want)
		}
		if tt.from == pgschema.Ascii {
			continue
		}
		if got := mustCast(t, tt.from, pgschema.Ascii, tt.in); string(got) != tt.want {
			t.Errorf("cast %s %x as ascii = %q, want %q", pgschema.Scalar(tt.from), tt.in, got, tt.want)
		}
	}
}

func TestTemporalCasts(t *testing.T) {
	at := time.Date(2015, 5, 21, 11, 3, 2, 0, time.UTC)
	tu := gocql.UUIDFromTime(at).Bytes()
	midnight := tsMillis(time.Date(2015, 5, 21, 0, 0, 0, 0, time.UTC))
	tests := []struct {
		from, to pgschema.Kind
		in, want []byte
	}{
		{pgschema.Timeuuid, pgschema.Timestamp, tu, tsMillis(at)},
		{pgschema.Timeuuid, pgschema.Date, tu, cqlDate(2015, 5, 21)},
		{pgschema.Timestamp, pgschema.Date, tsMillis(at), cqlDate(2015, 5, 21)},
		{pgschema.Date, pgschema.Timestamp, cqlDate(2015, 5, 21), midnight},
		// A bigint cast reads a timestamp as a varint (castAsBigint has no
		// timestamp overload; varint reads what bigint reads): the millis.
		{pgschema.Timestamp, pgschema.Bigint, tsMillis(at), tsMillis(at)},
		{pgschema.Timestamp, pgschema.Varint, tsMillis(at), encVarint("1432206182000")},
	}
	for _, tt := range tests {
		if got := mustCast(t, tt.from, tt.to, tt.in); !bytes.Equal(got, tt.want) {
			t.Errorf("cast %s %x to %s = %x, want %x", pgschema.Scalar(tt.from), tt.in, pgschema.Scalar(tt.to), got, tt.want)
		}
	}
	for _, k := range []pgschema.Kind{pgschema.Int, pgschema.Text, pgschema.Blob, pgschema.Timeuuid} {
		f, err := CastFunction(pgschema.Scalar(k), pgschema.Scalar(k), "c")
		if f != nil || err != nil {
			t.Errorf("cast %s to itself: %v, %v", pgschema.Scalar(k), f, err)
		}
		if got := mustCast(t, k, k, []byte{1, 2}); !bytes.Equal(got, []byte{1, 2}) {
			t.Errorf("cast %s to itself changed the value", pgschema.Scalar(k))
		}
	}
	if got := mustCast(t, pgschema.Int, pgschema.Text, nil); got != nil {
		t.Errorf("cast of null = %x", got)
	}
}

func TestCastErrors(t *testing.T) {
	tests := []struct {
		from, to pgschema.Kind
		want     string
	}{
		{pgschema.Int, pgschema.Boolean, "c cannot be cast to boolean"},
		{pgschema.Timeuuid, pgschema.UUID, "c cannot be cast to uuid"},
		{pgschema.Text, pgschema.Blob, "c cannot be cast to blob"},
		{pgschema.Text, pgschema.Int, "Invalid call to function system.castAsInt, none of its type signatures match " +
			`(known type signatures: system."castAsInt" : (tinyint) -> int, system."castAsInt" : (smallint) -> int, ` +
			`system."castAsInt" : (bigint) -> int, system."castAsInt" : (float) -> int, system."castAsInt" : (double) -> int, ` +
			`system."castAsInt" : (decimal) -> int, system."castAsInt" : (counter) -> int, system."castAsInt" : (varint) -> int)`},
		{pgschema.Int, pgschema.Date, "Invalid call to function system.castAsDate, none of its type signatures match " +
			`(known type signatures: system."castAsDate" : (timeuuid) -> date, system."castAsDate" : (timestamp) -> date)`},
		{pgschema.Timestamp, pgschema.Int, "Ambiguous call to function system.castAsInt (can be matched by following " +
			`signatures: system."castAsInt" : (bigint) -> int, system."castAsInt" : (varint) -> int): use type casts to disambiguate`},
	}
	for _, tt := range tests {
		_, err := CastFunction(pgschema.Scalar(tt.from), pgschema.Scalar(tt.to), "c")
		var inv *InvalidError
		if !errors.As(err, &inv) || inv.Msg != tt.want {
			t.Errorf("cast %s to %s: got %v\nwant %s", pgschema.Scalar(tt.from), pgschema.Scalar(tt.to), err, tt.want)
		}
	}
	// Cast, which has no column to name, names the type.
	if _, err := Cast(pgschema.Scalar(pgschema.Int), pgschema.Scalar(pgschema.Boolean)); err == nil ||
		err.Error() != "int cannot be cast to boolean" {
		t.Errorf("Cast int to boolean: %v", err)
	}
	// Text and ascii have no cast from blob or to each other but ascii to
	// text.
	for _, p := range [][2]pgschema.Kind{{pgschema.Blob, pgschema.Text}, {pgschema.Text, pgschema.Ascii},
		{pgschema.Duration, pgschema.Text}} {
		if _, err := Cast(pgschema.Scalar(p[0]), pgschema.Scalar(p[1])); err == nil {
			t.Errorf("cast %s to %s accepted", pgschema.Scalar(p[0]), pgschema.Scalar(p[1]))
		}
	}
	// Values a cast cannot convert fail at execution.
	for _, c := range []struct {
		from, to pgschema.Kind
		in       []byte
	}{
		{pgschema.Double, pgschema.Decimal, encF64(math.NaN())},
		{pgschema.Float, pgschema.Decimal, encF32(float32(math.Inf(1)))},
		{pgschema.Int, pgschema.Bigint, []byte{}},
	} {
		conv, err := Cast(pgschema.Scalar(c.from), pgschema.Scalar(c.to))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conv(c.in); err == nil {
			t.Errorf("cast %s %x to %s succeeded", pgschema.Scalar(c.from), c.in, pgschema.Scalar(c.to))
		}
	}
}
