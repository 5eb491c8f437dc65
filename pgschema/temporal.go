package pgschema

import (
	"fmt"
	"strconv"
	"strings"
)

// Cassandra 4.1 reads and writes timestamps with java.util's
// GregorianCalendar, which is Julian before 15 October 1582 (Gregorian),
// and dates with java.time, which is proleptic Gregorian. These functions
// reproduce both, so that '1000-01-01' means the same instant here as in
// Cassandra.

const (
	millisPerDay = 86400000
	// gregorianCutover is 1582-10-15T00:00Z, the first Gregorian day of
	// java.util.GregorianCalendar.
	gregorianCutover = -12219292800000
	// julianEpochJDN is the Julian day number of 1970-01-01.
	julianEpochJDN = 2440588
)

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// civilFromDays converts days since 1970-01-01 to a proleptic Gregorian
// date (astronomical year: 0 is 1 BC).
func civilFromDays(days int64) (y int64, m, d int) {
	z := days + 719468
	era := floorDiv(z, 146097)
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y = yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = int(doy - (153*mp+2)/5 + 1)
	if mp < 10 {
		m = int(mp + 3)
	} else {
		m = int(mp - 9)
	}
	if m <= 2 {
		y++
	}
	return y, m, d
}

// daysFromCivil is the inverse of civilFromDays.
func daysFromCivil(y int64, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := floorDiv(y, 400)
	yoe := y - era*400
	mm := int64(m)
	if mm > 2 {
		mm -= 3
	} else {
		mm += 9
	}
	doy := (153*mm+2)/5 + int64(d) - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

// julianFromDays converts days since 1970-01-01 to a Julian calendar date.
func julianFromDays(days int64) (y int64, m, d int) {
	c := days + julianEpochJDN + 32082
	dd := floorDiv(4*c+3, 1461)
	e := c - floorDiv(1461*dd, 4)
	mm := floorDiv(5*e+2, 153)
	d = int(e - floorDiv(153*mm+2, 5) + 1)
	m = int(mm + 3 - 12*floorDiv(mm, 10))
	y = dd - 4800 + floorDiv(mm, 10)
	return y, m, d
}

// daysFromJulian is the inverse of julianFromDays.
func daysFromJulian(y int64, m, d int) int64 {
	a := floorDiv(int64(14-m), 12)
	yy := y + 4800 - a
	mm := int64(m) + 12*a - 3
	return int64(d) + floorDiv(153*mm+2, 5) + 365*yy + floorDiv(yy, 4) - 32083 - julianEpochJDN
}

func isLeap(y int64, julian bool) bool {
	if julian {
		return floorDiv(y, 4)*4 == y
	}
	return floorDiv(y, 4)*4 == y && (floorDiv(y, 100)*100 != y || floorDiv(y, 400)*400 == y)
}

func monthLength(y int64, m int, julian bool) int {
	switch m {
	case 2:
		if isLeap(y, julian) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// CQL dates count days from 1970-01-01 shifted by 2^31 so that unsigned
// byte order is date order.
const dateEpochShift = 1 << 31

// formatISODate formats days since 1970-01-01 as java.time's
// ISO_LOCAL_DATE: four-digit years, longer ones with a sign.
func formatISODate(days int64) string {
	y, m, d := civilFromDays(days)
	return isoYear(y) + fmt.Sprintf("-%02d-%02d", m, d)
}

func isoYear(y int64) string {
	switch {
	case y > 9999:
		return "+" + strconv.FormatInt(y, 10)
	case y < 0:
		s := strconv.FormatInt(-y, 10)
		if len(s) < 4 {
			s = strings.Repeat("0", 4-len(s)) + s
		}
		return "-" + s
	}
	return fmt.Sprintf("%04d", y)
}

// The dates SimpleDateSerializer accepts: 2^31 days either side of the
// epoch, shown as ZonedDateTime.toString shows them.
var (
	minDateText = formatISODate(-1<<31) + "T00:00Z"
	maxDateText = formatISODate(1<<31-1) + "T00:00Z"
)

// parseDateString reads a date as SimpleDateSerializer.dateStringToDays
// does: the serialized day count itself (2^31 is the epoch), or a strict
// ISO_LOCAL_DATE. It returns the serialized (shifted) value.
func parseDateString(s string) (uint32, error) {
	if isRawNumber(s) {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 || n > 1<<32-1 {
			return 0, fmt.Errorf("Unable to make unsigned int (for date) from: '%s'", s)
		}
		return uint32(n), nil
	}
	bad := fmt.Errorf("Unable to coerce '%s' to a formatted date (long)", s)
	y, m, d, ok := parseISODate(s)
	if !ok {
		return 0, bad
	}
	days := daysFromCivil(y, m, d)
	if days < -1<<31 {
		return 0, fmt.Errorf("Input date %s is less than min supported date %s", s, minDateText)
	}
	if days > 1<<31-1 {
		return 0, fmt.Errorf("Input date %s is greater than max supported date %s", s, maxDateText)
	}
	return uint32(days + dateEpochShift), nil
}

// parseISODate reads yyyy-MM-dd strictly: a four-digit year or a signed
// longer one (at most ten digits), two-digit month and day, a real date.
func parseISODate(s string) (y int64, m, d int, ok bool) {
	i := 0
	neg, signed := false, false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg, signed = s[i] == '-', true
		i++
	}
	start := i
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	n := i - start
	if n < 4 || n > 10 || (n > 4 && !signed) || (signed && !neg && n == 4) {
		return 0, 0, 0, false
	}
	y, err := strconv.ParseInt(s[start:i], 10, 64)
	if err != nil || y > 999999999 {
		return 0, 0, 0, false
	}
	if neg {
		y = -y
	}
	rest := s[i:]
	if len(rest) != 6 || rest[0] != '-' || rest[3] != '-' || !allDigits(rest[1:3]) || !allDigits(rest[4:6]) {
		return 0, 0, 0, false
	}
	m, _ = strconv.Atoi(rest[1:3])
	d, _ = strconv.Atoi(rest[4:6])
	if m < 1 || m > 12 || d < 1 || d > monthLength(y, m, false) {
		return 0, 0, 0, false
	}
	return y, m, d, true
}

// nanosPerDay bounds a CQL time.
const nanosPerDay = 86400 * nanosPerSecond

// parseTimeString reads a time as TimeSerializer.timeStringToLong does:
// nanoseconds since midnight, or hh:mm:ss[.fffffffff].
func parseTimeString(s string) (int64, error) {
	if isRawNumber(s) {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 || n >= nanosPerDay {
			return 0, fmt.Errorf("Unable to make long (for time) from: '%s'", s)
		}
		return n, nil
	}
	n, ok := parseTimeStrictly(s)
	if !ok {
		return 0, fmt.Errorf("(TimeType) Unable to coerce '%s' to a formatted time (long)", s)
	}
	return n, nil
}

// parseTimeStrictly follows TimeSerializer.parseTimeStrictly, including
// its use of Integer.parseInt on each field.
func parseTimeStrictly(s string) (int64, bool) {
	s = strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
	first := strings.IndexByte(s, ':')
	if first <= 0 {
		return 0, false
	}
	second := strings.IndexByte(s[first+1:], ':')
	if second < 0 {
		return 0, false
	}
	second += first + 1
	if second >= len(s)-1 {
		return 0, false
	}
	parse := func(f string, limit int64) (int64, bool) {
		n, err := strconv.ParseInt(f, 10, 32)
		return n, err == nil && n >= 0 && n < limit
	}
	hour, ok := parse(s[:first], 24)
	if !ok {
		return 0, false
	}
	minute, ok := parse(s[first+1:second], 60)
	if !ok {
		return 0, false
	}
	var sec, nanos int64
	period := strings.IndexByte(s[second+1:], '.')
	if period >= 0 {
		period += second + 1
	}
	switch {
	case period > 0 && period < len(s)-1:
		if sec, ok = parse(s[second+1:period], 60); !ok {
			return 0, false
		}
		frac := s[period+1:]
		if len(frac) > 9 || frac[0] < '0' || frac[0] > '9' {
			return 0, false
		}
		n, err := strconv.ParseInt(frac+strings.Repeat("0", 9-len(frac)), 10, 32)
		if err != nil || n < 0 {
			return 0, false
		}
		nanos = n
	case period > 0:
		return 0, false
	default:
		if sec, ok = parse(s[second+1:], 60); !ok {
			return 0, false
		}
	}
	return hour*nanosPerHour + minute*nanosPerMinute + sec*nanosPerSecond + nanos, true
}

// formatTime formats nanoseconds since midnight as TimeSerializer.toString
// does: hh:mm:ss.nnnnnnnnn.
func formatTime(v int64) string {
	nano := v % 1000
	v = (v - nano) / 1000
	micro := v % 1000
	v = (v - micro) / 1000
	milli := v % 1000
	v = (v - milli) / 1000
	sec := v % 60
	v = (v - sec) / 60
	minute := v % 60
	v = (v - minute) / 60
	hour := v % 24
	var b strings.Builder
	pad := func(n int64, digits int) {
		// Java's leftPadZeros: a zero for each power of ten above n.
		p := int64(10)
		for i := 1; i < digits; i++ {
			if n < p {
				b.WriteByte('0')
			}
			p *= 10
		}
		b.WriteString(strconv.FormatInt(n, 10))
	}
	pad(hour, 2)
	b.WriteByte(':')
	pad(minute, 2)
	b.WriteByte(':')
	pad(sec, 2)
	b.WriteByte('.')
	pad(milli, 3)
	pad(micro, 3)
	pad(nano, 3)
	return b.String()
}
