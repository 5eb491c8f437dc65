package translate

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"strconv"

	"github.com/cqlpg/cqlpg/pgschema"
)

// This file holds duration values and Cassandra 4.1's floor() functions,
// which GROUP BY uses to bucket timestamps, timeuuids, dates and times.

// cqlDuration is a duration value: months, days and nanoseconds, all of one
// sign.
type cqlDuration struct {
	months, days int32
	nanos        int64
}

// decodeVInt reads one of Cassandra's signed variable-length integers: the
// leading one bits of the first byte count the bytes that follow, and the
// value is zigzag encoded. It returns the value and the bytes read.
func decodeVInt(b []byte) (int64, int, error) {
	if len(b) == 0 {
		return 0, 0, fmt.Errorf("truncated vint")
	}
	extra := bits.LeadingZeros8(^b[0])
	if len(b) < 1+extra {
		return 0, 0, fmt.Errorf("truncated vint")
	}
	v := uint64(b[0] & (0xff >> extra))
	for i := 1; i <= extra; i++ {
		v = v<<8 | uint64(b[i])
	}
	return int64(v>>1) ^ -int64(v&1), 1 + extra, nil
}

// encodeVInt appends a signed variable-length integer.
func encodeVInt(dst []byte, n int64) []byte {
	v := uint64(n<<1) ^ uint64(n>>63)
	size := 1
	for size < 9 && v >= 1<<(7*size) {
		size++
	}
	buf := make([]byte, size)
	for i := size - 1; i >= 0; i-- {
		buf[i] = byte(v)
		v >>= 8
	}
	if size == 9 {
		buf[0] = 0xff
	} else {
		buf[0] |= ^byte(0xff >> (size - 1))
	}
	return append(dst, buf...)
}

// decodeDuration reads a duration value, with DurationSerializer's
// validation.
func decodeDuration(b []byte) (cqlDuration, error) {
	if len(b) < 3 {
		return cqlDuration{}, fmt.Errorf("Expected at least 3 bytes for a duration (%d)", len(b))
	}
	var vals [3]int64
	off := 0
	for i := range vals {
		v, n, err := decodeVInt(b[off:])
		if err != nil {
			return cqlDuration{}, err
		}
		vals[i], off = v, off+n
	}
	if vals[0] != int64(int32(vals[0])) {
		return cqlDuration{}, fmt.Errorf("The duration months must be a 32 bits integer but was: %d", vals[0])
	}
	if vals[1] != int64(int32(vals[1])) {
		return cqlDuration{}, fmt.Errorf("The duration days must be a 32 bits integer but was: %d", vals[1])
	}
	d := cqlDuration{int32(vals[0]), int32(vals[1]), vals[2]}
	if !(d.months >= 0 && d.days >= 0 && d.nanos >= 0) && !(d.months <= 0 && d.days <= 0 && d.nanos <= 0) {
		return cqlDuration{}, fmt.Errorf("The duration months, days and nanoseconds must be all of the same sign (%d, %d, %d)",
			d.months, d.days, d.nanos)
	}
	return d, nil
}

func (d cqlDuration) negative() bool { return d.nanos < 0 || d.days < 0 || d.months < 0 }

// String is Duration.toString: "1y2mo3d4h5m6s7ms8us9ns" with the zero
// units left out.
func (d cqlDuration) String() string {
	var b []byte
	if d.negative() {
		b = append(b, '-')
	}
	unit := func(n, div int64, name string) int64 {
		if n == 0 || n < div {
			return n
		}
		b = strconv.AppendInt(b, n/div, 10)
		b = append(b, name...)
		return n % div
	}
	rem := unit(absInt64(int64(d.months)), 12, "y")
	unit(rem, 1, "mo")
	unit(absInt64(int64(d.days)), 1, "d")
	if d.nanos != 0 {
		rem = unit(absInt64(d.nanos), 3600*1000000000, "h")
		rem = unit(rem, 60*1000000000, "m")
		rem = unit(rem, 1000000000, "s")
		rem = unit(rem, nanosPerMilli, "ms")
		rem = unit(rem, 1000, "us")
		unit(rem, 1, "ns")
	}
	return string(b)
}

