package translate

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cqlpg/cqlpg/pgschema"
)

// scalarTypes are the native CQL types, by the name CQL gives them.
var scalarTypes = []string{"ascii", "bigint", "blob", "boolean", "counter", "date", "decimal", "double",
	"duration", "float", "inet", "int", "smallint", "text", "time", "timestamp", "timeuuid", "tinyint",
	"uuid", "varint"}

func scalarType(t *testing.T, name string) *pgschema.Type {
	t.Helper()
	typ, err := pgschema.ParseType(name, nil)
	if err != nil {
		t.Fatal(err)
	}
	return typ
}

func TestLiteralAssignability(t *testing.T) {
	// Which literal kinds each type takes, as Cassandra's
	// Constants.Literal.testAssignment decides (4.1). A HEX constant also
	// matches tinyint there (its "preferred type" is ByteType), a quirk left
	// out of this table.
	tests := []struct {
		lit        *Literal
		assignable string
	}{
		{str("x"), "ascii text inet date time timestamp"},
		{num("1"), "bigint counter date decimal double duration float int smallint time timestamp tinyint varint"},
		{lit(LitFloat, "1.5"), "decimal double float"},
		{lit(LitBoolean, "true"), "boolean"},
		{lit(LitUUID, seedUUID), "uuid timeuuid"},
		{lit(LitHex, "0x01"), "blob"},
		{lit(LitDuration, "1h"), "duration"},
	}
	for _, tt := range tests {
		ok := map[string]bool{}
		for _, n := range strings.Fields(tt.assignable) {
			ok[n] = true
		}
		for _, name := range scalarTypes {
			if tt.lit.Kind == LitHex && name == "tinyint" {
				continue
			}
			t.Run(tt.lit.Kind.String()+"/"+name, func(t *testing.T) {
				_, err := literalValue(tt.lit, scalarType(t, name), "c")
				refused := fmt.Sprintf(`Invalid %s constant (%s) for "c" of type %s`, tt.lit.Kind, tt.lit.Text, name)
				got := ""
				if err != nil {
					got = err.Error()
				}
				switch {
				case ok[name] && got == refused:
					t.Errorf("%s constant refused for %s: %v", tt.lit.Kind, name, err)
				case !ok[name] && got != refused:
					t.Errorf("%s constant for %s: error %q, want %q", tt.lit.Kind, name, got, refused)
				}
			})
		}
	}
	// Collections and user types take no constant; a tuple reads a string
	// as its fromString does (TestTupleFromString).
	for _, name := range []string{"list<int>", "set<text>", "map<text, int>"} {
		typ := scalarType(t, name)
		_, err := literalValue(str("x"), typ, "c")
		want := fmt.Sprintf(`Invalid STRING constant (x) for "c" of type %s`, name)
		if err == nil || err.Error() != want {
			t.Errorf("string for %s: %v, want %q", name, err, want)
		}
	}
}

