package translate

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlpg/cqlpg/pgschema"
)

// call resolves a function on typed arguments and evaluates it.
func evalCall(t *testing.T, ctx *EvalContext, name string, types []pgschema.Kind, args ...[]byte) ([]byte, error) {
	t.Helper()
	fargs := make([]FuncArg, len(types))
	for i, k := range types {
		fargs[i] = FuncArg{Type: pgschema.Scalar(k)}
	}
	f, err := ResolveFunction(name, fargs, nil)
	if err != nil {
		t.Fatalf("resolve %s: %v", name, err)
	}
	return f.Eval(ctx.functions(), args)
}

func mustEval(t *testing.T, ctx *EvalContext, name string, types []pgschema.Kind, args ...[]byte) []byte {
	t.Helper()
	b, err := evalCall(t, ctx, name, types, args...)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return b
}

func enc64(v int64) []byte   { return binary.BigEndian.AppendUint64(nil, uint64(v)) }
func encU32(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }
func tsMillis(t time.Time) []byte {
	return enc64(t.UnixMilli())
}

// day returns the serialized date of a UTC calendar cqlDate, computed with
// Go's time package.
func cqlDate(y int, m time.Month, d int) []byte {
	return encU32(uint32(time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix()/86400 + 1<<31))
}

var (
	tuK   = []pgschema.Kind{pgschema.Timeuuid}
	tsK   = []pgschema.Kind{pgschema.Timestamp}
	dateK = []pgschema.Kind{pgschema.Date}
)

func TestTimeuuidConversions(t *testing.T) {
	instants := []time.Time{
		time.Date(2015, 5, 21, 11, 3, 2, 0, time.UTC),
		time.Date(2023, 10, 27, 10, 5, 0, 123456700, time.UTC),
		time.Date(1999, 12, 31, 23, 59, 59, 999999900, time.UTC),
		time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC),
	}
	for _, at := range instants {
		u := gocql.UUIDFromTime(at)
		b := u.Bytes()
		wantMS := u.Time().UnixMilli()
		if got := mustEval(t, nil, "totimestamp", tuK, b); !bytes.Equal(got, enc64(wantMS)) {
			t.Errorf("toTimestamp(%s) = %x, want %d", u, got, wantMS)
		}
		for _, name := range []string{"tounixtimestamp", "unixtimestampof", "dateof"} {
			if got := mustEval(t, nil, name, tuK, b); !bytes.Equal(got, enc64(wantMS)) {
				t.Errorf("%s(%s) = %x, want %d", name, u, got, wantMS)
			}
		}
		y, m, d := at.Date()
		if got := mustEval(t, nil, "todate", tuK, b); !bytes.Equal(got, cqlDate(y, m, d)) {
			t.Errorf("toDate(%s) = %x, want %x", u, got, cqlDate(y, m, d))
		}
	}
	// A fixed value: 50554d6e-29bb-11e5-b345-feff819cdc9f is
	// 2015-07-14T00:00:18.805Z and some 100 ns ticks, by gocql's reading.
	u, _ := gocql.ParseUUID("50554d6e-29bb-11e5-b345-feff819cdc9f")
	if got := mustEval(t, nil, "totimestamp", tuK, u.Bytes()); !bytes.Equal(got, enc64(u.Time().UnixMilli())) ||
		u.Time().UnixMilli() != 1436832018805 {
		t.Errorf("toTimestamp(%s) = %x (gocql says %d)", u, got, u.Time().UnixMilli())
	}
	// Before 1970 Cassandra's TimeUUID.unix truncates microseconds toward
	// zero: 0.5 ms before the epoch reads as 0.
	half := gocql.UUIDFromTime(time.Unix(0, -500000))
	if got := mustEval(t, nil, "tounixtimestamp", tuK, half.Bytes()); !bytes.Equal(got, enc64(0)) {
		t.Errorf("toUnixTimestamp(%s) = %x, want 0", half, got)
	}
	for _, name := range []string{"totimestamp", "todate", "tounixtimestamp", "dateof"} {
		if got := mustEval(t, nil, name, tuK, nil); got != nil {
			t.Errorf("%s(null) = %x", name, got)
		}
	}
	if got := mustEval(t, nil, "totimestamp", tuK, []byte{}); got != nil {
		t.Errorf("toTimestamp(empty) = %x", got)
	}
}

