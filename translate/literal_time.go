package translate

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// timestampLayouts are the date-time forms Cassandra's TimestampSerializer
// accepts, without their zone suffix, which is parsed separately.
var timestampLayouts = []string{
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04",
	"2006-01-02T15:04",
	"2006-01-02",
}

// parseTimestamp reads a CQL timestamp literal ('2023-10-27 10:05:00+0000',
// '2023-10-27', a number of milliseconds) as milliseconds since the epoch.
// Without a zone the time is UTC.
func parseTimestamp(s string) (int64, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, nil
	}
	body, loc, err := splitZone(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("Unable to parse a date/time from '%s'", s)
	}
	for _, layout := range timestampLayouts {
		if t, err := time.ParseInLocation(layout, body, loc); err == nil {
			return t.UnixMilli(), nil
		}
	}
	return 0, fmt.Errorf("Unable to parse a date/time from '%s'", s)
}

// splitZone separates a trailing zone (Z, +hh, +hhmm, +hh:mm) from a
// date-time string.
func splitZone(s string) (string, *time.Location, error) {
	if strings.HasSuffix(s, "Z") || strings.HasSuffix(s, "z") {
		return s[:len(s)-1], time.UTC, nil
	}
	// A zone starts at the last + or - after the time of day.
	i := strings.LastIndexAny(s, "+-")
	if i < 11 || !strings.Contains(s[:i], ":") {
		return s, time.UTC, nil
	}
	z := strings.ReplaceAll(s[i+1:], ":", "")
	var h, m int
	var err error
	switch len(z) {
	case 2:
		h, err = strconv.Atoi(z)
	case 4:
		if h, err = strconv.Atoi(z[:2]); err == nil {
			m, err = strconv.Atoi(z[2:])
		}
	default:
		return "", nil, fmt.Errorf("bad zone")
	}
	if err != nil {
		return "", nil, err
	}
	off := (h*60 + m) * 60
	if s[i] == '-' {
		off = -off
	}
	return strings.TrimSpace(s[:i]), time.FixedZone("", off), nil
}

// parseDate reads a CQL date literal: 'yyyy-mm-dd', or a number that is
// already the serialized day count (2^31 is 1970-01-01).
func parseDate(s string, integer bool) ([]byte, error) {
	if integer {
		n, err := strconv.ParseUint(s, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("Unable to make unsigned int (for date) from: '%s'", s)
		}
		return binary.BigEndian.AppendUint32(nil, uint32(n)), nil
	}
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		return nil, fmt.Errorf("Unable to coerce '%s' to a formatted date (long)", s)
	}
	days := t.Unix()/86400 + 1<<31
	return binary.BigEndian.AppendUint32(nil, uint32(days)), nil
}