func TestLiteralValue(t *testing.T) {
	tests := []struct {
		lit  *Literal
		typ  string
		want string // hex
	}{
		{str("abc"), "ascii", "616263"},
		{str("héllo"), "text", "68c3a96c6c6f"},
		{str(""), "text", ""},
		{str("it's"), "text", "69742773"},
		{num("1"), "int", "00000001"},
		{num("-1"), "int", "ffffffff"},
		{num("2147483647"), "int", "7fffffff"},
		{num("-2147483648"), "int", "80000000"},
		{num("1"), "bigint", "0000000000000001"},
		{num("-9223372036854775808"), "bigint", "8000000000000000"},
		{num("5"), "counter", "0000000000000005"},
		{num("-2"), "smallint", "fffe"},
		{num("127"), "tinyint", "7f"},
		{num("-128"), "tinyint", "80"},
		{num("0"), "varint", "00"},
		{num("127"), "varint", "7f"},
		{num("128"), "varint", "0080"},
		{num("-1"), "varint", "ff"},
		{num("-128"), "varint", "80"},
		{num("-129"), "varint", "ff7f"},
		{num("18446744073709551616"), "varint", "010000000000000000"},
		{num("5"), "double", "4014000000000000"},
		{num("1"), "float", "3f800000"},
		{lit(LitFloat, "1.5"), "float", "3fc00000"},
		{lit(LitFloat, "-3.2"), "float", "c04ccccd"},
		{lit(LitFloat, "-3.2"), "double", "c00999999999999a"},
		{lit(LitFloat, "1e10"), "double", "4202a05f20000000"},
		{lit(LitFloat, "NaN"), "double", "7ff8000000000000"}, // Java's Double.NaN
		{lit(LitFloat, "NaN"), "float", "7fc00000"},
		{lit(LitFloat, "-NaN"), "double", "7ff8000000000000"},
		{lit(LitFloat, "Infinity"), "double", "7ff0000000000000"},
		{lit(LitFloat, "-Infinity"), "float", "ff800000"},
		{lit(LitFloat, "1e40"), "float", "7f800000"},            // Java parses to Infinity
		{lit(LitFloat, "-1e400"), "double", "fff0000000000000"}, // likewise
		{lit(LitBoolean, "true"), "boolean", "01"},
		{lit(LitBoolean, "FALSE"), "boolean", "00"},
		{lit(LitUUID, seedUUID), "uuid", "41d01b63244e435dbd6d5dc8a0addb8c"},
		{lit(LitUUID, "50554D6E-29BB-11E5-B345-FEFF819CDC9F"), "timeuuid", "50554d6e29bb11e5b345feff819cdc9f"},
		{lit(LitHex, "0xCAFEbabe"), "blob", "cafebabe"},
		{lit(LitHex, "0x"), "blob", ""},
		{str("2023-10-27 10:05:00+0000"), "timestamp", "0000018b709820e0"},
		{str("2023-10-27T10:05:00Z"), "timestamp", "0000018b709820e0"},
		{str("2023-10-27 12:05:00+02:00"), "timestamp", "0000018b709820e0"},
		{str("2023-10-27 07:05:00-03"), "timestamp", "0000018b709820e0"},
		{str("2023-10-27 10:05"), "timestamp", "0000018b709820e0"},
		{str("2023-10-27 10:05:00.123+0000"), "timestamp", "0000018b7098215b"},
		{str("1698401100000"), "timestamp", "0000018b709820e0"},
		{str("2023-10-27"), "timestamp", "0000018b6e6e3c00"},
		{num("1698401100000"), "timestamp", "0000018b709820e0"},
		{num("-1698401100000"), "timestamp", "fffffe748f67df20"},
		{str("1970-01-01"), "date", "80000000"},
		{str("1969-12-31"), "date", "7fffffff"},
		{str("2023-10-27"), "date", "80004cc9"},
		{num("2147483648"), "date", "80000000"},
		{str("2147483648"), "date", "80000000"},
		{str("-0001-01-01"), "date", "7ff503eb"},
		{str("+10000-01-01"), "date", "802cc0a1"},
		// decimal: Java's BigDecimal(String), scale and unscaled varint.
		{num("0"), "decimal", "0000000000"},
		{num("-1"), "decimal", "00000000ff"},
		{lit(LitFloat, "1.50"), "decimal", "0000000200 96"},
		{lit(LitFloat, "-0.001"), "decimal", "00000003ff"},
		{lit(LitFloat, "1e10"), "decimal", "fffffff601"},
		{lit(LitFloat, "1.23E-5"), "decimal", "000000077b"},
		{num("123456789012345678901234567890"), "decimal", "00000000 018ee90ff6c373e0ee4e3f0ad2"},
		// varint
		{num("1234567890123456789012345678901234567890"), "varint", "03a0c92075c0dbf3b8acbc5f96ce3f0ad2"},
		{num("-1234567890123456789012345678901234567890"), "varint", "fc5f36df8a3f240c475343a06931c0f52e"},
		// float and double through Java's parsers
		{num("16777217"), "float", "4b800000"},
		{lit(LitFloat, "nan"), "float", "7fc00000"},
		{lit(LitFloat, "-infinity"), "double", "fff0000000000000"},
		// inet
		{str("127.0.0.1"), "inet", "7f000001"},
		{str("::1"), "inet", "00000000000000000000000000000001"},
		{str("2001:db8::8a2e:370:7334"), "inet", "20010db8000000000000 8a2e03707334"},
		{str("::ffff:192.168.0.1"), "inet", "c0a80001"}, // Java reads IPv4-mapped addresses as IPv4
		{str(""), "inet", ""},
		// time: nanoseconds since midnight
		{str("08:12:54.123456789"), "time", "00001ae5c31f8915"},
		{str("08:12:54"), "time", "00001ae5bbc3bc00"},
		{str("00:00:00.000000001"), "time", "0000000000000001"},
		{num("86399999999999"), "time", "00004e94914effff"},
		{str("123"), "time", "000000000000007b"},
		// timestamp: every TimestampSerializer form, Java's calendar
		{str("2023-10-27 10:05:00 UTC"), "timestamp", "0000018b709820e0"},
		{str("2023-10-27T10:05:00.000+0000"), "timestamp", "0000018b709820e0"},
		{str("2023-10-27T10:05+00:00"), "timestamp", "0000018b709820e0"},
		{str("2023-10-27 10:05:00.5"), "timestamp", "0000018b709820e5"},    // .5 is 5 ms in Java
		{str("1582-10-04"), "timestamp", "fffff4e2f43e5000"},               // Julian: the day before 1582-10-15
		{str("0001-01-01 00:00:00.000Z"), "timestamp", "ffffc77ce3867000"}, // Julian year 1
		{str(""), "timestamp", ""},
		// duration: months, days, nanoseconds as zigzag vints
		{lit(LitDuration, "1h30m"), "duration", "0000fc09d29229e000"},
		{lit(LitDuration, "12h30m"), "duration", durHex(0, 0, 45000000000000)},
		{lit(LitDuration, "1y2mo3w4d5h6m7s8ms9us10ns"), "duration", durHex(14, 25, 18367008009010)},
		{lit(LitDuration, "2d"), "duration", "000400"},
		{lit(LitDuration, "-2d"), "duration", "000300"},
		{lit(LitDuration, "P1Y2M3DT4H5M6S"), "duration", durHex(14, 3, 14706000000000)},
		{lit(LitDuration, "P2W"), "duration", "001c00"},
		{lit(LitDuration, "-P0001-02-03T04:05:06"), "duration", durHex(-14, -3, -14706000000000)},
		{lit(LitDuration, "12µs"), "duration", durHex(0, 0, 12000)},
		{lit(LitDuration, "7MS"), "duration", durHex(0, 0, 7000000)},
	}
	for _, tt := range tests {
		t.Run(tt.lit.Kind.String()+" "+tt.lit.Text+" as "+tt.typ, func(t *testing.T) {
			b, err := literalValue(tt.lit, scalarType(t, tt.typ), "c")
			if err != nil {
				t.Fatalf("literalValue: %v", err)
			}
			if b == nil {
				t.Fatalf("value is nil, which stands for null")
			}
			if got, want := hex.EncodeToString(b), strings.ReplaceAll(tt.want, " ", ""); got != want {
				t.Errorf("value = %s, want %s", got, want)
			}
		})
	}
	for _, typ := range scalarTypes {
		b, err := literalValue(lit(LitNull, "null"), scalarType(t, typ), "c")
		if b != nil || err != nil {
			t.Errorf("null for %s = %x, %v; want nil, nil", typ, b, err)
		}
	}
}

