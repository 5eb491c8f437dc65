package translate

import (
	"bytes"
	"encoding/hex"
	"errors"
	"testing"

	"github.com/cqlpg/cqlpg/pgschema"
)

func mustHex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

func TestBlobConversions(t *testing.T) {
	values := map[pgschema.Kind][]string{
		pgschema.Ascii:     {"616263", ""},
		pgschema.Text:      {"c3a974c3a9", ""},
		pgschema.Bigint:    {"0000000000000001", ""},
		pgschema.Counter:   {"ffffffffffffffff"},
		pgschema.Int:       {"7fffffff", ""},
		pgschema.Smallint:  {"8000"},
		pgschema.Tinyint:   {"ff"},
		pgschema.Boolean:   {"01", "00", ""},
		pgschema.Float:     {"3f800000"},
		pgschema.Double:    {"3ff0000000000000"},
		pgschema.Decimal:   {"0000000201f4", ""},
		pgschema.Varint:    {"00ff", "", "80"},
		pgschema.Timestamp: {"0000014e89dcb175"},
		pgschema.Date:      {"80000000"},
		pgschema.Time:      {"0000000000000001"},
		pgschema.UUID:      {"c2e8d4ac3d434d529d0e3a5c5c1f1b7e", ""},
		pgschema.Timeuuid:  {"50554d6e29bb11e5b345feff819cdc9f"},
		pgschema.Inet:      {"7f000001", "00000000000000000000000000000001"},
		pgschema.Duration:  {"0202fc068c61714000", "000000"},
	}
	for k, vals := range values {
		name := pgschema.Scalar(k).String()
		for _, v := range vals {
			in := mustHex(v)
			blob := mustEval(t, nil, name+"asblob", []pgschema.Kind{k}, in)
			if !bytes.Equal(blob, in) {
				t.Errorf("%sAsBlob(%s) = %x", name, v, blob)
			}
			back := mustEval(t, nil, "blobas"+name, []pgschema.Kind{pgschema.Blob}, blob)
			if !bytes.Equal(back, in) || back == nil {
				t.Errorf("blobAs%s(0x%s) = %x", name, v, back)
			}
		}
		if got := mustEval(t, nil, "blobas"+name, []pgschema.Kind{pgschema.Blob}, nil); got != nil {
			t.Errorf("blobAs%s(null) = %x", name, got)
		}
	}
	if got := mustEval(t, nil, "varcharasblob", []pgschema.Kind{pgschema.Text}, []byte("é")); !bytes.Equal(got, []byte("é")) {
		t.Errorf("varcharAsBlob = %x", got)
	}
	if got := mustEval(t, nil, "blobasvarchar", []pgschema.Kind{pgschema.Blob}, []byte("é")); !bytes.Equal(got, []byte("é")) {
		t.Errorf("blobAsVarchar = %x", got)
	}
}

func TestBlobConversionErrors(t *testing.T) {
	tests := []struct {
		kind pgschema.Kind
		blob string
	}{
		{pgschema.Int, "0102"},
		{pgschema.Bigint, "01"},
		{pgschema.Smallint, ""},
		{pgschema.Tinyint, "0102"},
		{pgschema.Boolean, "0101"},
		{pgschema.Float, "0102"},
		{pgschema.Double, "01"},
		{pgschema.Decimal, "0102"},
		{pgschema.Date, ""},
		{pgschema.Time, "01"},
		{pgschema.Timestamp, "01"},
		{pgschema.UUID, "0102"},
		{pgschema.Timeuuid, "c2e8d4ac3d434d529d0e3a5c5c1f1b7e"},
		{pgschema.Inet, "010203"},
		{pgschema.Ascii, "e9"},
		{pgschema.Text, "ff"},
		{pgschema.Duration, "0000"},
		{pgschema.Duration, "0201fc"},
		{pgschema.Duration, "020100"}, // months and days of different signs
	}
	for _, tt := range tests {
		name := pgschema.Scalar(tt.kind).String()
		_, err := evalCall(t, nil, "blobas"+name, []pgschema.Kind{pgschema.Blob}, mustHex(tt.blob))
		want := "In call to function blobas" + name + ", value 0x" + tt.blob +
			" is not a valid binary representation for type " + name
		var inv *InvalidError
		if !errors.As(err, &inv) || inv.Msg != want {
			t.Errorf("blobAs%s(0x%s): got %v, want %q", name, tt.blob, err, want)
		}
	}
	// blobAsVarchar does not validate; the bad result fails as a server
	// error, not as an invalid request.
	_, err := evalCall(t, nil, "blobasvarchar", []pgschema.Kind{pgschema.Blob}, mustHex("ff"))
	var inv *InvalidError
	if err == nil || errors.As(err, &inv) {
		t.Errorf("blobAsVarchar(0xff): got %v", err)
	}
}
