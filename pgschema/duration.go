package pgschema

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
)

// A CQL duration is three signed vints: months, days and nanoseconds, each
// zigzag-encoded, then written as an unsigned vint whose first byte has as
// many leading one bits as bytes follow it (Cassandra's VIntCoding).

// DurationValue is a decoded CQL duration: months, days and nanoseconds.
// DecodeDuration's values hold months and days within an int32 and all
// three of one sign.
type DurationValue struct {
	Months, Days int64
	Nanos        int64
}

// readUvint reads one unsigned vint.
func readUvint(b []byte) (uint64, int, error) {
	if len(b) == 0 {
		return 0, 0, errors.New("not enough bytes to read a vint")
	}
	first := b[0]
	extra := bits.LeadingZeros8(^first)
	if extra == 0 {
		return uint64(first), 1, nil
	}
	if len(b) < 1+extra {
		return 0, 0, errors.New("not enough bytes to read a vint")
	}
	var v uint64
	if extra < 8 {
		v = uint64(first & (0xff >> extra))
	}
	for _, c := range b[1 : 1+extra] {
		v = v<<8 | uint64(c)
	}
	return v, 1 + extra, nil
}

// appendUvint appends v as an unsigned vint in as few bytes as hold it.
func appendUvint(dst []byte, v uint64) []byte {
	// Each extra byte adds 7 bits of room to the first byte's 7.
	magnitude := bits.LeadingZeros64(v | 1)
	size := (639 - magnitude*9) >> 6
	if size == 1 {
		return append(dst, byte(v))
	}
	extra := size - 1
	start := len(dst)
	for i := extra; i >= 0; i-- {
		if i >= 8 {
			dst = append(dst, 0)
			continue
		}
		dst = append(dst, byte(v>>(8*i)))
	}
	dst[start] |= ^byte(0xff >> extra)
	return dst
}

func zigzag(v int64) uint64   { return uint64(v<<1) ^ uint64(v>>63) }
func unzigzag(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }

// parseDurationBytes decodes a serialized duration and reports how many
// bytes it used.
func parseDurationBytes(b []byte) (DurationValue, int, error) {
	var d DurationValue
	var parts [3]int64
	off := 0
	for i := range parts {
		u, n, err := readUvint(b[off:])
		if err != nil {
			return d, 0, err
		}
		parts[i] = unzigzag(u)
		off += n
	}
	d.Months, d.Days, d.Nanos = parts[0], parts[1], parts[2]
	return d, off, nil
}

// validateDuration checks a serialized duration as DurationSerializer does.
func validateDuration(b []byte) error {
	_, err := DecodeDuration(b)
	return err
}

// DecodeDuration reads a serialized duration with DurationSerializer's
// validation and its messages.
func DecodeDuration(b []byte) (DurationValue, error) {
	if len(b) < 3 {
		return DurationValue{}, fmt.Errorf("Expected at least 3 bytes for a duration (%d)", len(b))
	}
	d, _, err := parseDurationBytes(b)
	if err != nil {
		return DurationValue{}, err
	}
	if int64(int32(d.Months)) != d.Months {
		return DurationValue{}, fmt.Errorf("The duration months must be a 32 bits integer but was: %d", d.Months)
	}
	if int64(int32(d.Days)) != d.Days {
		return DurationValue{}, fmt.Errorf("The duration days must be a 32 bits integer but was: %d", d.Days)
	}
	if !((d.Months >= 0 && d.Days >= 0 && d.Nanos >= 0) || (d.Months <= 0 && d.Days <= 0 && d.Nanos <= 0)) {
		return DurationValue{}, fmt.Errorf("The duration months, days and nanoseconds must be all of the same sign (%d, %d, %d)",
			d.Months, d.Days, d.Nanos)
	}
	return d, nil
}

// Append appends the duration's serialization: three zigzag vints.
func (d DurationValue) Append(dst []byte) []byte {
	dst = appendUvint(dst, zigzag(d.Months))
	dst = appendUvint(dst, zigzag(d.Days))
	return appendUvint(dst, zigzag(d.Nanos))
}

// Duration units, as Cassandra's Duration counts them.
const (
	nanosPerMicro  = 1000
	nanosPerMilli  = 1000 * nanosPerMicro
	nanosPerSecond = 1000 * nanosPerMilli
	nanosPerMinute = 60 * nanosPerSecond
	nanosPerHour   = 60 * nanosPerMinute
)

