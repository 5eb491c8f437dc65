package pgschema

import (
	"bytes"
	"encoding/hex"
	"math"
	"testing"
)

func TestFromString(t *testing.T) {
	tests := []struct {
		typ, in string
		want    []byte
	}{
		{"ascii", "abc", str("abc")},
		{"text", "héllo", str("héllo")},
		{"blob", "CAFEbabe", unhex(t, "cafebabe")},
		{"blob", "", str("")},
		{"boolean", "TrUe", []byte{1}},
		{"boolean", "", []byte{0}},
		{"int", "+42", i32(42)},
		{"int", "-2147483648", i32(math.MinInt32)},
		{"int", "", str("")},
		{"bigint", "9223372036854775807", i64(math.MaxInt64)},
		{"counter", "-1", i64(-1)},
		{"smallint", "-32768", i16(-32768)},
		{"tinyint", "127", i8(127)},
		{"varint", "-129", unhex(t, "ff7f")},
		{"varint", "+18446744073709551616", unhex(t, "010000000000000000")},
		{"decimal", "1.50", dec("150", 2)},
		{"decimal", "-.5", dec("-5", 1)},
		{"decimal", "1.", dec("1", 0)},
		{"decimal", "1E10", dec("1", -10)},
		{"decimal", "1.23e-5", dec("123", 7)},
		{"decimal", "007", dec("7", 0)},
		{"float", "1.5", f32(1.5)},
		{"float", "1e40", f32(float32(math.Inf(1)))},
		{"float", "-Infinity", f32(float32(math.Inf(-1)))},
		{"float", "NaN", unhex(t, "7fc00000")},
		{"float", "-NaN", unhex(t, "7fc00000")},
		{"float", "3.4028235E38", f32(math.MaxFloat32)},
		{"double", "-3.2", f64(-3.2)},
		{"double", "1e-400", f64(0)},
		{"double", "NaN", unhex(t, "7ff8000000000000")},
		{"double", ".5", f64(0.5)},
		{"double", "5.", f64(5)},
		{"double", "2D", f64(2)},
		{"uuid", "6BDDC89A-5644-11E4-97FC-56847AFE9799", uuidv("6bddc89a-5644-11e4-97fc-56847afe9799")},
		{"timeuuid", "6bddc89a-5644-11e4-97fc-56847afe9799", uuidv("6bddc89a-5644-11e4-97fc-56847afe9799")},
		{"timestamp", "2023-10-27 10:05:00+0000", i64(1698401100000)},
		{"timestamp", "", str("")},
		{"date", "1970-01-01", cqlDate(0)},
		{"date", "1969-12-31", cqlDate(-1)},
		{"date", "2023-10-27", cqlDate(19657)},
		{"date", "-0001-01-01", cqlDate(-719893)},
		{"date", "+10000-01-01", cqlDate(2932897)},
		{"date", "2147483648", cqlDate(0)},
		{"date", "0", cqlDate(-1 << 31)},
		{"date", "4294967295", cqlDate(1<<31 - 1)},
		{"date", "2000-02-29", cqlDate(11016)},
		{"time", "08:12:54.123456789", i64(29574123456789)},
		{"time", "08:12:54", i64(29574000000000)},
		{"time", " 08:12:54.1 ", i64(29574100000000)},
		{"time", "+8:12:54", i64(29574000000000)},
		{"time", "0", i64(0)},
		{"time", "86399999999999", i64(86399999999999)},
		{"inet", "127.0.0.1", unhex(t, "7f000001")},
		{"inet", "127.1", unhex(t, "7f000001")},
		{"inet", "010.0.0.1", unhex(t, "0a000001")},
		{"inet", "4294967295", unhex(t, "ffffffff")},
		{"inet", "::1", unhex(t, "00000000000000000000000000000001")},
		{"inet", "[::1]", unhex(t, "00000000000000000000000000000001")},
		{"inet", "::ffff:10.0.0.1", unhex(t, "0a000001")},
		{"inet", "::10.0.0.1", unhex(t, "0000000000000000000000000a000001")},
		{"inet", "FE80::1%25", unhex(t, "fe800000000000000000000000000001")},
		{"inet", "", str("")},
		{"duration", "", str("")},
	}
	for _, tt := range tests {
		got, err := FromString(mustType(t, tt.typ), tt.in)
		if err != nil {
			t.Errorf("FromString(%s, %q): %v", tt.typ, tt.in, err)
			continue
		}
		if !bytes.Equal(got, tt.want) {
			t.Errorf("FromString(%s, %q) = %x, want %x", tt.typ, tt.in, got, tt.want)
		}
	}

	errs := []struct {
		typ, in, want string
	}{
		{"ascii", "é", "Invalid ASCII character in string literal: java.nio.charset.UnmappableCharacterException: Input length = 1"},
		{"ascii", "a😀", "Invalid ASCII character in string literal: java.nio.charset.UnmappableCharacterException: Input length = 2"},
		{"text", "\xff", "String didn't validate."},
		{"blob", "123", "cannot parse '123' as hex bytes"},
		{"blob", "zz", "cannot parse 'zz' as hex bytes"},
		{"boolean", "yes", "Unable to make boolean from 'yes'"},
		{"int", "99999999999", "Unable to make int from '99999999999'"},
		{"int", "1.0", "Unable to make int from '1.0'"},
		{"bigint", "9223372036854775808", "Unable to make long from '9223372036854775808'"},
		{"smallint", "40000", "Unable to make short from '40000'"},
		{"tinyint", "128", "Unable to make byte from '128'"},
		{"varint", "1.5", "unable to make int from '1.5'"},
		{"decimal", "NaN", "unable to make BigDecimal from 'NaN'"},
		{"decimal", "Infinity", "unable to make BigDecimal from 'Infinity'"},
		{"decimal", "1e2147483648", "unable to make BigDecimal from '1e2147483648'"},
		{"decimal", "1.5.5", "unable to make BigDecimal from '1.5.5'"},
		{"decimal", "e5", "unable to make BigDecimal from 'e5'"},
		{"float", "abc", "Unable to make float from 'abc'"},
		{"float", "inf", "Unable to make float from 'inf'"},
		{"double", "1_000", "Unable to make double from '1_000'"},
		{"double", "nan", "Unable to make double from 'nan'"},
		{"uuid", "6bddc89a56444e4-97fc-56847afe9799", "Unable to make UUID from '6bddc89a56444e4-97fc-56847afe9799'"},
		{"timeuuid", "41d01b63-244e-435d-bd6d-5dc8a0addb8c", "TimeUUID supports only version 1 UUIDs"},
		{"timeuuid", "x", "Unknown timeuuid representation: x"},
		{"timestamp", "yesterday", "Unable to coerce 'yesterday' to a formatted date (long)"},
		{"date", "2023-13-01", "Unable to coerce '2023-13-01' to a formatted date (long)"},
		{"date", "2023-02-29", "Unable to coerce '2023-02-29' to a formatted date (long)"},
		{"date", "10000-01-01", "Unable to coerce '10000-01-01' to a formatted date (long)"},
		{"date", "+2023-01-01", "Unable to coerce '+2023-01-01' to a formatted date (long)"},
		{"date", "2023-1-01", "Unable to coerce '2023-1-01' to a formatted date (long)"},
		{"date", "", "Unable to coerce '' to a formatted date (long)"},
		{"date", "4294967296", "Unable to make unsigned int (for date) from: '4294967296'"},
		{"date", "-1", "Unable to make unsigned int (for date) from: '-1'"},
		{"date", "-5877641-06-22", "Input date -5877641-06-22 is less than min supported date -5877641-06-23T00:00Z"},
		{"date", "+5881580-07-12", "Input date +5881580-07-12 is greater than max supported date +5881580-07-11T00:00Z"},
		{"time", "24:00:00", "(TimeType) Unable to coerce '24:00:00' to a formatted time (long)"},
		{"time", "08:60:00", "(TimeType) Unable to coerce '08:60:00' to a formatted time (long)"},
		{"time", "08:12:54.", "(TimeType) Unable to coerce '08:12:54.' to a formatted time (long)"},
		{"time", "08:12:54.1234567890", "(TimeType) Unable to coerce '08:12:54.1234567890' to a formatted time (long)"},
		{"time", "08:12", "(TimeType) Unable to coerce '08:12' to a formatted time (long)"},
		{"time", "", "(TimeType) Unable to coerce '' to a formatted time (long)"},
		{"time", "86400000000000", "Unable to make long (for time) from: '86400000000000'"},
		{"time", "-1", "Unable to make long (for time) from: '-1'"},
		{"inet", "localhost", "Unable to make inet address from 'localhost'"},
		{"inet", "256.0.0.1", "Unable to make inet address from '256.0.0.1'"},
		{"inet", "1.2.3.4.5", "Unable to make inet address from '1.2.3.4.5'"},
		{"inet", ":::", "Unable to make inet address from ':::'"},
		{"duration", "xyz", "Unable to convert 'xyz' to a duration"},
	}
	for _, tt := range errs {
		got, err := FromString(mustType(t, tt.typ), tt.in)
		if err == nil || err.Error() != tt.want {
			t.Errorf("FromString(%s, %q) = %x, %v\nwant error %s", tt.typ, tt.in, got, err, tt.want)
		}
	}
	if _, err := FromString(mustType(t, "list<int>"), "x"); err == nil {
		t.Error("FromString accepts a list")
	}
}

