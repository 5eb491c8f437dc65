package pgschema

import (
	"errors"
	"math"
	"net/netip"
	"strconv"
	"strings"
)

// Cassandra's texts for numbers come from Java: Double.toString,
// Float.toString, BigDecimal.toString and their parsers. These functions
// give the same texts.

// JavaFloat formats f as Java's Double.toString (bits 64) or
// Float.toString (bits 32): the shortest digits that read back as f, in
// plain notation when the decimal exponent is in [-3, 7), else as d.dddE±n,
// always with a digit after the point. Java before version 19 sometimes
// printed one digit more than needed; this is the shortest form, as Java 19
// and later print.
func JavaFloat(f float64, bits int) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0:
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	var b strings.Builder
	if f < 0 {
		b.WriteByte('-')
		f = -f
	}
	s := strconv.FormatFloat(f, 'e', -1, bits)
	if strings.IndexByte(s, '.') < 0 {
		// One digit is enough: Java then takes the two-digit decimal
		// closest to f when that too reads back as f (4.9E-324, not
		// 5.0E-324).
		two := strconv.FormatFloat(f, 'e', 1, bits)
		if back, err := strconv.ParseFloat(two, bits); err == nil && back == f {
			s = two
		}
	}
	e := strings.IndexByte(s, 'e')
	exp, _ := strconv.Atoi(s[e+1:])
	digits := strings.Replace(s[:e], ".", "", 1)
	if t := strings.TrimRight(digits, "0"); t != "" {
		digits = t
	}
	switch {
	case exp >= 0 && exp < 7:
		if len(digits) <= exp+1 {
			b.WriteString(digits)
			b.WriteString(strings.Repeat("0", exp+1-len(digits)))
			b.WriteString(".0")
		} else {
			b.WriteString(digits[:exp+1])
			b.WriteByte('.')
			b.WriteString(digits[exp+1:])
		}
	case exp < 0 && exp >= -3:
		b.WriteString("0.")
		b.WriteString(strings.Repeat("0", -exp-1))
		b.WriteString(digits)
	default:
		b.WriteByte(digits[0])
		b.WriteByte('.')
		if len(digits) > 1 {
			b.WriteString(digits[1:])
		} else {
			b.WriteByte('0')
		}
		b.WriteByte('E')
		b.WriteString(strconv.Itoa(exp))
	}
	return b.String()
}

// parseJavaFloat reads a number as Java's Double.parseDouble (bits 64) or
// Float.parseFloat (bits 32): surrounding white space, an optional sign,
// NaN, Infinity, a decimal or hexadecimal number with an optional f, F, d
// or D suffix. Out of range numbers become infinities or zeros, as in Java.
func parseJavaFloat(s string, bits int) (float64, bool) {
	s = strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
	body := s
	neg := false
	if body != "" && (body[0] == '+' || body[0] == '-') {
		neg = body[0] == '-'
		body = body[1:]
	}
	var f float64
	switch body {
	case "NaN":
		return math.NaN(), true
	case "Infinity":
		f = math.Inf(1)
	default:
		if n := len(body); n > 0 && strings.IndexByte("fFdD", body[n-1]) >= 0 {
			body = body[:n-1]
		}
		if !javaNumberSyntax(body) {
			return 0, false
		}
		v, err := strconv.ParseFloat(body, bits)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return 0, false
		}
		f = v
	}
	if neg {
		f = -f
	}
	return f, true
}

// javaNumberSyntax checks the unsigned forms Java's FloatingDecimal reads:
// digits with an optional point and exponent, or 0x hex digits with a
// binary exponent.
func javaNumberSyntax(s string) bool {
	if strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X") {
		p := strings.IndexAny(s, "pP")
		if p < 0 {
			return false
		}
		mant, exp := s[2:p], s[p+1:]
		if exp != "" && (exp[0] == '+' || exp[0] == '-') {
			exp = exp[1:]
		}
		if !allDigits(exp) {
			return false
		}
		seen := false
		for i := 0; i < len(mant); i++ {
			c := mant[i]
			switch {
			case c == '.':
			case (c >= '0' && c <= '9') || (c|0x20 >= 'a' && c|0x20 <= 'f'):
				seen = true
			default:
				return false
			}
		}
		return seen && strings.Count(mant, ".") <= 1
	}
	mant, exp := s, ""
	if e := strings.IndexAny(s, "eE"); e >= 0 {
		mant, exp = s[:e], s[e+1:]
		if exp != "" && (exp[0] == '+' || exp[0] == '-') {
			exp = exp[1:]
		}
		if !allDigits(exp) {
			return false
		}
	}
	intPart, frac, dot := strings.Cut(mant, ".")
	if intPart == "" && frac == "" {
		return false
	}
	return (intPart == "" || allDigits(intPart)) && (!dot || frac == "" || allDigits(frac))
}

// ParseUUID reads a uuid in its canonical 8-4-4-4-12 form, hex digits
// in either case.
func ParseUUID(s string) ([16]byte, bool) {
	var u [16]byte
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return u, false
	}
	h, ok := parseHexBytes(s[0:8] + s[9:13] + s[14:18] + s[19:23] + s[24:36])
	if !ok {
		return u, false
	}
	copy(u[:], h)
	return u, true
}

