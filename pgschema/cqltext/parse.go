package cqltext

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/cqlpg/cqlpg/pgschema"
)

// Parse reads the text s of a value of type t, as Format writes it and
// cqlsh prints it, and returns the value's CQL serialization: s itself
// for text, a CQL literal for collections, tuples and user types (strings
// single-quoted inside them). The empty string is the empty value of
// types that have one; the caller decides where empty means null.
func Parse(t *pgschema.Type, s string) ([]byte, error) {
	switch t.Kind {
	case pgschema.List, pgschema.Set, pgschema.Map, pgschema.Tuple, pgschema.UDT, pgschema.Vector:
		p := &parser{s: s}
		v, err := p.value(t)
		if err != nil {
			return nil, err
		}
		p.space()
		if p.i < len(p.s) {
			return nil, p.errorf("unexpected %q after the value", p.rest())
		}
		if v == nil {
			return nil, errors.New("null is not a value here")
		}
		return pgschema.Normalize(t, v)
	}
	return scalar(t, s)
}

// parser reads a CQL literal of a composite type.
type parser struct {
	s string
	i int
}

func (p *parser) errorf(format string, args ...any) error {
	return fmt.Errorf("at character %d: %s", p.i+1, fmt.Sprintf(format, args...))
}

func (p *parser) rest() string {
	r := p.s[p.i:]
	if len(r) > 20 {
		r = r[:20] + "..."
	}
	return r
}

func (p *parser) space() {
	for p.i < len(p.s) && strings.IndexByte(" \t\r\n", p.s[p.i]) >= 0 {
		p.i++
	}
}

// accept consumes c, after spaces, if it comes next.
func (p *parser) accept(c byte) bool {
	p.space()
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *parser) expect(c byte) error {
	if !p.accept(c) {
		if p.i >= len(p.s) {
			return p.errorf("expected %q, found the end", c)
		}
		return p.errorf("expected %q, found %q", c, p.rest())
	}
	return nil
}

// value reads one value of type t: null, a literal of its kind, a quoted
// string, or a bare word.
func (p *parser) value(t *pgschema.Type) ([]byte, error) {
	p.space()
	if p.word(true) == "null" {
		p.word(false)
		return nil, nil
	}
	switch t.Kind {
	case pgschema.List, pgschema.Vector:
		return p.sequence(t, '[', ']')
	case pgschema.Set:
		return p.sequence(t, '{', '}')
	case pgschema.Tuple:
		return p.sequence(t, '(', ')')
	case pgschema.Map:
		return p.mapValue(t)
	case pgschema.UDT:
		return p.udt(t)
	}
	var text string
	if p.i < len(p.s) && p.s[p.i] == '\'' {
		s, err := p.quoted()
		if err != nil {
			return nil, err
		}
		text = s
	} else {
		text = p.word(false)
		if text == "" {
			return nil, p.errorf("expected a %s value, found %q", t, p.rest())
		}
	}
	v, err := scalar(t, text)
	if err != nil {
		return nil, p.errorf("%v", err)
	}
	return v, nil
}

// word returns the bare word at the cursor (up to a space or one of
// ,:[]{}()), lower-cased and without moving when peek is set.
func (p *parser) word(peek bool) string {
	j := p.i
	for j < len(p.s) && strings.IndexByte(" \t\r\n,:[]{}()'", p.s[j]) < 0 {
		j++
	}
	w := p.s[p.i:j]
	if peek {
		return strings.ToLower(w)
	}
	p.i = j
	return w
}

// quoted reads a single-quoted string, ” standing for a quote.
func (p *parser) quoted() (string, error) {
	var b strings.Builder
	start := p.i
	p.i++
	for p.i < len(p.s) {
		c := p.s[p.i]
		p.i++
		if c != '\'' {
			b.WriteByte(c)
			continue
		}
		if p.i < len(p.s) && p.s[p.i] == '\'' {
			b.WriteByte('\'')
			p.i++
			continue
		}
		return b.String(), nil
	}
	p.i = start
	return "", p.errorf("unterminated string")
}