func TestLiteralValueErrors(t *testing.T) {
	tests := []struct {
		lit  *Literal
		typ  string
		want string
	}{
		{str("abc"), "int", `Invalid STRING constant (abc) for "c" of type int`},
		{str("1h"), "duration", `Invalid STRING constant (1h) for "c" of type duration`},
		{num("1"), "text", `Invalid INTEGER constant (1) for "c" of type text`},
		{lit(LitFloat, "1.5"), "int", `Invalid FLOAT constant (1.5) for "c" of type int`},
		{lit(LitBoolean, "TRUE"), "int", `Invalid BOOLEAN constant (TRUE) for "c" of type int`},
		{lit(LitUUID, seedUUID), "text", `Invalid UUID constant (` + seedUUID + `) for "c" of type text`},
		{lit(LitHex, "0x01"), "text", `Invalid HEX constant (0x01) for "c" of type text`},
		{lit(LitDuration, "1h"), "bigint", `Invalid DURATION constant (1h) for "c" of type bigint`},
		{num("99999999999"), "int", "Unable to make int from '99999999999'"},
		{num("-2147483649"), "int", "Unable to make int from '-2147483649'"},
		{num("9223372036854775808"), "bigint", "Unable to make long from '9223372036854775808'"},
		{num("9223372036854775808"), "counter", "Unable to make long from '9223372036854775808'"},
		{num("40000"), "smallint", "Unable to make short from '40000'"},
		{num("128"), "tinyint", "Unable to make byte from '128'"},
		{num("99999999999999999999"), "timestamp", "Unable to make long (for date) from: '99999999999999999999'"},
		{lit(LitHex, "0x123"), "blob", "cannot parse '123' as hex bytes"},
		{lit(LitUUID, seedUUID), "timeuuid", "TimeUUID supports only version 1 UUIDs"},
		{str("yesterday"), "timestamp", "Unable to coerce 'yesterday' to a formatted date (long)"},
		{str("2023-10-27 10:05:00+1"), "timestamp", "Unable to coerce '2023-10-27 10:05:00+1' to a formatted date (long)"},
		{str("1582-10-10"), "timestamp", "Unable to coerce '1582-10-10' to a formatted date (long)"},
		{str("2023-10-27 10:05:00.1234"), "timestamp", "Unable to coerce '2023-10-27 10:05:00.1234' to a formatted date (long)"},
		{str("2023-13-01"), "date", "Unable to coerce '2023-13-01' to a formatted date (long)"},
		{num("4294967296"), "date", "Unable to make unsigned int (for date) from: '4294967296'"},
		{num("-1"), "date", "Unable to make unsigned int (for date) from: '-1'"},
		{str("2023-02-29"), "date", "Unable to coerce '2023-02-29' to a formatted date (long)"},
		{str("-5877641-06-22"), "date", "Input date -5877641-06-22 is less than min supported date -5877641-06-23T00:00Z"},
		{str("+5881580-07-12"), "date", "Input date +5881580-07-12 is greater than max supported date +5881580-07-11T00:00Z"},
		{lit(LitFloat, "NaN"), "decimal", "unable to make BigDecimal from 'NaN'"},
		{lit(LitFloat, "Infinity"), "decimal", "unable to make BigDecimal from 'Infinity'"},
		{str("localhost"), "inet", "Unable to make inet address from 'localhost'"},
		{str("1.2.3.256"), "inet", "Unable to make inet address from '1.2.3.256'"},
		{str("12:00"), "time", "(TimeType) Unable to coerce '12:00' to a formatted time (long)"},
		{str("24:00:00"), "time", "(TimeType) Unable to coerce '24:00:00' to a formatted time (long)"},
		{num("86400000000000"), "time", "Unable to make long (for time) from: '86400000000000'"},
		{num("-1"), "time", "Unable to make long (for time) from: '-1'"},
		{num("5"), "duration", "Unable to convert '5' to a duration"},
		{lit(LitDuration, "p1d"), "duration", "Unable to convert 'p1d' to a duration"},
		{lit(LitDuration, "-1h2d"), "duration", "Invalid duration. The hours should be after days"},
		{lit(LitDuration, "1h1h"), "duration", "Invalid duration. The hours are specified multiple times"},
		{lit(LitDuration, "2147483648mo"), "duration", "Invalid duration. The total number of months must be less or equal to 2147483647"},
		{lit(LitDuration, "P1M1Y"), "duration", "Unable to convert 'P1M1Y' to a duration"},
	}
	for _, tt := range tests {
		t.Run(tt.lit.Kind.String()+" "+tt.lit.Text+" as "+tt.typ, func(t *testing.T) {
			_, err := literalValue(tt.lit, scalarType(t, tt.typ), "c")
			var ie *InvalidError
			if !errors.As(err, &ie) {
				t.Fatalf("error = %v, want an InvalidError", err)
			}
			if err.Error() != tt.want {
				t.Errorf("error:\n got %s\nwant %s", err, tt.want)
			}
		})
	}
	// Cassandra appends Java's exception text to this one.
	_, err := literalValue(str("é"), scalarType(t, "ascii"), "c")
	want := "Invalid ASCII character in string literal: java.nio.charset.UnmappableCharacterException: Input length = 1"
	if err == nil || err.Error() != want {
		t.Errorf("non-ASCII string for ascii: %v", err)
	}
}

