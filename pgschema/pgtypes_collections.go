package pgschema

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
)

// Lists, sets and vectors of scalars are Postgres arrays of the scalar's
// type (integer[], text[] COLLATE "C", real[] for vector<float, n>): their
// elements stay readable and indexable in psql, and arrays compare element
// by element then by length, as Cassandra compares frozen lists and sets.
// Sets are stored sorted by Cassandra's comparator, so equal sets are equal
// arrays. Everything else that has components (maps, tuples, user types,
// collections of collections) is jsonb holding Cassandra's JSON form of the
// value (json.go), written so that it reads back exactly.

// arrayElementKind reports whether a collection of t is stored as an array
// of t's Postgres type: t must be a scalar that is not itself an array.
func arrayElementKind(t *Type) bool {
	scalar := storages.get(t.Kind) != nil
	return scalar && t.Kind != Duration
}

// compositeStorage builds the storage of a collection, tuple, user type or
// vector.
func compositeStorage(t *Type) (*Storage, error) {
	for _, e := range t.Elem {
		if _, err := StorageOf(e); err != nil {
			return nil, err
		}
	}
	if (t.Kind == List || t.Kind == Set || t.Kind == Vector) && arrayElementKind(t.Elem[0]) &&
		(!exactKind(t.Elem[0].Kind) || t.Legacy) {
		elem := t.Elem[0]
		est := storages.get(elem.Kind)
		sql := est.SQL + "[]"
		if base, coll, ok := strings.Cut(est.SQL, " COLLATE "); ok {
			sql = base + "[] COLLATE " + coll
		}
		c := arrayCodec{t: t, elem: elem, est: est}
		return &Storage{SQL: sql, OID: est.ArrayOID, SortKey: "array_send(%s)",
			ToPG: c.toPG, FromPG: c.fromPG}, nil
	}
	c := jsonbCodec{t: t}
	return &Storage{SQL: "jsonb", OID: OIDJSONB, ArrayOID: OIDJSONBArray, SortKey: "jsonb_send(%s)",
		ToPG: c.toPG, FromPG: c.fromPG}, nil
}

// appendArrayHeader appends the header of a one-dimensional array of n
// elements (no dimension at all when n is 0, as Postgres sends an empty
// array): dimensions, has-nulls flag, element type, then the length and
// lower bound of the dimension.
func appendArrayHeader(dst []byte, elemOID uint32, n int) []byte {
	if n == 0 {
		dst = binary.BigEndian.AppendUint32(dst, 0)
		dst = binary.BigEndian.AppendUint32(dst, 0)
		return binary.BigEndian.AppendUint32(dst, elemOID)
	}
	dst = binary.BigEndian.AppendUint32(dst, 1)
	dst = binary.BigEndian.AppendUint32(dst, 0)
	dst = binary.BigEndian.AppendUint32(dst, elemOID)
	dst = binary.BigEndian.AppendUint32(dst, uint32(n))
	return binary.BigEndian.AppendUint32(dst, 1)
}

// pgArray reads the elements of a one-dimensional Postgres array.
type pgArray struct {
	n    int
	rest []byte
}

func parsePGArray(src []byte) (pgArray, error) {
	if len(src) < 12 {
		return pgArray{}, fmt.Errorf("malformed array of %d bytes", len(src))
	}
	ndim := int32(binary.BigEndian.Uint32(src))
	switch {
	case ndim == 0:
		return pgArray{}, nil
	case ndim != 1:
		return pgArray{}, fmt.Errorf("a %d-dimensional array cannot be read as a CQL value", ndim)
	case len(src) < 20:
		return pgArray{}, fmt.Errorf("malformed array of %d bytes", len(src))
	}
	n := int32(binary.BigEndian.Uint32(src[12:]))
	if n < 0 {
		return pgArray{}, fmt.Errorf("malformed array of %d elements", n)
	}
	return pgArray{n: int(n), rest: src[20:]}, nil
}

// next returns the next element; ok is false for a null.
func (a *pgArray) next() ([]byte, bool, error) {
	v, rest, ok := readValue(a.rest)
	if !ok {
		return nil, false, errors.New("malformed array element")
	}
	a.rest = rest
	return v, v != nil, nil
}

