package udf

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// The lexer splits a body into Java tokens. Comments and white space are
// dropped; every token keeps the line it starts on, counted from 1 at the
// body's first line as Cassandra numbers the lines of its compile errors.

// tokKind classifies a token.
type tokKind uint8

const (
	kEOF tokKind = iota
	kIdent
	kKeyword
	kInt    // an int literal
	kLong   // a long literal (suffix L)
	kFloat  // a float literal (suffix F)
	kDouble // a double literal
	kChar
	kString
	kOp
)

// token is one token: its kind, its text as written (for literals, the
// literal's source; for strings and chars, the decoded value) and line.
type token struct {
	kind tokKind
	text string
	line int
}

// javaKeywords are Java's reserved words, true, false and null included.
var javaKeywords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`abstract assert boolean break byte case catch char class const
		continue default do double else enum extends final finally float for goto if implements
		import instanceof int interface long native new package private protected public return
		short static strictfp super switch synchronized this throw throws transient try void
		volatile while true false null`) {
		javaKeywords[w] = true
	}
}

// javaOps are Java's operators and separators, longest first so that the
// lexer takes the longest match.
var javaOps = []string{
	">>>=", "<<=", ">>=", ">>>", "...", "->", "::", "++", "--", "&&", "||", "==", "!=", "<=", ">=",
	"+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<", ">>",
	"(", ")", "{", "}", "[", "]", ";", ",", ".", "@", "=", ">", "<", "!", "~", "?", ":",
	"+", "-", "*", "/", "&", "|", "^", "%",
}

// lexer holds the source being split.
type lexer struct {
	src  string
	pos  int
	line int
}

// lex splits src into tokens, ending with a kEOF token.
func lex(src string) ([]token, error) {
	l := &lexer{src: src, line: 1}
	var toks []token
	for {
		t, err := l.next()
		if err != nil {
			return nil, err
		}
		toks = append(toks, t)
		if t.kind == kEOF {
			return toks, nil
		}
	}
}

func (l *lexer) errorf(format string, args ...any) error {
	return compileErrorf(l.line, format, args...)
}

// skip passes white space and comments.
func (l *lexer) skip() error {
	for l.pos < len(l.src) {
		c := l.src[l.pos]
		switch {
		case c == '\n':
			l.line++
			l.pos++
		case c == ' ' || c == '\t' || c == '\r' || c == '\f':
			l.pos++
		case strings.HasPrefix(l.src[l.pos:], "//"):
			for l.pos < len(l.src) && l.src[l.pos] != '\n' {
				l.pos++
			}
		case strings.HasPrefix(l.src[l.pos:], "/*"):
			end := strings.Index(l.src[l.pos+2:], "*/")
			if end < 0 {
				return l.errorf("Unexpected end of comment")
			}
			l.line += strings.Count(l.src[l.pos:l.pos+2+end], "\n")
			l.pos += end + 4
		default:
			return nil
		}
	}
	return nil
}

func (l *lexer) next() (token, error) {
	if err := l.skip(); err != nil {
		return token{}, err
	}
	if l.pos >= len(l.src) {
		return token{kind: kEOF, line: l.line}, nil
	}
	c := l.src[l.pos]
	switch {
	case c == '"':
		if strings.HasPrefix(l.src[l.pos:], `"""`) {
			return token{}, l.errorf("text blocks are not supported by cqlpg user functions")
		}
		s, err := l.quoted('"')
		return token{kind: kString, text: s, line: l.line}, err
	case c == '\'':
		line := l.line
		s, err := l.quoted('\'')
		if err == nil && len(utf16Units(s)) != 1 {
			err = compileErrorf(line, "Invalid character constant")
		}
		return token{kind: kChar, text: s, line: line}, err
	case c >= '0' && c <= '9' || c == '.' && l.pos+1 < len(l.src) && isDigit(l.src[l.pos+1]):
		return l.number()
	case c == '_' || c == '$' || c < utf8.RuneSelf && (c|0x20 >= 'a' && c|0x20 <= 'z'):
		return l.word(), nil
	case c >= utf8.RuneSelf:
		r, _ := utf8.DecodeRuneInString(l.src[l.pos:])
		if unicode.IsLetter(r) {
			return l.word(), nil
		}
		return token{}, l.errorf("Syntax error on token \"%c\", delete this token", r)
	}
	for _, op := range javaOps {
		if strings.HasPrefix(l.src[l.pos:], op) {
			l.pos += len(op)
			return token{kind: kOp, text: op, line: l.line}, nil
		}
	}
	return token{}, l.errorf("Syntax error on token \"%c\", delete this token", c)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// word reads an identifier or keyword.
func (l *lexer) word() token {
	start := l.pos
	for l.pos < len(l.src) {
		r, size := utf8.DecodeRuneInString(l.src[l.pos:])
		if r != '_' && r != '$' && !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			break
		}
		l.pos += size
	}
	w := l.src[start:l.pos]
	if javaKeywords[w] {
		return token{kind: kKeyword, text: w, line: l.line}
	}
	return token{kind: kIdent, text: w, line: l.line}
}

