package pgschema

import (
	"encoding/hex"
	"errors"
	"fmt"
	"unicode/utf8"
)

// fixedWidth gives the serialized size of fixed-size types, whether
// Cassandra also accepts an empty value, and the text its serializer uses
// when a value has another size.
var fixedWidth = kindTable[fixedWidthOf]{
	Int:       {4, true, "Expected 4 or 0 byte int (%d)"},
	Bigint:    {8, true, "Expected 8 or 0 byte long (%d)"},
	Counter:   {8, true, "Expected 8 or 0 byte long (%d)"},
	Smallint:  {2, false, "Expected 2 bytes for a smallint (%d)"},
	Tinyint:   {1, false, "Expected 1 byte for a tinyint (%d)"},
	Boolean:   {1, true, "Expected 1 or 0 byte value for a boolean (%d)"},
	Float:     {4, true, "Expected 4 or 0 byte value for a float (%d)"},
	Double:    {8, true, "Expected 8 or 0 byte value for a double (%d)"},
	UUID:      {16, true, "UUID should be 16 or 0 bytes (%d)"},
	Timeuuid:  {16, true, "UUID should be 16 or 0 bytes (%d)"},
	Timestamp: {8, true, "Expected 8 or 0 byte long for date (%d)"},
	Date:      {4, false, "Expected 4 byte long for date (%d)"},
	Time:      {8, false, "Expected 8 byte long for time (%d)"},
}

type fixedWidthOf struct {
	size  int
	empty bool
	msg   string
}

// Validate checks a bound value of type t as Cassandra's serializers do,
// returning their error texts, then refuses what Postgres cannot store:
// empty values of types other than text, ascii and blob (Postgres has no
// empty integer or uuid) and text that Cassandra takes but is not UTF-8
// (Postgres text cannot hold it; U+0000 it holds escaped, escapeText). Collections,
// tuples, user types and vectors are checked element by element.
func Validate(t *Type, v []byte) error {
	if err := validate(t, v); err != nil {
		return err
	}
	if len(v) == 0 && !emptyStorable(t.Kind) {
		return errEmpty(t)
	}
	return nil
}

// ValidateSerialized checks a value of type t as Cassandra's serializers
// do (TypeSerializer.validate), an empty value included where they take
// one, with their error texts; of what Postgres cannot store it refuses
// only text that is not UTF-8, which no function can hand on either.
func ValidateSerialized(t *Type, v []byte) error { return validate(t, v) }

// emptyStorable reports whether Postgres holds an empty value of the kind.
func emptyStorable(k Kind) bool { return k == Text || k == Ascii || k == Blob }

// errEmpty reports an empty value of a type Postgres cannot hold empty.
func errEmpty(t *Type) error {
	return fmt.Errorf("Empty values of type %s cannot be stored (PostgreSQL has no empty %s)", t, t)
}

// errNotUTF8 reports text that Cassandra's validator accepts and that is
// not UTF-8, which Postgres text cannot hold.
var errNotUTF8 = errors.New("Text values that are not well-formed UTF-8 cannot be stored (PostgreSQL text holds only UTF-8)")

// cassandraUTF8 reports whether Cassandra's UTF8Serializer accepts b. Its
// validator is looser than UTF-8: it takes modified UTF-8's 0xc0 0x80,
// surrogates and lead bytes up to 0xf7, and after a lead byte of 0xe0 or
// 0xf0 it checks only that the next byte does not make the sequence
// overlong, not that it continues it.
func cassandraUTF8(b []byte) bool {
	const (
		start   = iota
		cont1   // one continuation byte (0x80-0xbf) to go
		cont2   // two
		cont3   // three
		afterC0 // 0x80 must follow
		afterE0 // not 0x80-0x9f, then one continuation byte
		afterF0 // a byte with bits 0x30 set, then two continuation bytes
	)
	state := start
	for _, c := range b {
		switch state {
		case start:
			switch {
			case c < 0x80:
			case c == 0xc0:
				state = afterC0
			case c>>5 == 0b110:
				if c&0x1e == 0 {
					return false
				}
				state = cont1
			case c == 0xe0:
				state = afterE0
			case c>>4 == 0b1110:
				state = cont2
			case c == 0xf0:
				state = afterF0
			case c>>3 == 0b11110:
				state = cont3
			default:
				return false
			}
		case cont1, cont2, cont3:
			if c&0xc0 != 0x80 {
				return false
			}
			state--
		case afterC0:
			if c != 0x80 {
				return false
			}
			state = start
		case afterE0:
			if c&0xe0 == 0x80 {
				return false
			}
			state = cont1
		case afterF0:
			if c&0x30 == 0 {
				return false
			}
			state = cont2
		}
	}
	return state == start
}

