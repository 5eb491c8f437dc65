package cqlfunc

import (
	"encoding/hex"
	"fmt"

	"github.com/cqlpg/cqlpg/pgschema"
)

// This file holds Cassandra 4.1's BytesConversionFcts: typeAsBlob and
// blobAsType for every native type. The bytes do not change; blobAsType
// checks them as the type's serializer validates a value.

// blobTypes are the native types with conversion functions, in the order of
// Cassandra's CQL3Type.Native (blob itself and the varchar alias are left
// out; "empty" is internal to Cassandra).
var blobTypes = []pgschema.Kind{
	pgschema.Ascii, pgschema.Bigint, pgschema.Boolean, pgschema.Counter, pgschema.Date,
	pgschema.Decimal, pgschema.Double, pgschema.Duration, pgschema.Float, pgschema.Inet,
	pgschema.Int, pgschema.Smallint, pgschema.Text, pgschema.Time, pgschema.Timestamp,
	pgschema.Timeuuid, pgschema.Tinyint, pgschema.UUID, pgschema.Varint,
}

// blobFunctions returns typeasblob and blobastype for each type, then
// varcharasblob and blobasvarchar.
func blobFunctions() []*Function {
	blob := scalar(pgschema.Blob)
	var fns []*Function
	for _, k := range blobTypes {
		t := scalar(k)
		fns = append(fns, pureFunction(t.String()+"asblob", blob, []*pgschema.Type{t}, identityArg),
			blobAsFunction("blobas"+t.String(), t))
	}
	text := scalar(pgschema.Text)
	return append(fns, pureFunction("varcharasblob", blob, []*pgschema.Type{text}, identityArg),
		// blobAsVarchar does not validate its argument; Cassandra only finds
		// an invalid result when it checks the returned value.
		pureFunction("blobasvarchar", text, []*pgschema.Type{blob}, func(a [][]byte) ([]byte, error) {
			if a[0] != nil && !validUTF8(a[0]) {
				return nil, fmt.Errorf("Return of function system.blobasvarchar : (blob) -> text (%s) is not a valid value for its declared return type text",
					hex.EncodeToString(a[0]))
			}
			return a[0], nil
		}))
}

func identityArg(a [][]byte) ([]byte, error) { return a[0], nil }

// blobAsFunction declares blobAsType: the blob's bytes as a value of type t,
// refused with Cassandra's message when they are not one.
func blobAsFunction(name string, t *pgschema.Type) *Function {
	return pureFunction(name, t, []*pgschema.Type{scalar(pgschema.Blob)}, func(a [][]byte) ([]byte, error) {
		if a[0] == nil {
			return nil, nil
		}
		if err := validateValue(t, a[0]); err != nil {
			return nil, invalidf("In call to function %s, value 0x%s is not a valid binary representation for type %s",
				name, hex.EncodeToString(a[0]), t)
		}
		return a[0], nil
	})
}

// validateValue checks a serialized value of a native type as Cassandra's
// TypeSerializer.validate does. Unlike a bound value, an empty value is
// valid for the types whose serializers accept one.
func validateValue(t *pgschema.Type, b []byte) error {
	size := func(ok bool, format string) error {
		if ok {
			return nil
		}
		return fmt.Errorf(format, len(b))
	}
	n := len(b)
	switch t.Kind {
	case pgschema.Ascii:
		for _, c := range b {
			if c >= 0x80 {
				return fmt.Errorf("Invalid byte for ascii: %d", c)
			}
		}
	case pgschema.Text:
		if !validUTF8(b) {
			return fmt.Errorf("String didn't validate.")
		}
	case pgschema.Bigint, pgschema.Counter:
		return size(n == 8 || n == 0, "Expected 8 or 0 byte long (%d)")
	case pgschema.Int:
		return size(n == 4 || n == 0, "Expected 4 or 0 byte int (%d)")
	case pgschema.Smallint:
		return size(n == 2, "Expected 2 bytes for a smallint (%d)")
	case pgschema.Tinyint:
		return size(n == 1, "Expected 1 byte for a tinyint (%d)")
	case pgschema.Boolean:
		return size(n == 1 || n == 0, "Expected 1 or 0 byte value for a boolean (%d)")
	case pgschema.Float:
		return size(n == 4 || n == 0, "Expected 4 or 0 byte value for a float (%d)")
	case pgschema.Double:
		return size(n == 8 || n == 0, "Expected 8 or 0 byte value for a double (%d)")
	case pgschema.Decimal:
		return size(n == 0 || n >= 4, "Expected 0 or at least 4 bytes (%d)")
	case pgschema.Timestamp:
		return size(n == 8 || n == 0, "Expected 8 or 0 byte long for date (%d)")
	case pgschema.Date:
		return size(n == 4, "Expected 4 byte long for date (%d)")
	case pgschema.Time:
		return size(n == 8, "Expected 8 byte long for time (%d)")
	case pgschema.UUID:
		return size(n == 16 || n == 0, "UUID should be 16 or 0 bytes (%d)")
	case pgschema.Timeuuid:
		if err := size(n == 16 || n == 0, "UUID should be 16 or 0 bytes (%d)"); err != nil || n == 0 {
			return err
		}
		if b[6]&0xf0 != 0x10 {
			return fmt.Errorf("Invalid version for TimeUUID type: 0x%x", b[0]>>4)
		}
	case pgschema.Inet:
		if n != 0 && n != 4 && n != 16 {
			return fmt.Errorf("Expected 4 or 16 byte inetaddress; got %s", hex.EncodeToString(b))
		}
	case pgschema.Duration:
		_, err := pgschema.DecodeDuration(b)
		return err
	case pgschema.Varint, pgschema.Blob:
		// every byte string is a varint or a blob
	default:
		return fmt.Errorf("type %s has no validation", t)
	}
	return nil
}