func (p *parser) sequence(t *pgschema.Type, open, close byte) ([]byte, error) {
	if err := p.expect(open); err != nil {
		return nil, err
	}
	var elems [][]byte
	for i := 0; !p.accept(close); i++ {
		if i > 0 {
			if err := p.expect(','); err != nil {
				return nil, err
			}
		}
		et := t.Elem[0]
		if t.Kind == pgschema.Tuple {
			if i >= len(t.Elem) {
				return nil, p.errorf("too many components for %s", t)
			}
			et = t.Elem[i]
		}
		e, err := p.value(et)
		if err != nil {
			return nil, err
		}
		if e == nil && t.Kind != pgschema.Tuple {
			return nil, p.errorf("null is not allowed inside a %s", kindName(t))
		}
		elems = append(elems, e)
	}
	switch t.Kind {
	case pgschema.Tuple:
		for len(elems) < len(t.Elem) {
			elems = append(elems, nil)
		}
		return pgschema.SerializeTuple(elems), nil
	case pgschema.Vector:
		if len(elems) != t.Dim {
			return nil, p.errorf("expected %d elements for %s, got %d", t.Dim, t, len(elems))
		}
		return pgschema.SerializeVector(t.Elem[0], elems), nil
	}
	return pgschema.SerializeCollection(elems), nil
}

func kindName(t *pgschema.Type) string {
	return map[pgschema.Kind]string{pgschema.List: "list", pgschema.Set: "set", pgschema.Map: "map",
		pgschema.Vector: "vector"}[t.Kind]
}

func (p *parser) mapValue(t *pgschema.Type) ([]byte, error) {
	if err := p.expect('{'); err != nil {
		return nil, err
	}
	var keys, values [][]byte
	for i := 0; !p.accept('}'); i++ {
		if i > 0 {
			if err := p.expect(','); err != nil {
				return nil, err
			}
		}
		k, err := p.value(t.Elem[0])
		if err != nil {
			return nil, err
		}
		if err := p.expect(':'); err != nil {
			return nil, err
		}
		v, err := p.value(t.Elem[1])
		if err != nil {
			return nil, err
		}
		if k == nil || v == nil {
			return nil, p.errorf("null is not allowed inside a map")
		}
		keys, values = append(keys, k), append(values, v)
	}
	return pgschema.SerializeMap(keys, values), nil
}

func (p *parser) udt(t *pgschema.Type) ([]byte, error) {
	if err := p.expect('{'); err != nil {
		return nil, err
	}
	elems := make([][]byte, len(t.Fields))
	seen := make([]bool, len(t.Fields))
	for i := 0; !p.accept('}'); i++ {
		if i > 0 {
			if err := p.expect(','); err != nil {
				return nil, err
			}
		}
		p.space()
		var name string
		if p.i < len(p.s) && p.s[p.i] == '"' {
			end := p.i + 1
			for ; end < len(p.s); end++ {
				if p.s[end] == '"' {
					if end+1 < len(p.s) && p.s[end+1] == '"' {
						end++
						continue
					}
					break
				}
			}
			if end >= len(p.s) {
				return nil, p.errorf("unterminated field name")
			}
			name, p.i = strings.ReplaceAll(p.s[p.i+1:end], `""`, `"`), end+1
		} else {
			name = strings.ToLower(p.word(false))
		}
		f := -1
		for j, n := range t.Fields {
			if n == name {
				f = j
			}
		}
		if f < 0 {
			return nil, p.errorf("unknown field %s in user type %s", name, t.Name)
		}
		if seen[f] {
			return nil, p.errorf("field %s given twice", name)
		}
		seen[f] = true
		if err := p.expect(':'); err != nil {
			return nil, err
		}
		v, err := p.value(t.Elem[f])
		if err != nil {
			return nil, err
		}
		elems[f] = v
	}
	return pgschema.SerializeTuple(elems), nil
}

// scalar reads a scalar's text: cqlsh's forms first, then every form
// Cassandra's fromString accepts.
func scalar(t *pgschema.Type, s string) ([]byte, error) {
	var v []byte
	var err error
	switch t.Kind {
	case pgschema.Ascii, pgschema.Text:
		v, err = pgschema.FromString(t, s)
	case pgschema.Boolean:
		switch strings.ToLower(s) {
		case "true":
			v = []byte{1}
		case "false":
			v = []byte{0}
		case "":
			v = []byte{}
		default:
			err = fmt.Errorf("invalid boolean %q (want True or False)", s)
		}
	case pgschema.Tinyint, pgschema.Smallint, pgschema.Int, pgschema.Bigint, pgschema.Counter:
		v, err = parseInt(t.Kind, s)
	case pgschema.Float, pgschema.Double:
		v, err = parseFloat(t.Kind, s)
	case pgschema.Blob:
		if !strings.HasPrefix(s, "0x") && !strings.HasPrefix(s, "0X") {
			return nil, fmt.Errorf("invalid blob %q (want 0x followed by hex digits)", abbrev(s))
		}
		if v, err = hex.DecodeString(s[2:]); err != nil {
			return nil, fmt.Errorf("invalid blob %q: %v", abbrev(s), err)
		}
	case pgschema.UUID, pgschema.Timeuuid:
		v, err = parseUUID(s)
	case pgschema.Timestamp:
		v, err = parseTimestamp(t, s)
	case pgschema.Date:
		// cqlsh shows a date beyond its calendar as days since the epoch.
		if n, perr := strconv.ParseInt(s, 10, 64); perr == nil {
			if n < -1<<31 || n >= 1<<31 {
				return nil, fmt.Errorf("date %s is out of range", s)
			}
			v = binary.BigEndian.AppendUint32(nil, uint32(n+1<<31))
		} else {
			v, err = pgschema.FromString(t, s)
		}
	default:
		switch t.Kind {
		case pgschema.Time, pgschema.Inet, pgschema.Decimal, pgschema.Varint, pgschema.Duration:
			v, err = pgschema.FromString(t, s)
		default:
			err = fmt.Errorf("type %s has no text form", t)
		}
	}
	if err != nil {
		return nil, err
	}
	if err := pgschema.Validate(t, v); err != nil {
		return nil, err
	}
	return v, nil
}