func TestDurationText(t *testing.T) {
	const h, m, s, ms, us = nanosPerHour, nanosPerMinute, nanosPerSecond, nanosPerMilli, nanosPerMicro
	tests := []struct {
		in   string
		want DurationValue
	}{
		{"1h30m", DurationValue{0, 0, 90 * m}},
		{"12h30m", DurationValue{0, 0, 12*h + 30*m}},
		{"1y2mo3w4d5h6m7s8ms9us10ns", DurationValue{14, 25, 5*h + 6*m + 7*s + 8*ms + 9*us + 10}},
		{"1Y2MO3W4D5H6M7S8MS9US10NS", DurationValue{14, 25, 5*h + 6*m + 7*s + 8*ms + 9*us + 10}},
		{"12µs", DurationValue{0, 0, 12 * us}},
		{"1mO", DurationValue{1, 0, 0}},
		{"-1h", DurationValue{0, 0, -h}},
		{"-2y3d", DurationValue{-24, -3, 0}},
		{"P1Y2M3DT4H5M6S", DurationValue{14, 3, 4*h + 5*m + 6*s}},
		{"P1Y1M2DT10H5M", DurationValue{13, 2, 10*h + 5*m}},
		{"PT4H", DurationValue{0, 0, 4 * h}},
		{"P3D", DurationValue{0, 3, 0}},
		{"P", DurationValue{}},
		{"PT", DurationValue{}},
		{"-P1D", DurationValue{0, -1, 0}},
		{"P2W", DurationValue{0, 14, 0}},
		{"-P2W", DurationValue{0, -14, 0}},
		{"P0001-02-03T04:05:06", DurationValue{14, 3, 4*h + 5*m + 6*s}},
		{"P0000-13-40T25:61:61", DurationValue{13, 40, 25*h + 61*m + 61*s}},
		{"2147483647mo", DurationValue{math.MaxInt32, 0, 0}},
		{"178956970y7mo", DurationValue{math.MaxInt32, 0, 0}},
		{"9223372036854775807ns", DurationValue{0, 0, math.MaxInt64}},
		{"0s", DurationValue{}},
	}
	for _, tt := range tests {
		got, err := parseDuration(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("parseDuration(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
	}
	errs := []struct{ in, want string }{
		{"xyz", "Unable to convert 'xyz' to a duration"},
		{"-xyz", "Unable to convert 'xyz' to a duration"},
		{"1h30", "Unable to convert '1h30' to a duration"},
		{"h", "Unable to convert 'h' to a duration"},
		{"1hh", "Unable to convert '1hh' to a duration"},
		{"p1d", "Unable to convert 'p1d' to a duration"},
		{"P1d", "Unable to convert 'P1d' to a duration"},
		{"P1M1Y", "Unable to convert 'P1M1Y' to a duration"},
		{"P1Y2W", "Unable to convert 'P1Y2W' to a duration"},
		{"P1-02-03T04:05:06", "Unable to convert 'P1-02-03T04:05:06' to a duration"},
		{"1h2d", "Invalid duration. The hours should be after days"},
		{"1h1h", "Invalid duration. The hours are specified multiple times"},
		{"1d1w", "Invalid duration. The days should be after weeks"},
		{"2147483648mo", "Invalid duration. The total number of months must be less or equal to 2147483647"},
		{"178956971y", "Invalid duration. The total number of months must be less or equal to 2147483647"},
		{"1y2147483637mo", "Invalid duration. The total number of months must be less or equal to 2147483647"},
		{"306783379w", "Invalid duration. The total number of days must be less or equal to 2147483647"},
		{"9223372036854775807ns1ns", "Invalid duration. The nanoseconds are specified multiple times"},
		{"2562048h", "Invalid duration. The total number of nanoseconds must be less or equal to 2147483647"},
	}
	for _, tt := range errs {
		if got, err := parseDuration(tt.in); err == nil || err.Error() != tt.want {
			t.Errorf("parseDuration(%q) = %+v, %v; want %s", tt.in, got, err, tt.want)
		}
	}

	texts := []struct {
		d    DurationValue
		want string
	}{
		{DurationValue{14, 25, 5*h + 6*m + 7*s + 8*ms + 9*us + 10}, "1y2mo25d5h6m7s8ms9us10ns"},
		{DurationValue{0, 0, 12 * us}, "12us"},
		{DurationValue{-13, -1, 0}, "-1y1mo1d"},
		{DurationValue{0, 0, 0}, ""},
		{DurationValue{12, 0, 0}, "1y"},
		{DurationValue{0, 0, 25 * h}, "25h"},
	}
	for _, tt := range texts {
		if got := tt.d.String(); got != tt.want {
			t.Errorf("%+v.String() = %q, want %q", tt.d, got, tt.want)
		}
		if tt.want != "" {
			if back, err := parseDuration(tt.want); err != nil || back != tt.d {
				t.Errorf("%q reads back as %+v, %v", tt.want, back, err)
			}
		}
	}

	// The vint encoding, against Cassandra's VIntCoding.
	encodings := []struct {
		d    DurationValue
		want string
	}{
		{DurationValue{0, 0, 0}, "000000"},
		{DurationValue{1, 1, 1}, "020202"},
		{DurationValue{-1, -1, -1}, "010101"},
		{DurationValue{0, 0, 64}, "00008080"},
		{DurationValue{0, 0, 1000}, "000087d0"},
		{DurationValue{0, 0, math.MaxInt64}, "0000fffffffffffffffffe"},
		{DurationValue{0, 0, math.MinInt64}, "0000ffffffffffffffffff"},
		{DurationValue{math.MaxInt32, math.MinInt32, 0}, "f0fffffffef0ffffffff00"},
		// 1 month is zigzag 2, -1 day zigzag 1, and an hour's nanoseconds
		// zigzag to 0x068c61714000, which takes a first byte with six
		// leading ones and six more bytes.
		{DurationValue{1, -1, 3600e9}, "0201fc068c61714000"},
	}
	for _, tt := range encodings {
		got := hex.EncodeToString(tt.d.Append(nil))
		if got != tt.want {
			t.Errorf("%+v encodes as %s, want %s", tt.d, got, tt.want)
		}
		back, n, err := parseDurationBytes(unhex(t, tt.want))
		if err != nil || back != tt.d || n != len(tt.want)/2 {
			t.Errorf("%s decodes as %+v (%d bytes), %v", tt.want, back, n, err)
		}
	}
	for _, v := range []int64{0, 1, -1, 63, 64, -64, -65, 1 << 20, -(1 << 40), 1<<62 + 5, math.MinInt64, math.MaxInt64} {
		b := DurationValue{v, v, v}.Append(nil)
		if back, n, err := parseDurationBytes(b); err != nil || back != (DurationValue{v, v, v}) || n != len(b) {
			t.Errorf("vints of %d: %x decode as %+v (%d bytes), %v", v, b, back, n, err)
		}
	}
}

func TestTimeText(t *testing.T) {
	for _, c := range []struct {
		v    int64
		want string
	}{
		{0, "00:00:00.000000000"},
		{123, "00:00:00.000000123"},
		{nanosPerDay - 1, "23:59:59.999999999"},
		{29574123456789, "08:12:54.123456789"},
	} {
		if got := formatTime(c.v); got != c.want {
			t.Errorf("formatTime(%d) = %s, want %s", c.v, got, c.want)
		}
		if back, err := parseTimeString(c.want); err != nil || back != c.v {
			t.Errorf("%s reads back as %d, %v", c.want, back, err)
		}
	}
}

func TestJavaNumberText(t *testing.T) {
	doubles := []struct {
		f    float64
		want string
	}{
		{1, "1.0"}, {-1.5, "-1.5"}, {100, "100.0"}, {1e7, "1.0E7"}, {9999999, "9999999.0"}, {0.001, "0.001"},
		{0.0001, "1.0E-4"}, {123456789, "1.23456789E8"}, {1e21, "1.0E21"}, {1.0e-10, "1.0E-10"},
		{math.MaxFloat64, "1.7976931348623157E308"}, {5e-324, "4.9E-324"}, {func() float64 { a := 0.1; return a + 0.2 }(), "0.30000000000000004"},
		{2e-3, "0.002"}, {math.NaN(), "NaN"}, {math.Inf(1), "Infinity"}, {math.Inf(-1), "-Infinity"},
		{math.Copysign(0, -1), "-0.0"}, {0, "0.0"},
	}
	for _, d := range doubles {
		if got := JavaFloat(d.f, 64); got != d.want {
			t.Errorf("Double.toString(%v) = %s, want %s", d.f, got, d.want)
		}
	}
	floats := []struct {
		f    float32
		want string
	}{
		{0.1, "0.1"}, {123.123, "123.123"}, {math.MaxFloat32, "3.4028235E38"}, {math.SmallestNonzeroFloat32, "1.4E-45"},
		{1e10, "1.0E10"}, {16777216, "1.6777216E7"},
	}
	for _, f := range floats {
		if got := JavaFloat(float64(f.f), 32); got != f.want {
			t.Errorf("Float.toString(%v) = %s, want %s", f.f, got, f.want)
		}
	}
	decimals := []struct {
		unscaled string
		scale    int32
		want     string
	}{
		{"123456", 3, "123.456"}, {"1", -10, "1E+10"}, {"123", -2, "1.23E+4"}, {"1", 10, "1E-10"},
		{"100", 12, "1.00E-10"}, {"1", 6, "0.000001"}, {"1", 7, "1E-7"}, {"0", 2, "0.00"}, {"0", -2, "0E+2"},
		{"-123", 2, "-1.23"}, {"-1", 0, "-1"}, {"10", 1, "1.0"}, {"123", 0, "123"},
	}
	for _, d := range decimals {
		got, err := decimalText(dec(d.unscaled, d.scale))
		if err != nil || got != d.want {
			t.Errorf("BigDecimal(%s, %d).toString() = %s, %v; want %s", d.unscaled, d.scale, got, err, d.want)
		}
		back, ok := ParseBigDecimal(d.want)
		if !ok || !bytes.Equal(back.Bytes(), dec(d.unscaled, d.scale)) {
			t.Errorf("%s reads back as %v, %d, %v", d.want, back.Unscaled, back.Scale, ok)
		}
	}
}

// TestUDTFromString reads a user type's text as a tuple's: Cassandra's
// UserType inherits TupleType.fromString.
func TestUDTFromString(t *testing.T) {
	udt := NewUDT("ks", "u", []string{"a", "b"}, []*Type{Scalar(Int), Scalar(Text)}, true)
	tests := []struct {
		in   string
		want []byte
	}{
		{"1:x\\:y", SerializeTuple([][]byte{i32(1), str("x:y")})},
		{"@:b", SerializeTuple([][]byte{nil, str("b")})},
		{"2", SerializeTuple([][]byte{i32(2)})},
	}
	for _, tt := range tests {
		got, err := FromString(udt, tt.in)
		if err != nil || !bytes.Equal(got, tt.want) {
			t.Errorf("FromString(%s, %q) = %x, %v; want %x", udt, tt.in, got, err, tt.want)
		}
	}
	if _, err := FromString(udt, "1:a:b"); err == nil {
		t.Errorf("FromString(%s, %q) took three fields", udt, "1:a:b")
	}
}