func TestTimestampAndDateConversions(t *testing.T) {
	at := time.Date(2015, 5, 21, 11, 3, 2, 0, time.UTC)
	tests := []struct {
		name  string
		types []pgschema.Kind
		arg   []byte
		want  []byte
	}{
		{"todate", tsK, tsMillis(at), cqlDate(2015, 5, 21)},
		{"todate", tsK, enc64(0), cqlDate(1970, 1, 1)},
		{"todate", tsK, tsMillis(time.Date(1969, 12, 31, 0, 0, 0, 0, time.UTC)), cqlDate(1969, 12, 31)},
		// Cassandra divides whole seconds into days toward zero, so times
		// before 1970 that are not midnight land a day late.
		{"todate", tsK, enc64(-1), cqlDate(1970, 1, 1)},
		{"todate", tsK, enc64(-86400001), cqlDate(1969, 12, 31)},
		{"tounixtimestamp", tsK, tsMillis(at), tsMillis(at)},
		{"totimestamp", dateK, cqlDate(2015, 5, 21), tsMillis(time.Date(2015, 5, 21, 0, 0, 0, 0, time.UTC))},
		{"totimestamp", dateK, cqlDate(1900, 1, 1), tsMillis(time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC))},
		{"tounixtimestamp", dateK, cqlDate(2015, 5, 21), tsMillis(time.Date(2015, 5, 21, 0, 0, 0, 0, time.UTC))},
		{"totimestamp", dateK, encU32(0), enc64(-(1 << 31) * 86400000)},
	}
	for _, tt := range tests {
		if got := mustEval(t, nil, tt.name, tt.types, tt.arg); !bytes.Equal(got, tt.want) {
			t.Errorf("%s(%x) = %x, want %x", tt.name, tt.arg, got, tt.want)
		}
	}
}

func TestMinMaxTimeuuid(t *testing.T) {
	instants := []time.Time{
		time.Unix(0, 0),
		time.Date(2013, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2023, 10, 27, 10, 5, 0, 123000000, time.UTC),
		time.Date(1900, 6, 1, 12, 0, 0, 1000000, time.UTC),
	}
	for _, at := range instants {
		at = at.UTC()
		gotMin := mustEval(t, nil, "mintimeuuid", tsK, tsMillis(at))
		gotMax := mustEval(t, nil, "maxtimeuuid", tsK, tsMillis(at))
		// gocql builds the same bounds: the first and the last 100 ns tick
		// of the millisecond, with the signed-byte extremes after them
		// (gocql sets the variant bits in the upper bound, Cassandra does
		// not).
		if want := gocql.MinTimeUUID(at); !bytes.Equal(gotMin, want.Bytes()) {
			t.Errorf("minTimeuuid(%s) = %x, want %s", at, gotMin, want)
		}
		if want := gocql.MaxTimeUUID(at.Add(999900 * time.Nanosecond)); !bytes.Equal(gotMax[:8], want.Bytes()[:8]) ||
			!bytes.Equal(gotMax[8:], bytes.Repeat([]byte{0x7f}, 8)) {
			t.Errorf("maxTimeuuid(%s) = %x, want %s with 7f7f-7f7f7f7f7f7f", at, gotMax, want)
		}
		if pgschema.Compare(pgschema.Scalar(pgschema.Timeuuid), gotMin, gotMax) >= 0 {
			t.Errorf("min %x is not below max %x", gotMin, gotMax)
		}
	}
	if got := pgschema.UUIDText(mustEval(t, nil, "mintimeuuid", tsK, enc64(0))); got != "13814000-1dd2-11b2-8080-808080808080" {
		t.Errorf("minTimeuuid(0) = %s", got)
	}
	if got := pgschema.UUIDText(mustEval(t, nil, "maxtimeuuid", tsK, enc64(0))); got != "1381670f-1dd2-11b2-7f7f-7f7f7f7f7f7f" {
		t.Errorf("maxTimeuuid(0) = %s", got)
	}
	if got := mustEval(t, nil, "mintimeuuid", tsK, nil); got != nil {
		t.Errorf("minTimeuuid(null) = %x", got)
	}
}

