package pgschema

import (
	"fmt"
	"math"
	"testing"
)

// orderCase lists values of a type in groups, in Cassandra's order;
// values in the same group compare equal.
type orderCase struct {
	typ    string
	groups [][][]byte
}

// orderCases are the values TestCompareOrders and TestOrderKey check.
func orderCases(t *testing.T) []orderCase {
	u1 := func(timeLow string, lsb string) []byte {
		return uuidv(timeLow + "-0000-1000-" + lsb[:4] + "-" + lsb[4:])
	}
	nan32 := math.Float32frombits(0x7fc00001)
	return []orderCase{
		{"int", g(str(""), i32(math.MinInt32), i32(-256), i32(-1), i32(0), i32(1), i32(255), i32(256), i32(math.MaxInt32))},
		{"bigint", g(i64(math.MinInt64), i64(-1), i64(0), i64(1), i64(math.MaxInt64))},
		{"counter", g(i64(-2), i64(3))},
		{"smallint", g(i16(-32768), i16(-1), i16(0), i16(1), i16(32767))},
		{"tinyint", g(i8(-128), i8(-1), i8(0), i8(1), i8(127))},
		{"timestamp", g(i64(-62135596800000), i64(-1), i64(0), i64(1698401100000))},
		{"varint", [][][]byte{{str("")}, {vint("-1234567890123456789012345678901234567890")}, {vint("-129")},
			{vint("-128"), unhex(t, "ff80")}, {vint("-1"), unhex(t, "ffff")}, {vint("0"), unhex(t, "0000")},
			{vint("1")}, {vint("127")}, {vint("128"), unhex(t, "000080")}, {vint("255")},
			{vint("1234567890123456789012345678901234567890")}}},
		{"decimal", [][][]byte{{str("")}, {dec("-1", -10)}, {dec("-15", 1)}, {dec("-1", 4)},
			{dec("0", 0), dec("0", 5), dec("0", -3)}, {dec("1", 10)}, {dec("1", 0), dec("10", 1), dec("1000", 3)},
			{dec("15", 1), dec("150", 2)}, {dec("1", -10), dec("10000000000", 0)},
			{dec("123456789012345678901234567890", 0)}, {dec("1", -40)}, {dec("1", -2147483648)}}},
		{"decimal", g(dec("-1", -2147483648), dec("-123456789012345678901234567890", 30), dec("1", 2147483647),
			dec("123456789012345678901234567890", 2147483647), dec("123456789012345678901234567890", 31),
			dec("12345678901234567890123456789", 28), dec("123456789012345678901234567891", 29))},
		{"double", [][][]byte{{f64(math.Inf(-1))}, {f64(-math.MaxFloat64)}, {f64(-1.5)}, {f64(math.Copysign(0, -1))},
			{f64(0)}, {f64(5e-324)}, {f64(1.5)}, {f64(math.Inf(1))}, {f64(math.NaN()), f64(math.Float64frombits(javaNaN64))}}},
		{"float", [][][]byte{{f32(float32(math.Inf(-1)))}, {f32(-1.5)}, {f32(float32(math.Copysign(0, -1)))}, {f32(0)},
			{f32(1.5)}, {f32(float32(math.Inf(1)))}, {f32(nan32), f32(math.Float32frombits(javaNaN32))}}},
		{"boolean", [][][]byte{{[]byte{0}}, {[]byte{1}, []byte{2}, []byte{0xff}}}},
		{"text", g(str(""), str("A"), str("Z"), str("a"), str("ab"), str("b"), str("é"), str("日"))},
		{"ascii", g(str(""), str(" "), str("A"), str("a"))},
		{"blob", g(str(""), unhex(t, "00"), unhex(t, "0000"), unhex(t, "01"), unhex(t, "7f"), unhex(t, "80"), unhex(t, "ff"))},
		{"date", g(cqlDate(-1<<31), cqlDate(-1), cqlDate(0), cqlDate(1<<31-1))},
		{"time", g(i64(0), i64(1), i64(nanosPerDay-1))},
		{"inet", g(unhex(t, "00000000000000000000000000000001"), unhex(t, "0a000001"), unhex(t, "7f000001"),
			unhex(t, "fe800000000000000000000000000001"))},
		// duration: the bytes of the zigzag-encoded vints.
		{"duration", g(dur(0, 0, 0), dur(0, 0, -1), dur(0, 0, 1), dur(0, 1, 0), dur(-1, 0, 0), dur(1, 0, 0))},
		// uuid: version first; version 1 by time, then unsigned low bytes.
		{"uuid", g(uuidv("ffffffff-ffff-0fff-ffff-ffffffffffff"), u1("00000002", "0000000000000000"), u1("00000002", "7f00000000000000"),
			u1("00000002", "8000000000000000"), u1("00000003", "0000000000000000"), uuidv("00000000-0000-4000-8000-000000000000"),
			uuidv("00000000-0000-4000-8000-000000000001"), uuidv("00000001-0000-4000-8000-000000000000"))},
		// timeuuid: by time, then the low bytes signed.
		{"timeuuid", g(u1("00000002", "8000000000000000"), u1("00000002", "ff00000000000000"), u1("00000002", "0000000000000000"),
			u1("00000002", "7f00000000000000"), u1("00000003", "8000000000000000"), uuidv("00000000-0001-1000-8000-000000000000"))},
		{"frozen<list<int>>", g(list(), list(i32(-1)), list(i32(1)), list(i32(1), i32(2)), list(i32(1), i32(3)), list(i32(2)))},
		{"frozen<set<text>>", g(list(), list(str("")), list(str("a")), list(str("a"), str("b")), list(str("b")))},
		{"frozen<map<int, text>>", g(mapv(), mapv(i32(1), str("a")), mapv(i32(1), str("b")),
			mapv(i32(1), str("b"), i32(2), str("a")), mapv(i32(2), str("")))},
		{"frozen<tuple<int, text>>", [][][]byte{{tuple()}, {tuple(nil, nil), tuple(nil)}, {tuple(nil, str("a"))},
			{tuple(i32(1), nil)}, {tuple(i32(1), str(""))}, {tuple(i32(1), str("a"))}, {tuple(i32(2))}}},
		{"frozen<point>", g(tuple(f64(-1), f64(9)), tuple(f64(math.Copysign(0, -1)), f64(0)), tuple(f64(0), f64(-1)))},
		{"vector<float, 2>", g(append(f32(-1), f32(5)...), append(f32(0), f32(0)...), append(f32(0), f32(1)...))},
		{"vector<text, 2>", g([]byte{1, 'a', 1, 'z'}, []byte{1, 'b', 0})},
		{"frozen<list<frozen<list<int>>>>", g(list(list()), list(list(i32(1))), list(list(i32(1)), list()))},
	}
}

