package pgschema

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ToJSON returns the JSON text of a serialized value of type t exactly as
// Cassandra 4.1's toJson() and SELECT JSON write it (AbstractType's
// toJSONString): numbers as JSON numbers (NaN and infinities as null),
// blobs as "0x..." strings, timestamps as "yyyy-mm-dd hh:mm:ss.SSSZ" in
// UTC, lists, sets, tuples and vectors as arrays, maps as objects keyed by
// the key's JSON text, user types as objects keyed by field name (quoted
// when not lower case). A nil value is null.
func ToJSON(t *Type, v []byte) ([]byte, error) {
	if v == nil {
		return []byte("null"), nil
	}
	return appendJSON(nil, t, v, false)
}

// FromJSON reads a JSON value into the serialization of type t exactly as
// Cassandra 4.1's fromJson() and INSERT JSON do (AbstractType's
// fromJSONObject), with their error texts: numbers are also accepted as
// strings, timestamps as milliseconds or date-time strings, sets and maps
// come out sorted. JSON null gives nil.
func FromJSON(t *Type, json []byte) ([]byte, error) {
	n, err := parseJSON(json)
	if err != nil {
		return nil, fmt.Errorf("Could not decode JSON string '%s': %v", json, err)
	}
	return fromJSONNode(t, n, false)
}

// StorageJSON returns the JSON text with which a value of type t is stored
// in jsonb (see below): ToJSON's text, changed only where that would not
// read back exactly. Queries that compare with stored jsonb values must
// send this form. A nil value is null.
func StorageJSON(t *Type, v []byte) ([]byte, error) {
	if v == nil {
		return []byte("null"), nil
	}
	return appendJSON(nil, t, v, true)
}

// JSONKey returns the object key under which the jsonb form of a map with
// keys of type t holds the key v: the key's JSON text, or the string that
// text is when it is a string ("a" for the text a, "1" for the int 1), as
// Cassandra's MapType.toJSONString writes keys.
func JSONKey(t *Type, v []byte) (string, error) {
	j, err := appendJSON(nil, t, v, true)
	if err != nil {
		return "", err
	}
	if len(j) > 0 && j[0] == '"' {
		n, err := parseJSON(j)
		if err != nil {
			return "", err
		}
		return n.s, nil
	}
	return string(j), nil
}

// JSONFieldName returns the key under which the JSON form of a user type
// holds a field: the name, in double quotes when it is not all lower case
// (UserType.toJSONString), so "Zip" is held under "\"Zip\"".
func JSONFieldName(name string) string {
	if name != strings.ToLower(name) {
		return `"` + name + `"`
	}
	return name
}

// Storing a value as jsonb uses Cassandra's JSON form with the changes
// needed to read every value back exactly ("lossless" below): NaN and
// infinities as the strings "NaN", "Infinity" and "-Infinity", and -0.0 as
// "-0.0" (jsonb numbers have neither); decimals that jsonb's numeric
// cannot hold exactly (a negative scale such as 1E+3, or more than 16383
// decimals) as strings; timestamps before year 1 as milliseconds; times
// outside a day as nanoseconds; IPv4-mapped IPv6 addresses in IPv6 form; a
// zero duration as "0d" rather than "". fromJson() accepts all of these
// except the last three, which Cassandra could not have written.

// minADMillis is 0001-01-01T00:00Z in Java's Julian calendar, the first
// instant whose toJson() text reads back.
var minADMillis = daysFromJulian(1, 1, 1) * millisPerDay

