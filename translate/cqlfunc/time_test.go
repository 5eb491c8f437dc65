package cqlfunc

import (
	"encoding/binary"
	"math"
	"testing"
	"time"

	"github.com/cqlpg/cqlpg/pgschema"
)

func TestDurations(t *testing.T) {
	tests := []struct {
		d    pgschema.DurationValue
		want string
	}{
		{pgschema.DurationValue{Months: 14, Days: 3, Nanos: 3600e9 + 2*60e9 + 3e9 + 4e6 + 5e3 + 6}, "1y2mo3d1h2m3s4ms5us6ns"},
		{pgschema.DurationValue{Months: -12}, "-1y"},
		{pgschema.DurationValue{Nanos: -90e9}, "-1m30s"},
		{pgschema.DurationValue{Days: 7}, "7d"},
		// Java's Math.abs(Long.MIN_VALUE) stays negative.
		{pgschema.DurationValue{Nanos: math.MinInt64}, "-"},
		{pgschema.DurationValue{Months: -1, Nanos: math.MinInt64}, "-1mo"},
	}
	for _, tt := range tests {
		if got := durationText(tt.d); got != tt.want {
			t.Errorf("%+v prints %s, want %s", tt.d, got, tt.want)
		}
		back, err := pgschema.DecodeDuration(tt.d.Append(nil))
		if err != nil || back != tt.d {
			t.Errorf("%+v decodes to %+v, %v", tt.d, back, err)
		}
	}
	for _, bad := range [][]byte{{0, 0}, encDuration(1, -1, 0), pgschema.DurationValue{Months: 1 << 40}.Append(nil), {0, 0, 0xff}} {
		if _, err := pgschema.DecodeDuration(bad); err == nil {
			t.Errorf("duration %x accepted", bad)
		}
	}
}

func TestTemporalTextForms(t *testing.T) {
	tests := []struct{ got, want string }{
		{pgschema.FormatTimestamp(time.Date(2015, 5, 21, 11, 3, 2, 0, time.UTC).UnixMilli(), 'T'), "2015-05-21T11:03:02.000Z"},
		{pgschema.FormatTimestamp(-1, 'T'), "1969-12-31T23:59:59.999Z"},
		{pgschema.FormatTimestamp(1700000000123, 'T'), "2023-11-14T22:13:20.123Z"},
		{pgschema.FormatTimestamp(uuidEpochMillis, 'T'), "1582-10-15T00:00:00.000Z"},
		{pgschema.FormatTimestamp(uuidEpochMillis-1, 'T'), "1582-10-04T23:59:59.999Z"},
		{pgschema.FormatTimestamp(time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli(), 'T'), "0001-01-03T00:00:00.000Z"},
		{pgschema.FormatTimestamp(time.Date(12345, 6, 7, 0, 0, 0, 0, time.UTC).UnixMilli(), 'T'), "12345-06-07T00:00:00.000Z"},
		{pgschema.FormatDate(binary.BigEndian.Uint32(cqlDate(2015, 5, 21))), "2015-05-21"},
		{pgschema.FormatDate(binary.BigEndian.Uint32(cqlDate(12345, 1, 2))), "+12345-01-02"},
		{pgschema.FormatDate(binary.BigEndian.Uint32(cqlDate(-1, 1, 2))), "-0001-01-02"},
		{pgschema.FormatDate(binary.BigEndian.Uint32(cqlDate(1500, 3, 1))), "1500-03-01"},
		{pgschema.FormatTime(((11*60+3)*60 + 2) * 1e9), "11:03:02.000000000"},
		{pgschema.FormatTime(1), "00:00:00.000000001"},
		{pgschema.FormatTime(86399999999999), "23:59:59.999999999"},
	}
	for i, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%d: got %s, want %s", i, tt.got, tt.want)
		}
	}
}

func encDuration(months, days int32, nanos int64) []byte {
	return pgschema.DurationValue{Months: int64(months), Days: int64(days), Nanos: nanos}.Append(nil)
}

func cqlDate(y int, m time.Month, d int) []byte {
	return binary.BigEndian.AppendUint32(nil, uint32(time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix()/86400+1<<31))
}
