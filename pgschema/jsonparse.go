package pgschema

import (
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Cassandra decodes JSON with Jackson into Java objects: String, Integer,
// Long or BigInteger (by size) for integers, Double for other numbers,
// Boolean, ArrayList, LinkedHashMap (a repeated key keeps its first place
// and its last value) and null. Its error messages name those classes and
// print the objects with their toString, so the parser keeps enough to do
// the same.

type jsonKind uint8

const (
	jsonNull jsonKind = iota
	jsonBool
	jsonString
	jsonNumber
	jsonArray
	jsonObject
)

// jsonNode is one decoded JSON value.
type jsonNode struct {
	kind jsonKind
	// s is a string's value or a number's text.
	s string
	b bool
	// float marks a number with a fraction or an exponent, which Jackson
	// reads as a Double.
	float bool
	elems []*jsonNode
	// keys and vals are an object's members in first-appearance order.
	keys []string
	vals []*jsonNode
}

// parseJSON decodes one JSON value, with white space around it.
func parseJSON(b []byte) (*jsonNode, error) {
	p := jsonParser{s: b}
	p.space()
	n, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.space()
	if p.i != len(p.s) {
		return nil, fmt.Errorf("unexpected %q after the JSON value", p.s[p.i:])
	}
	return n, nil
}

type jsonParser struct {
	s []byte
	i int
}

const maxJSONDepth = 1000

func (p *jsonParser) space() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == '\n' || p.s[p.i] == '\r') {
		p.i++
	}
}

func (p *jsonParser) errorf(format string, args ...any) error {
	return fmt.Errorf("at offset %d: "+format, append([]any{p.i}, args...)...)
}

func (p *jsonParser) value(depth int) (*jsonNode, error) {
	if depth > maxJSONDepth {
		return nil, p.errorf("JSON nested too deeply")
	}
	if p.i >= len(p.s) {
		return nil, p.errorf("unexpected end of JSON input")
	}
	switch c := p.s[p.i]; {
	case c == '{':
		p.i++
		n := &jsonNode{kind: jsonObject}
		index := map[string]int{}
		p.space()
		if p.i < len(p.s) && p.s[p.i] == '}' {
			p.i++
			return n, nil
		}
		for {
			p.space()
			if p.i >= len(p.s) || p.s[p.i] != '"' {
				return nil, p.errorf("expected a string as an object key")
			}
			k, err := p.str()
			if err != nil {
				return nil, err
			}
			p.space()
			if p.i >= len(p.s) || p.s[p.i] != ':' {
				return nil, p.errorf("expected ':' after an object key")
			}
			p.i++
			p.space()
			v, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			if at, ok := index[k]; ok {
				n.vals[at] = v
			} else {
				index[k] = len(n.keys)
				n.keys, n.vals = append(n.keys, k), append(n.vals, v)
			}
			p.space()
			if p.i < len(p.s) && p.s[p.i] == ',' {
				p.i++
				continue
			}
			if p.i < len(p.s) && p.s[p.i] == '}' {
				p.i++
				return n, nil
			}
			return nil, p.errorf("expected ',' or '}' in an object")
		}
	case c == '[':
		p.i++
		n := &jsonNode{kind: jsonArray}
		p.space()
		if p.i < len(p.s) && p.s[p.i] == ']' {
			p.i++
			return n, nil
		}
		for {
			p.space()
			v, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			n.elems = append(n.elems, v)
			p.space()
			if p.i < len(p.s) && p.s[p.i] == ',' {
				p.i++
				continue
			}
			if p.i < len(p.s) && p.s[p.i] == ']' {
				p.i++
				return n, nil
			}
			return nil, p.errorf("expected ',' or ']' in an array")
		}
	case c == '"':
		s, err := p.str()
		if err != nil {
			return nil, err
		}
		return &jsonNode{kind: jsonString, s: s}, nil
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	}
	for _, w := range []struct {
		text string
		node jsonNode
	}{{"true", jsonNode{kind: jsonBool, b: true}}, {"false", jsonNode{kind: jsonBool}}, {"null", jsonNode{kind: jsonNull}}} {
		if strings.HasPrefix(string(p.s[p.i:min(len(p.s), p.i+5)]), w.text) {
			p.i += len(w.text)
			n := w.node
			return &n, nil
		}
	}
	return nil, p.errorf("unexpected character %q", p.s[p.i])
}