// appendJSON appends the JSON text of a value.
func appendJSON(dst []byte, t *Type, v []byte, lossless bool) ([]byte, error) {
	if len(v) == 0 {
		switch t.Kind {
		case Text, Ascii:
			return append(dst, `""`...), nil
		case Blob:
			return append(dst, `"0x"`...), nil
		case List, Set, Map, Tuple, UDT, Vector:
			return dst, fmt.Errorf("an empty %s value has no JSON form", t)
		case Boolean, Date, Time:
			if lossless {
				return dst, errEmpty(t)
			}
		}
		// toJSONString gives "" for empty numbers, uuids, timestamps...,
		// which fromJson() reads back as empty values.
		return append(dst, `""`...), nil
	}
	if err := validate(t, v); err != nil {
		return dst, err
	}
	switch t.Kind {
	case Ascii, Text:
		if lossless && (bytes.IndexByte(v, 0) >= 0 || bytes.IndexByte(v, textEscape) >= 0) {
			// Stored, text is escaped as in text columns: jsonb cannot
			// hold U+0000 either. Other text the escape leaves as it is.
			e, _ := escapeText(nil, v)
			return appendJSONString(dst, string(e)), nil
		}
		return appendJSONString(dst, string(v)), nil
	case Blob:
		dst = append(dst, `"0x`...)
		dst = hex.AppendEncode(dst, v)
		return append(dst, '"'), nil
	case Boolean:
		return strconv.AppendBool(dst, v[0] != 0), nil
	case Int, Bigint, Counter, Smallint, Tinyint:
		n, _ := varintInt64(v)
		return strconv.AppendInt(dst, n, 10), nil
	case Varint:
		digits, neg := varintDigits(v)
		if neg {
			dst = append(dst, '-')
		}
		if lossless && len(digits) > 100000 {
			return appendJSONString(dst, digits), nil
		}
		return append(dst, digits...), nil
	case Decimal:
		scale, unscaled, _ := decimalParts(v)
		digits, neg := varintDigits(unscaled)
		neg = neg && digits != "0"
		if !lossless {
			return append(dst, bigDecimalString(digits, neg, int64(scale))...), nil
		}
		if scale < 0 || scale > pgNumericMaxScale || len(digits) > 100000 {
			return appendJSONString(dst, bigDecimalString(digits, neg, int64(scale))), nil
		}
		return append(dst, bigDecimalPlain(digits, neg, int64(scale))...), nil
	case Float, Double:
		bits := 64
		f := 0.0
		if t.Kind == Float {
			bits = 32
			f = float64(math.Float32frombits(binary.BigEndian.Uint32(v)))
		} else {
			f = math.Float64frombits(binary.BigEndian.Uint64(v))
		}
		if math.IsNaN(f) || math.IsInf(f, 0) || (f == 0 && math.Signbit(f)) {
			if lossless {
				return appendJSONString(dst, JavaFloat(f, bits)), nil
			}
			if f != 0 {
				// JSON has no NaN or infinities: Cassandra writes null.
				return append(dst, "null"...), nil
			}
		}
		return append(dst, JavaFloat(f, bits)...), nil
	case UUID, Timeuuid:
		return appendJSONString(dst, UUIDText(v)), nil
	case Timestamp:
		ms := int64(binary.BigEndian.Uint64(v))
		if lossless && ms < minADMillis {
			return strconv.AppendInt(dst, ms, 10), nil
		}
		return appendJSONString(dst, formatTimestampJSON(ms)), nil
	case Date:
		return appendJSONString(dst, formatISODate(int64(binary.BigEndian.Uint32(v))-dateEpochShift)), nil
	case Time:
		n := int64(binary.BigEndian.Uint64(v))
		if lossless && (n < 0 || n >= nanosPerDay) {
			return strconv.AppendInt(dst, n, 10), nil
		}
		return appendJSONString(dst, formatTime(n)), nil
	case Inet:
		if lossless && len(v) == 16 && isV4Mapped(v) {
			return appendJSONString(dst, "::ffff:"+inetText(v[12:])), nil
		}
		return appendJSONString(dst, inetText(v)), nil
	case Duration:
		d, _, _ := parseDurationBytes(v)
		s := d.String()
		if lossless {
			if d.Months == math.MinInt32 || d.Days == math.MinInt32 || d.Nanos == math.MinInt64 {
				// No text reads back as these: the magnitude of the
				// minimum passes the maximum Cassandra's parser takes.
				dst = append(dst, '[')
				dst = strconv.AppendInt(dst, d.Months, 10)
				dst = append(dst, ", "...)
				dst = strconv.AppendInt(dst, d.Days, 10)
				dst = append(dst, ", "...)
				dst = strconv.AppendInt(dst, d.Nanos, 10)
				return append(dst, ']'), nil
			}
			if s == "" {
				s = "0d"
			}
		}
		return appendJSONString(dst, s), nil
	case List, Set, Vector:
		elems, err := Elements(t, v)
		if err != nil {
			return dst, err
		}
		dst = append(dst, '[')
		for i, e := range elems {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			if e == nil {
				return dst, errNullElement
			}
			if dst, err = appendJSON(dst, t.Elem[0], e, lossless); err != nil {
				return dst, err
			}
		}
		return append(dst, ']'), nil
	case Map:
		keys, values, err := MapEntries(v)
		if err != nil {
			return dst, err
		}
		dst = append(dst, '{')
		for i := range keys {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			if keys[i] == nil || values[i] == nil {
				return dst, errNullElement
			}
			// Object keys must be strings: a key whose JSON is not one is
			// written as a string holding its JSON.
			k, err := appendJSON(nil, t.Elem[0], keys[i], lossless)
			if err != nil {
				return dst, err
			}
			if len(k) > 0 && k[0] == '"' {
				dst = append(dst, k...)
			} else {
				dst = appendJSONString(dst, string(k))
			}
			dst = append(dst, ": "...)
			if dst, err = appendJSON(dst, t.Elem[1], values[i], lossless); err != nil {
				return dst, err
			}
		}
		return append(dst, '}'), nil
	case Tuple, UDT:
		elems, err := Elements(t, v)
		if err != nil {
			return dst, err
		}
		open, close := byte('['), byte(']')
		if t.Kind == UDT {
			open, close = '{', '}'
		}
		dst = append(dst, open)
		for i, et := range t.Elem {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			if t.Kind == UDT {
				dst = appendJSONString(dst, JSONFieldName(t.Fields[i]))
				dst = append(dst, ": "...)
			}
			if i >= len(elems) || elems[i] == nil {
				dst = append(dst, "null"...)
				continue
			}
			if dst, err = appendJSON(dst, et, elems[i], lossless); err != nil {
				return dst, err
			}
		}
		return append(dst, close), nil
	}
	return dst, fmt.Errorf("type %s has no JSON form", t)
}

// appendJSONString appends s as a JSON string, escaped as Jackson's
// quoteAsString does: quotes, backslashes and control characters only,
// \uXXXX in upper case for the controls without a short escape.
func appendJSONString(dst []byte, s string) []byte {
	const hexdigits = "0123456789ABCDEF"
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c >= 0x20:
			dst = append(dst, c)
		case c == '\b':
			dst = append(dst, `\b`...)
		case c == '\t':
			dst = append(dst, `\t`...)
		case c == '\n':
			dst = append(dst, `\n`...)
		case c == '\f':
			dst = append(dst, `\f`...)
		case c == '\r':
			dst = append(dst, `\r`...)
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexdigits[c>>4], hexdigits[c&0xf])
		}
	}
	return append(dst, '"')
}