// number reads a numeric literal, keeping its text for the parser to
// convert; the kind comes from its form and suffix.
func (l *lexer) number() (token, error) {
	start := l.pos
	src := l.src
	isHex := strings.HasPrefix(src[l.pos:], "0x") || strings.HasPrefix(src[l.pos:], "0X")
	isBin := strings.HasPrefix(src[l.pos:], "0b") || strings.HasPrefix(src[l.pos:], "0B")
	if isHex || isBin {
		l.pos += 2
	}
	floating := false
	for l.pos < len(src) {
		c := src[l.pos]
		switch {
		case isDigit(c) || c == '_':
		case isHex && (c|0x20 >= 'a' && c|0x20 <= 'f'):
		case c == '.' && !isBin:
			floating = true
		case (c|0x20 == 'e' && !isHex) || (c|0x20 == 'p' && isHex):
			floating = true
			if l.pos+1 < len(src) && (src[l.pos+1] == '+' || src[l.pos+1] == '-') {
				l.pos++
			}
		default:
			goto done
		}
		l.pos++
	}
done:
	kind := kInt
	if floating {
		kind = kDouble
	}
	if l.pos < len(src) {
		switch src[l.pos] | 0x20 {
		case 'l':
			if floating {
				return token{}, l.errorf("Syntax error on token \"%s\", delete this token", src[start:l.pos+1])
			}
			kind = kLong
			l.pos++
		case 'f':
			if !isHex || floating {
				kind = kFloat
				l.pos++
			}
		case 'd':
			if !isHex || floating {
				kind = kDouble
				l.pos++
			}
		}
	}
	if l.pos < len(src) {
		r, _ := utf8.DecodeRuneInString(src[l.pos:])
		if r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) {
			return token{}, l.errorf("Syntax error on token \"%s\", delete this token", src[start:l.pos+1])
		}
	}
	return token{kind: kind, text: src[start:l.pos], line: l.line}, nil
}

// quoted reads a string or character literal and decodes its escapes.
// It collects UTF-16 code units, as Java does, so that an escaped
// surrogate pair makes one character.
func (l *lexer) quoted(q byte) (string, error) {
	l.pos++
	var units []uint16
	for {
		if l.pos >= len(l.src) || l.src[l.pos] == '\n' || l.src[l.pos] == '\r' {
			if q == '"' {
				return "", l.errorf("String literal is not properly closed by a double-quote")
			}
			return "", l.errorf("Invalid character constant")
		}
		c := l.src[l.pos]
		if c == q {
			l.pos++
			return utf16Decode(units), nil
		}
		if c != '\\' {
			r, size := utf8.DecodeRuneInString(l.src[l.pos:])
			units = appendUTF16(units, r)
			l.pos += size
			continue
		}
		l.pos++
		if l.pos >= len(l.src) {
			continue
		}
		e := l.src[l.pos]
		l.pos++
		if v, ok := simpleEscapes[e]; ok {
			units = append(units, uint16(v))
			continue
		}
		switch {
		case e == 'u':
			for l.pos < len(l.src) && l.src[l.pos] == 'u' {
				l.pos++
			}
			if l.pos+4 > len(l.src) {
				return "", l.errorf("Invalid unicode")
			}
			var r uint16
			for i := 0; i < 4; i++ {
				d := hexDigit(l.src[l.pos+i])
				if d < 0 {
					return "", l.errorf("Invalid unicode")
				}
				r = r<<4 | uint16(d)
			}
			l.pos += 4
			units = append(units, r)
		case e >= '0' && e <= '7':
			v := uint16(e - '0')
			max := 2
			if e > '3' {
				max = 1
			}
			for i := 0; i < max && l.pos < len(l.src) && l.src[l.pos] >= '0' && l.src[l.pos] <= '7'; i++ {
				v = v*8 + uint16(l.src[l.pos]-'0')
				l.pos++
			}
			units = append(units, v)
		default:
			return "", l.errorf("Invalid escape sequence (valid ones are  \\b  \\t  \\n  \\f  \\r  \\\"  \\'  \\\\ )")
		}
	}
}

// simpleEscapes are the one-letter escapes of Java literals.
var simpleEscapes = map[byte]byte{'b': '\b', 't': '\t', 'n': '\n', 'f': '\f', 'r': '\r', '"': '"', '\'': '\'', '\\': '\\'}

func hexDigit(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c|0x20 >= 'a' && c|0x20 <= 'f':
		return int(c|0x20-'a') + 10
	}
	return -1
}