func TestNowFunctions(t *testing.T) {
	at := time.Date(2023, 10, 27, 10, 5, 30, 123456789, time.UTC)
	evalCtx := NewEvalContext(at)
	ctx := &evalCtx
	a := mustEval(t, ctx, "now", nil)
	b := mustEval(t, ctx, "now", nil)
	c := mustEval(t, ctx, "currenttimeuuid", nil)
	if bytes.Equal(a, b) || bytes.Equal(b, c) {
		t.Fatalf("now() repeated itself: %x %x %x", a, b, c)
	}
	tu := pgschema.Scalar(pgschema.Timeuuid)
	if pgschema.Compare(tu, a, b) >= 0 || pgschema.Compare(tu, b, c) >= 0 {
		t.Errorf("now() does not increase: %x %x %x", a, b, c)
	}
	for _, u := range [][]byte{a, b, c} {
		g, _ := gocql.UUIDFromBytes(u)
		if g.Version() != 1 || g.Variant() != gocql.VariantIETF {
			t.Errorf("%s: version %d variant %d", g, g.Version(), g.Variant())
		}
		if d := g.Time().Sub(at.Truncate(time.Microsecond)); d < 0 || d > time.Millisecond {
			t.Errorf("%s is at %s, want the request time %s", g, g.Time(), at)
		}
		if u[10]&0x01 != 0x01 {
			t.Errorf("%s: node without the multicast bit", g)
		}
		if !bytes.Equal(u[8:], a[8:]) {
			t.Errorf("%s: clock sequence and node change between calls", g)
		}
		if got := mustEval(t, nil, "totimestamp", tuK, u); !bytes.Equal(got, tsMillis(at)) {
			t.Errorf("toTimestamp(now()) = %x, want %x", got, tsMillis(at))
		}
	}
	g, _ := gocql.UUIDFromBytes(a)
	if g.Time().UnixMicro() < at.UnixMicro() || g.Timestamp()%10 != 0 {
		t.Errorf("now() = %s: its time should be the request's microsecond or a later one", g)
	}
	if got := mustEval(t, ctx, "currenttimestamp", nil); !bytes.Equal(got, tsMillis(at)) {
		t.Errorf("currentTimestamp() = %x", got)
	}
	if got := mustEval(t, ctx, "currentdate", nil); !bytes.Equal(got, cqlDate(2023, 10, 27)) {
		t.Errorf("currentDate() = %x", got)
	}
	wantTime := int64(((10*60+5)*60+30)*1e9 + 123456000)
	if got := mustEval(t, ctx, "currenttime", nil); !bytes.Equal(got, enc64(wantTime)) {
		t.Errorf("currentTime() = %x, want %d", got, wantTime)
	}
	u := mustEval(t, nil, "uuid", nil)
	if g, _ := gocql.UUIDFromBytes(u); g.Version() != 4 || g.Variant() != gocql.VariantIETF || bytes.Equal(u, mustEval(t, nil, "uuid", nil)) {
		t.Errorf("uuid() = %s", g)
	}
}

func encDuration(months, days int32, nanos int64) []byte {
	return pgschema.DurationValue{Months: int64(months), Days: int64(days), Nanos: nanos}.Append(nil)
}

func TestFloor(t *testing.T) {
	at := time.Date(2016, 5, 27, 15, 12, 34, 123000000, time.UTC)
	tsDur := []pgschema.Kind{pgschema.Timestamp, pgschema.Duration}
	tsDurStart := []pgschema.Kind{pgschema.Timestamp, pgschema.Duration, pgschema.Timestamp}
	tests := []struct {
		name  string
		types []pgschema.Kind
		args  [][]byte
		want  []byte
	}{
		{"hour", tsDur, [][]byte{tsMillis(at), encDuration(0, 0, 3600e9)}, tsMillis(time.Date(2016, 5, 27, 15, 0, 0, 0, time.UTC))},
		{"5 minutes", tsDur, [][]byte{tsMillis(at), encDuration(0, 0, 300e9)}, tsMillis(time.Date(2016, 5, 27, 15, 10, 0, 0, time.UTC))},
		{"2 days", tsDur, [][]byte{tsMillis(at), encDuration(0, 2, 0)}, tsMillis(time.Date(2016, 5, 27, 0, 0, 0, 0, time.UTC))},
		{"zero", tsDur, [][]byte{tsMillis(at), encDuration(0, 0, 0)}, tsMillis(at)},
		{"month", tsDur, [][]byte{tsMillis(at), encDuration(1, 0, 0)}, tsMillis(time.Date(2016, 5, 1, 0, 0, 0, 0, time.UTC))},
		{"3 months from start", tsDurStart, [][]byte{tsMillis(at), encDuration(3, 0, 0), tsMillis(time.Date(2016, 1, 15, 0, 0, 0, 0, time.UTC))},
			tsMillis(time.Date(2016, 4, 15, 0, 0, 0, 0, time.UTC))},
		{"month and a day", tsDurStart, [][]byte{tsMillis(at), encDuration(1, 1, 0), tsMillis(time.Date(2016, 1, 1, 0, 0, 0, 0, time.UTC))},
			tsMillis(time.Date(2016, 5, 5, 0, 0, 0, 0, time.UTC))},
		// Cassandra counts months by calendar month and, for a duration of
		// months only, does not check the result: from Jan 31 by months,
		// Mar 10 floors to Mar 31.
		{"months from the 31st", tsDurStart, [][]byte{tsMillis(time.Date(2016, 3, 10, 0, 0, 0, 0, time.UTC)), encDuration(1, 0, 0),
			tsMillis(time.Date(2016, 1, 31, 0, 0, 0, 0, time.UTC))}, tsMillis(time.Date(2016, 3, 31, 0, 0, 0, 0, time.UTC))},
		// With a remainder it steps back, and a month step from Mar 31 pins
		// the day to Feb 29.
		{"month and a millisecond from the 31st", tsDurStart, [][]byte{tsMillis(time.Date(2016, 3, 10, 0, 0, 0, 0, time.UTC)),
			encDuration(1, 0, 1e6), tsMillis(time.Date(2016, 1, 31, 0, 0, 0, 0, time.UTC))},
			tsMillis(time.Date(2016, 2, 29, 0, 0, 0, 1e6, time.UTC))},
		{"hour with start", tsDurStart, [][]byte{tsMillis(at), encDuration(0, 0, 3600e9), tsMillis(time.Date(2016, 5, 27, 0, 30, 0, 0, time.UTC))},
			tsMillis(time.Date(2016, 5, 27, 14, 30, 0, 0, time.UTC))},
		{"timeuuid", []pgschema.Kind{pgschema.Timeuuid, pgschema.Duration},
			[][]byte{gocql.UUIDFromTime(at).Bytes(), encDuration(0, 0, 60e9)}, tsMillis(time.Date(2016, 5, 27, 15, 12, 0, 0, time.UTC))},
		{"date", []pgschema.Kind{pgschema.Date, pgschema.Duration}, [][]byte{cqlDate(2016, 5, 27), encDuration(0, 7, 0)},
			cqlDate(2016, 5, 26)}, // 16947 days since the epoch, 16947 - 16947%7 = 16946
		{"date with start", []pgschema.Kind{pgschema.Date, pgschema.Duration, pgschema.Date},
			[][]byte{cqlDate(2016, 5, 27), encDuration(2, 0, 0), cqlDate(2016, 1, 1)}, cqlDate(2016, 5, 1)},
		{"time", []pgschema.Kind{pgschema.Time, pgschema.Duration}, [][]byte{enc64(54754123000000), encDuration(0, 0, 600e9)},
			enc64(54600000000000)},
		{"null time", tsDur, [][]byte{nil, encDuration(0, 0, 1e9)}, nil},
		{"null start", tsDurStart, [][]byte{tsMillis(at), encDuration(0, 0, 1e9), nil}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := mustEval(t, nil, "floor", tt.types, tt.args...); !bytes.Equal(got, tt.want) {
				t.Errorf("got %x, want %x", got, tt.want)
			}
		})
	}
}

