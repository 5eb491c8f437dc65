package udf

import (
	"strconv"
	"strings"
	"time"

	"github.com/cqlpg/cqlpg/pgschema"
)

// java.text.SimpleDateFormat, which bodies use to print timestamps, in
// UTC: the time zone Cassandra servers run in, and the only one
// TimeZone.getTimeZone gives.

var (
	clsDateFormat  = newClass("java.text.SimpleDateFormat", "")
	clsTimeZone    = newClass("java.util.TimeZone", "")
	clsParseExcept = newClass("java.text.ParseException", "", "Exception")
)

// jdateFormat is a SimpleDateFormat: its pattern, split into fields and
// literal text.
type jdateFormat struct {
	pattern string
	fields  []dateField
}

// dateField is a pattern letter repeated n times, or literal text.
type dateField struct {
	letter byte
	n      int
	text   string
}

// jtimeZone is a TimeZone; only UTC is offered.
type jtimeZone struct{ id string }

var fullMonths = [...]string{"January", "February", "March", "April", "May", "June", "July", "August",
	"September", "October", "November", "December"}
var fullDays = [...]string{"Thursday", "Friday", "Saturday", "Sunday", "Monday", "Tuesday", "Wednesday"}

// parseDatePattern splits a pattern as SimpleDateFormat does, throwing
// IllegalArgumentException for letters it does not know.
func parseDatePattern(p string) []dateField {
	var out []dateField
	for i := 0; i < len(p); {
		c := p[i]
		switch {
		case c == '\'':
			end := i + 1
			var lit strings.Builder
			for ; end < len(p); end++ {
				if p[end] == '\'' {
					if end+1 < len(p) && p[end+1] == '\'' {
						lit.WriteByte('\'')
						end++
						continue
					}
					break
				}
				lit.WriteByte(p[end])
			}
			if end >= len(p) {
				throw(clsIllegalArgument, "Unterminated quote")
			}
			if end == i+1 {
				lit.WriteByte('\'')
			}
			out = append(out, dateField{text: lit.String()})
			i = end + 1
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			if !strings.ContainsRune("GyYMLwWDdFEuaHkKhmsSzZX", rune(c)) {
				throw(clsIllegalArgument, "Illegal pattern character '%c'", c)
			}
			n := 1
			for i+n < len(p) && p[i+n] == c {
				n++
			}
			out = append(out, dateField{letter: c, n: n})
			i += n
		default:
			out = append(out, dateField{text: string(c)})
			i++
		}
	}
	return out
}

// pad0 writes n with at least width digits.
func pad0(n int64, width int) string {
	s := strconv.FormatInt(n, 10)
	if len(s) < width {
		s = strings.Repeat("0", width-len(s)) + s
	}
	return s
}

