package pgschema_test

import (
	"encoding/hex"
	"testing"

	"github.com/cqlpg/cqlpg/pgschema"
)

// TestValidateSerializedMessages checks the serializers' texts that
// blobAs<type> functions and bound values report, empty values taken
// where Cassandra takes them.
func TestValidateSerializedMessages(t *testing.T) {
	tests := []struct {
		kind pgschema.Kind
		blob string
		want string
	}{
		{pgschema.Int, "01", "Expected 4 or 0 byte int (1)"},
		{pgschema.Int, "", ""},
		{pgschema.Smallint, "01", "Expected 2 bytes for a smallint (1)"},
		{pgschema.Smallint, "", "Expected 2 bytes for a smallint (0)"},
		{pgschema.Timeuuid, "c2e8d4ac3d434d529d0e3a5c5c1f1b7e", "Invalid version for TimeUUID type: 0xc"},
		{pgschema.Inet, "01", "Expected 4 or 16 byte inetaddress; got 01"},
		// Byte.toString prints a signed byte.
		{pgschema.Ascii, "80", "Invalid byte for ascii: -128"},
		{pgschema.Duration, "00", "Expected at least 3 bytes for a duration (1)"},
		{pgschema.Varint, "", ""},
		{pgschema.Blob, "ff", ""},
	}
	for _, tt := range tests {
		b, err := hex.DecodeString(tt.blob)
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		if err := pgschema.ValidateSerialized(pgschema.Scalar(tt.kind), b); err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("%s 0x%s: got %q, want %q", pgschema.Scalar(tt.kind), tt.blob, got, tt.want)
		}
	}
}
