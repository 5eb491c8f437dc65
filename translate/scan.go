package translate

import (
	"strings"
	"unicode/utf8"
)

// tokenKind classifies a token. Keywords are identifiers: the parser
// matches them by their lower-cased text, since CQL reserves few words.
type tokenKind uint8

const (
	tokEOF tokenKind = iota
	tokIdent
	tokQuotedIdent
	tokString
	tokInteger
	tokFloat
	tokUUID
	tokHex
	tokDuration
	tokMarker      // ?
	tokNamedMarker // :name
	tokPunct
	tokIllegal
)

// Pos is a place in the statement text. Line and Col count from 1 and 0,
// as Cassandra's syntax errors do.
type Pos struct {
	Offset, Line, Col int
}

// token is one lexical token.
type token struct {
	kind tokenKind
	// text is the token as written, except that unquoted identifiers are
	// lower-cased and quoted ones, strings and named markers hold their
	// contents with escapes resolved.
	text string
	raw  string
	pos  Pos
	// msg, when set, is the syntax error an illegal token reports.
	msg string
}

// scanner splits CQL text into tokens. It skips whitespace and the three
// comment forms (--, // and /* */).
type scanner struct {
	src  string
	off  int
	line int
	col  int
}

func newScanner(src string) *scanner { return &scanner{src: src, line: 1} }

func (s *scanner) advance(n int) {
	for i := 0; i < n && s.off < len(s.src); i++ {
		if s.src[s.off] == '\n' {
			s.line++
			s.col = 0
		} else {
			s.col++
		}
		s.off++
	}
}

func (s *scanner) peekByte(i int) byte {
	if s.off+i < len(s.src) {
		return s.src[s.off+i]
	}
	return 0
}

// skipSpace skips whitespace and comments; it reports false at an
// unterminated /* comment, which it skips to the end of the text.
func (s *scanner) skipSpace() bool {
	for s.off < len(s.src) {
		c := s.src[s.off]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			s.advance(1)
		case c == '-' && s.peekByte(1) == '-', c == '/' && s.peekByte(1) == '/':
			for s.off < len(s.src) && s.src[s.off] != '\n' {
				s.advance(1)
			}
		case c == '/' && s.peekByte(1) == '*':
			end := strings.Index(s.src[s.off+2:], "*/")
			if end < 0 {
				s.advance(len(s.src) - s.off)
				return false
			}
			s.advance(end + 4)
		default:
			return true
		}
	}
	return true
}

// next returns the next token.
func (s *scanner) next() token {
	closed := s.skipSpace()
	pos := Pos{Offset: s.off, Line: s.line, Col: s.col}
	if !closed {
		return token{kind: tokIllegal, pos: pos, raw: "<EOF>", msg: "mismatched character '<EOF>' expecting '*'"}
	}
	if s.off >= len(s.src) {
		return token{kind: tokEOF, pos: pos, raw: "<EOF>"}
	}
	tok := s.scan()
	tok.pos = pos
	tok.raw = s.src[pos.Offset:s.off]
	if tok.kind != tokString && tok.kind != tokQuotedIdent && tok.kind != tokNamedMarker && tok.kind != tokIdent {
		tok.text = tok.raw
	}
	return tok
}

func (s *scanner) scan() token {
	c := s.src[s.off]
	rest := s.src[s.off:]
	switch {
	case isUUIDAt(rest):
		s.advance(36)
		return token{kind: tokUUID}
	case c == '\'':
		return s.quoted('\'', tokString)
	case c == '"':
		return s.quoted('"', tokQuotedIdent)
	case c == '$' && s.peekByte(1) == '$':
		end := strings.Index(rest[2:], "$$")
		if end < 0 {
			s.advance(len(rest))
			return token{kind: tokIllegal}
		}
		s.advance(end + 4)
		return token{kind: tokString, text: rest[2 : end+2]}
	case c == '0' && (s.peekByte(1) == 'x' || s.peekByte(1) == 'X'):
		n := 2
		for n < len(rest) && isHex(rest[n]) {
			n++
		}
		s.advance(n)
		return token{kind: tokHex}
	case isDigit(c) || (c == '-' && (isDigit(s.peekByte(1)) || s.peekByte(1) == '.' && isDigit(s.peekByte(2)))):
		return s.number()
	case c == '.' && isDigit(s.peekByte(1)):
		return s.number()
	case c == 'P' && isISOAlternative(rest), c == '-' && isISOAlternative(rest[1:]):
		// P0001-02-03T04:05:06, which an identifier would stop short of.
		s.advance(strings.IndexByte(rest, 'P') + len("P0000-00-00T00:00:00"))
		return token{kind: tokDuration}
	case c == '-' && s.peekByte(1) == 'P' && isISODuration(rest[1:wordEnd(rest, 1)]):
		s.advance(wordEnd(rest, 1))
		return token{kind: tokDuration}
	case isLetter(c):
		n := 1
		for n < len(rest) && (isLetter(rest[n]) || isDigit(rest[n]) || rest[n] == '_') {
			n++
		}
		if rest[0] == 'P' && n > 1 && isISODuration(rest[:n]) {
			s.advance(n)
			return token{kind: tokDuration}
		}
		s.advance(n)
		return token{kind: tokIdent, text: strings.ToLower(rest[:n])}
	case c == '?':
		s.advance(1)
		return token{kind: tokMarker}
	case c == ':' && isLetter(s.peekByte(1)):
		n := 2
		for n < len(rest) && (isLetter(rest[n]) || isDigit(rest[n]) || rest[n] == '_') {
			n++
		}
		s.advance(n)
		return token{kind: tokNamedMarker, text: strings.ToLower(rest[1:n])}
	case c == ':' && s.peekByte(1) == '"':
		s.advance(1)
		t := s.quoted('"', tokNamedMarker)
		return t
	}
	for _, p := range []string{"<=", ">=", "!=", "..", "+=", "-="} {
		if strings.HasPrefix(rest, p) {
			s.advance(2)
			return token{kind: tokPunct}
		}
	}
	if strings.IndexByte("(),;.*=<>[]{}:+-", c) >= 0 {
		s.advance(1)
		return token{kind: tokPunct}
	}
	_, size := utf8.DecodeRuneInString(rest)
	s.advance(size)
	return token{kind: tokIllegal}
}