func absInt64(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

// floorFunctions returns floor() for timestamps, timeuuids, dates and
// times, each with and without a starting time, in Cassandra's order.
func floorFunctions() []*Function {
	ts, tu, date, tm, dur := scalar(pgschema.Timestamp), scalar(pgschema.Timeuuid), scalar(pgschema.Date),
		scalar(pgschema.Time), scalar(pgschema.Duration)
	return []*Function{
		floorFunction(ts, ts, []*pgschema.Type{ts, dur}),
		floorFunction(ts, ts, []*pgschema.Type{ts, dur, ts}),
		floorFunction(ts, tu, []*pgschema.Type{tu, dur}),
		floorFunction(ts, tu, []*pgschema.Type{tu, dur, ts}),
		floorFunction(date, date, []*pgschema.Type{date, dur}),
		floorFunction(date, date, []*pgschema.Type{date, dur, date}),
		pureFunction("floor", tm, []*pgschema.Type{tm, dur}, floorTimeOfDay),
	}
}

// floorFunction declares floor(time, duration[, start]) for timestamps,
// timeuuids and dates: the time rounded down to the start plus a multiple of
// the duration (the epoch when there is no start).
func floorFunction(ret, in *pgschema.Type, args []*pgschema.Type) *Function {
	return pureFunction("floor", ret, args, func(a [][]byte) ([]byte, error) {
		start := int64(0)
		if len(a) == 3 {
			if a[2] == nil {
				return nil, nil
			}
			var err error
			if start, err = floorMillis(args[2], a[2]); err != nil {
				return nil, err
			}
		}
		if len(a[0]) == 0 || len(a[1]) == 0 {
			return nil, nil
		}
		t, err := floorMillis(in, a[0])
		if err != nil {
			return nil, err
		}
		d, err := decodeDuration(a[1])
		if err != nil {
			return nil, err
		}
		if in.Kind == pgschema.Date {
			if d.nanos != 0 {
				return nil, invalidf("The floor on %s values cannot be computed for the %s duration as precision is below 1 day",
					in, d)
			}
		} else if d.nanos%nanosPerMilli != 0 {
			return nil, invalidf("The floor cannot be computed for the %s duration as precision is below 1 millisecond", d)
		}
		floor, err := floorTimestamp(t, d, start)
		if err != nil {
			return nil, err
		}
		if ret.Kind == pgschema.Date {
			return binary.BigEndian.AppendUint32(nil, millisToDay(floor)), nil
		}
		return binary.BigEndian.AppendUint64(nil, uint64(floor)), nil
	})
}

// floorMillis reads a floor function's time argument in milliseconds; a
// timeuuid's time is rounded down to the millisecond
// (UUIDGen.getAdjustedTimestamp).
func floorMillis(t *pgschema.Type, b []byte) (int64, error) {
	if t.Kind != pgschema.Timeuuid {
		return temporalMillis(t, b)
	}
	if len(b) != 16 || b[6]>>4 != 1 {
		return 0, fmt.Errorf("not a version 1 uuid")
	}
	return msbToRaw(binary.BigEndian.Uint64(b))/10000 + uuidEpochMillis, nil
}

// floorTimestamp is Cassandra's Duration.floorTimestamp: a duration without
// months divides the time since start; with months, Java's calendar steps
// start by the duration.
func floorTimestamp(t int64, d cqlDuration, start int64) (int64, error) {
	if start > t {
		return 0, invalidf("The floor function starting time is greater than the provided time")
	}
	if d.negative() {
		return 0, invalidf("Negative durations are not supported by the floor function")
	}
	durMillis := int64(d.days)*millisPerDay + d.nanos/nanosPerMilli
	if d.months == 0 {
		if durMillis == 0 {
			return t, nil
		}
		return t - (t-start)%durMillis, nil
	}
	now := pgschema.JavaCalendarAt(t)
	cal := pgschema.JavaCalendarAt(start)
	months := int32((now.YearOfEra()-cal.YearOfEra())*12) + int32(now.Month-cal.Month)
	multiplier := months / d.months
	cal.AddMonths(multiplier * d.months)
	if d.days == 0 && d.nanos == 0 {
		return cal.Millis(), nil
	}
	floor := cal.Millis() + int64(multiplier)*durMillis
	for floor > t {
		multiplier--
		cal.AddMonths(-d.months)
		floor = cal.Millis() + int64(multiplier)*durMillis
	}
	return max(start, floor), nil
}

// floorTimeOfDay implements floor(time, duration) (Duration.floorTime).
func floorTimeOfDay(a [][]byte) ([]byte, error) {
	if len(a[0]) == 0 || len(a[1]) == 0 {
		return nil, nil
	}
	if len(a[0]) != 8 {
		return nil, fmt.Errorf("expected 8 bytes for a time, got %d", len(a[0]))
	}
	t := int64(binary.BigEndian.Uint64(a[0]))
	d, err := decodeDuration(a[1])
	if err != nil {
		return nil, err
	}
	if d.negative() {
		return nil, invalidf("Negative durations are not supported by the floor function")
	}
	if d.months != 0 || d.days != 0 || d.nanos > nanosPerDay {
		return nil, invalidf("For time values, the floor can only be computed for durations smaller that a day")
	}
	if d.nanos != 0 {
		t -= t % d.nanos
	}
	return binary.BigEndian.AppendUint64(nil, uint64(t)), nil
}
