package cqltext

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/cqlpg/cqlpg/pgschema"
)

// Style chooses between the exact form of files and cqlsh's display form.
type Style struct {
	// FloatPrecision and DoublePrecision are the significant digits of
	// float and double values; 0 writes the shortest exact form.
	FloatPrecision, DoublePrecision int
	// Escape shows control characters and backslashes in text as cqlsh
	// does in its tables (\n, \\).
	Escape bool
}

// Exact is the style of CSV files: every value reads back as it was.
var Exact = Style{}

// Table is cqlsh's style for query results.
var Table = Style{FloatPrecision: 5, DoublePrecision: 12, Escape: true}

// Format returns the text of the value v (CQL serialization) of type t in
// the exact style; a nil value is "".
func Format(t *pgschema.Type, v []byte) (string, error) {
	return Exact.Format(t, v)
}

// Format returns the text of the value v of type t; nil is "" at the top
// level and null inside a tuple or user type.
func (s Style) Format(t *pgschema.Type, v []byte) (string, error) {
	if v == nil {
		return "", nil
	}
	b, err := s.appendValue(nil, t, v, false)
	return string(b), err
}

func (s Style) appendValue(dst []byte, t *pgschema.Type, v []byte, quote bool) ([]byte, error) {
	if v == nil {
		return append(dst, "null"...), nil
	}
	if len(v) == 0 && t.Kind != pgschema.Text && t.Kind != pgschema.Ascii && t.Kind != pgschema.Blob {
		// An empty value (no bytes) of a type that is not a string.
		if quote {
			return append(dst, "''"...), nil
		}
		return dst, nil
	}
	switch t.Kind {
	case pgschema.Ascii, pgschema.Text:
		return s.appendText(dst, string(v), quote), nil
	case pgschema.Boolean:
		if len(v) != 1 {
			return nil, badLength(t, v)
		}
		if v[0] != 0 {
			return append(dst, "True"...), nil
		}
		return append(dst, "False"...), nil
	case pgschema.Tinyint, pgschema.Smallint, pgschema.Int, pgschema.Bigint, pgschema.Counter:
		n, ok := intValue(v, t.Kind)
		if !ok {
			return nil, badLength(t, v)
		}
		return strconv.AppendInt(dst, n, 10), nil
	case pgschema.Float:
		if len(v) != 4 {
			return nil, badLength(t, v)
		}
		return appendFloat(dst, float64(math.Float32frombits(binary.BigEndian.Uint32(v))), 32, s.FloatPrecision), nil
	case pgschema.Double:
		if len(v) != 8 {
			return nil, badLength(t, v)
		}
		return appendFloat(dst, math.Float64frombits(binary.BigEndian.Uint64(v)), 64, s.DoublePrecision), nil
	case pgschema.Blob:
		dst = append(dst, "0x"...)
		return hex.AppendEncode(dst, v), nil
	case pgschema.UUID, pgschema.Timeuuid:
		if len(v) != 16 {
			return nil, badLength(t, v)
		}
		return pgschema.AppendUUID(dst, v), nil
	case pgschema.Timestamp:
		if len(v) != 8 {
			return nil, badLength(t, v)
		}
		return quoted(dst, quote, formatTimestamp(int64(binary.BigEndian.Uint64(v)))), nil
	case pgschema.Date:
		if len(v) != 4 {
			return nil, badLength(t, v)
		}
		return quoted(dst, quote, formatDate(binary.BigEndian.Uint32(v))), nil
	case pgschema.Time:
		if len(v) != 8 {
			return nil, badLength(t, v)
		}
		return quoted(dst, quote, formatTime(int64(binary.BigEndian.Uint64(v)))), nil
	case pgschema.Inet:
		a, ok := netip.AddrFromSlice(v)
		if !ok {
			return nil, badLength(t, v)
		}
		return quoted(dst, quote, a.String()), nil
	case pgschema.Varint, pgschema.Decimal, pgschema.Duration:
		if err := pgschema.Validate(t, v); err != nil {
			return nil, err
		}
		j, err := pgschema.ToJSON(t, v)
		if err != nil {
			return nil, err
		}
		text := strings.Trim(string(j), `"`)
		if text == "" {
			text = "0s" // a zero duration, which Cassandra prints as nothing
		}
		return append(dst, text...), nil
	case pgschema.List, pgschema.Set, pgschema.Map, pgschema.Tuple, pgschema.UDT, pgschema.Vector:
		return s.appendComposite(dst, t, v)
	}
	return nil, fmt.Errorf("type %s has no text form", t)
}

// appendComposite writes a collection, tuple, user type or vector in CQL
// literal syntax, its strings quoted.
func (s Style) appendComposite(dst []byte, t *pgschema.Type, v []byte) ([]byte, error) {
	elems, err := pgschema.Elements(t, v)
	if err != nil {
		return nil, err
	}
	open, close := "[", "]"
	switch t.Kind {
	case pgschema.Set, pgschema.Map, pgschema.UDT:
		open, close = "{", "}"
	case pgschema.Tuple:
		open, close = "(", ")"
	}
	dst = append(dst, open...)
	switch t.Kind {
	case pgschema.Map:
		for i := 0; i+1 < len(elems); i += 2 {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			if dst, err = s.appendValue(dst, t.Elem[0], elems[i], true); err != nil {
				return nil, err
			}
			dst = append(dst, ": "...)
			if dst, err = s.appendValue(dst, t.Elem[1], elems[i+1], true); err != nil {
				return nil, err
			}
		}
	case pgschema.UDT:
		for i, f := range t.Fields {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = append(dst, fieldName(f)...)
			dst = append(dst, ": "...)
			var e []byte
			if i < len(elems) {
				e = elems[i]
			}
			if dst, err = s.appendValue(dst, t.Elem[i], e, true); err != nil {
				return nil, err
			}
		}
	case pgschema.Tuple:
		for i, et := range t.Elem {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			var e []byte
			if i < len(elems) {
				e = elems[i]
			}
			if dst, err = s.appendValue(dst, et, e, true); err != nil {
				return nil, err
			}
		}
	default:
		for i, e := range elems {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			if dst, err = s.appendValue(dst, t.Elem[0], e, true); err != nil {
				return nil, err
			}
		}
	}
	return append(dst, close...), nil
}

