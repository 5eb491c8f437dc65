package cqltext_test

import (
	"bytes"
	"testing"

	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/pgschema/cqltext"
)

// FuzzParse reads any text as a few types: Parse never panics, and what
// it accepts formats to a text that reads back as the same bytes.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"1", "['a', 'b''c']", "{1: ['x']}", "(1, null)", "{street: 'x', \"Zip\": 2}",
		"2024-01-02 03:04:05.678000+0000", "0x00ff", "1h2m", "NaN", "[1.0, 2.0, 3.0]"} {
		f.Add(s)
	}
	udt := pgschema.NewUDT("ks", "addr", []string{"street", "Zip"},
		[]*pgschema.Type{pgschema.Scalar(pgschema.Text), pgschema.Scalar(pgschema.Int)}, true)
	types := []*pgschema.Type{
		pgschema.Scalar(pgschema.Int), pgschema.Scalar(pgschema.Double), pgschema.Scalar(pgschema.Timestamp),
		pgschema.Scalar(pgschema.Blob), pgschema.Scalar(pgschema.Duration), pgschema.Scalar(pgschema.Decimal),
		pgschema.NewList(pgschema.Scalar(pgschema.Text), false),
		pgschema.NewMap(pgschema.Scalar(pgschema.Int), pgschema.NewList(pgschema.Scalar(pgschema.Text), true), false),
		pgschema.NewTuple(pgschema.Scalar(pgschema.Int), pgschema.Scalar(pgschema.Text)), udt,
		pgschema.NewVector(pgschema.Scalar(pgschema.Float), 3),
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, ty := range types {
			v, err := cqltext.Parse(ty, s)
			if err != nil {
				continue
			}
			text, err := cqltext.Format(ty, v)
			if err != nil {
				t.Fatalf("%s: Format of Parse(%q) = %x: %v", ty, s, v, err)
			}
			again, err := cqltext.Parse(ty, text)
			if err != nil || !bytes.Equal(again, v) {
				t.Fatalf("%s: %q -> %x -> %q -> %x, %v", ty, s, v, text, again, err)
			}
		}
	})
}
