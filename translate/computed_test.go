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
	i32 := pgschema.Scalar(pgschema.Int)
	typ := pgschema.NewTuple(i32, i32, i32)
	b := &Bound{Values: [][]byte{tuple}}
	for i, want := range [][]byte{{0, 0, 0, 1}, nil, {0, 0, 0, 3}} {
		got, unset, err := (&tupleElement{tuple: Value{Marker: 0}, typ: typ, index: i}).Compute(b, nil)
		if err != nil || unset || !bytes.Equal(got, want) || (got == nil) != (want == nil) {
			t.Errorf("element %d: %v %v %v, want %v", i, got, unset, err, want)
		}
	}
	if _, _, err := (&tupleElement{tuple: constValue(append(tuple, 0, 0, 0, 1, 7)), typ: typ, index: 0}).Compute(b, nil); err == nil {
		t.Error("a tuple of more elements than its type: no error")
	}
	if _, _, err := (&tupleElement{tuple: constValue([]byte{0, 0, 0, 9, 1}), typ: typ, index: 0}).Compute(b, nil); err == nil {
		t.Error("a truncated tuple: no error")
	}
	if got, _, err := (&tupleElement{tuple: constValue(tuple[:4+4]), typ: typ, index: 2}).Compute(b, nil); got != nil || err != nil {
		t.Errorf("a missing trailing element: %x %v, want null", got, err)
	}
	if got, unset, _ := (&tupleElement{tuple: Value{Marker: 0}, typ: typ, index: 0}).Compute(&Bound{Values: [][]byte{nil}, Unset: []bool{true}}, nil); got != nil || !unset {
		t.Errorf("an unset tuple: %v %v", got, unset)
	}
}