// fieldName is a user type's field name as CQL writes it: double-quoted
// unless it is a lower-case identifier.
func fieldName(f string) string {
	plain := f != ""
	for i, r := range f {
		if !(r >= 'a' && r <= 'z' || r == '_' || i > 0 && r >= '0' && r <= '9') {
			plain = false
		}
	}
	if plain {
		return f
	}
	return `"` + strings.ReplaceAll(f, `"`, `""`) + `"`
}

func (s Style) appendText(dst []byte, text string, quote bool) []byte {
	if s.Escape {
		var b strings.Builder
		for _, r := range text {
			switch {
			case r == '\\':
				b.WriteString(`\\`)
			case r == '\n':
				b.WriteString(`\n`)
			case r == '\t':
				b.WriteString(`\t`)
			case r == '\r':
				b.WriteString(`\r`)
			case r < 0x20 || r >= 0x7f && r <= 0xa0:
				if r < 0x100 {
					fmt.Fprintf(&b, `\x%02x`, r)
				} else {
					b.WriteRune(r)
				}
			default:
				b.WriteRune(r)
			}
		}
		text = b.String()
	}
	if !quote {
		return append(dst, text...)
	}
	dst = append(dst, '\'')
	dst = append(dst, strings.ReplaceAll(text, "'", "''")...)
	return append(dst, '\'')
}

func quoted(dst []byte, quote bool, s string) []byte {
	if quote {
		return append(append(append(dst, '\''), s...), '\'')
	}
	return append(dst, s...)
}

func badLength(t *pgschema.Type, v []byte) error {
	return fmt.Errorf("invalid %s value of %d bytes", t, len(v))
}

func intValue(v []byte, k pgschema.Kind) (int64, bool) {
	switch {
	case k == pgschema.Tinyint && len(v) == 1:
		return int64(int8(v[0])), true
	case k == pgschema.Smallint && len(v) == 2:
		return int64(int16(binary.BigEndian.Uint16(v))), true
	case k == pgschema.Int && len(v) == 4:
		return int64(int32(binary.BigEndian.Uint32(v))), true
	case (k == pgschema.Bigint || k == pgschema.Counter) && len(v) == 8:
		return int64(binary.BigEndian.Uint64(v)), true
	}
	return 0, false
}

// appendFloat writes a float as cqlsh does: NaN, Infinity, -Infinity, and
// numbers in %g style to cqlsh's precision prec, or the shortest exact
// digits when prec is 0 (exponents from 1e16 and below 1e-4, as Python's
// repr).
func appendFloat(dst []byte, f float64, bits, prec int) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "NaN"...)
	case math.IsInf(f, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(f, -1):
		return append(dst, "-Infinity"...)
	}
	if prec > 0 {
		// cqlsh counts the precision after the decimal point when %g
		// would not use an exponent anyway.
		exp := math.MinInt
		if math.Abs(f) > 2.220446049250313e-16 {
			exp = int(math.Log10(math.Abs(f))) // truncated toward zero, as Python's int()
		}
		if exp >= -4 && exp < prec {
			prec += exp + 1
		}
		return append(dst, strconv.FormatFloat(f, 'g', prec, 64)...)
	}
	exp := 0
	if f != 0 {
		e := strconv.FormatFloat(f, 'e', -1, bits)
		exp, _ = strconv.Atoi(e[strings.IndexByte(e, 'e')+1:])
	}
	if exp < -4 || exp >= 16 {
		return strconv.AppendFloat(dst, f, 'e', -1, bits)
	}
	out := strconv.AppendFloat(dst, f, 'f', -1, bits)
	if !strings.ContainsRune(string(out[len(dst):]), '.') {
		out = append(out, ".0"...)
	}
	return out
}

// formatTimestamp writes milliseconds since the epoch as cqlsh does, or
// the number itself outside the years 1 to 9999, which cqlsh cannot show.
func formatTimestamp(ms int64) string {
	const minMs, maxMs = -62135596800000, 253402300799999
	if ms < minMs || ms > maxMs {
		return strconv.FormatInt(ms, 10)
	}
	return time.UnixMilli(ms).UTC().Format("2006-01-02 15:04:05.000000-0700")
}

// formatDate writes a CQL date (days since the epoch plus 2^31), or the
// number of days since the epoch outside the years 1 to 9999.
func formatDate(d uint32) string {
	days := int64(d) - 1<<31
	const minDays, maxDays = -719162, 2932896
	if days < minDays || days > maxDays {
		return strconv.FormatInt(days, 10)
	}
	return time.Unix(days*86400, 0).UTC().Format("2006-01-02")
}

// formatTime writes nanoseconds since midnight as hh:mm:ss.nnnnnnnnn.
func formatTime(ns int64) string {
	if ns < 0 || ns >= 86400e9 {
		return strconv.FormatInt(ns, 10)
	}
	return fmt.Sprintf("%02d:%02d:%02d.%09d", ns/3600e9, ns/60e9%60, ns/1e9%60, ns%1e9)
}