// formatDate is SimpleDateFormat.format in UTC.
func formatDate(f *jdateFormat, ms int64) string {
	c := pgschema.JavaCalendarAt(ms)
	days := ms / 86400000
	if ms%86400000 < 0 {
		days--
	}
	dow := int(((days % 7) + 7) % 7)
	year := c.Year
	era := "AD"
	if year <= 0 {
		year, era = 1-year, "BC"
	}
	msOfDay := c.MsOfDay
	hour := msOfDay / 3600000
	var b strings.Builder
	for _, fd := range f.fields {
		if fd.letter == 0 {
			b.WriteString(fd.text)
			continue
		}
		switch fd.letter {
		case 'G':
			b.WriteString(era)
		case 'y', 'Y':
			if fd.n == 2 {
				b.WriteString(pad0(year%100, 2))
			} else {
				b.WriteString(pad0(year, fd.n))
			}
		case 'M', 'L':
			switch {
			case fd.n >= 4:
				b.WriteString(fullMonths[c.Month-1])
			case fd.n == 3:
				b.WriteString(monthNames[c.Month-1])
			default:
				b.WriteString(pad0(int64(c.Month), fd.n))
			}
		case 'd':
			b.WriteString(pad0(int64(c.Day), fd.n))
		case 'D':
			start := pgschema.JavaCalendar{Year: c.Year, Month: 1, Day: 1}.Millis()
			b.WriteString(pad0((ms-start)/86400000+1, fd.n))
		case 'E':
			if fd.n >= 4 {
				b.WriteString(fullDays[dow])
			} else {
				b.WriteString(dayNames[dow])
			}
		case 'u':
			b.WriteString(pad0(int64((dow+3)%7+1), fd.n))
		case 'F':
			b.WriteString(pad0(int64((c.Day-1)/7+1), fd.n))
		case 'a':
			if hour < 12 {
				b.WriteString("AM")
			} else {
				b.WriteString("PM")
			}
		case 'H':
			b.WriteString(pad0(hour, fd.n))
		case 'k':
			if hour == 0 {
				b.WriteString(pad0(24, fd.n))
			} else {
				b.WriteString(pad0(hour, fd.n))
			}
		case 'K':
			b.WriteString(pad0(hour%12, fd.n))
		case 'h':
			if hour%12 == 0 {
				b.WriteString(pad0(12, fd.n))
			} else {
				b.WriteString(pad0(hour%12, fd.n))
			}
		case 'm':
			b.WriteString(pad0(msOfDay/60000%60, fd.n))
		case 's':
			b.WriteString(pad0(msOfDay/1000%60, fd.n))
		case 'S':
			b.WriteString(pad0(msOfDay%1000, fd.n))
		case 'z':
			if fd.n >= 4 {
				b.WriteString("Coordinated Universal Time")
			} else {
				b.WriteString("UTC")
			}
		case 'Z':
			b.WriteString("+0000")
		case 'X':
			b.WriteString("Z")
		case 'w', 'W':
			throw(clsUnsupported, "week fields of SimpleDateFormat are not supported by cqlpg user functions")
		}
	}
	return b.String()
}

// parseDateText is SimpleDateFormat.parse in UTC: numbers, month and day
// names, AM and PM, zones written as the format writes them, and literal
// text, else ParseException.
func parseDateText(f *jdateFormat, s string) int64 {
	fail := func() { throw(clsParseExcept, "Unparseable date: \"%s\"", s) }
	year, month, day := int64(1970), 1, 1
	var hour, minute, second, milli int64
	pm, half := false, false
	pos := 0
	number := func(max int) int64 {
		start := pos
		neg := false
		if pos < len(s) && s[pos] == '-' {
			neg = true
			pos++
		}
		for pos < len(s) && s[pos] >= '0' && s[pos] <= '9' && (max == 0 || pos-start < max) {
			pos++
		}
		if pos == start || neg && pos == start+1 {
			fail()
		}
		n, err := strconv.ParseInt(s[start:pos], 10, 64)
		if err != nil {
			fail()
		}
		return n
	}
	name := func(names []string) int {
		for i, n := range names {
			if len(s)-pos >= len(n) && strings.EqualFold(s[pos:pos+len(n)], n) {
				pos += len(n)
				return i
			}
		}
		fail()
		return 0
	}
	for i, fd := range f.fields {
		// A numeric field followed by another takes only its width.
		width := 0
		if i+1 < len(f.fields) && f.fields[i+1].letter != 0 {
			width = fd.n
		}
		switch fd.letter {
		case 0:
			if !strings.HasPrefix(s[pos:], fd.text) {
				fail()
			}
			pos += len(fd.text)
		case 'y', 'Y':
			digits := pos
			y := number(width)
			if fd.n <= 2 && pos-digits == 2 {
				// The century that puts the date within 80 years before
				// and 20 years after now, as SimpleDateFormat does.
				now := int64(time.Now().UTC().Year())
				y += now - now%100
				if y > now+20 {
					y -= 100
				} else if y <= now-80 {
					y += 100
				}
			}
			year = y
		case 'M', 'L':
			if fd.n >= 3 {
				i := -1
				for k, n := range fullMonths {
					if len(s)-pos >= len(n) && strings.EqualFold(s[pos:pos+len(n)], n) {
						i, pos = k, pos+len(n)
						break
					}
				}
				if i < 0 {
					i = name(monthNames[:])
				}
				month = i + 1
			} else {
				month = int(number(width))
			}
		case 'd':
			day = int(number(width))
		case 'E':
			k := -1
			for j, n := range fullDays {
				if len(s)-pos >= len(n) && strings.EqualFold(s[pos:pos+len(n)], n) {
					k, pos = j, pos+len(n)
					break
				}
			}
			if k < 0 {
				name(dayNames[:])
			}
		case 'a':
			pm, half = name([]string{"AM", "PM"}) == 1, true
		case 'H', 'k':
			hour = number(width)
		case 'h', 'K':
			hour, half = number(width)%12, true
		case 'm':
			minute = number(width)
		case 's':
			second = number(width)
		case 'S':
			milli = number(width)
		case 'z':
			name([]string{"Coordinated Universal Time", "UTC", "GMT"})
		case 'Z':
			if !strings.HasPrefix(s[pos:], "+0000") {
				fail()
			}
			pos += 5
		case 'X':
			if !strings.HasPrefix(s[pos:], "Z") {
				fail()
			}
			pos++
		default:
			number(width)
		}
	}
	if half && pm {
		hour += 12
	}
	if month < 1 || month > 12 || day < 1 || day > 31 {
		fail()
	}
	days := pgschema.JavaCalendar{Year: year, Month: month, Day: day}.Millis()
	return days + ((hour*60+minute)*60+second)*1000 + milli
}

