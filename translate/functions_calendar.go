package translate

import (
	"fmt"
	"math"
	"strconv"
)

// This file holds the calendar arithmetic of Java's default calendar and
// the text forms Cassandra gives timestamps, dates and times.

// Java's default calendar (GregorianCalendar, UTC) is Julian before
// 1582-10-15 and Gregorian from then on; timestamps print, and floor()
// steps months, in it. Years here are astronomical (0 is 1 BC).

// cutoverDay is 1582-10-15 in days since the epoch.
const cutoverDay = uuidEpochMillis / millisPerDay

// civilFromDays converts days since 1970-01-01 to a proleptic Gregorian
// date.
func civilFromDays(z int64) (year int64, month, day int) {
	z += 719468
	era := floorDiv(z, 146097)
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	day = int(doy - (153*mp+2)/5 + 1)
	month = int(mp + 3)
	if mp >= 10 {
		month = int(mp - 9)
	}
	year = yoe + era*400
	if month <= 2 {
		year++
	}
	return year, month, day
}

// daysFromCivil converts a proleptic Gregorian date to days since the epoch.
func daysFromCivil(year int64, month, day int) int64 {
	if month <= 2 {
		year--
	}
	era := floorDiv(year, 400)
	yoe := year - era*400
	mp := int64((month + 9) % 12)
	doy := (153*mp+2)/5 + int64(day) - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

// julianDayOfEpoch is the Julian day number of 1970-01-01.
const julianDayOfEpoch = 2440588

// julianFromDays converts days since the epoch to a Julian calendar date.
func julianFromDays(days int64) (year int64, month, day int) {
	c := days + julianDayOfEpoch + 32082
	d := floorDiv(4*c+3, 1461)
	e := c - floorDiv(1461*d, 4)
	m := floorDiv(5*e+2, 153)
	day = int(e - floorDiv(153*m+2, 5) + 1)
	month = int(m + 3 - 12*floorDiv(m, 10))
	year = d - 4800 + floorDiv(m, 10)
	return year, month, day
}

// daysFromJulian converts a Julian calendar date to days since the epoch.
func daysFromJulian(year int64, month, day int) int64 {
	a := floorDiv(int64(14-month), 12)
	y := year + 4800 - a
	m := int64(month) + 12*a - 3
	return int64(day) + floorDiv(153*m+2, 5) + 365*y + floorDiv(y, 4) - 32083 - julianDayOfEpoch
}

// calendar is a time broken down in Java's default calendar.
type calendar struct {
	year       int64
	month, day int
	msOfDay    int64
}

func calendarAt(ms int64) calendar {
	days := floorDiv(ms, millisPerDay)
	c := calendar{msOfDay: ms - days*millisPerDay}
	if days >= cutoverDay {
		c.year, c.month, c.day = civilFromDays(days)
	} else {
		c.year, c.month, c.day = julianFromDays(days)
	}
	return c
}

func (c calendar) millis() int64 {
	var days int64
	if c.year > 1582 || (c.year == 1582 && (c.month > 10 || (c.month == 10 && c.day >= 15))) {
		days = daysFromCivil(c.year, c.month, c.day)
	} else {
		days = daysFromJulian(c.year, c.month, c.day)
	}
	return days*millisPerDay + c.msOfDay
}

// addMonths is Calendar.add(MONTH, n): the day is pinned to the new month's
// length.
func (c *calendar) addMonths(n int32) {
	m := int64(c.month-1) + int64(n)
	c.year += floorDiv(m, 12)
	c.month = int(m-floorDiv(m, 12)*12) + 1
	if l := monthLength(c.year, c.month); c.day > l {
		c.day = l
	}
}

// monthLength is a month's length in Java's calendar: Julian leap years
// before 1582 (and BC), Gregorian ones after.
func monthLength(year int64, month int) int {
	switch month {
	case 4, 6, 9, 11:
		return 30
	case 2:
		leap := year%4 == 0
		if year > 1582 {
			leap = leap && (year%100 != 0 || year%400 == 0)
		}
		if leap {
			return 29
		}
		return 28
	}
	return 31
}

// yearOfEra is what Calendar.YEAR holds: BC years count up from 1.
func yearOfEra(year int64) int64 {
	if year <= 0 {
		return 1 - year
	}
	return year
}

// timestampString is a timestamp's text form (TimestampSerializer's
// toCQLLiteral): SimpleDateFormat "yyyy-MM-dd'T'HH:mm:ss.SSSX" in UTC, with
// Java's calendar and its year of era.
func timestampString(ms int64) string {
	c := calendarAt(ms)
	return fmt.Sprintf("%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", yearOfEra(c.year), c.month, c.day,
		c.msOfDay/3600000, c.msOfDay/60000%60, c.msOfDay/1000%60, c.msOfDay%1000)
}

// dateString is a date's text form: ISO_LOCAL_DATE of the proleptic
// Gregorian calendar, with a sign on years beyond four digits.
func dateString(day uint32) string {
	y, m, d := civilFromDays(int64(day) - dateEpochOffset)
	var year string
	switch {
	case y > 9999:
		year = "+" + strconv.FormatInt(y, 10)
	case y < 0:
		year = fmt.Sprintf("-%04d", -y)
	default:
		year = fmt.Sprintf("%04d", y)
	}
	return fmt.Sprintf("%s-%02d-%02d", year, m, d)
}

// timeOfDayString is TimeSerializer.toString: "hh:mm:ss.nnnnnnnnn".
func timeOfDayString(v int64) string {
	nano := v % 1000
	v = (v - nano) / 1000
	micro := v % 1000
	v = (v - micro) / 1000
	milli := v % 1000
	v = (v - milli) / 1000
	seconds := v % 60
	v = (v - seconds) / 60
	minutes := v % 60
	v = (v - minutes) / 60
	hours := v % 24
	pad := func(n int64, digits int) string {
		s := ""
		for i := 1; i < digits; i++ {
			if float64(n) < math.Pow10(i) {
				s += "0"
			}
		}
		return s + strconv.FormatInt(n, 10)
	}
	return pad(hours, 2) + ":" + pad(minutes, 2) + ":" + pad(seconds, 2) + "." +
		pad(milli, 3) + pad(micro, 3) + pad(nano, 3)
}
