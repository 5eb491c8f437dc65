package pgschema

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Timestamps as Cassandra 4.1's TimestampSerializer reads them (commons-lang's
// DateUtils.parseDateStrictly over its patterns) and as toJson() writes them
// (SimpleDateFormat), both with java.util's calendar: Julian before
// 1582-10-15, Gregorian after.

// formatTimestampJSON formats a timestamp as Cassandra's toJson() does:
// SimpleDateFormat("yyyy-MM-dd HH:mm:ss.SSSX") in UTC. Like Java it shows a
// year before 1 AD by its year of era, without an era.
func formatTimestampJSON(ms int64) string { return FormatTimestamp(ms, ' ') }

// timestampPatterns are TimestampSerializer's date-time patterns: a date,
// optionally a time (T or space, minutes, seconds, milliseconds), then no
// zone, a general zone after a space (" z"), or an ISO zone (X, XX, XXX).
var timestampPatterns = func() [][]tsToken {
	var out [][]tsToken
	zones := [][]tsToken{nil, {tsLit(" "), {kind: tsZoneGeneral}}, {{kind: tsZoneISO1}}, {{kind: tsZoneISO2}},
		{{kind: tsZoneISO3}}}
	date := []tsToken{{kind: tsYear}, tsLit("-"), {kind: tsMonth}, tsLit("-"), {kind: tsDay}}
	times := [][]tsToken{
		{{kind: tsHour}, tsLit(":"), {kind: tsMinute}},
		{{kind: tsHour}, tsLit(":"), {kind: tsMinute}, tsLit(":"), {kind: tsSecond}},
		{{kind: tsHour}, tsLit(":"), {kind: tsMinute}, tsLit(":"), {kind: tsSecond}, tsLit("."), {kind: tsMilli}},
	}
	for _, sep := range []string{" ", "T"} {
		for _, tm := range times {
			for _, z := range zones {
				p := append(append(append(append([]tsToken{}, date...), tsLit(sep)), tm...), z...)
				out = append(out, p)
			}
		}
	}
	for _, z := range zones {
		out = append(out, append(append([]tsToken{}, date...), z...))
	}
	return out
}()

type tsKind uint8

const (
	tsLiteral tsKind = iota
	tsYear
	tsMonth
	tsDay
	tsHour
	tsMinute
	tsSecond
	tsMilli
	tsZoneGeneral
	tsZoneISO1
	tsZoneISO2
	tsZoneISO3
)

type tsToken struct {
	kind tsKind
	lit  string
}

func tsLit(s string) tsToken { return tsToken{kind: tsLiteral, lit: s} }

// zoneNames are the time zone names the general zone pattern accepts,
// with their fixed offsets in minutes: Java accepts every zone name it
// knows; these are the unambiguous common ones.
var zoneNames = map[string]int{
	"utc": 0, "gmt": 0, "ut": 0,
	"est": -300, "edt": -240, "cst": -360, "cdt": -300, "mst": -420, "mdt": -360, "pst": -480, "pdt": -420,
}

type tsFields struct {
	year, month, day, hour, minute, second, milli int64
	offsetMinutes                                 int64
}

// matchTimestamp runs one pattern over s the way commons-lang's
// FastDateParser does: numbers take all the digits there are (after any
// leading white space), literals must match exactly, and the whole string
// must be consumed.
func matchTimestamp(s string, pattern []tsToken) (tsFields, bool) {
	var f tsFields
	pos := 0
	number := func() (int64, bool) {
		for pos < len(s) && isJavaSpace(s[pos]) {
			pos++
		}
		start := pos
		for pos < len(s) && s[pos] >= '0' && s[pos] <= '9' {
			pos++
		}
		if pos == start {
			return 0, false
		}
		// Java's Integer.parseInt: more than an int is a failure.
		n, err := strconv.ParseInt(s[start:pos], 10, 32)
		return n, err == nil
	}
	twoDigits := func() (int64, bool) {
		if pos+2 > len(s) || !allDigits(s[pos:pos+2]) {
			return 0, false
		}
		n, _ := strconv.Atoi(s[pos : pos+2])
		pos += 2
		return int64(n), true
	}
	for _, t := range pattern {
		var ok bool
		switch t.kind {
		case tsLiteral:
			ok = strings.HasPrefix(s[pos:], t.lit)
			pos += len(t.lit)
		case tsYear:
			f.year, ok = number()
		case tsMonth:
			f.month, ok = number()
		case tsDay:
			f.day, ok = number()
		case tsHour:
			f.hour, ok = number()
		case tsMinute:
			f.minute, ok = number()
		case tsSecond:
			f.second, ok = number()
		case tsMilli:
			f.milli, ok = number()
		case tsZoneISO1, tsZoneISO2, tsZoneISO3:
			if strings.HasPrefix(s[pos:], "Z") {
				pos++
				ok = true
				break
			}
			if pos >= len(s) || (s[pos] != '+' && s[pos] != '-') {
				return f, false
			}
			neg := s[pos] == '-'
			pos++
			var h, m int64
			if h, ok = twoDigits(); !ok {
				return f, false
			}
			if t.kind == tsZoneISO3 {
				if !strings.HasPrefix(s[pos:], ":") {
					return f, false
				}
				pos++
			}
			if t.kind != tsZoneISO1 {
				if m, ok = twoDigits(); !ok {
					return f, false
				}
			}
			if h > 23 || m > 59 {
				return f, false
			}
			f.offsetMinutes = h*60 + m
			if neg {
				f.offsetMinutes = -f.offsetMinutes
			}
		case tsZoneGeneral:
			f.offsetMinutes, ok = generalZone(s, &pos)
		}
		if !ok {
			return f, false
		}
	}
	return f, pos == len(s)
}