func TestFloorErrors(t *testing.T) {
	at := time.Date(2016, 5, 27, 15, 12, 34, 0, time.UTC)
	tests := []struct {
		types []pgschema.Kind
		args  [][]byte
		want  string
	}{
		{[]pgschema.Kind{pgschema.Timestamp, pgschema.Duration}, [][]byte{tsMillis(at), encDuration(0, 0, 1500)},
			"The floor cannot be computed for the 1us500ns duration as precision is below 1 millisecond"},
		{[]pgschema.Kind{pgschema.Timestamp, pgschema.Duration}, [][]byte{tsMillis(at), encDuration(0, 0, -60e9)},
			"Negative durations are not supported by the floor function"},
		{[]pgschema.Kind{pgschema.Timestamp, pgschema.Duration, pgschema.Timestamp},
			[][]byte{tsMillis(at), encDuration(0, 0, 60e9), tsMillis(at.Add(time.Hour))},
			"The floor function starting time is greater than the provided time"},
		{[]pgschema.Kind{pgschema.Date, pgschema.Duration}, [][]byte{cqlDate(2016, 5, 27), encDuration(0, 0, 3600e9)},
			"The floor on date values cannot be computed for the 1h duration as precision is below 1 day"},
		{[]pgschema.Kind{pgschema.Time, pgschema.Duration}, [][]byte{enc64(1000), encDuration(0, 1, 0)},
			"For time values, the floor can only be computed for durations smaller that a day"},
		{[]pgschema.Kind{pgschema.Time, pgschema.Duration}, [][]byte{enc64(1000), encDuration(0, 0, -1)},
			"Negative durations are not supported by the floor function"},
	}
	for _, tt := range tests {
		_, err := evalCall(t, nil, "floor", tt.types, tt.args...)
		var inv *InvalidError
		if !errors.As(err, &inv) || inv.Msg != tt.want {
			t.Errorf("got %v, want %q", err, tt.want)
		}
	}
}

func ExampleFunction_Eval() {
	f, _ := ResolveFunction("mintimeuuid", []FuncArg{{Literal: &Literal{Kind: LitString, Text: "2013-01-01"}}}, nil)
	b, _ := f.Eval(nil, [][]byte{enc64(1356998400000)})
	fmt.Println(pgschema.UUIDText(b))
	// Output: 2f6ec000-53a6-11e2-8080-808080808080
}
