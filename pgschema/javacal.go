package pgschema

import (
	"fmt"
	"strconv"
	"strings"
)

// JavaCalendar is a UTC instant broken down in Java's default calendar
// (java.util.GregorianCalendar): Julian before 1582-10-15, Gregorian from
// then on. Cassandra prints timestamps, and floor() steps months, in it.
// Year is astronomical: 0 is 1 BC.
type JavaCalendar struct {
	Year       int64
	Month, Day int
	MsOfDay    int64
}

// JavaCalendarAt breaks down ms milliseconds since the epoch.
func JavaCalendarAt(ms int64) JavaCalendar {
	days := floorDiv(ms, millisPerDay)
	c := JavaCalendar{MsOfDay: ms - days*millisPerDay}
	if ms >= gregorianCutover {
		c.Year, c.Month, c.Day = civilFromDays(days)
	} else {
		c.Year, c.Month, c.Day = julianFromDays(days)
	}
	return c
}

// gregorian reports whether the calendar's date is on or after the
// cutover.
func (c JavaCalendar) gregorian() bool {
	return c.Year > 1582 || c.Year == 1582 && (c.Month > 10 || c.Month == 10 && c.Day >= 15)
}

// Millis returns the instant in milliseconds since the epoch.
func (c JavaCalendar) Millis() int64 {
	days := daysFromJulian(c.Year, c.Month, c.Day)
	if c.gregorian() {
		days = daysFromCivil(c.Year, c.Month, c.Day)
	}
	return days*millisPerDay + c.MsOfDay
}

// AddMonths is Calendar.add(MONTH, n): the day is pinned to the new
// month's length.
func (c *JavaCalendar) AddMonths(n int32) {
	m := int64(c.Month-1) + int64(n)
	c.Year += floorDiv(m, 12)
	c.Month = int(m-floorDiv(m, 12)*12) + 1
	if l := monthLength(c.Year, c.Month, c.Year <= 1582); c.Day > l {
		c.Day = l
	}
}

// YearOfEra is what Calendar.YEAR holds: BC years count up from 1.
func (c JavaCalendar) YearOfEra() int64 {
	if c.Year <= 0 {
		return 1 - c.Year
	}
	return c.Year
}

// FormatTimestamp formats a timestamp as SimpleDateFormat
// "yyyy-MM-dd'T'HH:mm:ss.SSSX" in UTC, with sep in place of the 'T':
// 'T' for its CQL literal (CAST), ' ' for toJson().
func FormatTimestamp(ms int64, sep byte) string {
	c := JavaCalendarAt(ms)
	y := strconv.FormatInt(c.YearOfEra(), 10)
	if len(y) < 4 {
		y = strings.Repeat("0", 4-len(y)) + y
	}
	return fmt.Sprintf("%s-%02d-%02d%c%02d:%02d:%02d.%03dZ", y, c.Month, c.Day, sep,
		c.MsOfDay/3600000, c.MsOfDay/60000%60, c.MsOfDay/1000%60, c.MsOfDay%1000)
}

// FormatDate formats a CQL date (days since the epoch shifted by 2^31) as
// java.time's ISO_LOCAL_DATE.
func FormatDate(date uint32) string { return formatISODate(int64(date) - dateEpochShift) }

// FormatTime formats nanoseconds since midnight as TimeSerializer does:
// hh:mm:ss.nnnnnnnnn.
func FormatTime(nanos int64) string { return formatTime(nanos) }