// durHex returns a serialized duration in hex.
func durHex(months, days, nanos int64) string {
	zz := func(v int64) uint64 { return uint64(v<<1) ^ uint64(v>>63) }
	var out []byte
	for _, v := range []uint64{zz(months), zz(days), zz(nanos)} {
		size := 1
		for size < 9 && v >= 1<<(7*size) {
			size++
		}
		b := make([]byte, size)
		for i := size - 1; i >= 0; i-- {
			b[i] = byte(v)
			v >>= 8
		}
		if size > 1 {
			b[0] |= ^byte(0xff >> (size - 1))
		}
		out = append(out, b...)
	}
	return hex.EncodeToString(out)
}

// TestTupleFromString reads strings into tuples as Cassandra's
// TupleType.fromString does: fields split on unescaped colons, @ a null,
// \: and \@ the characters themselves, fewer fields than the type's.
func TestTupleFromString(t *testing.T) {
	typ := scalarType(t, "frozen<tuple<int, text>>")
	for _, tc := range []struct{ in, want string }{
		{"0:1", "0000000400000000" + "0000000131"},
		{`1:1\:1`, "0000000400000001" + "00000003313a31"},
		{"@:1", "ffffffff" + "0000000131"},
		{`2:\@`, "0000000400000002" + "0000000140"},
		{"3", "0000000400000003"},
	} {
		got, err := literalValue(str(tc.in), typ, "t")
		if err != nil || hex.EncodeToString(got) != tc.want {
			t.Errorf("%q: %x %v, want %s", tc.in, got, err, tc.want)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"x:1", `Failed to parse value string "x" for tuple field 0: Unable to make int from 'x'`},
		{"1:2:3", "Invalid tuple literal: too many elements. Type frozen<tuple<int, text>> expects 2 but got 3"},
	} {
		if _, err := literalValue(str(tc.in), typ, "t"); err == nil || err.Error() != tc.want {
			t.Errorf("%q: %v, want %q", tc.in, err, tc.want)
		}
	}
}