// String returns the duration as Cassandra's Duration.toString writes it:
// "1y2mo3d4h5m6s7ms8us9ns" with zero parts left out, so a zero duration is
// the empty string.
func (d DurationValue) String() string {
	var b strings.Builder
	if d.Months < 0 || d.Days < 0 || d.Nanos < 0 {
		b.WriteByte('-')
	}
	part := func(v, unit uint64, name string) uint64 {
		if v == 0 || v < unit {
			return v
		}
		b.WriteString(strconv.FormatUint(v/unit, 10))
		b.WriteString(name)
		return v % unit
	}
	rest := part(absU(d.Months), 12, "y")
	part(rest, 1, "mo")
	part(absU(d.Days), 1, "d")
	if d.Nanos != 0 {
		rest = part(absU(d.Nanos), nanosPerHour, "h")
		rest = part(rest, nanosPerMinute, "m")
		rest = part(rest, nanosPerSecond, "s")
		rest = part(rest, nanosPerMilli, "ms")
		rest = part(rest, nanosPerMicro, "us")
		part(rest, 1, "ns")
	}
	return b.String()
}

func absU(v int64) uint64 {
	if v < 0 {
		return uint64(-v) // -MinInt64 wraps to its own absolute value as uint64
	}
	return uint64(v)
}

// durationBuilder adds duration parts in Cassandra's Duration.Builder way:
// units must come in decreasing size, once each, and totals must fit.
type durationBuilder struct {
	neg          bool
	months, days int64
	nanos        int64
	unit         int
}

var durationUnitNames = [...]string{"", "years", "months", "weeks", "days", "hours", "minutes", "seconds",
	"milliseconds", "microseconds", "nanoseconds"}

func (b *durationBuilder) order(unit int) error {
	if unit == b.unit {
		return fmt.Errorf("Invalid duration. The %s are specified multiple times", durationUnitNames[unit])
	}
	if unit <= b.unit {
		return fmt.Errorf("Invalid duration. The %s should be after %s", durationUnitNames[b.unit], durationUnitNames[unit])
	}
	b.unit = unit
	return nil
}

func durationLimit(n, limit int64, name string) error {
	if n > limit {
		// Cassandra names Integer.MAX_VALUE whatever the unit.
		return fmt.Errorf("Invalid duration. The total number of %s must be less or equal to %d", name, math.MaxInt32)
	}
	return nil
}

// add adds n of the unit with the given index (1 = years ... 10 = nanoseconds).
func (b *durationBuilder) add(unit int, n int64) error {
	if err := b.order(unit); err != nil {
		return err
	}
	switch unit {
	case 1, 2:
		per := int64(1)
		if unit == 1 {
			per = 12
		}
		if err := durationLimit(n, (math.MaxInt32-b.months)/per, "months"); err != nil {
			return err
		}
		b.months += n * per
	case 3, 4:
		per := int64(1)
		if unit == 3 {
			per = 7
		}
		if err := durationLimit(n, (math.MaxInt32-b.days)/per, "days"); err != nil {
			return err
		}
		b.days += n * per
	default:
		per := [...]int64{5: nanosPerHour, 6: nanosPerMinute, 7: nanosPerSecond, 8: nanosPerMilli,
			9: nanosPerMicro, 10: 1}[unit]
		if err := durationLimit(n, (math.MaxInt64-b.nanos)/per, "nanoseconds"); err != nil {
			return err
		}
		b.nanos += n * per
	}
	return nil
}

func (b *durationBuilder) build() DurationValue {
	if b.neg {
		return DurationValue{-b.months, -b.days, -b.nanos}
	}
	return DurationValue{b.months, b.days, b.nanos}
}