// quoted reads a string or identifier between quote characters, where a
// doubled quote stands for one.
func (s *scanner) quoted(q byte, kind tokenKind) token {
	var b strings.Builder
	i := s.off + 1
	for i < len(s.src) {
		if s.src[i] == q {
			if i+1 < len(s.src) && s.src[i+1] == q {
				b.WriteByte(q)
				i += 2
				continue
			}
			s.advance(i + 1 - s.off)
			return token{kind: kind, text: b.String()}
		}
		b.WriteByte(s.src[i])
		i++
	}
	s.advance(len(s.src) - s.off)
	return token{kind: tokIllegal}
}

// number reads an integer, a float or a duration such as 12h30m.
func (s *scanner) number() token {
	rest := s.src[s.off:]
	n := 0
	if rest[0] == '-' {
		n++
	}
	for n < len(rest) && isDigit(rest[n]) {
		n++
	}
	kind := tokInteger
	if n < len(rest) && rest[n] == '.' && !strings.HasPrefix(rest[n:], "..") {
		kind = tokFloat
		n++
		for n < len(rest) && isDigit(rest[n]) {
			n++
		}
	}
	if n < len(rest) && (rest[n] == 'e' || rest[n] == 'E') {
		m := n + 1
		if m < len(rest) && (rest[m] == '+' || rest[m] == '-') {
			m++
		}
		if m < len(rest) && isDigit(rest[m]) {
			for m < len(rest) && isDigit(rest[m]) {
				m++
			}
			s.advance(m)
			return token{kind: tokFloat}
		}
	}
	if kind == tokInteger && n < len(rest) && (isLetter(rest[n]) || strings.HasPrefix(rest[n:], "µ")) {
		if end := durationEnd(rest, n); end > 0 {
			s.advance(end)
			return token{kind: tokDuration}
		}
	}
	s.advance(n)
	return token{kind: kind}
}

// durationUnits are the units of CQL's compact duration form, longest
// first so that "ms" is not read as "m".
var durationUnits = []string{"mo", "ms", "us", "µs", "ns", "y", "w", "d", "h", "m", "s"}

// durationEnd returns where a duration like 1h30m that starts at 0 ends,
// with the first unit at i; 0 if it is not one.
func durationEnd(s string, i int) int {
	for {
		unit := ""
		for _, u := range durationUnits {
			if len(s)-i >= len(u) && strings.EqualFold(s[i:i+len(u)], u) {
				unit = u
				break
			}
		}
		if unit == "" {
			return 0
		}
		i += len(unit)
		if i >= len(s) || !isDigit(s[i]) {
			if i < len(s) && (isLetter(s[i]) || s[i] == '_') {
				return 0
			}
			return i
		}
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	}
}

// isISODuration reports whether word is an ISO 8601 duration (P1Y2M3D,
// PT4H5M, P2W).
func isISODuration(word string) bool {
	w := word[1:] // the designators are upper case only, as in Cassandra's grammar
	seenT, digits := false, false
	for i := 0; i < len(w); i++ {
		c := w[i]
		switch {
		case isDigit(c):
			digits = true
		case c == 'T' && !seenT:
			seenT = true
		case strings.IndexByte("YMWDHS", c) >= 0 && digits:
			digits = false
		default:
			return false
		}
	}
	return !digits && len(w) > 0
}

// wordEnd returns where the identifier-like word that starts at i ends.
func wordEnd(s string, i int) int {
	for i < len(s) && (isLetter(s[i]) || isDigit(s[i]) || s[i] == '_') {
		i++
	}
	return i
}

// isISOAlternative reports whether s starts with a duration in ISO 8601's
// alternative format, P0001-02-03T04:05:06.
func isISOAlternative(s string) bool {
	const form = "P0000-00-00T00:00:00"
	if len(s) < len(form) {
		return false
	}
	for i := 0; i < len(form); i++ {
		if form[i] == '0' && !isDigit(s[i]) || form[i] != '0' && s[i] != form[i] {
			return false
		}
	}
	return len(s) == len(form) || !(isLetter(s[len(form)]) || isDigit(s[len(form)]) || s[len(form)] == '_')
}

func isUUIDAt(s string) bool {
	if len(s) < 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		switch i {
		case 8, 13, 18, 23:
			if s[i] != '-' {
				return false
			}
		default:
			if !isHex(s[i]) {
				return false
			}
		}
	}
	return len(s) == 36 || !(isLetter(s[36]) || isDigit(s[36]) || s[36] == '_')
}

func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isHex(c byte) bool    { return isDigit(c) || (c|0x20) >= 'a' && (c|0x20) <= 'f' }
func isLetter(c byte) bool { return (c|0x20) >= 'a' && (c|0x20) <= 'z' }