func abbrev(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

func parseInt(k pgschema.Kind, s string) ([]byte, error) {
	if s == "" {
		return []byte{}, nil
	}
	bits := map[pgschema.Kind]int{pgschema.Tinyint: 8, pgschema.Smallint: 16, pgschema.Int: 32}[k]
	if bits == 0 {
		bits = 64
	}
	n, err := strconv.ParseInt(s, 10, bits)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) {
			return nil, fmt.Errorf("%s is out of range for %s", s, pgschema.Scalar(k))
		}
		return nil, fmt.Errorf("invalid %s %q", pgschema.Scalar(k), abbrev(s))
	}
	switch bits {
	case 8:
		return []byte{byte(n)}, nil
	case 16:
		return binary.BigEndian.AppendUint16(nil, uint16(n)), nil
	case 32:
		return binary.BigEndian.AppendUint32(nil, uint32(n)), nil
	}
	return binary.BigEndian.AppendUint64(nil, uint64(n)), nil
}

func parseFloat(k pgschema.Kind, s string) ([]byte, error) {
	if s == "" {
		return []byte{}, nil
	}
	bits := 64
	if k == pgschema.Float {
		bits = 32
	}
	var f float64
	switch s {
	case "NaN":
		f = math.NaN()
	case "Infinity", "+Infinity":
		f = math.Inf(1)
	case "-Infinity":
		f = math.Inf(-1)
	default:
		var err error
		if strings.ContainsAny(s, "nN") { // Go would also take inf, nan and hex forms
			return nil, fmt.Errorf("invalid %s %q", pgschema.Scalar(k), abbrev(s))
		}
		if f, err = strconv.ParseFloat(s, bits); err != nil {
			return nil, fmt.Errorf("invalid %s %q", pgschema.Scalar(k), abbrev(s))
		}
	}
	if bits == 32 {
		return binary.BigEndian.AppendUint32(nil, math.Float32bits(float32(f))), nil
	}
	return binary.BigEndian.AppendUint64(nil, math.Float64bits(f)), nil
}

func parseUUID(s string) ([]byte, error) {
	if s == "" {
		return []byte{}, nil
	}
	u, ok := pgschema.ParseUUID(s)
	if !ok {
		return nil, fmt.Errorf("invalid uuid %q", abbrev(s))
	}
	return u[:], nil
}

// timestampLayouts are cqlsh's form and its usual variants.
var timestampLayouts = []string{
	"2006-01-02 15:04:05.999999999-0700",
	"2006-01-02 15:04:05-0700",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02T15:04:05.999999999-0700",
	"2006-01-02T15:04:05.999999999Z07:00",
}

// parseTimestamp reads cqlsh's timestamps (microseconds are cut to the
// millisecond, as cqlsh's COPY FROM does), a number of milliseconds, or
// any form Cassandra's fromString takes.
func parseTimestamp(t *pgschema.Type, s string) ([]byte, error) {
	for _, layout := range timestampLayouts {
		if tm, err := time.Parse(layout, s); err == nil {
			return binary.BigEndian.AppendUint64(nil, uint64(tm.UnixMilli())), nil
		}
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return binary.BigEndian.AppendUint64(nil, uint64(n)), nil
	}
	v, err := pgschema.FromString(t, s)
	if err != nil {
		return nil, fmt.Errorf("invalid timestamp %q: %v", abbrev(s), err)
	}
	return v, nil
}
