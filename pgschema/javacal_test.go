package pgschema

import (
	"testing"
	"time"
)

func TestCalendars(t *testing.T) {
	// The proleptic Gregorian conversions agree with Go's time package.
	for days := int64(-800000); days < 3000000; days += 997 {
		y, m, d := civilFromDays(days)
		want := time.Unix(days*86400, 0).UTC()
		if int(y) != want.Year() || time.Month(m) != want.Month() || d != want.Day() {
			t.Fatalf("day %d: %d-%d-%d, want %s", days, y, m, d, want.Format(time.DateOnly))
		}
		if back := daysFromCivil(y, m, d); back != days {
			t.Fatalf("day %d comes back as %d", days, back)
		}
		jy, jm, jd := julianFromDays(days)
		if back := daysFromJulian(jy, jm, jd); back != days {
			t.Fatalf("julian day %d comes back as %d", days, back)
		}
	}
	// The day before the Gregorian calendar starts is Julian October 4th,
	// and Gregorian 0001-01-01 is Julian 0001-01-03.
	if y, m, d := julianFromDays(gregorianCutover/millisPerDay - 1); y != 1582 || m != 10 || d != 4 {
		t.Errorf("day before the cutover is %d-%d-%d", y, m, d)
	}
	if y, m, d := julianFromDays(daysFromCivil(1, 1, 1)); y != 1 || m != 1 || d != 3 {
		t.Errorf("0001-01-01 is Julian %d-%d-%d", y, m, d)
	}
}

func TestJavaCalendarMonths(t *testing.T) {
	// Adding a month pins the day to the new month's length, with the
	// Julian leap rule before 1582 and the Gregorian one after.
	tests := []struct {
		y, m, d int64
		add     int32
		want    string
	}{
		{2015, 1, 31, 1, "2015-02-28"},
		{2016, 1, 31, 1, "2016-02-29"},
		{1900, 1, 31, 1, "1900-02-28"},
		{1500, 1, 31, 1, "1500-02-29"},
		{2015, 12, 15, 1, "2016-01-15"},
		{2015, 1, 15, -1, "2014-12-15"},
	}
	for _, tt := range tests {
		c := JavaCalendar{Year: tt.y, Month: int(tt.m), Day: int(tt.d)}
		c.AddMonths(tt.add)
		if got := FormatTimestamp(c.Millis(), 'T')[:10]; got != tt.want {
			t.Errorf("%d-%d-%d + %d months = %s, want %s", tt.y, tt.m, tt.d, tt.add, got, tt.want)
		}
	}
}
