package pgschema

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"
)

// The texts below are Cassandra 4.1's, most of them from its JsonTest.

func TestToJSON(t *testing.T) {
	u := uuidv("6bddc89a-5644-11e4-97fc-56847afe9799")
	tests := []struct {
		typ  string
		v    []byte
		want string
	}{
		{"ascii", str("ascii text"), `"ascii text"`},
		{"ascii", str(""), `""`},
		{"text", str("abcd"), `"abcd"`},
		{"text", str("\u8422"), "\"\u8422\""},
		{"text", str("\x00"), `"\u0000"`},
		{"text", str("a\"b\\c\n\t\r\b\f\x1f/é"), `"a\"b\\c\n\t\r\b\f\u001F/é"`},
		{"bigint", i64(123123123123), "123123123123"},
		{"bigint", i64(0), "0"},
		{"bigint", i64(-123123123123), "-123123123123"},
		{"bigint", str(""), `""`},
		{"counter", i64(-5), "-5"},
		{"blob", i32(1), `"0x00000001"`},
		{"blob", str(""), `"0x"`},
		{"boolean", []byte{1}, "true"},
		{"boolean", []byte{0}, "false"},
		{"date", cqlDate(6290), `"1987-03-23"`},
		{"date", cqlDate(-719528), `"0000-01-01"`},
		{"date", cqlDate(-719529), `"-0001-12-31"`},
		{"date", cqlDate(2932897), `"+10000-01-01"`},
		{"date", cqlDate(-1 << 31), `"-5877641-06-23"`},
		{"decimal", dec("123123123123", 6), "123123.123123"},
		{"decimal", dec("-123", 14), "-1.23E-12"},
		{"decimal", dec("1", -10), "1E+10"},
		{"decimal", dec("123", -2), "1.23E+4"},
		{"decimal", dec("1", 6), "0.000001"},
		{"decimal", dec("1", 7), "1E-7"},
		{"decimal", dec("100", 12), "1.00E-10"},
		{"decimal", dec("0", 2), "0.00"},
		{"decimal", dec("0", -2), "0E+2"},
		{"decimal", str(""), `""`},
		{"double", f64(123123.123123), "123123.123123"},
		{"double", f64(123123), "123123.0"},
		{"double", f64(1e10), "1.0E10"},
		{"double", f64(1e7), "1.0E7"},
		{"double", f64(9999999), "9999999.0"},
		{"double", f64(0.001), "0.001"},
		{"double", f64(0.0001), "1.0E-4"},
		{"double", f64(math.Copysign(0, -1)), "-0.0"},
		{"double", f64(math.NaN()), "null"},
		{"double", f64(math.Inf(-1)), "null"},
		{"double", f64(math.MaxFloat64), "1.7976931348623157E308"},
		{"double", f64(5e-324), "4.9E-324"},
		{"float", f32(123.123), "123.123"},
		{"float", f32(123123), "123123.0"},
		{"float", f32(0.1), "0.1"},
		{"float", f32(math.MaxFloat32), "3.4028235E38"},
		{"float", f32(float32(math.Inf(1))), "null"},
		{"inet", unhex(t, "7f000001"), `"127.0.0.1"`},
		{"inet", unhex(t, "00000000000000000000000000000001"), `"0:0:0:0:0:0:0:1"`},
		{"inet", unhex(t, "20010db8000000000000000000000001"), `"2001:db8:0:0:0:0:0:1"`},
		{"inet", unhex(t, "00000000000000000000ffff01020304"), `"1.2.3.4"`},
		{"int", i32(123123), "123123"},
		{"int", i32(-123123), "-123123"},
		{"smallint", i16(32767), "32767"},
		{"smallint", i16(-32768), "-32768"},
		{"tinyint", i8(127), "127"},
		{"tinyint", i8(-128), "-128"},
		{"time", i64(123), `"00:00:00.000000123"`},
		{"time", i64(27307000111222), `"07:35:07.000111222"`},
		{"timestamp", i64(1388534400000), `"2014-01-01 00:00:00.000Z"`},
		{"timestamp", i64(-1), `"1969-12-31 23:59:59.999Z"`},
		{"timestamp", i64(-62135596800000), `"0001-01-03 00:00:00.000Z"`},  // Java's calendar is Julian then
		{"timestamp", i64(-12219292800001), `"1582-10-04 23:59:59.999Z"`},  // the day before the reform
		{"timestamp", i64(-62135769600000), `"0001-01-01 00:00:00.000Z"`},  // year 1 of the Julian calendar
		{"timestamp", i64(-62135769600001), `"0001-12-31 23:59:59.999Z"`},  // 1 BC, shown without its era
		{"timestamp", i64(253402300800000), `"10000-01-01 00:00:00.000Z"`}, // five-digit years
		{"timeuuid", u, `"6bddc89a-5644-11e4-97fc-56847afe9799"`},
		{"uuid", u, `"6bddc89a-5644-11e4-97fc-56847afe9799"`},
		{"varint", vint("123123123123123123123"), "123123123123123123123"},
		{"varint", vint("-1"), "-1"},
		{"list<int>", list(i32(1), i32(2), i32(3)), "[1, 2, 3]"},
		{"list<int>", list(), "[]"},
		{"frozen<set<uuid>>", list(uuidv("6bddc89a-5644-11e4-97fc-56847afe9798"), u),
			`["6bddc89a-5644-11e4-97fc-56847afe9798", "6bddc89a-5644-11e4-97fc-56847afe9799"]`},
		{"map<ascii, int>", mapv(str("a"), i32(1), str("b"), i32(2)), `{"a": 1, "b": 2}`},
		{"map<int, boolean>", mapv(i32(0), []byte{1}, i32(1), []byte{0}), `{"0": true, "1": false}`},
		{"map<boolean, boolean>", mapv([]byte{0}, []byte{0}, []byte{1}, []byte{1}), `{"false": false, "true": true}`},
		{"map<decimal, boolean>", mapv(dec("123", 2), []byte{1}), `{"1.23": true}`},
		{"map<frozen<tuple<int, text>>, boolean>", mapv(tuple(i32(0), str("a")), []byte{1}),
			`{"[0, \"a\"]": true}`},
		{"map<frozen<set<text>>, boolean>", mapv(list(str("0"), str("1")), []byte{1}), `{"[\"0\", \"1\"]": true}`},
		{"map<frozen<map<frozen<set<text>>, text>>, boolean>",
			mapv(mapv(list(str("0"), str("1")), str("a")), []byte{1}),
			`{"{\"[\\\"0\\\", \\\"1\\\"]\": \"a\"}": true}`},
		{"map<timestamp, int>", mapv(i64(0), i32(1)), `{"1970-01-01 00:00:00.000Z": 1}`},
		{"map<double, int>", mapv(f64(math.NaN()), i32(1)), `{"null": 1}`},
		{"frozen<tuple<int, ascii, uuid>>", tuple(i32(1), str("foobar"), u),
			`[1, "foobar", "6bddc89a-5644-11e4-97fc-56847afe9799"]`},
		{"frozen<tuple<int, ascii, uuid>>", tuple(i32(1), str("foobar"), nil), `[1, "foobar", null]`},
		{"frozen<tuple<int, ascii, uuid>>", tuple(i32(1)), `[1, null, null]`},
		{"frozen<address>", tuple(str("Main"), i32(1), list(str("a"))), `{"street": "Main", "\"Zip\"": 1, "tags": ["a"]}`},
		{"frozen<address>", tuple(str("x")), `{"street": "x", "\"Zip\"": null, "tags": null}`},
		{"duration", dur(0, 0, 12000), `"12us"`},
		{"duration", dur(13, 2, 10*3600e9+5*60e9), `"1y1mo2d10h5m"`},
		{"duration", dur(0, 0, 6*3600e9+40*60e9), `"6h40m"`},
		{"duration", dur(-1, -2, -3), `"-1mo2d3ns"`},
		{"duration", dur(0, 0, 0), `""`},
		{"vector<float, 2>", append(f32(1), f32(-0.5)...), "[1.0, -0.5]"},
		{"vector<text, 2>", append(append([]byte{1}, 'a'), 0), `["a", ""]`},
	}
	for _, tt := range tests {
		got, err := ToJSON(mustType(t, tt.typ), tt.v)
		if err != nil {
			t.Errorf("ToJSON(%s, %x): %v", tt.typ, tt.v, err)
			continue
		}
		if string(got) != tt.want {
			t.Errorf("ToJSON(%s, %x) = %s, want %s", tt.typ, tt.v, got, tt.want)
		}
	}
	if got, _ := ToJSON(Scalar(Int), nil); string(got) != "null" {
		t.Errorf("ToJSON of null = %s", got)
	}
}

