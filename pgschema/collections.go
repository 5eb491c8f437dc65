package pgschema

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
)

// CQL serializes a list or set as a four-byte element count followed by
// each element as a four-byte length and its bytes; a map the same way with
// each key followed by its value. A tuple or user type is its components
// one after the other, each a four-byte length (-1 for null) and its bytes;
// a value may stop early, the missing components being null. A vector is
// its elements without a count: fixed-size elements back to back, others
// each after its length as an unsigned vint. (Protocol versions 1 and 2
// used two-byte counts and lengths; cqlpg speaks version 3 and later.)

// errNullElement is Cassandra's text for a null inside a collection.
var errNullElement = errors.New("null is not supported inside collections")

// SerializeCollection returns the list or set holding elems, in order.
func SerializeCollection(elems [][]byte) []byte {
	n := 4
	for _, e := range elems {
		n += 4 + len(e)
	}
	out := make([]byte, 0, n)
	out = binary.BigEndian.AppendUint32(out, uint32(len(elems)))
	for _, e := range elems {
		out = appendValue(out, e)
	}
	return out
}

// SerializeMap returns the map of keys[i] to values[i], in the given
// order; Normalize sorts it.
func SerializeMap(keys, values [][]byte) []byte {
	n := 4
	for i := range keys {
		n += 8 + len(keys[i]) + len(values[i])
	}
	out := make([]byte, 0, n)
	out = binary.BigEndian.AppendUint32(out, uint32(len(keys)))
	for i := range keys {
		out = appendValue(out, keys[i])
		out = appendValue(out, values[i])
	}
	return out
}

// SerializeTuple returns the tuple or user type value of the components;
// a nil component is null.
func SerializeTuple(elems [][]byte) []byte {
	n := 0
	for _, e := range elems {
		n += 4 + len(e)
	}
	out := make([]byte, 0, n)
	for _, e := range elems {
		out = appendValue(out, e)
	}
	return out
}

// SerializeVector returns the vector of elem values.
func SerializeVector(elem *Type, elems [][]byte) []byte {
	var out []byte
	fixed := vectorElemSize(elem)
	for _, e := range elems {
		if fixed < 0 {
			out = appendUvint(out, uint64(len(e)))
		}
		out = append(out, e...)
	}
	return out
}

// appendValue appends a four-byte length (-1 for nil) and the bytes.
func appendValue(dst, v []byte) []byte {
	if v == nil {
		return binary.BigEndian.AppendUint32(dst, 0xffffffff)
	}
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(v)))
	return append(dst, v...)
}

// readValue reads a four-byte length and that many bytes; a negative
// length is a null, returned as nil.
func readValue(b []byte) (v, rest []byte, ok bool) {
	if len(b) < 4 {
		return nil, b, false
	}
	n := int32(binary.BigEndian.Uint32(b))
	if n < 0 {
		return nil, b[4:], true
	}
	if int(n) > len(b)-4 {
		return nil, b, false
	}
	return b[4 : 4+n : 4+n], b[4+n:], true
}

// readCount reads a collection's element count.
func readCount(b []byte) (int, []byte, bool) {
	if len(b) < 4 {
		return 0, b, false
	}
	return int(int32(binary.BigEndian.Uint32(b))), b[4:], true
}

// vectorElemSize returns the serialized size of an element type whose
// values all have one size, or -1: these are the types whose
// valueLengthIfFixed is set in Cassandra 5.0.
func vectorElemSize(t *Type) int {
	switch t.Kind {
	case Boolean:
		return 1
	case Int, Float:
		return 4
	case Bigint, Counter, Double, Timestamp:
		return 8
	case UUID, Timeuuid:
		return 16
	case Vector:
		if n := vectorElemSize(t.Elem[0]); n >= 0 {
			return n * t.Dim
		}
	}
	return -1
}