// generalZone reads a zone as SimpleDateFormat's "z" pattern does: +hhmm,
// GMT+h:mm, or a zone name, in any case.
func generalZone(s string, pos *int) (int64, bool) {
	rest := s[*pos:]
	if len(rest) >= 5 && (rest[0] == '+' || rest[0] == '-') && allDigits(rest[1:5]) {
		h, _ := strconv.Atoi(rest[1:3])
		m, _ := strconv.Atoi(rest[3:5])
		if h > 23 || m > 59 {
			return 0, false
		}
		*pos += 5
		off := int64(h*60 + m)
		if rest[0] == '-' {
			off = -off
		}
		return off, true
	}
	if len(rest) >= 3 && strings.EqualFold(rest[:3], "gmt") && len(rest) > 3 && (rest[3] == '+' || rest[3] == '-') {
		i := 4
		for i < len(rest) && i < 6 && rest[i] >= '0' && rest[i] <= '9' {
			i++
		}
		if i > 4 && i+3 <= len(rest) && rest[i] == ':' && allDigits(rest[i+1:i+3]) {
			h, _ := strconv.Atoi(rest[4:i])
			m, _ := strconv.Atoi(rest[i+1 : i+3])
			if h > 23 || m > 59 {
				return 0, false
			}
			*pos += i + 3
			off := int64(h*60 + m)
			if rest[3] == '-' {
				off = -off
			}
			return off, true
		}
	}
	// The longest name that matches wins.
	best := 0
	var off int
	for name, o := range zoneNames {
		if len(name) > best && len(rest) >= len(name) && strings.EqualFold(rest[:len(name)], name) {
			best, off = len(name), o
		}
	}
	if best == 0 {
		return 0, false
	}
	*pos += best
	return int64(off), true
}

func isJavaSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v' || (c >= 0x1c && c <= 0x1f)
}

// hybridMillis converts calendar fields (a year of the common era, so 1 or
// more) to milliseconds since the epoch as a non-lenient GregorianCalendar
// does, rejecting fields it would have to adjust.
func (f tsFields) hybridMillis() (int64, bool) {
	if f.year < 1 || f.year > 292278994 || f.month < 1 || f.month > 12 || f.hour > 23 || f.minute > 59 ||
		f.second > 59 || f.milli > 999 || f.day < 1 {
		return 0, false
	}
	var days int64
	ymd := f.year*10000 + f.month*100 + f.day
	switch {
	case ymd >= 15821015:
		if f.day > int64(monthLength(f.year, int(f.month), false)) {
			return 0, false
		}
		days = daysFromCivil(f.year, int(f.month), int(f.day))
	case ymd <= 15821004:
		if f.day > int64(monthLength(f.year, int(f.month), true)) {
			return 0, false
		}
		days = daysFromJulian(f.year, int(f.month), int(f.day))
	default:
		return 0, false // the days the Gregorian reform skipped
	}
	ms := days*millisPerDay + f.hour*3600000 + f.minute*60000 + f.second*1000 + f.milli
	return ms - f.offsetMinutes*60000, true
}

// parseTimestampString reads a timestamp as Cassandra's
// TimestampSerializer.dateStringToTimestamp does: "now", a number of
// milliseconds, or a date-time in one of its patterns (UTC when no zone is
// given).
func parseTimestampString(s string) (int64, error) {
	if strings.EqualFold(s, "now") {
		return time.Now().UnixMilli(), nil
	}
	if isRawNumber(s) {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("Unable to make long (for date) from: '%s'", s)
		}
		return n, nil
	}
	for _, p := range timestampPatterns {
		if f, ok := matchTimestamp(s, p); ok {
			if ms, ok := f.hybridMillis(); ok {
				return ms, nil
			}
		}
	}
	return 0, fmt.Errorf("Unable to coerce '%s' to a formatted date (long)", s)
}

// isRawNumber matches ^-?\d+$.
func isRawNumber(s string) bool {
	if strings.HasPrefix(s, "-") {
		s = s[1:]
	}
	return allDigits(s)
}