func TestToJSONErrors(t *testing.T) {
	tests := []struct {
		typ string
		v   []byte
	}{
		{"int", i16(1)},
		{"list<int>", str("")},
		{"list<int>", unhex(t, "00000001")},
		{"map<int, int>", unhex(t, "00000001ffffffff00000000")},
		{"text", []byte{0xff}},
	}
	for _, tt := range tests {
		if got, err := ToJSON(mustType(t, tt.typ), tt.v); err == nil {
			t.Errorf("ToJSON(%s, %x) = %s, want an error", tt.typ, tt.v, got)
		}
	}
}

func TestFromJSON(t *testing.T) {
	u := uuidv("6bddc89a-5644-11e4-97fc-56847afe9799")
	tests := []struct {
		typ, json string
		want      []byte
	}{
		{"ascii", `"ascii text"`, str("ascii text")},
		{"ascii", `"ascii \" text"`, str(`ascii " text`)},
		{"bigint", "123123123123", i64(123123123123)},
		{"bigint", `"123123123123"`, i64(123123123123)},
		{"bigint", "1", i64(1)},
		{"bigint", `""`, str("")},
		{"counter", "7", i64(7)},
		{"blob", `"0x00000001"`, i32(1)},
		{"blob", `"0xCAFE"`, unhex(t, "cafe")},
		{"blob", `"0x"`, str("")},
		{"boolean", "true", []byte{1}},
		{"boolean", "false", []byte{0}},
		{"boolean", `"false"`, []byte{0}},
		{"boolean", `"TRUE"`, []byte{1}},
		{"boolean", `""`, []byte{0}},
		{"date", `"1987-03-23"`, cqlDate(6290)},
		{"date", `"2147483648"`, cqlDate(0)},
		{"decimal", "123123.123123", dec("123123123123", 6)},
		{"decimal", "123123", dec("123123", 0)},
		{"decimal", `"123123.123123"`, dec("123123123123", 6)},
		{"decimal", `"-1.23E-12"`, dec("-123", 14)},
		{"decimal", "1e10", dec("10", -9)},                                  // through Java's Double: "1.0E10"
		{"decimal", "0.30000000000000004441", dec("30000000000000004", 17)}, // rounded to a double
		{"decimal", "123456789012345678901234567890", dec("123456789012345678901234567890", 0)},
		{"decimal", `""`, str("")},
		{"double", "123123.123123", f64(123123.123123)},
		{"double", "123123", f64(123123)},
		{"double", `"123123"`, f64(123123)},
		{"double", `"NaN"`, f64(math.Float64frombits(javaNaN64))},
		{"double", `"-Infinity"`, f64(math.Inf(-1))},
		{"double", "1e400", f64(math.Inf(1))},
		{"double", `"1.5d"`, f64(1.5)},
		{"double", "-0.0", f64(math.Copysign(0, -1))},
		{"float", "123123.123123", f32(123123.123123)},
		{"float", "123123", f32(123123)},
		{"float", `"123123.0"`, f32(123123)},
		{"float", `" 1.5f "`, f32(1.5)},
		{"float", `"0x1.8p1"`, f32(3)},
		{"inet", `"127.0.0.1"`, unhex(t, "7f000001")},
		{"inet", `"::1"`, unhex(t, "00000000000000000000000000000001")},
		{"inet", `"::ffff:1.2.3.4"`, unhex(t, "01020304")},
		{"inet", `"[fe80::1%eth0]"`, unhex(t, "fe800000000000000000000000000001")},
		{"inet", `"10.1"`, unhex(t, "0a000001")},
		{"int", "123123", i32(123123)},
		{"int", `"123123"`, i32(123123)},
		{"int", `"+5"`, i32(5)},
		{"int", "-0", i32(0)},
		{"smallint", "32767", i16(32767)},
		{"smallint", `"32767"`, i16(32767)},
		{"tinyint", "127", i8(127)},
		{"tinyint", `"-128"`, i8(-128)},
		{"text", `""`, str("")},
		{"text", `"some \" text"`, str(`some " text`)},
		{"text", `"\u2013"`, str("\u2013")},
		{"text", `"\ud83d\ude00"`, str("😀")},
		{"text", `"\ud83d"`, str("?")},
		{"time", `"07:35:07.000111222"`, i64(27307000111222)},
		{"time", `"07:35:07"`, i64(27307000000000)},
		{"time", `"123"`, i64(123)},
		{"timestamp", "123123123123", i64(123123123123)},
		{"timestamp", `"2014-01-01"`, i64(1388534400000)},
		{"timestamp", `"123"`, i64(123)},
		{"timeuuid", `"6bddc89a-5644-11e4-97fc-56847afe9799"`, u},
		{"timeuuid", `"6BDDC89A-5644-11E4-97FC-56847AFE9799"`, u},
		{"uuid", `"6bddc89a-5644-11e4-97fc-56847afe9799"`, u},
		{"uuid", `""`, str("")},
		{"varint", "123123123123", vint("123123123123")},
		{"varint", `"1234567890123456789012345678901234567890"`, vint("1234567890123456789012345678901234567890")},
		{"varint", "-1234567890123456789012345678901234567890", vint("-1234567890123456789012345678901234567890")},
		{"list<int>", "[1, 2, 3]", list(i32(1), i32(2), i32(3))},
		{"list<int>", "[]", list()},
		{"list<int>", `"[1, 2]"`, list(i32(1), i32(2))}, // a string holding the JSON
		{"frozen<list<int>>", "[3, 1, 3]", list(i32(3), i32(1), i32(3))},
		{"set<uuid>", `["6bddc89a-5644-11e4-97fc-56847afe9799", "6bddc89a-5644-11e4-97fc-56847afe9798", "6bddc89a-5644-11e4-97fc-56847afe9799"]`,
			list(uuidv("6bddc89a-5644-11e4-97fc-56847afe9798"), u)},
		{"set<int>", "[3, 1, 2]", list(i32(1), i32(2), i32(3))},
		{"map<ascii, int>", `{"a": 1, "b": 2}`, mapv(str("a"), i32(1), str("b"), i32(2))},
		{"map<ascii, int>", `{"b": 2, "a": 1}`, mapv(str("a"), i32(1), str("b"), i32(2))},
		{"map<ascii, int>", `{"a": 1, "a": 2}`, mapv(str("a"), i32(2))},
		{"map<ascii, int>", `{}`, mapv()},
		{"map<int, boolean>", `{"1": false, "0": true}`, mapv(i32(0), []byte{1}, i32(1), []byte{0})},
		{"map<decimal, boolean>", `{"1.23": true}`, mapv(dec("123", 2), []byte{1})},
		{"map<frozen<tuple<int, text>>, boolean>", `{"[1, \"b\"]": false, "[0, \"a\"]": true}`,
			mapv(tuple(i32(0), str("a")), []byte{1}, tuple(i32(1), str("b")), []byte{0})},
		{"map<frozen<set<int>>, boolean>", `{"[2, 1]": true}`, mapv(list(i32(1), i32(2)), []byte{1})},
		{"frozen<tuple<int, ascii, uuid>>", `[1, "foobar", "6bddc89a-5644-11e4-97fc-56847afe9799"]`,
			tuple(i32(1), str("foobar"), u)},
		{"frozen<tuple<int, ascii, uuid>>", `[1, null, "6bddc89a-5644-11e4-97fc-56847afe9799"]`,
			tuple(i32(1), nil, u)},
		{"frozen<address>", `{"street": "x", "\"Zip\"": 1, "tags": ["b", "a"]}`,
			tuple(str("x"), i32(1), list(str("a"), str("b")))},
		{"frozen<address>", `{"tags": [], "STREET": "x"}`, tuple(str("x"), nil, list())},
		{"frozen<address>", `{"street": null}`, tuple(nil, nil, nil)},
		{"duration", `"53us"`, dur(0, 0, 53000)},
		{"duration", `"P2W"`, dur(0, 14, 0)},
		{"duration", `"6h40m"`, dur(0, 0, 6*3600e9+40*60e9)},
		{"vector<float, 2>", "[1, 2.5]", append(f32(1), f32(2.5)...)},
		{"int", "null", nil},
	}
	for _, tt := range tests {
		got, err := FromJSON(mustType(t, tt.typ), []byte(tt.json))
		if err != nil {
			t.Errorf("FromJSON(%s, %s): %v", tt.typ, tt.json, err)
			continue
		}
		if !bytes.Equal(got, tt.want) || (got == nil) != (tt.want == nil) {
			t.Errorf("FromJSON(%s, %s) = %x, want %x", tt.typ, tt.json, got, tt.want)
		}
	}
}

