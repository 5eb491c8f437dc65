package translate

import (
	"bytes"
	"testing"

	"github.com/cqlpg/cqlpg/pgschema"
)

// TestTupleElement splits a tuple bound to one marker into the values of
// the columns a write's (c1, c2) = ? restricts.
func TestTupleElement(t *testing.T) {
	tuple := pgschema.SerializeTuple([][]byte{{0, 0, 0, 1}, nil, {0, 0, 0, 3}})
	b := &Bound{Values: [][]byte{tuple}}
	for i, want := range [][]byte{{0, 0, 0, 1}, nil, {0, 0, 0, 3}} {
		got, unset, err := (&tupleElement{tuple: Value{Marker: 0}, index: i}).Compute(b, nil)
		if err != nil || unset || !bytes.Equal(got, want) || (got == nil) != (want == nil) {
			t.Errorf("element %d: %v %v %v, want %v", i, got, unset, err, want)
		}
	}
	if _, _, err := (&tupleElement{tuple: Value{Marker: 0}, index: 3}).Compute(b, nil); err == nil {
		t.Error("element past the tuple's end: no error")
	}
	if _, _, err := (&tupleElement{tuple: constValue([]byte{0, 0, 0, 9, 1}), index: 0}).Compute(b, nil); err == nil {
		t.Error("a truncated tuple: no error")
	}
	if got, unset, _ := (&tupleElement{tuple: Value{Marker: 0}, index: 0}).Compute(&Bound{Values: [][]byte{nil}, Unset: []bool{true}}, nil); got != nil || !unset {
		t.Errorf("an unset tuple: %v %v", got, unset)
	}
}