// splitVector splits a vector into its elements.
func splitVector(t *Type, v []byte) ([][]byte, error) {
	elem := t.Elem[0]
	out := make([][]byte, 0, t.Dim)
	if size := vectorElemSize(elem); size >= 0 {
		if len(v) != size*t.Dim {
			if len(v) > size*t.Dim {
				return nil, errors.New("Unexpected extraneous bytes after vector value")
			}
			return nil, fmt.Errorf("Not enough bytes to read a vector of %d elements (%d)", t.Dim, len(v))
		}
		for i := 0; i < t.Dim; i++ {
			out = append(out, v[i*size:(i+1)*size:(i+1)*size])
		}
		return out, nil
	}
	rest := v
	for i := 0; i < t.Dim; i++ {
		n, size, err := readUvint(rest)
		if err != nil || n > uint64(len(rest)-size) {
			return nil, fmt.Errorf("Not enough bytes to read a vector of %d elements (%d)", t.Dim, len(v))
		}
		out = append(out, rest[size:size+int(n):size+int(n)])
		rest = rest[size+int(n):]
	}
	if len(rest) > 0 {
		return nil, errors.New("Unexpected extraneous bytes after vector value")
	}
	return out, nil
}

// Elements splits a serialized value of a list, set, vector, tuple or user
// type into its elements, or a map into its keys and values alternately.
// Null tuple and user type components are nil; a tuple or user type value
// written before components were added has fewer elements than its type.
func Elements(t *Type, v []byte) ([][]byte, error) {
	switch t.Kind {
	case List, Set, Map:
		what := map[Kind]string{List: "list", Set: "set", Map: "map"}[t.Kind]
		n, rest, ok := readCount(v)
		if !ok || n < 0 {
			return nil, fmt.Errorf("Not enough bytes to read a %s", what)
		}
		if t.Kind == Map {
			n *= 2
		}
		out := make([][]byte, 0, min(n, 1024))
		for i := 0; i < n; i++ {
			var e []byte
			if e, rest, ok = readValue(rest); !ok {
				return nil, fmt.Errorf("Not enough bytes to read a %s", what)
			}
			out = append(out, e)
		}
		if len(rest) > 0 {
			return nil, fmt.Errorf("Unexpected extraneous bytes after %s value", what)
		}
		return out, nil
	case Tuple, UDT:
		var out [][]byte
		rest := v
		for len(rest) > 0 {
			if len(out) == len(t.Elem) {
				return nil, fmt.Errorf("Expected %d %s for %s column, but got more", len(t.Elem),
					map[bool]string{true: "value", false: "values"}[len(t.Elem) == 1], t)
			}
			e, r, ok := readValue(rest)
			if !ok {
				return nil, fmt.Errorf("Not enough bytes to read %dth component", len(out))
			}
			out, rest = append(out, e), r
		}
		return out, nil
	case Vector:
		return splitVector(t, v)
	}
	return nil, fmt.Errorf("type %s has no elements", t)
}

// Element returns what element selection gives on a serialized
// collection of type t: a map's value for key, a set's element equal to
// key, or a list's element at the index key (an int); nil when there is
// none, as CollectionSerializer.getSerializedValue and
// ListSerializer.getElement answer.
func Element(t *Type, v, key []byte) ([]byte, error) {
	switch t.Kind {
	case Map, Set:
		elems, err := Elements(t, v)
		if err != nil {
			return nil, err
		}
		step := 1
		if t.Kind == Map {
			step = 2
		}
		for i := 0; i < len(elems); i += step {
			if Compare(t.Elem[0], elems[i], key) == 0 {
				return elems[i+step-1], nil
			}
		}
		return nil, nil
	case List:
		if len(key) != 4 {
			return nil, fmt.Errorf("Invalid list index of %d bytes", len(key))
		}
		i := int(int32(binary.BigEndian.Uint32(key)))
		elems, err := Elements(t, v)
		if err != nil || i < 0 || i >= len(elems) {
			return nil, err
		}
		return elems[i], nil
	}
	return nil, fmt.Errorf("element selection is not possible on type %s", t)
}