func TestCompareOrders(t *testing.T) {
	for _, tt := range orderCases(t) {
		typ := mustType(t, tt.typ)
		for i, gi := range tt.groups {
			for j, gj := range tt.groups {
				for _, a := range gi {
					for _, b := range gj {
						want := cmpInt(i, j)
						if got := Compare(typ, a, b); got != want {
							t.Errorf("%s: Compare(%x, %x) = %d, want %d", tt.typ, a, b, got, want)
						}
					}
				}
			}
		}
	}
}

// g makes one group per value.
func g(vals ...[]byte) [][][]byte {
	out := make([][][]byte, len(vals))
	for i, v := range vals {
		out[i] = [][]byte{v}
	}
	return out
}

func TestCompareTupleTrailing(t *testing.T) {
	// TupleType.compareCustom counts missing and empty trailing
	// components as nulls, unlike components both values have.
	typ := mustType(t, "frozen<tuple<int, text>>")
	for _, c := range []struct {
		a, b []byte
		want int
	}{
		{tuple(i32(1)), tuple(i32(1), nil), 0},
		{tuple(i32(1)), tuple(i32(1), str("")), 0},
		{tuple(i32(1)), tuple(i32(1), str("a")), -1},
		{tuple(i32(1), nil), tuple(i32(1), str("")), -1},
	} {
		if got := Compare(typ, c.a, c.b); got != c.want {
			t.Errorf("Compare(%x, %x) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

func TestCompareMalformed(t *testing.T) {
	// Malformed values do not panic, and still order consistently: equal
	// to themselves, and one way round the opposite of the other.
	other := []byte{0, 0, 0, 1, 0, 0, 0, 1}
	for _, typ := range []string{"frozen<list<int>>", "frozen<map<int, int>>", "frozen<tuple<int, int>>",
		"decimal", "uuid", "vector<float, 2>", "vector<text, 2>", "double"} {
		tt := mustType(t, typ)
		for _, v := range [][]byte{{1}, {0, 0, 0, 5, 1}, {0xff, 0xff, 0xff, 0xff}, {0x80}} {
			if c := Compare(tt, v, v); c != 0 {
				t.Errorf("%s: %x against itself: %d", typ, v, c)
			}
			if ab, ba := Compare(tt, v, other), Compare(tt, other, v); ab == 0 || ab != -ba {
				t.Errorf("%s: %x against %x: %d, the other way %d", typ, v, other, ab, ba)
			}
		}
	}
}

func TestCompareKeys(t *testing.T) {
	types := []*Type{Scalar(Int), Scalar(Text)}
	a := [][]byte{i32(1), str("b")}
	b := [][]byte{i32(1), str("c")}
	if CompareKeys(types, a, b) != -1 || CompareKeys(types, b, a) != 1 || CompareKeys(types, a, a) != 0 {
		t.Error("CompareKeys does not compare column by column")
	}
}

func TestCompareAllocations(t *testing.T) {
	pairs := []struct {
		typ  string
		a, b []byte
	}{
		{"int", i32(1), i32(2)},
		{"decimal", dec("15", 1), dec("150", 2)},
		{"decimal", dec("-15", 1), dec("-2", 0)},
		{"varint", vint("12345678901234567890"), vint("-5")},
		{"double", f64(1), f64(math.NaN())},
		{"uuid", uuidv("6bddc89a-5644-11e4-97fc-56847afe9799"), uuidv("6bddc89a-5644-11e4-97fc-56847afe9798")},
		{"text", str("a"), str("b")},
		{"frozen<list<int>>", list(i32(1)), list(i32(2))},
		{"frozen<tuple<int, text>>", tuple(i32(1), str("a")), tuple(i32(1), str("b"))},
	}
	for _, p := range pairs {
		typ := mustType(t, p.typ)
		if n := testing.AllocsPerRun(100, func() { Compare(typ, p.a, p.b) }); n != 0 {
			t.Errorf("Compare on %s allocates %v times", p.typ, n)
		}
	}
}

func ExampleCompare() {
	typ := NewSet(Scalar(Decimal), true)
	one, oneZero := dec("1", 0), dec("10", 1)
	fmt.Println(Compare(typ.Elem[0], one, oneZero))
	// Output: 0
}
