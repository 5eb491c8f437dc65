package gateway_test

import (
	"encoding/binary"
	"encoding/hex"
	"math"
	"math/big"
	"math/bits"
	"net"
	"strings"
	"time"

	"github.com/gocql/gocql"
)

// The values the type tests write: for every CQL type its boundary values,
// each as the bytes a driver binds, the CQL literal of it where there is
// one, and the bytes it reads back where docs/types.md says they differ.
// Every expected byte string is built here, by hand, from the native
// protocol's definitions, never by the code under test.

// typeValue is one value of a CQL type.
type typeValue struct {
	// in is the serialized value bound to a marker; nil for a value that
	// is only written as a literal.
	in []byte
	// lit is a CQL literal of the value, "" for none.
	lit string
	// out is what reads back when it is not in: the value of a literal, or
	// what cqlpg keeps of a value it cannot store exactly.
	out []byte
	// jsonOut is what reads back from jsonb (maps, tuples, user types and
	// collections of those) when it is not out.
	jsonOut []byte
	// null marks a value that reads back as null (an empty collection).
	null bool
	// jsonOnly marks a value Postgres holds only inside jsonb; its own
	// column refuses it.
	jsonOnly bool
	// noKey marks a value left out of the key tests: it does not read back
	// exactly, or it equals another value in Postgres.
	noKey bool
}

// back is what the value reads back as from a column of its type.
func (v typeValue) back() []byte {
	switch {
	case v.null:
		return nil
	case v.out != nil:
		return v.out
	}
	return v.in
}

// jsonBack is what the value reads back as from inside jsonb.
func (v typeValue) jsonBack() []byte {
	if v.jsonOut != nil {
		return v.jsonOut
	}
	return v.back()
}

// typeCase is a CQL type with its values.
type typeCase struct {
	// name names the columns and tables of the type.
	name string
	cql  string
	// key says the type may be a partition or clustering key.
	key    bool
	values []typeValue
}

// val is a bound value with its literal ("" for none).
func val(in []byte, lit string) typeValue { return typeValue{in: in, lit: lit} }

// litOnly is a value written only as a literal.
func litOnly(lit string, out []byte) typeValue { return typeValue{lit: lit, out: out} }

// Serialized scalars.
func bstr(s string) []byte { return append([]byte{}, s...) }
func be8(v int8) []byte    { return []byte{byte(v)} }
func be16(v int16) []byte  { return binary.BigEndian.AppendUint16(nil, uint16(v)) }
func be32(v int32) []byte  { return binary.BigEndian.AppendUint32(nil, uint32(v)) }
func be64(v int64) []byte  { return binary.BigEndian.AppendUint64(nil, uint64(v)) }

// f32 and f64 are floats given by their IEEE bits.
func f32(bits uint32) []byte { return binary.BigEndian.AppendUint32(nil, bits) }
func f64(bits uint64) []byte { return binary.BigEndian.AppendUint64(nil, bits) }

