package pgschema

import (
	"fmt"
	"unicode/utf8"
)

// fixedWidth gives the serialized size of fixed-size types and the text
// Cassandra's serializer uses when a value has another size.
var fixedWidth = map[Kind]struct {
	size int
	msg  string
}{
	Int:       {4, "Expected 4 or 0 byte int (%d)"},
	Bigint:    {8, "Expected 8 or 0 byte long (%d)"},
	Counter:   {8, "Expected 8 or 0 byte long (%d)"},
	Smallint:  {2, "Expected 2 bytes for a smallint (%d)"},
	Tinyint:   {1, "Expected 1 byte for a tinyint (%d)"},
	Boolean:   {1, "Expected 1 or 0 byte value for a boolean (%d)"},
	Float:     {4, "Expected 4 or 0 byte value for a float (%d)"},
	Double:    {8, "Expected 8 or 0 byte value for a double (%d)"},
	UUID:      {16, "UUID should be 16 or 0 bytes (%d)"},
	Timeuuid:  {16, "UUID should be 16 or 0 bytes (%d)"},
	Timestamp: {8, "Expected 8 or 0 byte long for date (%d)"},
	Date:      {4, "Expected 4 byte long for date (%d)"},
}

// Validate checks a bound value of type t as Cassandra's serializers do,
// returning their error texts.
func Validate(t *Type, v []byte) error {
	if w, ok := fixedWidth[t.Kind]; ok {
		if len(v) == 0 {
			return fmt.Errorf("empty %s values are not supported yet", t)
		}
		if len(v) != w.size {
			return fmt.Errorf(w.msg, len(v))
		}
		if t.Kind == Timeuuid && v[6]>>4 != 1 {
			return fmt.Errorf("Invalid version for TimeUUID type.")
		}
		return nil
	}
	switch t.Kind {
	case Text:
		if !utf8.Valid(v) {
			return fmt.Errorf("String didn't validate.")
		}
	case Ascii:
		for _, c := range v {
			if c >= 0x80 {
				return fmt.Errorf("Invalid byte for ascii: %d", c)
			}
		}
	}
	return nil
}
