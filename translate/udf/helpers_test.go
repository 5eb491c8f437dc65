package udf

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"strings"
	"testing"

	"github.com/cqlpg/cqlpg/pgschema"
)

// Test helpers: CQL types from their text, and Go values serialized as
// CQL values of a type.

// testUDT is the user type tests declare: address (street text, zip int).
var testUDT = pgschema.NewUDT("ks", "address", []string{"street", "zip"},
	[]*pgschema.Type{pgschema.Scalar(pgschema.Text), pgschema.Scalar(pgschema.Int)}, true)

// cqlType parses a CQL type, knowing testUDT.
func cqlType(t testing.TB, s string) *pgschema.Type {
	t.Helper()
	typ, err := pgschema.ParseType(s, func(name string) (*pgschema.Type, error) {
		if name == "address" {
			return testUDT, nil
		}
		return nil, fmt.Errorf("unknown type %s", name)
	})
	if err != nil {
		t.Fatalf("type %q: %v", s, err)
	}
	return typ
}

// params parses "a int, b list<text>" into parameters.
func params(t testing.TB, s string) []Param {
	t.Helper()
	var out []Param
	if strings.TrimSpace(s) == "" {
		return out
	}
	for _, p := range splitTop(s) {
		p = strings.TrimSpace(p)
		name, typ, _ := strings.Cut(p, " ")
		out = append(out, Param{Name: name, Type: cqlType(t, typ)})
	}
	return out
}

// dec is a decimal for enc: unscaled × 10^-scale.
type dec struct {
	unscaled int64
	scale    int32
}

// enc serializes a Go value as a CQL value of type typ: integers and
// floats by the type's width, strings, booleans, []any for lists, sets,
// tuples and user types, [][2]any for maps, []byte for blobs, nil for
// null.
func enc(t testing.TB, typ *pgschema.Type, v any) []byte {
	t.Helper()
	if v == nil {
		return nil
	}
	switch typ.Kind {
	case pgschema.Int:
		return binary.BigEndian.AppendUint32(nil, uint32(int32(toInt(v))))
	case pgschema.Bigint, pgschema.Counter, pgschema.Time, pgschema.Timestamp:
		return binary.BigEndian.AppendUint64(nil, uint64(toInt(v)))
	case pgschema.Smallint:
		return binary.BigEndian.AppendUint16(nil, uint16(toInt(v)))
	case pgschema.Tinyint:
		return []byte{byte(toInt(v))}
	case pgschema.Double:
		return binary.BigEndian.AppendUint64(nil, math.Float64bits(toFloat(v)))
	case pgschema.Float:
		return binary.BigEndian.AppendUint32(nil, math.Float32bits(float32(toFloat(v))))
	case pgschema.Boolean:
		if v.(bool) {
			return []byte{1}
		}
		return []byte{0}
	case pgschema.Text, pgschema.Ascii:
		return []byte(v.(string))
	case pgschema.Blob:
		return v.([]byte)
	case pgschema.Decimal:
		d := v.(dec)
		return pgschema.DecimalBytes(big.NewInt(d.unscaled), d.scale)
	case pgschema.Varint:
		return pgschema.VarintBytes(big.NewInt(toInt(v)))
	case pgschema.Date:
		return binary.BigEndian.AppendUint32(nil, uint32(toInt(v)+1<<31))
	case pgschema.UUID, pgschema.Timeuuid, pgschema.Inet, pgschema.Duration:
		b, err := pgschema.FromString(typ, v.(string))
		if err != nil {
			t.Fatal(err)
		}
		return b
	case pgschema.List, pgschema.Set:
		var elems [][]byte
		for _, e := range v.([]any) {
			elems = append(elems, enc(t, typ.Elem[0], e))
		}
		return pgschema.SerializeCollection(elems)
	case pgschema.Map:
		var keys, vals [][]byte
		for _, kv := range v.([][2]any) {
			keys = append(keys, enc(t, typ.Elem[0], kv[0]))
			vals = append(vals, enc(t, typ.Elem[1], kv[1]))
		}
		return pgschema.SerializeMap(keys, vals)
	case pgschema.Tuple, pgschema.UDT:
		var elems [][]byte
		for i, e := range v.([]any) {
			elems = append(elems, enc(t, typ.Elem[i], e))
		}
		return pgschema.SerializeTuple(elems)
	}
	t.Fatalf("enc: type %s", typ)
	return nil
}

func toInt(v any) int64 {
	switch v := v.(type) {
	case int:
		return int64(v)
	case int64:
		return v
	case int32:
		return int64(v)
	}
	panic(fmt.Sprintf("not an integer: %T", v))
}

func toFloat(v any) float64 {
	switch v := v.(type) {
	case float64:
		return v
	case float32:
		return float64(v)
	case int:
		return float64(v)
	}
	panic(fmt.Sprintf("not a float: %T", v))
}