func hexBytes(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

// varintOf is the minimal two's complement big-endian form of a decimal
// integer: at least one byte, and no leading byte that only repeats the
// sign of the next.
func varintOf(s string) []byte {
	n, ok := new(big.Int).SetString(s, 10)
	if !ok {
		panic(s)
	}
	if n.Sign() >= 0 {
		b := n.Bytes()
		if len(b) == 0 || b[0]&0x80 != 0 {
			b = append([]byte{0}, b...)
		}
		return b
	}
	// -n - 1 has the bits of n inverted.
	b := new(big.Int).Sub(new(big.Int).Neg(n), big.NewInt(1)).Bytes()
	for i := range b {
		b[i] = ^b[i]
	}
	if len(b) == 0 || b[0]&0x80 == 0 {
		b = append([]byte{0xff}, b...)
	}
	return b
}

// decimalOf is unscaled × 10^-scale: the scale as an int, then the
// unscaled value as a varint.
func decimalOf(unscaled string, scale int32) []byte {
	return append(be32(scale), varintOf(unscaled)...)
}

// dateOf is the date days after 1970-01-01, counted from 2^31.
func dateOf(days int64) []byte { return binary.BigEndian.AppendUint32(nil, uint32(days+1<<31)) }

// millisOf is a timestamp in milliseconds since the epoch, for a time Go's
// proleptic Gregorian calendar gives.
func millisOf(year int, month time.Month, day, hour, min, sec, ms int) []byte {
	return be64(time.Date(year, month, day, hour, min, sec, ms*1e6, time.UTC).UnixMilli())
}

// durationOf is a duration: months, days and nanoseconds, each zigzag
// encoded and written as an unsigned vint.
func durationOf(months, days, nanos int64) []byte {
	var b []byte
	for _, v := range []int64{months, days, nanos} {
		b = append(b, uvint(uint64(v<<1)^uint64(v>>63))...)
	}
	return b
}

// uvint is Cassandra's unsigned vint: the fewest bytes whose first byte
// starts with one 1 bit for each byte after it and holds the value's high
// bits; nine bytes (0xff, then all 64 bits) past 56 bits.
func uvint(v uint64) []byte {
	for size := 1; size <= 8; size++ {
		if v < 1<<(7*size) {
			b := make([]byte, size)
			for i := size - 1; i >= 0; i-- {
				b[i] = byte(v)
				v >>= 8
			}
			b[0] |= ^byte(0xff >> (size - 1))
			return b
		}
	}
	return append([]byte{0xff}, binary.BigEndian.AppendUint64(nil, v)...)
}

func uuidOf(s string) []byte {
	u, err := gocql.ParseUUID(s)
	if err != nil {
		panic(err)
	}
	return u.Bytes()
}

// inetOf is an address in 4 bytes for IPv4 text, 16 for IPv6 text
// (IPv4-mapped addresses included).
func inetOf(s string) []byte {
	ip := net.ParseIP(s)
	if ip == nil {
		panic(s)
	}
	if !strings.Contains(s, ":") {
		return append([]byte{}, ip.To4()...)
	}
	return append([]byte{}, ip.To16()...)
}

// appendCell appends a [bytes]: its length, -1 for null, then the bytes.
func appendCell(dst, v []byte) []byte {
	if v == nil {
		return binary.BigEndian.AppendUint32(dst, math.MaxUint32)
	}
	return append(binary.BigEndian.AppendUint32(dst, uint32(len(v))), v...)
}

// collOf is a list or set of elems, in the order given.
func collOf(elems ...[]byte) []byte {
	b := be32(int32(len(elems)))
	for _, e := range elems {
		b = appendCell(b, e)
	}
	return b
}

// mapOf is a map of alternating keys and values, in the order given.
func mapOf(kv ...[]byte) []byte {
	b := be32(int32(len(kv) / 2))
	for _, e := range kv {
		b = appendCell(b, e)
	}
	return b
}

// tupleOf is a tuple or user type value of the components given (nil for
// null); a shorter one leaves out trailing components.
func tupleOf(elems ...[]byte) []byte {
	b := []byte{}
	for _, e := range elems {
		b = appendCell(b, e)
	}
	return b
}

// vectorOf is a vector of fixed-size elements: the elements one after the
// other.
func vectorOf(elems ...[]byte) []byte {
	var b []byte
	for _, e := range elems {
		b = append(b, e...)
	}
	return b
}

// cqlString is s as a CQL string literal.
func cqlString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// IEEE bits of the float boundaries.
const (
	f32Max, f32Tiny, f32NaN, f32Inf, f32NegZero = 0x7f7fffff, 0x00000001, 0x7fc00000, 0x7f800000, 0x80000000
	f64Max, f64Tiny, f64NaN, f64Inf, f64NegZero = 0x7fefffffffffffff, 0x1, 0x7ff8000000000000, 0x7ff0000000000000,
		0x8000000000000000
)

// Two version 1 uuids whose byte order is the reverse of their time order:
// timeA is at time 2, timeB at 2^32 + 1.
const (
	timeA = "00000002-0000-1000-8000-000000000000"
	timeB = "00000001-0001-1000-8000-000000000000"
)

// scalarCases are the scalar types with their boundary values.
func scalarCases() []typeCase {
	allASCII := make([]byte, 127)
	for i := range allASCII {
		allASCII[i] = byte(i + 1)
	}
	allBytes := make([]byte, 256)
	for i := range allBytes {
		allBytes[i] = byte(i)
	}
	long := strings.Repeat("x", 70000)
	const hms = (4*3600+5*60+6)*1e9 + 7e6 + 8e3 + 9 // 4h5m6s7ms8us9ns
	const (
		yearOne    = -62135596800000      // 0001-01-01 00:00 UTC, proleptic Gregorian
		julianOne  = yearOne - 2*86400000 // 0001-01-01 Julian is 0000-12-30 Gregorian
		maxYear    = 253402300799999      // 9999-12-31 23:59:59.999 UTC
		pgMinMilli = -210866803200000     // 4714-11-24 00:00 BC, Postgres's first timestamp
		pgMaxMilli = 9224318015999999     // 294276-12-31 23:59:59.999, its last
		pgMinDay   = -2440588             // 4714-11-24 BC, Postgres's first date
		pgMaxDay   = 2145042905           // 5874897-12-31, its last
	)
	return []typeCase{
		{name: "ascii", cql: "ascii", values: []typeValue{
			val(bstr(""), "''"), val(bstr("a"), "'a'"), val(allASCII, cqlString(string(allASCII))),
			litOnly("'it''s'", bstr("it's")),
		}},
		{name: "bigint", cql: "bigint", values: []typeValue{
			val(be64(math.MinInt64), "-9223372036854775808"), val(be64(math.MaxInt64), "9223372036854775807"),
			val(be64(0), "0"), val(be64(-1), "-1"),
		}},
		{name: "blob", cql: "blob", values: []typeValue{
			val(bstr(""), "0x"), val(hexBytes("00ff807f"), "0x00ff807f"),
			val(allBytes, "0x"+hex.EncodeToString(allBytes)), litOnly("0xCAFE", hexBytes("cafe")),
		}},
		{name: "boolean", cql: "boolean", values: []typeValue{
			val([]byte{1}, "true"), val([]byte{0}, "false"), litOnly("FALSE", []byte{0}),
			// Any byte but 0 is true; Postgres keeps only true.
			{in: []byte{2}, out: []byte{1}, noKey: true},
		}},
		{name: "date", cql: "date", values: []typeValue{
			val(dateOf(-719162), "'0001-01-01'"), val(dateOf(2932896), "'9999-12-31'"),
			val(dateOf(0), "'1970-01-01'"), val(dateOf(-1), "'1969-12-31'"),
			litOnly("'2147483648'", dateOf(0)), litOnly("'2147483647'", dateOf(-1)),
			val(dateOf(pgMinDay), ""), val(dateOf(pgMaxDay), ""),
			// Beyond Postgres's dates, in the exact companion: CQL's
			// first and last dates, and those just past Postgres's.
			val(be32(0), "'-5877641-06-23'"), val(be32(-1), "'+5881580-07-11'"),
			litOnly("0", be32(0)), litOnly("4294967295", be32(-1)),
			val(dateOf(pgMinDay-1), ""), val(dateOf(pgMaxDay+1), ""),
		}},
		{name: "decimal", cql: "decimal", values: []typeValue{
			val(decimalOf("0", 0), "0"),
			// Equal to 0: one clustering row in Cassandra as in Postgres.
			{in: decimalOf("0", 1), lit: "0.0", noKey: true}, val(decimalOf("150", 2), "1.50"),
			val(decimalOf("-15", 1), "-1.5"),
			val(decimalOf("1234567890123456789012345678901234567890", 20), "12345678901234567890.12345678901234567890"),
			val(decimalOf("-1234567890123456789012345678901234567890", 20), "-12345678901234567890.12345678901234567890"),
			val(decimalOf("1", 16383), "1E-16383"),
			// Numeric keeps a negative scale by value only, and no exponent
			// past its range: the exact companion keeps them.
			val(decimalOf("1", -3), "1E+3"), val(decimalOf("-1", -20), "-1E+20"),
			{in: decimalOf("0", -3), lit: "0E+3", noKey: true}, // equal to 0
			val(decimalOf("1", 16384), "1E-16384"),
			val(decimalOf("1", -1000000), "1E+1000000"), val(decimalOf("-1", -1000000), "-1E+1000000"),
			val(decimalOf("1", 1000000), "1E-1000000"), val(decimalOf("-25", 20001), "-2.5E-20000"),
			val(decimalOf("1", math.MinInt32), ""), val(decimalOf("-1", math.MaxInt32), ""),
		}},
		{name: "double", cql: "double", values: []typeValue{
			val(f64(f64Max), "1.7976931348623157E308"), val(f64(f64Max|1<<63), "-1.7976931348623157E308"),
			val(f64(f64Tiny), "4.9E-324"), val(f64(f64NaN), "NaN"), val(f64(f64Inf), "Infinity"),
			val(f64(f64Inf|1<<63), "-Infinity"), val(f64(f64NegZero), "-0.0"),
			{in: f64(0), lit: "0.0", noKey: true},
			// NaN payloads stay in double precision, not in jsonb.
			{in: f64(0x7ff0000000000001), jsonOut: f64(f64NaN), noKey: true},
			{in: f64(0xfff8000000000000), jsonOut: f64(f64NaN), noKey: true},
		}},
		{name: "duration", cql: "duration", values: []typeValue{
			val(durationOf(0, 0, 0), "0s"), val(durationOf(14, 3, hms), "1y2mo3d4h5m6s7ms8us9ns"),
			val(durationOf(-14, -3, -1), "-1y2mo3d1ns"),
			val(durationOf(math.MaxInt32, math.MaxInt32, math.MaxInt64), ""),
			val(durationOf(math.MinInt32, math.MinInt32, math.MinInt64), ""),
			litOnly("P1Y2M3DT4H5M6S", durationOf(14, 3, (4*3600+5*60+6)*1e9)),
			litOnly("P2W", durationOf(0, 14, 0)),
			litOnly("P0001-02-03T04:05:06", durationOf(14, 3, (4*3600+5*60+6)*1e9)),
			litOnly("-1h30m", durationOf(0, 0, -5400e9)), litOnly("-P2W", durationOf(0, -14, 0)),
			litOnly("-P0001-02-03T04:05:06", durationOf(-14, -3, -(4*3600+5*60+6)*1e9)),
			// A vint in more bytes than it needs reads back minimal.
			{in: hexBytes("80000002"), out: durationOf(0, 0, 1)},
		}},
		{name: "float", cql: "float", values: []typeValue{
			val(f32(f32Max), "3.4028235E38"), val(f32(f32Max|1<<31), "-3.4028235E38"),
			val(f32(f32Tiny), "1.4E-45"), val(f32(f32NaN), "NaN"), val(f32(f32Inf), "Infinity"),
			val(f32(f32Inf|1<<31), "-Infinity"), val(f32(f32NegZero), "-0.0"),
			{in: f32(0), lit: "0.0", noKey: true},
			{in: f32(0x7f800001), jsonOut: f32(f32NaN), noKey: true},
		}},
		{name: "inet", cql: "inet", values: []typeValue{
			val(inetOf("127.0.0.1"), "'127.0.0.1'"), val(inetOf("0.0.0.0"), "'0.0.0.0'"),
			val(inetOf("255.255.255.255"), "'255.255.255.255'"), val(inetOf("::1"), "'::1'"),
			val(inetOf("::"), "'::'"), val(hexBytes(strings.Repeat("ff", 16)), "'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'"),
			val(inetOf("2001:db8::ff00:42:8329"), "'2001:db8::ff00:42:8329'"),
			// 16 bytes stay 16 bytes; the text form is read as IPv4, as Java does.
			val(inetOf("::ffff:1.2.3.4"), ""), litOnly("'::ffff:1.2.3.5'", inetOf("1.2.3.5")),
		}},
		{name: "int", cql: "int", values: []typeValue{
			val(be32(math.MinInt32), "-2147483648"), val(be32(math.MaxInt32), "2147483647"), val(be32(0), "0"),
		}},
		{name: "smallint", cql: "smallint", values: []typeValue{
			val(be16(math.MinInt16), "-32768"), val(be16(math.MaxInt16), "32767"), val(be16(0), "0"),
		}},
		{name: "text", cql: "text", values: []typeValue{
			val(bstr(""), "''"), val(bstr("a"), "'a'"), val(bstr("héllo wörld"), "'héllo wörld'"),
			val(bstr("😀"), "'😀'"), val(bstr("\u007f\u0080\u07ff\u0800\uffff\U00010000\U0010ffff"), ""),
			val(bstr("\x01\t\n'\"\\"), cqlString("\x01\t\n'\"\\")),
			{in: bstr(long), lit: cqlString(long), noKey: true},
			litOnly("$$it's$$", bstr("it's")),
		}},
		{name: "varchar", cql: "varchar", values: []typeValue{
			val(bstr(""), "''"), val(bstr("Zoë"), "'Zoë'"),
		}},
		{name: "time", cql: "time", values: []typeValue{
			val(be64(0), "'00:00:00'"), val(be64(86399999999999), "'23:59:59.999999999'"),
			val(be64(1), "'00:00:00.000000001'"), litOnly("'86399999999999'", be64(86399999999999)),
			litOnly("'12:34:56.789'", be64((12*3600+34*60+56)*1e9+789e6)),
			// Cassandra checks only the size of a bound time.
			val(be64(-1), ""), val(be64(math.MaxInt64), ""),
		}},
		{name: "timestamp", cql: "timestamp", values: []typeValue{
			val(be64(0), "'1970-01-01 00:00:00+0000'"), litOnly("0", be64(0)),
			val(be64(-1), "'1969-12-31 23:59:59.999+0000'"), litOnly("-1", be64(-1)),
			val(be64(yearOne), ""), litOnly("'0001-01-01 00:00:00+0000'", be64(julianOne)),
			val(be64(maxYear), "'9999-12-31 23:59:59.999+0000'"),
			litOnly("'2011-02-03T04:05:06.789+0000'", millisOf(2011, 2, 3, 4, 5, 6, 789)),
			val(be64(pgMinMilli), ""), val(be64(pgMaxMilli), ""),
			{in: be64(math.MinInt64), jsonOnly: true}, {in: be64(math.MaxInt64), jsonOnly: true},
		}},
		{name: "timeuuid", cql: "timeuuid", values: []typeValue{
			val(uuidOf("e6f3fdd0-30c4-11ef-9c7a-0242ac120002"), "e6f3fdd0-30c4-11ef-9c7a-0242ac120002"),
			val(uuidOf("00000000-0000-1000-8000-000000000000"), "00000000-0000-1000-8000-000000000000"),
			val(uuidOf("ffffffff-ffff-1fff-bfff-ffffffffffff"), "FFFFFFFF-FFFF-1FFF-BFFF-FFFFFFFFFFFF"),
		}},
		{name: "tinyint", cql: "tinyint", values: []typeValue{
			val(be8(math.MinInt8), "-128"), val(be8(math.MaxInt8), "127"), val(be8(0), "0"),
		}},
		{name: "uuid", cql: "uuid", values: []typeValue{
			val(uuidOf("41d01b63-244e-435d-bd6d-5dc8a0addb8c"), "41d01b63-244e-435d-bd6d-5dc8a0addb8c"),
			val(uuidOf("e6f3fdd0-30c4-11ef-9c7a-0242ac120002"), "e6f3fdd0-30c4-11ef-9c7a-0242ac120002"),
			val(uuidOf("00000000-0000-0000-0000-000000000000"), "00000000-0000-0000-0000-000000000000"),
			val(uuidOf("ffffffff-ffff-ffff-ffff-ffffffffffff"), "ffffffff-ffff-ffff-ffff-ffffffffffff"),
		}},
		{name: "varint", cql: "varint", values: []typeValue{
			val(varintOf("0"), "0"), val(varintOf("-1"), "-1"), val(varintOf("127"), "127"),
			val(varintOf("128"), "128"), val(varintOf("-128"), "-128"), val(varintOf("-129"), "-129"),
			val(varintOf("1234567890123456789012345678901234567890"), "1234567890123456789012345678901234567890"),
			val(varintOf("-1234567890123456789012345678901234567890"), "-1234567890123456789012345678901234567890"),
			{in: hexBytes("0000ff"), out: hexBytes("00ff"), noKey: true},
		}},
	}
}

// compositeCases are collections, tuples, user types (types.addr is
// (street text, "Zip" int, tags frozen<set<text>>)) and vectors.
func compositeCases() []typeCase {
	i := func(v int32) []byte { return be32(v) }
	s := bstr
	nan, negZero, inf := f64(f64NaN), f64(f64NegZero), f64(f64Inf)
	negInf := f64(f64Inf | 1<<63)
	return []typeCase{
		{name: "list_int", cql: "list<int>", values: []typeValue{
			val(collOf(i(math.MinInt32), i(0), i(math.MaxInt32), i(0)), "[-2147483648, 0, 2147483647, 0]"),
			// A non-frozen collection left empty is null.
			{in: collOf(), lit: "[]", null: true},
		}},
		{name: "flist_int", cql: "frozen<list<int>>", key: true, values: []typeValue{
			val(collOf(), "[]"), val(collOf(i(math.MinInt32), i(math.MaxInt32)), "[-2147483648, 2147483647]"),
		}},
		{name: "set_text", cql: "set<text>", values: []typeValue{
			{in: collOf(s("b"), s("a"), s(""), s("é")), lit: "{'b', 'a', '', 'é'}", out: collOf(s(""), s("a"), s("b"), s("é"))},
			{in: collOf(s("x"), s("x")), out: collOf(s("x"))},
			{in: collOf(), lit: "{}", null: true},
		}},
		{name: "fset_double", cql: "frozen<set<double>>", key: true, values: []typeValue{
			// Double.compare's order: -0.0 before 0.0, NaN last.
			{in: collOf(nan, f64(0x3ff0000000000000), negZero, negInf, f64(0), inf),
				lit: "{NaN, 1.0, -0.0, -Infinity, 0.0, Infinity}",
				out: collOf(negInf, negZero, f64(0), f64(0x3ff0000000000000), inf, nan)},
		}},
		{name: "fset_timeuuid", cql: "frozen<set<timeuuid>>", key: true, values: []typeValue{
			// By time, not by bytes.
			{in: collOf(uuidOf(timeB), uuidOf(timeA)), lit: "{" + timeB + ", " + timeA + "}",
				out: collOf(uuidOf(timeA), uuidOf(timeB))},
		}},
		{name: "fset_uuid", cql: "frozen<set<uuid>>", key: true, values: []typeValue{
			// By version first.
			{in: collOf(uuidOf("00000000-0000-4000-8000-000000000000"), uuidOf("ffffffff-ffff-1fff-bfff-ffffffffffff")),
				out: collOf(uuidOf("ffffffff-ffff-1fff-bfff-ffffffffffff"), uuidOf("00000000-0000-4000-8000-000000000000"))},
		}},
		{name: "fset_inet", cql: "frozen<set<inet>>", key: true, values: []typeValue{
			// By bytes: ::1 (00…) before 1.2.3.4.
			{in: collOf(inetOf("1.2.3.4"), inetOf("::1")), lit: "{'1.2.3.4', '::1'}",
				out: collOf(inetOf("::1"), inetOf("1.2.3.4"))},
		}},
		{name: "map_text_int", cql: "map<text, int>", values: []typeValue{
			{in: mapOf(s("b"), i(2), s("a"), i(1)), lit: "{'b': 2, 'a': 1}", out: mapOf(s("a"), i(1), s("b"), i(2))},
			{in: mapOf(), lit: "{}", null: true},
		}},
		{name: "map_int_text", cql: "map<int, text>", values: []typeValue{
			// By value, not by bytes.
			{in: mapOf(i(10), s("x"), i(-1), s("y"), i(2), s("z")), lit: "{10: 'x', -1: 'y', 2: 'z'}",
				out: mapOf(i(-1), s("y"), i(2), s("z"), i(10), s("x"))},
		}},
		{name: "fmap_nested", cql: "frozen<map<text, frozen<list<int>>>>", key: true, values: []typeValue{
			{in: mapOf(s("k"), collOf(i(1), i(2)), s(""), collOf()), lit: "{'k': [1, 2], '': []}",
				out: mapOf(s(""), collOf(), s("k"), collOf(i(1), i(2)))},
		}},
		{name: "list_map_set", cql: "list<frozen<map<int, frozen<set<text>>>>>", values: []typeValue{
			{in: collOf(mapOf(i(1), collOf(s("b"), s("a"))), mapOf()), lit: "[{1: {'b', 'a'}}, {}]",
				out: collOf(mapOf(i(1), collOf(s("a"), s("b"))), mapOf())},
		}},
		{name: "map_timeuuid_tuple", cql: "map<timeuuid, frozen<tuple<int, text>>>", values: []typeValue{
			{in: mapOf(uuidOf(timeB), tupleOf(i(1), s("a")), uuidOf(timeA), tupleOf(nil, nil)),
				lit: "{" + timeB + ": (1, 'a'), " + timeA + ": (null, null)}",
				out: mapOf(uuidOf(timeA), tupleOf(nil, nil), uuidOf(timeB), tupleOf(i(1), s("a")))},
		}},
		{name: "tuple", cql: "tuple<int, text, double>", key: true, values: []typeValue{
			val(tupleOf(i(1), s("a"), nan), "(1, 'a', NaN)"),
			val(tupleOf(i(math.MinInt32), s(""), negZero), "(-2147483648, '', -0.0)"),
			val(tupleOf(nil, nil, nil), "(null, null, null)"),
			// Missing trailing components read back as nulls.
			{in: tupleOf(i(5)), lit: "(5)", out: tupleOf(i(5), nil, nil), noKey: true},
		}},
		{name: "tuple_nested", cql: "tuple<int, frozen<list<text>>, frozen<map<int, boolean>>>", key: true, values: []typeValue{
			{in: tupleOf(i(1), collOf(s("a"), s("")), mapOf(i(2), []byte{0}, i(1), []byte{1})),
				lit: "(1, ['a', ''], {2: false, 1: true})",
				out: tupleOf(i(1), collOf(s("a"), s("")), mapOf(i(1), []byte{1}, i(2), []byte{0}))},
		}},
		{name: "faddr", cql: "frozen<addr>", key: true, values: []typeValue{
			{in: tupleOf(s("Main"), i(5), collOf(s("b"), s("a"))), lit: `{street: 'Main', "Zip": 5, tags: {'b', 'a'}}`,
				out: tupleOf(s("Main"), i(5), collOf(s("a"), s("b")))},
			val(tupleOf(nil, nil, nil), "{street: null}"),
			{in: tupleOf(s("x")), out: tupleOf(s("x"), nil, nil), noKey: true},
		}},
		{name: "addr", cql: "addr", values: []typeValue{
			{in: tupleOf(s("Main"), i(5), collOf(s("b"), s("a"))), lit: `{"Zip": 5, street: 'Main', tags: {'b', 'a'}}`,
				out: tupleOf(s("Main"), i(5), collOf(s("a"), s("b")))},
			{in: tupleOf(s("x")), lit: "{street: 'x'}", out: tupleOf(s("x"), nil, nil)},
		}},
		{name: "list_tuple", cql: "list<frozen<tuple<int, text>>>", values: []typeValue{
			{in: collOf(tupleOf(i(1), s("a")), tupleOf(nil, nil), tupleOf(i(2))), lit: "[(1, 'a'), (null, null), (2)]",
				out: collOf(tupleOf(i(1), s("a")), tupleOf(nil, nil), tupleOf(i(2), nil))},
		}},
		{name: "list_addr", cql: "list<frozen<addr>>", values: []typeValue{
			val(collOf(tupleOf(s(""), i(-1), collOf()), tupleOf(nil, nil, nil)), ""),
		}},
		{name: "list_duration", cql: "list<duration>", values: []typeValue{
			val(collOf(durationOf(0, 0, 0), durationOf(0, 1, 0), durationOf(0, 0, -1)), "[0s, 1d, -1ns]"),
		}},
		{name: "flist_flist", cql: "frozen<list<frozen<list<int>>>>", key: true, values: []typeValue{
			val(collOf(collOf(), collOf(i(1))), "[[], [1]]"),
		}},
		{name: "vector", cql: "vector<float, 3>", key: true, values: []typeValue{
			val(vectorOf(f32(0x3fc00000), f32(f32NegZero), f32(f32NaN)), "[1.5, -0.0, NaN]"),
			val(vectorOf(f32(f32Max), f32(f32Inf|1<<31), f32(f32Tiny)), "[3.4028235E38, -Infinity, 1.4E-45]"),
		}},
	}
}

// murmur3Token is Cassandra's Murmur3Partitioner token of a serialized
// key: the first half of MurmurHash3 x64_128 with seed 0, except that tail
// bytes are sign-extended (Java's (long) of a byte), and Long.MIN_VALUE
// becomes Long.MAX_VALUE. The empty key has the minimum token.
func murmur3Token(key []byte) int64 {
	if len(key) == 0 {
		return math.MinInt64
	}
	const c1, c2 = 0x87c37b91114253d5, 0x4cf5ad432745937f
	var h1, h2 uint64
	blocks := len(key) / 16
	for b := 0; b < blocks; b++ {
		k1 := binary.LittleEndian.Uint64(key[16*b:])
		k2 := binary.LittleEndian.Uint64(key[16*b+8:])
		k1 *= c1
		k1 = bits.RotateLeft64(k1, 31)
		k1 *= c2
		h1 ^= k1
		h1 = bits.RotateLeft64(h1, 27)
		h1 += h2
		h1 = h1*5 + 0x52dce729
		k2 *= c2
		k2 = bits.RotateLeft64(k2, 33)
		k2 *= c1
		h2 ^= k2
		h2 = bits.RotateLeft64(h2, 31)
		h2 += h1
		h2 = h2*5 + 0x38495ab5
	}
	tail := key[16*blocks:]
	signed := func(b byte) uint64 { return uint64(int64(int8(b))) }
	var k1, k2 uint64
	for j := len(tail) - 1; j >= 8; j-- {
		k2 ^= signed(tail[j]) << (8 * (j - 8))
	}
	if len(tail) > 8 {
		k2 *= c2
		k2 = bits.RotateLeft64(k2, 33)
		k2 *= c1
		h2 ^= k2
	}
	for j := min(len(tail), 8) - 1; j >= 0; j-- {
		k1 ^= signed(tail[j]) << (8 * j)
	}
	if len(tail) > 0 {
		k1 *= c1
		k1 = bits.RotateLeft64(k1, 31)
		k1 *= c2
		h1 ^= k1
	}
	h1 ^= uint64(len(key))
	h2 ^= uint64(len(key))
	h1 += h2
	h2 += h1
	h1 = fmix64(h1)
	h2 = fmix64(h2)
	h1 += h2
	if int64(h1) == math.MinInt64 {
		return math.MaxInt64
	}
	return int64(h1)
}

func fmix64(k uint64) uint64 {
	k ^= k >> 33
	k *= 0xff51afd7ed558ccd
	k ^= k >> 33
	k *= 0xc4ceb9fe1a85ec53
	k ^= k >> 33
	return k
}

// compositeKey serializes a partition key of several columns: each
// component's length in two bytes, its bytes, then a zero byte.
func compositeKey(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = binary.BigEndian.AppendUint16(b, uint16(len(p)))
		b = append(append(b, p...), 0)
	}
	return b
}
