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

// TestAccumulates marks the writes that applied twice add twice (a list
// append or prepend, a counter update), which a replica's refusal of
// stale SQL must not run again.
func TestAccumulates(t *testing.T) {
	schema, err := goldenSchema()
	if err != nil {
		t.Fatal(err)
	}
	const id = "5b6962dd-3f90-4c93-8f61-eabfa4a803e2"
	for cql, want := range map[string]bool{
		"UPDATE shop.users SET tags = tags + ['a'] WHERE id = " + id:          true,
		"UPDATE shop.users SET tags = ['a'] + tags WHERE id = " + id:          true,
		"UPDATE shop.users SET tags = tags - ['a'] WHERE id = " + id:          false,
		"UPDATE shop.users SET emails = emails + {'a'} WHERE id = " + id:      false,
		"UPDATE shop.users SET prefs['a'] = 1 WHERE id = " + id:               false,
		"UPDATE shop.users SET name = 'x' WHERE id = " + id:                   false,
		"UPDATE shop.hits SET views = views + 1 WHERE page = 'p' AND day = 1": true,
	} {
		parsed, err := Parse(cql)
		if err != nil {
			t.Fatal(err)
		}
		plan, err := Prepare(parsed, "", schema)
		if err != nil {
			t.Fatalf("%s: %v", cql, err)
		}
		if got := plan.(*Write).Accumulates; got != want {
			t.Errorf("%s: Accumulates %v, want %v", cql, got, want)
		}
	}
}