func hexVal(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// AppendUUID appends the 16 bytes u as a lower-case canonical uuid, the
// 8-4-4-4-12 hexadecimal form java.util.UUID.toString writes.
func AppendUUID(dst, u []byte) []byte {
	const hexdigits = "0123456789abcdef"
	for i, c := range u {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			dst = append(dst, '-')
		}
		dst = append(dst, hexdigits[c>>4], hexdigits[c&0xf])
	}
	return dst
}

// UUIDText returns the 16 bytes u as a lower-case canonical uuid (see
// AppendUUID). A [16]byte array u is passed as u[:].
func UUIDText(u []byte) string { return string(AppendUUID(make([]byte, 0, 36), u)) }

// parseHexBytes reads hex digits in any case, as Cassandra's
// Hex.hexToBytes does (an even number of them).
func parseHexBytes(s string) ([]byte, bool) {
	if len(s)%2 != 0 {
		return nil, false
	}
	out := make([]byte, len(s)/2)
	for i := range out {
		hi, ok1 := hexVal(s[2*i])
		lo, ok2 := hexVal(s[2*i+1])
		if !ok1 || !ok2 {
			return nil, false
		}
		out[i] = hi<<4 | lo
	}
	return out, true
}

// parseInetString reads an address literal as Java's
// InetAddress.getByName does for literals: IPv4 in dotted form (also the
// short a, a.b and a.b.c forms), or IPv6, optionally in brackets or with a
// zone. An IPv4-mapped IPv6 address becomes the IPv4 address, as in Java,
// unless keepMapped is set. Host names are not resolved.
func parseInetString(s string, keepMapped bool) ([]byte, bool) {
	if v4, ok := parseJavaIPv4(s); ok {
		return v4, true
	}
	if strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") {
		s = s[1 : len(s)-1]
	}
	if !strings.Contains(s, ":") {
		return nil, false
	}
	if i := strings.IndexByte(s, '%'); i >= 0 {
		s = s[:i]
	}
	a, err := netip.ParseAddr(s)
	if err != nil || !a.Is6() {
		return nil, false
	}
	if a.Is4In6() && !keepMapped {
		b := a.Unmap().As4()
		return b[:], true
	}
	b := a.As16()
	return b[:], true
}

// parseJavaIPv4 reads 1 to 4 decimal parts; the last fills the remaining
// bytes.
func parseJavaIPv4(s string) ([]byte, bool) {
	parts := strings.Split(s, ".")
	if len(parts) > 4 || s == "" {
		return nil, false
	}
	var vals []uint64
	for _, p := range parts {
		if !allDigits(p) || len(p) > 10 {
			return nil, false
		}
		v, _ := strconv.ParseUint(p, 10, 64)
		vals = append(vals, v)
	}
	out := make([]byte, 4)
	for i, v := range vals[:len(vals)-1] {
		if v > 255 {
			return nil, false
		}
		out[i] = byte(v)
	}
	last := vals[len(vals)-1]
	rest := 4 - (len(vals) - 1)
	if last >= 1<<(8*rest) {
		return nil, false
	}
	for i := 3; i >= len(vals)-1; i-- {
		out[i] = byte(last)
		last >>= 8
	}
	return out, true
}

// inetText formats an address as Java's InetAddress.getHostAddress: dotted
// IPv4, or eight unabbreviated lower-case hex groups for IPv6. A 16-byte
// IPv4-mapped address prints as IPv4, since Java reads it as one.
func inetText(b []byte) string {
	if len(b) == 16 && isV4Mapped(b) {
		b = b[12:]
	}
	if len(b) == 4 {
		return strconv.Itoa(int(b[0])) + "." + strconv.Itoa(int(b[1])) + "." + strconv.Itoa(int(b[2])) + "." +
			strconv.Itoa(int(b[3]))
	}
	var s strings.Builder
	for i := 0; i < 16; i += 2 {
		if i > 0 {
			s.WriteByte(':')
		}
		s.WriteString(strconv.FormatUint(uint64(b[i])<<8|uint64(b[i+1]), 16))
	}
	return s.String()
}

func isV4Mapped(b []byte) bool {
	for _, c := range b[:10] {
		if c != 0 {
			return false
		}
	}
	return b[10] == 0xff && b[11] == 0xff
}

// JavaDoubleToInt is Java's (int) of a floating point value: NaN is 0,
// values out of range saturate, others truncate toward zero.
func JavaDoubleToInt(f float64) int32 {
	switch {
	case math.IsNaN(f):
		return 0
	case f >= math.MaxInt32:
		return math.MaxInt32
	case f <= math.MinInt32:
		return math.MinInt32
	}
	return int32(f)
}

// JavaDoubleToLong is Java's (long) of a floating point value.
func JavaDoubleToLong(f float64) int64 {
	switch {
	case math.IsNaN(f):
		return 0
	case f >= math.MaxInt64:
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return int64(f)
}