func TestFromJSONErrors(t *testing.T) {
	cast := func(class string) string {
		return "class " + class + " cannot be cast to class java.lang.String (" + class +
			" and java.lang.String are in module java.base of loader 'bootstrap')"
	}
	tests := []struct {
		typ, json, want string
	}{
		{"ascii", "123", "Expected an ascii string, but got a Integer: 123"},
		{"ascii", `"\u1fff\u2013\u33B4\u2014"`, "Invalid ASCII character in string literal: java.nio.charset.UnmappableCharacterException: Input length = 1"},
		{"bigint", "9223372036854775808", "Expected a bigint value, but got a BigInteger: 9223372036854775808"},
		{"bigint", "123.456", "Expected a bigint value, but got a Double: 123.456"},
		{"bigint", `"abc"`, "Unable to make long from 'abc'"},
		{"bigint", `["abc"]`, "Expected a bigint value, but got a ArrayList: [abc]"},
		{"blob", `"xyzz"`, "Value 'xyzz' is not a valid blob representation: String representation of blob is missing 0x prefix: xyzz"},
		{"blob", `"123"`, "Value '123' is not a valid blob representation: String representation of blob is missing 0x prefix: 123"},
		{"blob", `"0x123"`, "Value '0x123' is not a valid blob representation: cannot parse '123' as hex bytes"},
		{"blob", "123", "Value '123' is not a valid blob representation: " + cast("java.lang.Integer")},
		{"blob", `{"a": 1}`, "Value '{a=1}' is not a valid blob representation: " + cast("java.util.LinkedHashMap")},
		{"boolean", `"abc"`, "Unable to make boolean from 'abc'"},
		{"boolean", "123", "Expected a boolean value, but got a Integer: 123"},
		{"date", "123", "Expected a string representation of a date value, but got a Integer: 123"},
		{"date", `"xyz"`, "Unable to coerce 'xyz' to a formatted date (long)"},
		{"decimal", `"xyzz"`, "Value 'xyzz' is not a valid representation of a decimal value"},
		{"decimal", "true", "Value 'true' is not a valid representation of a decimal value"},
		{"double", `"xyzz"`, "Unable to make double from 'xyzz'"},
		{"double", "true", "Expected a double value, but got a Boolean: true"},
		{"float", `"xyzz"`, "Unable to make float from 'xyzz'"},
		{"float", "true", "Expected a float value, but got a Boolean: true"},
		{"inet", `"xyzz"`, "Unable to make inet address from 'xyzz'"},
		{"inet", "123", "Expected a string representation of an inet value, but got a Integer: 123"},
		{"int", "2147483648", "Expected an int value, but got a Long: 2147483648"},
		{"int", "123.456", "Expected an int value, but got a Double: 123.456"},
		{"int", "1.0", "Expected an int value, but got a Double: 1.0"},
		{"int", `"xyzz"`, "Unable to make int from 'xyzz'"},
		{"int", "true", "Expected an int value, but got a Boolean: true"},
		{"smallint", "32768", "Unable to make short from '32768'"},
		{"smallint", "123.456", "Unable to make short from '123.456'"},
		{"smallint", `"xyzz"`, "Unable to make short from 'xyzz'"},
		{"smallint", "true", "Expected a short value, but got a Boolean: true"},
		{"tinyint", "128", "Unable to make byte from '128'"},
		{"tinyint", "123.456", "Unable to make byte from '123.456'"},
		{"tinyint", "true", "Expected a byte value, but got a Boolean: true"},
		{"text", "123", "Expected a UTF-8 string, but got a Integer: 123"},
		{"time", "123456", "Expected a string representation of a time value, but got a Integer: 123456"},
		{"time", `"xyz"`, "(TimeType) Unable to coerce 'xyz' to a formatted time (long)"},
		{"timestamp", "123.456", "Expected a long or a datestring representation of a timestamp value, but got a Double: 123.456"},
		{"timestamp", "123", "Expected a long or a datestring representation of a timestamp value, but got a Integer: 123"},
		{"timestamp", `"abcd"`, "Unable to coerce 'abcd' to a formatted date (long)"},
		{"timeuuid", `"00000000-0000-0000-0000-000000000000"`, "TimeUUID supports only version 1 UUIDs"},
		{"timeuuid", "123", "Expected a string representation of a timeuuid, but got a Integer: 123"},
		{"timeuuid", `"xyz"`, "Unknown timeuuid representation: xyz"},
		{"uuid", `"00000000-0000-0000-zzzz-000000000000"`, "Unable to make UUID from '00000000-0000-0000-zzzz-000000000000'"},
		{"uuid", "123", "Expected a string representation of a uuid, but got a Integer: 123"},
		{"varint", "123123.123", "Value '123123.123' is not a valid representation of a varint value"},
		{"varint", `"xyzz"`, "Value 'xyzz' is not a valid representation of a varint value"},
		{"varint", `""`, "Value '' is not a valid representation of a varint value"},
		{"varint", "true", "Value 'true' is not a valid representation of a varint value"},
		{"list<int>", "123", "Expected a list, but got a Integer: 123"},
		{"list<int>", `["abc"]`, "Unable to make int from 'abc'"},
		{"list<int>", "[null]", "Invalid null element in list"},
		{"set<uuid>", "123", "Expected a list (representing a set), but got a Integer: 123"},
		{"set<uuid>", `["abc"]`, "Unable to make UUID from 'abc'"},
		{"set<uuid>", "[null]", "Invalid null element in set"},
		{"map<ascii, int>", "123", "Expected a map, but got a Integer: 123"},
		{"map<ascii, int>", `{"\u1fff\u2013\u33B4\u2014": 1}`, "Invalid ASCII character in string literal: java.nio.charset.UnmappableCharacterException: Input length = 1"},
		{"map<ascii, int>", `{"a": null}`, "Invalid null value in map"},
		{"map<int, int>", `{"x": 1}`, "Unable to make int from 'x'"},
		{"frozen<tuple<int, ascii, uuid>>", `[1, "foobar", "6bddc89a-5644-11e4-97fc-56847afe9799", 1, 2, 3]`,
			"Tuple contains extra items (expected 3): [1, foobar, 6bddc89a-5644-11e4-97fc-56847afe9799, 1, 2, 3]"},
		{"frozen<tuple<int, ascii, uuid>>", `[1, "foobar"]`, "Tuple is missing items (expected 3): [1, foobar]"},
		{"frozen<tuple<int, ascii, uuid>>", `["not an int", "foobar", "6bddc89a-5644-11e4-97fc-56847afe9799"]`,
			"Unable to make int from 'not an int'"},
		{"frozen<tuple<int, ascii, uuid>>", `{}`, "Expected a list representation of a tuple, but got a LinkedHashMap: {}"},
		{"frozen<address>", `{"xxx": 1}`, "Unknown field 'xxx' in value of user defined type address"},
		{"frozen<address>", `{"zip": 1}`, "Unknown field 'zip' in value of user defined type address"},
		{"frozen<address>", `{"\"Zip\"": "foobar"}`, "Unable to make int from 'foobar'"},
		{"frozen<address>", `[]`, "Expected a map, but got a ArrayList: []"},
		{"duration", `"xyz"`, "Unable to convert 'xyz' to a duration"},
		{"duration", "1", "Expected a string representation of a duration, but got a Integer: 1"},
		{"vector<float, 2>", "[1]", "List had incorrect size: expected 2 but given 1; [1]"},
		{"vector<float, 2>", "[1, null]", "Invalid null element in list"},
		{"vector<float, 2>", "1.5", "Expected a list, but got a Double: 1.5"},
	}
	for _, tt := range tests {
		got, err := FromJSON(mustType(t, tt.typ), []byte(tt.json))
		if err == nil {
			t.Errorf("FromJSON(%s, %s) = %x, want error %q", tt.typ, tt.json, got, tt.want)
			continue
		}
		if err.Error() != tt.want {
			t.Errorf("FromJSON(%s, %s):\n got %s\nwant %s", tt.typ, tt.json, err, tt.want)
		}
	}
	for _, bad := range []string{"\u038e\u0394\u03b4\u03e0", "[1,", `{"a" 1}`, "01", "1 2", `"\x"`, "nul"} {
		_, err := FromJSON(Scalar(Int), []byte(bad))
		if err == nil || !strings.HasPrefix(err.Error(), "Could not decode JSON string '"+bad+"'") {
			t.Errorf("FromJSON(int, %s): %v", bad, err)
		}
	}
}