// arrayCodec converts lists, sets and vectors of scalars.
type arrayCodec struct {
	t    *Type
	elem *Type
	est  *Storage
}

func (c arrayCodec) toPG(dst, src []byte) ([]byte, error) {
	elems, err := Elements(c.t, src)
	if err != nil {
		return dst, err
	}
	for _, e := range elems {
		if e == nil {
			return dst, errNullElement
		}
	}
	if c.t.Kind == Set {
		elems = sortUnique(c.elem, elems)
	}
	dst = appendArrayHeader(dst, c.est.OID, len(elems))
	for _, e := range elems {
		if len(e) == 0 && !emptyStorable(c.elem.Kind) {
			return dst, fmt.Errorf("Empty values of type %s cannot be stored in a collection (PostgreSQL has no empty %s)",
				c.elem, c.elem)
		}
		at := len(dst)
		dst = append(dst, 0, 0, 0, 0)
		if c.est.ToPG == nil {
			dst = append(dst, e...)
		} else if dst, err = c.est.ToPG(dst, e); err != nil {
			return dst, err
		}
		binary.BigEndian.PutUint32(dst[at:], uint32(len(dst)-at-4))
	}
	return dst, nil
}

func (c arrayCodec) fromPG(dst, src []byte) ([]byte, error) {
	a, err := parsePGArray(src)
	if err != nil {
		return dst, err
	}
	if c.t.Kind == Vector && a.n != c.t.Dim {
		return dst, fmt.Errorf("%s expects %d elements, the stored array has %d", c.t, c.t.Dim, a.n)
	}
	if size := vectorElemSize(c.elem); c.t.Kind == Vector && c.est.FromPG == nil && size > 0 {
		// Fixed-size elements Postgres sends as CQL does (a vector of
		// floats, the common one): back to back, straight into dst, with
		// nothing allocated per element.
		for i := 0; i < a.n; i++ {
			e, ok, err := a.next()
			switch {
			case err != nil:
				return dst, err
			case !ok:
				return dst, errNullElement
			case len(e) != size:
				return dst, fmt.Errorf("%s element of %d bytes, want %d", c.t, len(e), size)
			}
			dst = append(dst, e...)
		}
		return dst, nil
	}
	// Convert the elements into one buffer, then lay them out.
	var buf []byte
	// The count is the array's word: each element takes at least its
	// four-byte length, so the bytes bound what is worth allocating.
	ends := make([]int, 0, min(a.n, len(a.rest)/4))
	for i := 0; i < a.n; i++ {
		e, ok, err := a.next()
		if err != nil {
			return dst, err
		}
		if !ok {
			return dst, errNullElement
		}
		if c.est.FromPG == nil {
			buf = append(buf, e...)
		} else if buf, err = c.est.FromPG(buf, e); err != nil {
			return dst, err
		}
		ends = append(ends, len(buf))
	}
	elems := make([][]byte, len(ends))
	start := 0
	for i, end := range ends {
		elems[i] = buf[start:end:end]
		start = end
	}
	switch c.t.Kind {
	case Vector:
		return append(dst, SerializeVector(c.elem, elems)...), nil
	case Set:
		elems = sortUnique(c.elem, elems)
	}
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(elems)))
	for _, e := range elems {
		dst = appendValue(dst, e)
	}
	return dst, nil
}

// jsonbVersion is the first byte of jsonb's binary form.
const jsonbVersion = 1

// jsonbCodec converts values stored as jsonb.
type jsonbCodec struct{ t *Type }

func (c jsonbCodec) toPG(dst, src []byte) ([]byte, error) {
	v, err := Normalize(c.t, src)
	if err != nil {
		return dst, err
	}
	dst = append(dst, jsonbVersion)
	return appendJSON(dst, c.t, v, true)
}

func (c jsonbCodec) fromPG(dst, src []byte) ([]byte, error) {
	if len(src) == 0 || src[0] != jsonbVersion {
		return dst, errors.New("unknown jsonb binary format")
	}
	node, err := parseJSON(src[1:])
	if err != nil {
		return dst, fmt.Errorf("stored jsonb value: %w", err)
	}
	v, err := fromJSONNode(c.t, node, true)
	if err != nil {
		return dst, fmt.Errorf("stored jsonb value does not fit %s: %w", c.t, err)
	}
	return append(dst, v...), nil
}