func declareText() {
	c := clsDateFormat
	get := func(r val) *jdateFormat { return r.r.(*jdateFormat) }
	ctor(c, "(String)", func(_ *frame, _ val, a []val) val {
		if a[0].r == nil {
			npe()
		}
		return refval(&jdateFormat{pattern: a[0].str(), fields: parseDatePattern(a[0].str())})
	})
	def(c, "String format(Date)", func(fr *frame, r val, a []val) val {
		if a[0].r == nil {
			npe()
		}
		s := formatDate(get(r), int64(a[0].r.(jdate)))
		fr.alloc(len(s))
		return strval(s)
	})
	parse := def(c, "Date parse(String)", func(_ *frame, r val, a []val) val {
		if a[0].r == nil {
			npe()
		}
		return refval(jdate(parseDateText(get(r), a[0].str())))
	})
	parse.throws = classType(clsParseExcept)
	def(c, "String toPattern()", func(_ *frame, r val, _ []val) val { return strval(get(r).pattern) })
	def(c, "void setTimeZone(TimeZone)", func(_ *frame, _ val, a []val) val {
		if a[0].r == nil {
			npe()
		}
		return null
	})
	def(c, "void setLenient(boolean)", func(*frame, val, []val) val { return null })
	tz := clsTimeZone
	def(tz, "static TimeZone getTimeZone(String)", func(_ *frame, _ val, a []val) val {
		if a[0].r == nil {
			npe()
		}
		switch id := a[0].str(); id {
		case "UTC", "GMT", "Z", "Etc/UTC", "GMT0", "UCT", "Universal", "Zulu":
			return refval(jtimeZone{id: id})
		default:
			throw(clsUnsupported, "the time zone %s is not supported by cqlpg user functions, which run in UTC", id)
		}
		return null
	})
	def(tz, "String getID()", func(_ *frame, r val, _ []val) val { return strval(r.r.(jtimeZone).id) })
	ctor(clsParseExcept, "(String,int)", func(_ *frame, _ val, a []val) val {
		if a[0].r == nil {
			return refval(&jthrow{cls: clsParseExcept})
		}
		return refval(&jthrow{cls: clsParseExcept, msg: a[0].str(), hasMsg: true})
	})
}
