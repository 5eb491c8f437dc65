package cqlfunc

import (
	"encoding/hex"
	"testing"

	"github.com/cqlpg/cqlpg/pgschema"
)

func TestValidateValueMessages(t *testing.T) {
	tests := []struct {
		kind pgschema.Kind
		blob string
		want string
	}{
		{pgschema.Int, "01", "Expected 4 or 0 byte int (1)"},
		{pgschema.Smallint, "01", "Expected 2 bytes for a smallint (1)"},
		{pgschema.Timeuuid, "c2e8d4ac3d434d529d0e3a5c5c1f1b7e", "Invalid version for TimeUUID type: 0xc"},
		{pgschema.Inet, "01", "Expected 4 or 16 byte inetaddress; got 01"},
		{pgschema.Ascii, "80", "Invalid byte for ascii: 128"},
		{pgschema.Duration, "00", "Expected at least 3 bytes for a duration (1)"},
	}
	for _, tt := range tests {
		err := validateValue(pgschema.Scalar(tt.kind), mustHex(tt.blob))
		if err == nil || err.Error() != tt.want {
			t.Errorf("%s 0x%s: got %v, want %s", pgschema.Scalar(tt.kind), tt.blob, err, tt.want)
		}
	}
}

func mustHex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}
