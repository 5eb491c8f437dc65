package cqlfunc

import (
	"encoding/binary"
	"math"
	"math/big"
	"strings"

	"github.com/cqlpg/cqlpg/pgschema"
)

// This file holds Cassandra 4.1's CastFcts: the castAsType functions that
// CAST(x AS type) calls. Numbers convert among themselves as Java's Number
// methods do, most types convert to ascii and text through their text
// forms, and timeuuids, timestamps and dates convert among themselves as
// toDate and toTimestamp do.

// castPrefix starts every cast function's name.
const castPrefix = "castAs"

// CastFunctionName is CastFcts.getFunctionName: "castAsInt", "castAsText".
func CastFunctionName(t *pgschema.Type) string {
	s := t.String()
	return castPrefix + strings.ToUpper(s[:1]) + s[1:]
}

// castInputs are the numeric types casts read and castOutputs those they
// produce, in Cassandra's order; a counter reads as a bigint.
var (
	castInputs = []pgschema.Kind{pgschema.Tinyint, pgschema.Smallint, pgschema.Int, pgschema.Bigint,
		pgschema.Float, pgschema.Double, pgschema.Decimal, pgschema.Counter, pgschema.Varint}
	castOutputs = []pgschema.Kind{pgschema.Tinyint, pgschema.Smallint, pgschema.Int, pgschema.Bigint,
		pgschema.Float, pgschema.Double, pgschema.Decimal, pgschema.Varint}
)

// castFunctions returns the cast functions in Cassandra's order.
func castFunctions() []*Function {
	ascii, text := scalar(pgschema.Ascii), scalar(pgschema.Text)
	tu, ts, date := scalar(pgschema.Timeuuid), scalar(pgschema.Timestamp), scalar(pgschema.Date)
	var fns []*Function
	toText := func(kinds ...pgschema.Kind) {
		for _, k := range kinds {
			fns = append(fns, textCast(scalar(k), ascii), textCast(scalar(k), text))
		}
	}
	for _, in := range castInputs {
		for _, out := range castOutputs {
			if in != out {
				fns = append(fns, numericCast(in, out))
			}
		}
		toText(in)
	}
	fns = append(fns, castFunction(ascii, text, identityArg))
	toText(pgschema.Inet, pgschema.Boolean)
	fns = append(fns, castFunction(tu, date, delegate(temporalConversion("todate", tu, date))),
		castFunction(tu, ts, delegate(temporalConversion("totimestamp", tu, ts))))
	toText(pgschema.Timeuuid)
	fns = append(fns, castFunction(ts, date, delegate(temporalConversion("todate", ts, date))))
	toText(pgschema.Timestamp)
	fns = append(fns, castFunction(date, ts, delegate(temporalConversion("totimestamp", date, ts))))
	toText(pgschema.Date, pgschema.Time, pgschema.UUID)
	return fns
}

// castFunction declares the cast from in to out.
func castFunction(in, out *pgschema.Type, eval func([][]byte) ([]byte, error)) *Function {
	return pureFunction(CastFunctionName(out), out, []*pgschema.Type{in}, eval)
}

// delegate returns a pure function's evaluation, for a cast that does what
// a time function does.
func delegate(f *Function) func([][]byte) ([]byte, error) {
	return func(a [][]byte) ([]byte, error) { return f.Eval(nil, a) }
}

// textCast converts a value to ascii or text through its text form; an
// empty value becomes "null", as Cassandra's toCQLLiteral writes it.
func textCast(in, out *pgschema.Type) *Function {
	return castFunction(in, out, func(a [][]byte) ([]byte, error) {
		if a[0] == nil {
			return nil, nil
		}
		s, err := cqlLiteralText(in, a[0])
		if err != nil {
			return nil, err
		}
		return []byte(s), nil
	})
}

// numericCast converts between numeric types as Cassandra's Java lambdas
// do: Number.byteValue, shortValue, intValue, longValue, floatValue and
// doubleValue; decimals through Float.toString or Double.toString from
// floating point, exactly from integers; varints from longValue.
func numericCast(in, out pgschema.Kind) *Function {
	return castFunction(scalar(in), scalar(out), func(a [][]byte) ([]byte, error) {
		if a[0] == nil {
			return nil, nil
		}
		k := in
		if k == pgschema.Counter {
			k = pgschema.Bigint
		}
		n, err := aggNumber(k, a[0])
		if err != nil {
			return nil, err
		}
		switch out {
		case pgschema.Tinyint:
			return []byte{byte(int8(n.intValue()))}, nil
		case pgschema.Smallint:
			return binary.BigEndian.AppendUint16(nil, uint16(int16(n.intValue()))), nil
		case pgschema.Int:
			return binary.BigEndian.AppendUint32(nil, uint32(n.intValue())), nil
		case pgschema.Bigint:
			return binary.BigEndian.AppendUint64(nil, uint64(n.longValue())), nil
		case pgschema.Float:
			return binary.BigEndian.AppendUint32(nil, math.Float32bits(n.floatValue())), nil
		case pgschema.Double:
			return binary.BigEndian.AppendUint64(nil, math.Float64bits(n.doubleValue())), nil
		case pgschema.Varint:
			return pgschema.VarintBytes(big.NewInt(n.longValue())), nil
		}
		var d pgschema.BigDecimal
		switch k {
		case pgschema.Float:
			d, err = pgschema.BigDecimalOfFloat(n.f, 32)
		case pgschema.Double:
			d, err = pgschema.BigDecimalOfFloat(n.f, 64)
		case pgschema.Varint:
			d = pgschema.BigDecimal{Unscaled: n.v}
		default:
			d = pgschema.BigDecimal{Unscaled: big.NewInt(n.longValue())}
		}
		if err != nil {
			return nil, err
		}
		return d.Bytes(), nil
	})
}
