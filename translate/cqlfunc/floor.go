package cqlfunc

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/cqlpg/cqlpg/pgschema"
)

// This file holds Cassandra 4.1's floor() functions, which GROUP BY uses to
// bucket timestamps, timeuuids, dates and times.

// negativeDuration reports whether a duration is below zero (its parts
// share one sign).
func negativeDuration(d pgschema.DurationValue) bool {
	return d.Nanos < 0 || d.Days < 0 || d.Months < 0
}

// durationText is a duration as floor's messages print it, Cassandra's
// Duration.toString: as DurationValue.String, except that Java's Math.abs
// leaves math.MinInt64 negative, so that many nanoseconds print no time
// part.
func durationText(d pgschema.DurationValue) string {
	if d.Nanos != math.MinInt64 {
		return d.String()
	}
	s := pgschema.DurationValue{Months: d.Months, Days: d.Days}.String()
	if !strings.HasPrefix(s, "-") {
		s = "-" + s
	}
	return s
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
		d, err := pgschema.DecodeDuration(a[1])
		if err != nil {
			return nil, err
		}
		if in.Kind == pgschema.Date {
			if d.Nanos != 0 {
				return nil, invalidf("The floor on %s values cannot be computed for the %s duration as precision is below 1 day",
					in, durationText(d))
			}
		} else if d.Nanos%nanosPerMilli != 0 {
			return nil, invalidf("The floor cannot be computed for the %s duration as precision is below 1 millisecond", durationText(d))
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
func floorTimestamp(t int64, d pgschema.DurationValue, start int64) (int64, error) {
	if start > t {
		return 0, invalidf("The floor function starting time is greater than the provided time")
	}
	if negativeDuration(d) {
		return 0, invalidf("Negative durations are not supported by the floor function")
	}
	durMillis := int64(d.Days)*millisPerDay + d.Nanos/nanosPerMilli
	if d.Months == 0 {
		if durMillis == 0 {
			return t, nil
		}
		return t - (t-start)%durMillis, nil
	}
	now := pgschema.JavaCalendarAt(t)
	cal := pgschema.JavaCalendarAt(start)
	months := int32((now.YearOfEra()-cal.YearOfEra())*12) + int32(now.Month-cal.Month)
	step := int32(d.Months) // DecodeDuration's months fit an int32
	multiplier := months / step
	cal.AddMonths(multiplier * step)
	if d.Days == 0 && d.Nanos == 0 {
		return cal.Millis(), nil
	}
	floor := cal.Millis() + int64(multiplier)*durMillis
	for floor > t {
		multiplier--
		cal.AddMonths(-step)
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
	d, err := pgschema.DecodeDuration(a[1])
	if err != nil {
		return nil, err
	}
	if negativeDuration(d) {
		return nil, invalidf("Negative durations are not supported by the floor function")
	}
	if d.Months != 0 || d.Days != 0 || d.Nanos > nanosPerDay {
		return nil, invalidf("For time values, the floor can only be computed for durations smaller that a day")
	}
	if d.Nanos != 0 {
		t -= t % d.Nanos
	}
	return binary.BigEndian.AppendUint64(nil, uint64(t)), nil
}
