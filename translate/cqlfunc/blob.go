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
		if err := pgschema.ValidateSerialized(t, a[0]); err != nil {
			return nil, invalidf("In call to function %s, value 0x%s is not a valid binary representation for type %s",
				name, hex.EncodeToString(a[0]), t)
		}
		return a[0], nil
	})
}