// parseDuration reads a duration as Cassandra's Duration.from does: the
// compact form (1h30m, 2y3mo, 12µs), ISO 8601 with designators (P1Y2M3DT4H5M6S),
// the week form (P2W) and the alternative form (P0001-02-03T04:05:06), each
// optionally negated with a leading '-'.
func parseDuration(input string) (DurationValue, error) {
	b := durationBuilder{neg: strings.HasPrefix(input, "-")}
	src := input
	if b.neg {
		src = input[1:]
	}
	bad := fmt.Errorf("Unable to convert '%s' to a duration", src)
	num := func(s string) (int64, error) {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			// Java's Long.parseLong fails the same way on overflow.
			return 0, fmt.Errorf("For input string: \"%s\"", s)
		}
		return n, nil
	}
	if strings.HasPrefix(src, "P") {
		switch {
		case strings.HasSuffix(src, "W"):
			digits := src[1 : len(src)-1]
			if digits == "" || !allDigits(digits) {
				return DurationValue{}, bad
			}
			n, err := num(digits)
			if err != nil {
				return DurationValue{}, err
			}
			if err := b.add(3, n); err != nil {
				return DurationValue{}, err
			}
			return b.build(), nil
		case strings.Contains(src, "-"):
			// P[YYYY]-[MM]-[DD]T[hh]:[mm]:[ss]
			s := src[1:]
			if len(s) != 19 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' {
				return DurationValue{}, bad
			}
			fields := []string{s[0:4], s[5:7], s[8:10], s[11:13], s[14:16], s[17:19]}
			units := []int{1, 2, 4, 5, 6, 7}
			for _, f := range fields {
				if !allDigits(f) {
					return DurationValue{}, bad
				}
			}
			for i, f := range fields {
				n, _ := num(f)
				if err := b.add(units[i], n); err != nil {
					return DurationValue{}, err
				}
			}
			return b.build(), nil
		}
		return parseISODuration(&b, src, bad, num)
	}
	// The compact form: one or more number-unit pairs covering the string.
	if src == "" {
		return DurationValue{}, bad
	}
	for i := 0; i < len(src); {
		j := i
		for j < len(src) && src[j] >= '0' && src[j] <= '9' {
			j++
		}
		if j == i {
			return DurationValue{}, bad
		}
		unit, size := durationSymbol(src[j:])
		if unit == 0 {
			return DurationValue{}, bad
		}
		n, err := num(src[i:j])
		if err != nil {
			return DurationValue{}, err
		}
		if err := b.add(unit, n); err != nil {
			return DurationValue{}, err
		}
		i = j + size
	}
	return b.build(), nil
}

// durationSymbol matches a unit symbol of the compact form at the start of
// s, as Cassandra's pattern does (longest alternatives first, any case).
func durationSymbol(s string) (unit, size int) {
	lower := strings.ToLower(s)
	switch {
	case strings.HasPrefix(lower, "mo"):
		return 2, 2
	case strings.HasPrefix(lower, "ms"):
		return 8, 2
	case strings.HasPrefix(lower, "us"):
		return 9, 2
	case strings.HasPrefix(s, "µs"), strings.HasPrefix(s, "µS"):
		return 9, len("µs")
	case strings.HasPrefix(lower, "ns"):
		return 10, 2
	case strings.HasPrefix(lower, "y"):
		return 1, 1
	case strings.HasPrefix(lower, "w"):
		return 3, 1
	case strings.HasPrefix(lower, "d"):
		return 4, 1
	case strings.HasPrefix(lower, "h"):
		return 5, 1
	case strings.HasPrefix(lower, "s"):
		return 7, 1
	case strings.HasPrefix(lower, "m"):
		return 6, 1
	}
	return 0, 0
}

// parseISODuration reads P[nY][nM][nD][T[nH][nM][nS]] (upper case only).
func parseISODuration(b *durationBuilder, src string, bad error, num func(string) (int64, error)) (DurationValue, error) {
	s := src[1:]
	type part struct {
		unit int
		n    int64
	}
	var parts []part
	read := func(designators string, units []int) bool {
		for k, d := range []byte(designators) {
			j := 0
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			if j == 0 || j >= len(s) || s[j] != d {
				continue
			}
			n, err := num(s[:j])
			if err != nil {
				return false
			}
			parts = append(parts, part{units[k], n})
			s = s[j+1:]
		}
		return true
	}
	if !read("YMD", []int{1, 2, 4}) {
		return DurationValue{}, bad
	}
	if strings.HasPrefix(s, "T") {
		s = s[1:]
		if !read("HMS", []int{5, 6, 7}) {
			return DurationValue{}, bad
		}
	}
	if s != "" {
		return DurationValue{}, bad
	}
	for _, p := range parts {
		if err := b.add(p.unit, p.n); err != nil {
			return DurationValue{}, err
		}
	}
	return b.build(), nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
