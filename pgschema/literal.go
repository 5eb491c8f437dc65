package pgschema

import (
	"encoding/hex"
	"strings"
)

// CQLLiteral returns v, a serialized value of t, as a CQL literal that
// reads back as v: strings and the values CQL writes as strings quoted,
// numbers, booleans and uuids bare, blobs in hex, collections, tuples and
// user types in their brackets, null as null. It is how an aggregate's
// INITCOND is recorded and shown, as Cassandra's toCQLLiteral does.
func CQLLiteral(t *Type, v []byte) (string, error) {
	var b strings.Builder
	err := appendLiteral(&b, t, v)
	return b.String(), err
}

// literalBrackets open and close each kind's literal.
var literalBrackets = map[Kind]string{List: "[]", Vector: "[]", Set: "{}", Map: "{}", Tuple: "()", UDT: "{}"}

func appendLiteral(b *strings.Builder, t *Type, v []byte) error {
	if v == nil {
		b.WriteString("null")
		return nil
	}
	switch t.Kind {
	case Ascii, Text:
		s, err := unescaped(t, v)
		if err != nil {
			return err
		}
		b.WriteString(QuoteString(s))
		return nil
	case Blob:
		b.WriteString("0x" + hex.EncodeToString(v))
		return nil
	case UUID, Timeuuid:
		b.WriteString(UUIDText(v))
		return nil
	case List, Set, Map, Tuple, UDT, Vector:
		elems, err := Elements(t, v)
		if err != nil {
			return err
		}
		brackets := literalBrackets[t.Kind]
		b.WriteByte(brackets[0])
		for i, e := range elems {
			if i > 0 {
				sep := ", "
				if t.Kind == Map && i%2 == 1 {
					sep = ": "
				}
				b.WriteString(sep)
			}
			et := t.Elem[0]
			switch t.Kind {
			case Map:
				et = t.Elem[i%2]
			case Tuple:
				et = t.Elem[i]
			case UDT:
				b.WriteString(QuoteIdentifier(t.Fields[i]) + ": ")
				et = t.Elem[i]
			}
			if err := appendLiteral(b, et, e); err != nil {
				return err
			}
		}
		b.WriteByte(brackets[1])
		return nil
	}
	js, err := ToJSON(t, v)
	if err != nil {
		return err
	}
	s := string(js)
	if strings.HasPrefix(s, `"`) {
		// Dates, times, timestamps, inets and durations: their string form,
		// quoted as CQL quotes strings.
		s = QuoteString(strings.Trim(s, `"`))
	}
	b.WriteString(s)
	return nil
}

// unescaped returns a text value as a Go string.
func unescaped(t *Type, v []byte) (string, error) {
	if err := Validate(t, v); err != nil {
		return "", err
	}
	return string(v), nil
}