// TestStorageJSON checks the jsonb form: every value reads back exactly,
// including those Cassandra's JSON loses.
func TestStorageJSON(t *testing.T) {
	tests := []struct {
		typ  string
		v    []byte
		want string
	}{
		{"double", f64(math.Float64frombits(javaNaN64)), `"NaN"`},
		{"double", f64(math.Inf(1)), `"Infinity"`},
		{"float", f32(float32(math.Inf(-1))), `"-Infinity"`},
		{"double", f64(math.Copysign(0, -1)), `"-0.0"`},
		{"double", f64(1e10), "1.0E10"},
		{"decimal", dec("1", -3), `"1E+3"`},
		{"decimal", dec("1", 10), "0.0000000001"},
		{"decimal", dec("-123", 2), "-1.23"},
		{"decimal", dec("1", 16384), `"1E-16384"`},
		{"timestamp", i64(-62135769600001), "-62135769600001"},
		{"timestamp", i64(-62135769600000), `"0001-01-01 00:00:00.000Z"`},
		{"time", i64(-1), "-1"},
		{"time", i64(nanosPerDay), "86400000000000"},
		{"inet", unhex(t, "00000000000000000000ffff01020304"), `"::ffff:1.2.3.4"`},
		{"duration", dur(0, 0, 0), `"0d"`},
		{"duration", dur(math.MinInt32, 0, 0), `[-2147483648, 0, 0]`},
		{"duration", dur(-1, math.MinInt32, math.MinInt64), `[-1, -2147483648, -9223372036854775808]`},
		{"duration", dur(math.MaxInt32, math.MaxInt32, math.MaxInt64), `"178956970y7mo2147483647d2562047h47m16s854ms775us807ns"`},
		{"int", str(""), `""`},
		{"map<double, int>", mapv(f64(math.Float64frombits(javaNaN64)), i32(1)), `{"NaN": 1}`},
		{"map<text, int>", mapv(str("a\"b"), i32(1)), `{"a\"b": 1}`},
	}
	for _, tt := range tests {
		typ := mustType(t, tt.typ)
		got, err := StorageJSON(typ, tt.v)
		if err != nil {
			t.Errorf("StorageJSON(%s, %x): %v", tt.typ, tt.v, err)
			continue
		}
		if string(got) != tt.want {
			t.Errorf("StorageJSON(%s, %x) = %s, want %s", tt.typ, tt.v, got, tt.want)
		}
		n, err := parseJSON(got)
		if err != nil {
			t.Fatal(err)
		}
		back, err := fromJSONNode(typ, n, true)
		if err != nil || !bytes.Equal(back, tt.v) {
			t.Errorf("%s: %s reads back as %x, %v; want %x", tt.typ, got, back, err, tt.v)
		}
	}
	for _, bad := range []struct {
		typ string
		v   []byte
	}{
		{"boolean", str("")},
	} {
		if got, err := StorageJSON(mustType(t, bad.typ), bad.v); err == nil {
			t.Errorf("StorageJSON(%s, %x) = %s, want an error", bad.typ, bad.v, got)
		}
	}
	// The array form of a duration holds three integers of one sign.
	for _, bad := range []string{`[1, -1, 0]`, `[1, 0]`, `[1.5, 0, 0]`, `["1", 0, 0]`, `[2147483648, 0, 0]`} {
		n, err := parseJSON([]byte(bad))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := fromJSONNode(mustType(t, "duration"), n, true); err == nil {
			t.Errorf("stored duration %s reads as %x, want an error", bad, got)
		}
	}

	keys := []struct {
		typ  string
		v    []byte
		want string
	}{
		{"text", str("a\"b"), `a"b`},
		{"int", i32(-1), "-1"},
		{"timestamp", i64(0), "1970-01-01 00:00:00.000Z"},
		{"frozen<list<int>>", list(i32(1), i32(2)), "[1, 2]"},
		{"double", f64(math.NaN()), "NaN"},
		{"blob", str(""), "0x"},
	}
	for _, k := range keys {
		got, err := JSONKey(mustType(t, k.typ), k.v)
		if err != nil || got != k.want {
			t.Errorf("JSONKey(%s, %x) = %q, %v; want %q", k.typ, k.v, got, err, k.want)
		}
	}
}