// MapEntries splits a serialized map into its keys and values.
func MapEntries(v []byte) (keys, values [][]byte, err error) {
	kv, err := Elements(&Type{Kind: Map}, v)
	if err != nil {
		return nil, nil, err
	}
	keys = make([][]byte, 0, len(kv)/2)
	values = make([][]byte, 0, len(kv)/2)
	for i := 0; i < len(kv); i += 2 {
		keys, values = append(keys, kv[i]), append(values, kv[i+1])
	}
	return keys, values, nil
}

// Normalize returns v as Cassandra stores a bound value of type t: set
// elements sorted by the element type's comparator without duplicates
// (the first of equal elements kept), map entries sorted by key (the first
// of equal keys kept, with the last value given for it), at every level of
// nesting. Values of types holding no set or map are returned as they are.
func Normalize(t *Type, v []byte) ([]byte, error) {
	if v == nil || !hasSetOrMap(t) {
		return v, nil
	}
	switch t.Kind {
	case List, Set, Vector, Tuple, UDT:
		elems, err := Elements(t, v)
		if err != nil {
			return nil, err
		}
		for i, e := range elems {
			if e == nil {
				if t.Kind == Tuple || t.Kind == UDT {
					continue
				}
				return nil, errNullElement
			}
			if elems[i], err = Normalize(componentType(t, i), e); err != nil {
				return nil, err
			}
		}
		switch t.Kind {
		case Set:
			return SerializeCollection(sortUnique(t.Elem[0], elems)), nil
		case List:
			return SerializeCollection(elems), nil
		case Vector:
			return SerializeVector(t.Elem[0], elems), nil
		}
		return SerializeTuple(elems), nil
	case Map:
		keys, values, err := MapEntries(v)
		if err != nil {
			return nil, err
		}
		for i := range keys {
			if keys[i] == nil || values[i] == nil {
				return nil, errNullElement
			}
			if keys[i], err = Normalize(t.Elem[0], keys[i]); err != nil {
				return nil, err
			}
			if values[i], err = Normalize(t.Elem[1], values[i]); err != nil {
				return nil, err
			}
		}
		keys, values = sortMap(t.Elem[0], keys, values)
		return SerializeMap(keys, values), nil
	}
	return v, nil
}

// componentType returns the type of the i-th element of a value of t.
func componentType(t *Type, i int) *Type {
	if t.Kind == Tuple || t.Kind == UDT {
		return t.Elem[i]
	}
	return t.Elem[0]
}

func hasSetOrMap(t *Type) bool {
	return t.Has(func(e *Type) bool { return e.Kind == Set || e.Kind == Map })
}

// sortUnique sorts set elements by the element comparator and drops
// repeats, keeping the first of equal elements.
func sortUnique(elem *Type, elems [][]byte) [][]byte {
	slices.SortStableFunc(elems, func(a, b []byte) int { return Compare(elem, a, b) })
	return slices.CompactFunc(elems, func(a, b []byte) bool { return Compare(elem, a, b) == 0 })
}

// sortMap sorts map entries by key; of equal keys the first key stays,
// with the value given last for it, as Java's TreeMap.put leaves them.
func sortMap(key *Type, keys, values [][]byte) ([][]byte, [][]byte) {
	idx := make([]int, len(keys))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return Compare(key, keys[a], keys[b]) })
	outK := make([][]byte, 0, len(keys))
	outV := make([][]byte, 0, len(keys))
	for _, i := range idx {
		if n := len(outK); n > 0 && Compare(key, outK[n-1], keys[i]) == 0 {
			outV[n-1] = values[i]
			continue
		}
		outK, outV = append(outK, keys[i]), append(outV, values[i])
	}
	return outK, outV
}
