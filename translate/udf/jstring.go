package udf

import (
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Java strings are sequences of UTF-16 code units; the interpreter keeps
// them as Go strings (UTF-8) and indexes them in code units: directly when
// the string is ASCII, the usual case, through a UTF-16 copy otherwise.

// isASCII reports whether s has only ASCII characters.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// utf16Units returns s in UTF-16 code units.
func utf16Units(s string) []uint16 {
	u := make([]uint16, 0, len(s))
	for _, r := range s {
		u = appendUTF16(u, r)
	}
	return u
}

// appendUTF16 appends rune r as one or two code units.
func appendUTF16(u []uint16, r rune) []uint16 {
	if r >= 0x10000 {
		r1, r2 := utf16.EncodeRune(r)
		return append(u, uint16(r1), uint16(r2))
	}
	return append(u, uint16(r))
}

// utf16Decode returns the string of code units u; an unpaired surrogate
// becomes U+FFFD, as Java's UTF-8 encoder writes it.
func utf16Decode(u []uint16) string {
	ascii := true
	for _, c := range u {
		if c >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		b := make([]byte, len(u))
		for i, c := range u {
			b[i] = byte(c)
		}
		return string(b)
	}
	return string(utf16.Decode(u))
}

// jlen is String.length.
func jlen(s string) int {
	if isASCII(s) {
		return len(s)
	}
	n := 0
	for _, r := range s {
		n++
		if r >= 0x10000 {
			n++
		}
	}
	return n
}

// charString is the string of one code unit.
func charString(c uint16) string {
	if c < utf8.RuneSelf {
		return string(rune(c))
	}
	return utf16Decode([]uint16{c})
}

// jcompare is String.compareTo: code unit order, then length.
func jcompare(a, b string) int {
	if isASCII(a) && isASCII(b) {
		n := min(len(a), len(b))
		for i := 0; i < n; i++ {
			if a[i] != b[i] {
				return int(a[i]) - int(b[i])
			}
		}
		return len(a) - len(b)
	}
	ua, ub := utf16Units(a), utf16Units(b)
	n := min(len(ua), len(ub))
	for i := 0; i < n; i++ {
		if ua[i] != ub[i] {
			return int(ua[i]) - int(ub[i])
		}
	}
	return len(ua) - len(ub)
}

// jhash is String.hashCode.
func jhash(s string) int32 {
	var h int32
	if isASCII(s) {
		for i := 0; i < len(s); i++ {
			h = 31*h + int32(s[i])
		}
		return h
	}
	for _, c := range utf16Units(s) {
		h = 31*h + int32(c)
	}
	return h
}

// junits is a string's code units without copying when it is ASCII.
type junits struct {
	s     string
	u     []uint16
	ascii bool
}

func unitsOf(s string) junits {
	if isASCII(s) {
		return junits{s: s, ascii: true}
	}
	return junits{s: s, u: utf16Units(s)}
}

func (j junits) len() int {
	if j.ascii {
		return len(j.s)
	}
	return len(j.u)
}

func (j junits) at(i int) uint16 {
	if j.ascii {
		return uint16(j.s[i])
	}
	return j.u[i]
}

// slice returns the code units [b, e) as a string.
func (j junits) slice(b, e int) string {
	if j.ascii {
		return j.s[b:e]
	}
	return utf16Decode(j.u[b:e])
}

// index returns the first index at or after from of sub, or -1.
func (j junits) index(sub junits, from int) int {
	from = max(from, 0)
	if from >= j.len() {
		if sub.s == "" {
			return j.len()
		}
		return -1
	}
	b := j.byteOffset(from)
	i := strings.Index(j.s[b:], sub.s)
	if i < 0 {
		return -1
	}
	return from + unitCount(j.s[b:b+i])
}

// lastIndex returns the last index at or before from of sub, or -1.
func (j junits) lastIndex(sub junits, from int) int {
	if from < 0 {
		return -1
	}
	// A match may start at from and run past it.
	end := j.byteOffset(min(from, j.len()))
	end = min(end+len(sub.s), len(j.s))
	i := strings.LastIndex(j.s[:end], sub.s)
	if i < 0 {
		return -1
	}
	return unitCount(j.s[:i])
}

// byteOffset is the byte offset of code unit i. Strings hold no unpaired
// surrogates (they decode to U+FFFD), so that matching in UTF-8 finds
// what matching code units would.
func (j junits) byteOffset(i int) int {
	if j.ascii {
		return i
	}
	n := 0
	for off, r := range j.s {
		if n >= i {
			return off
		}
		n++
		if r >= 0x10000 {
			n++
		}
	}
	return len(j.s)
}

// unitCount is the number of UTF-16 code units of s.
func unitCount(s string) int { return jlen(s) }
