package udf

import (
	"encoding/binary"
	"testing"

	"github.com/cqlpg/cqlpg/pgschema"
)

// BenchmarkAvgState calls the state function of an average aggregate,
// the hot path of a user-defined aggregate: one call per row.
func BenchmarkAvgState(b *testing.B) {
	intT := pgschema.Scalar(pgschema.Int)
	state := pgschema.NewTuple(intT, pgschema.Scalar(pgschema.Bigint))
	f, err := Compile([]Param{{Name: "state", Type: state}, {Name: "val", Type: intT}}, state,
		`if (val != null) { state.setInt(0, state.getInt(0)+1); state.setLong(1, state.getLong(1)+val.intValue()); } return state;`)
	if err != nil {
		b.Fatal(err)
	}
	st := pgschema.SerializeTuple([][]byte{binary.BigEndian.AppendUint32(nil, 0), binary.BigEndian.AppendUint64(nil, 0)})
	val := binary.BigEndian.AppendUint32(nil, 5)
	budget := Budget{Steps: 1e6}
	b.ReportAllocs()
	for b.Loop() {
		out, err := f.Call([][]byte{st, val}, budget)
		if err != nil {
			b.Fatal(err)
		}
		st = out
	}
}