// validate applies Cassandra's serializer checks (TypeSerializer.validate).
func validate(t *Type, v []byte) error {
	if w := fixedWidth.get(t.Kind); w.size > 0 {
		if len(v) == 0 && w.empty {
			return nil
		}
		if len(v) != w.size {
			return fmt.Errorf(w.msg, len(v))
		}
		if t.Kind == Timeuuid && v[6]&0xf0 != 0x10 {
			// Cassandra prints the high nibble of the first byte, not
			// the version.
			return fmt.Errorf("Invalid version for TimeUUID type: 0x%x", v[0]>>4)
		}
		return nil
	}
	switch t.Kind {
	case Text:
		if !cassandraUTF8(v) {
			return fmt.Errorf("String didn't validate.")
		}
		// What Cassandra takes beyond UTF-8, Postgres cannot hold.
		if !utf8.Valid(v) {
			return errNotUTF8
		}
	case Ascii:
		for _, c := range v {
			if c >= 0x80 {
				return fmt.Errorf("Invalid byte for ascii: %d", int8(c))
			}
		}
	case Decimal:
		if len(v) != 0 && len(v) < 4 {
			return fmt.Errorf("Expected 0 or at least 4 bytes (%d)", len(v))
		}
	case Inet:
		if len(v) != 0 && len(v) != 4 && len(v) != 16 {
			return fmt.Errorf("Expected 4 or 16 byte inetaddress; got %s", hex.EncodeToString(v))
		}
	case Duration:
		return validateDuration(v)
	case List, Set:
		return validateCollection(t, v)
	case Map:
		return validateCollection(t, v)
	case Tuple, UDT:
		return validateTuple(t, v)
	case Vector:
		if len(v) == 0 {
			return nil
		}
		elems, err := splitVector(t, v)
		if err != nil {
			return err
		}
		for _, e := range elems {
			if err := validate(t.Elem[0], e); err != nil {
				return err
			}
		}
	}
	return nil
}

// validateCollection checks a list, set or map as the collection
// serializers do.
func validateCollection(t *Type, v []byte) error {
	what := map[Kind]string{List: "list", Set: "set", Map: "map"}[t.Kind]
	short := fmt.Errorf("Not enough bytes to read a %s", what)
	n, rest, ok := readCount(v)
	if !ok {
		return short
	}
	if n < 0 {
		return fmt.Errorf("The data cannot be deserialized as a %s", what)
	}
	for i := 0; i < n; i++ {
		for j, et := range t.Elem {
			var e []byte
			if e, rest, ok = readValue(rest); !ok {
				return short
			}
			if e == nil {
				return errNullElement
			}
			if err := validate(et, e); err != nil {
				return err
			}
			if t.Kind != Map && j == 0 {
				break
			}
		}
	}
	if len(rest) != 0 {
		return fmt.Errorf("Unexpected extraneous bytes after %s value", what)
	}
	return nil
}

// validateTuple checks a tuple (TupleSerializer) or user type
// (UserTypeSerializer); either may end before its last components.
func validateTuple(t *Type, v []byte) error {
	rest := v
	for i, et := range t.Elem {
		if len(rest) == 0 {
			return nil
		}
		if len(rest) < 4 {
			if t.Kind == UDT {
				return fmt.Errorf("Not enough bytes to read size of %dth field %s", i, t.Fields[i])
			}
			return fmt.Errorf("Not enough bytes to read size of %dth component", i)
		}
		e, r, ok := readValue(rest)
		if !ok {
			if t.Kind == UDT {
				return fmt.Errorf("Not enough bytes to read %dth field %s", i, t.Fields[i])
			}
			return fmt.Errorf("Not enough bytes to read %dth component", i)
		}
		rest = r
		if e == nil {
			continue
		}
		if err := validate(et, e); err != nil {
			return err
		}
	}
	if len(rest) != 0 {
		if t.Kind == UDT {
			return errors.New("Invalid remaining data after end of UDT value")
		}
		return errors.New("Invalid remaining data after end of tuple value")
	}
	return nil
}