// number reads -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?.
func (p *jsonParser) number() (*jsonNode, error) {
	start := p.i
	digits := func() int {
		n := 0
		for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	if p.s[p.i] == '-' {
		p.i++
	}
	intStart := p.i
	if digits() == 0 {
		return nil, p.errorf("invalid number")
	}
	if p.s[intStart] == '0' && p.i-intStart > 1 {
		return nil, p.errorf("leading zeros are not allowed in JSON numbers")
	}
	float := false
	if p.i < len(p.s) && p.s[p.i] == '.' {
		p.i++
		float = true
		if digits() == 0 {
			return nil, p.errorf("invalid number")
		}
	}
	if p.i < len(p.s) && (p.s[p.i] == 'e' || p.s[p.i] == 'E') {
		p.i++
		float = true
		if p.i < len(p.s) && (p.s[p.i] == '+' || p.s[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			return nil, p.errorf("invalid number")
		}
	}
	return &jsonNode{kind: jsonNumber, s: string(p.s[start:p.i]), float: float}, nil
}

// str reads a string literal; unpaired surrogates become '?', as Java
// writes them in UTF-8.
func (p *jsonParser) str() (string, error) {
	p.i++ // the opening quote
	var b strings.Builder
	for {
		if p.i >= len(p.s) {
			return "", p.errorf("unterminated string")
		}
		c := p.s[p.i]
		switch {
		case c == '"':
			p.i++
			return b.String(), nil
		case c < 0x20:
			return "", p.errorf("control character in a string")
		case c == '\\':
			if p.i+1 >= len(p.s) {
				return "", p.errorf("unterminated string")
			}
			esc := p.s[p.i+1]
			p.i += 2
			switch esc {
			case '"', '\\', '/':
				b.WriteByte(esc)
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'u':
				r, err := p.hex4()
				if err != nil {
					return "", err
				}
				if utf16.IsSurrogate(r) {
					if r < 0xdc00 && p.i+1 < len(p.s) && p.s[p.i] == '\\' && p.s[p.i+1] == 'u' {
						save := p.i
						p.i += 2
						r2, err := p.hex4()
						if err == nil && r2 >= 0xdc00 && r2 <= 0xdfff {
							b.WriteRune(utf16.DecodeRune(r, r2))
							continue
						}
						p.i = save
					}
					b.WriteByte('?')
					continue
				}
				b.WriteRune(r)
			default:
				return "", p.errorf("invalid escape \\%c", esc)
			}
		default:
			r, size := utf8.DecodeRune(p.s[p.i:])
			if r == utf8.RuneError && size == 1 {
				return "", p.errorf("invalid UTF-8")
			}
			b.Write(p.s[p.i : p.i+size])
			p.i += size
		}
	}
}

func (p *jsonParser) hex4() (rune, error) {
	if p.i+4 > len(p.s) {
		return 0, p.errorf("invalid \\u escape")
	}
	v, err := strconv.ParseUint(string(p.s[p.i:p.i+4]), 16, 16)
	if err != nil {
		return 0, p.errorf("invalid \\u escape")
	}
	p.i += 4
	return rune(v), nil
}

// javaClass returns the simple name of the class Jackson gives the value.
func (n *jsonNode) javaClass() string {
	switch n.kind {
	case jsonBool:
		return "Boolean"
	case jsonString:
		return "String"
	case jsonNumber:
		if n.float {
			return "Double"
		}
		if _, err := strconv.ParseInt(n.s, 10, 32); err == nil {
			return "Integer"
		}
		if _, err := strconv.ParseInt(n.s, 10, 64); err == nil {
			return "Long"
		}
		return "BigInteger"
	case jsonArray:
		return "ArrayList"
	case jsonObject:
		return "LinkedHashMap"
	}
	return "null"
}

// javaClassName returns the class's full name, as ClassCastException
// messages show it.
func (n *jsonNode) javaClassName() string {
	switch n.kind {
	case jsonArray, jsonObject:
		return "java.util." + n.javaClass()
	case jsonNumber:
		if n.javaClass() == "BigInteger" {
			return "java.math.BigInteger"
		}
	}
	return "java.lang." + n.javaClass()
}

// javaString prints the value as its Java object's toString does.
func (n *jsonNode) javaString() string {
	switch n.kind {
	case jsonBool:
		return strconv.FormatBool(n.b)
	case jsonString:
		return n.s
	case jsonNumber:
		if n.float {
			f, _ := strconv.ParseFloat(n.s, 64)
			return JavaFloat(f, 64)
		}
		v, _ := new(big.Int).SetString(n.s, 10)
		return v.String()
	case jsonArray:
		parts := make([]string, len(n.elems))
		for i, e := range n.elems {
			parts[i] = e.javaString()
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case jsonObject:
		parts := make([]string, len(n.keys))
		for i, k := range n.keys {
			parts[i] = k + "=" + n.vals[i].javaString()
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return "null"
}

// expected is the error Cassandra's types give for a JSON value of the
// wrong kind: "Expected <what>, but got a <class>: <value>".
func (n *jsonNode) expected(what string) error {
	return fmt.Errorf("Expected %s, but got a %s: %s", what, n.javaClass(), n.javaString())
}

// errJSONDecode wraps a failure to decode a JSON string that stands for a
// collection, tuple or user type value.
func errJSONDecode(err error) error {
	return errors.New("Error decoding JSON string: " + err.Error())
}