func TestTimestampParsing(t *testing.T) {
	utc := func(y, mo, d, h, mi, s, ms int) int64 {
		return time.Date(y, time.Month(mo), d, h, mi, s, ms*1e6, time.UTC).UnixMilli()
	}
	tests := []struct {
		in   string
		want int64
	}{
		{"2023-10-27 10:05:00+0000", utc(2023, 10, 27, 10, 5, 0, 0)},
		{"2023-10-27T10:05:00Z", utc(2023, 10, 27, 10, 5, 0, 0)},
		{"2023-10-27 12:05:00+02:00", utc(2023, 10, 27, 10, 5, 0, 0)},
		{"2023-10-27 07:05:00-03", utc(2023, 10, 27, 10, 5, 0, 0)},
		{"2023-10-27 10:05", utc(2023, 10, 27, 10, 5, 0, 0)},
		{"2023-10-27T10:05+0100", utc(2023, 10, 27, 9, 5, 0, 0)},
		{"2023-10-27 10:05:00.123+0000", utc(2023, 10, 27, 10, 5, 0, 123)},
		{"2023-10-27 10:05:00.5", utc(2023, 10, 27, 10, 5, 0, 5)}, // SSS is a number of milliseconds
		{"2023-10-27 10:05:00.050Z", utc(2023, 10, 27, 10, 5, 0, 50)},
		{"2023-10-27 10:05:00 UTC", utc(2023, 10, 27, 10, 5, 0, 0)},
		{"2023-10-27 10:05:00 pst", utc(2023, 10, 27, 18, 5, 0, 0)},
		{"2023-10-27 10:05:00 GMT+1:00", utc(2023, 10, 27, 9, 5, 0, 0)},
		{"2023-10-27 10:05:00 -0130", utc(2023, 10, 27, 11, 35, 0, 0)},
		{"2023-10-27 +0100", utc(2023, 10, 26, 23, 0, 0, 0)},
		{"2023-10-27", utc(2023, 10, 27, 0, 0, 0, 0)},
		{"2023-1-5", utc(2023, 1, 5, 0, 0, 0, 0)},
		{"1698401100000", 1698401100000},
		{"-1", -1},
		{"1970-01-01 00:00:00.000Z", 0},
		{"10000-01-01", utc(10000, 1, 1, 0, 0, 0, 0)},
		// Before 1582-10-15 Java's calendar is Julian.
		{"1582-10-15", utc(1582, 10, 15, 0, 0, 0, 0)},
		{"1582-10-04", utc(1582, 10, 14, 0, 0, 0, 0)},
		{"1000-01-01", utc(1000, 1, 6, 0, 0, 0, 0)},
		{"1500-02-29", utc(1500, 3, 10, 0, 0, 0, 0)}, // a Julian leap day
		{"0001-01-01 00:00:00.000Z", -62135769600000},
	}
	for _, tt := range tests {
		got, err := parseTimestampString(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("parseTimestampString(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"yesterday", "2023-10-27 10:05:00+1", "2023-13-01", "2023-02-29", "1582-10-10",
		"0000-01-01", "2023-10-27 24:00", "2023-10-27 10:60", "2023-10-27 10:05:00.1000", "2023-10-27 10:05:00z",
		"2023-10-27T10:05:00 Z", "2023-10-27 10:05:00+25:00", "2023-10-27 10:05:00 XYZ", "2023-10-27 10", ""} {
		want := "Unable to coerce '" + bad + "' to a formatted date (long)"
		if _, err := parseTimestampString(bad); err == nil || err.Error() != want {
			t.Errorf("parseTimestampString(%q): %v, want %s", bad, err, want)
		}
	}
	if _, err := parseTimestampString("99999999999999999999"); err == nil ||
		err.Error() != "Unable to make long (for date) from: '99999999999999999999'" {
		t.Errorf("overflow: %v", err)
	}
	if got, err := parseTimestampString("NOW"); err != nil || time.Since(time.UnixMilli(got)) > time.Minute {
		t.Errorf("now: %d, %v", got, err)
	}
	// Formatting reads back, across the calendar change.
	for _, ms := range []int64{0, -1, -12219292800000, -12219292800001, -62135769600000, 253402300799999,
		1698401100123, -30000000000000} {
		if got, err := parseTimestampString(formatTimestampJSON(ms)); err != nil || got != ms {
			t.Errorf("%d formats as %s, which reads as %d, %v", ms, formatTimestampJSON(ms), got, err)
		}
	}
}

// TestStorageJSONNUL stores text holding U+0000 in jsonb escaped, as text
// columns hold it, and reads it back.
func TestStorageJSONNUL(t *testing.T) {
	for _, c := range []struct {
		typ string
		v   []byte
	}{
		{"map<text, text>", mapv(str("k\x00"), str("a\x00b\x01"))},
		{"list<frozen<tuple<int, text>>>", list(tuple(i32(1), str("\x00")))},
	} {
		typ := mustType(t, c.typ)
		j, err := StorageJSON(typ, c.v)
		if err != nil || strings.Contains(string(j), `\u0000`) {
			t.Fatalf("StorageJSON(%s): %s %v", c.typ, j, err)
		}
		st, err := StorageOf(typ)
		if err != nil {
			t.Fatal(err)
		}
		back, err := st.FromPG(nil, append([]byte{1}, j...))
		if err != nil || !bytes.Equal(back, c.v) {
			t.Errorf("%s: %s reads back as %x (%v), want %x", c.typ, j, back, err, c.v)
		}
	}
}
