package pgschema

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// Some values CQL accepts have no exact Postgres form: dates beyond
// Postgres's range (CQL's run from -5877641-06-23 to 5881580-07-11,
// Postgres's from -4713-11-24 to 5874897-12-31), and decimals whose
// exponent numeric cannot hold (1E+1000000, 1E-20000) or whose negative
// scale it drops (1E+3 is numeric 1000, which reads back as 1000). A date
// or decimal column therefore has an exact companion, c$exact bytea: null
// while c holds the value exactly, else the value's CQL bytes, with c
// holding the nearest value psql can show (the value itself when only
// the scale is lost; -infinity or infinity for a date or a decimal too
// large; NaN for a decimal with too many decimals). A key column of these
// types is ordered and identified by an order key (OrderColumn), which
// every CQL value has.
//
// Columns created before the companion existed (Column.Legacy) have
// neither; they refuse such values, as they always did.

// exactKind reports whether a scalar type of kind k has an exact
// companion.
func exactKind(k Kind) bool { return k == Date || k == Decimal }

// HasExact reports whether c has an exact companion column.
func (c *Column) HasExact() bool { return !c.Legacy && exactKind(c.Type.Kind) }

// ExactColumn names c's exact companion column, or "" when it has none.
func (c *Column) ExactColumn() string {
	if !c.HasExact() {
		return ""
	}
	return c.PGName + suffixExact
}

// Inexact reports whether the natural column of a type cannot hold the
// CQL value v (valid, not empty) exactly, and if so appends to dst the
// Postgres binary form of the placeholder it holds instead.
func (s *Storage) Inexact(dst, v []byte) ([]byte, bool) {
	if s.placeholder == nil || len(v) == 0 {
		return dst, false
	}
	return s.placeholder(dst, v)
}

// datePlaceholder is -infinity or infinity for a date beyond Postgres's.
func datePlaceholder(dst, v []byte) ([]byte, bool) {
	if len(v) != 4 {
		return dst, false
	}
	days := int64(binary.BigEndian.Uint32(v)) - cqlDateCenter - pgEpochDays
	var pg int32
	switch {
	case days < minPGDateDays:
		pg = pgDateNoBegin
	case days > maxPGDateDays:
		pg = pgDateNoEnd
	default:
		return dst, false
	}
	return binary.BigEndian.AppendUint32(dst, uint32(pg)), true
}

// decimalPlaceholder is, for a decimal numeric cannot hold exactly, its
// value without the negative scale when numeric holds that, else
// ±Infinity for one too large and NaN for one with too many decimals.
func decimalPlaceholder(dst, v []byte) ([]byte, bool) {
	scale, unscaled, err := decimalParts(v)
	if err != nil {
		return dst, false
	}
	digits, neg := varintDigits(unscaled)
	if scale >= 0 && scale <= pgNumericMaxScale && len(digits)-int(scale) <= 4*(pgNumericMaxWeight+1) {
		return dst, false
	}
	sign := uint16(pgNumericNaN)
	if scale < 0 {
		if out, err := appendPGNumeric(dst, digits, neg, int(scale)); err == nil {
			return out, true
		}
		sign = pgNumericPinf
		if neg {
			sign = pgNumericNinf
		}
	} else if len(digits)-int(scale) > 4*(pgNumericMaxWeight+1) {
		sign = pgNumericPinf
		if neg {
			sign = pgNumericNinf
		}
	}
	dst = binary.BigEndian.AppendUint16(dst, 0)
	dst = binary.BigEndian.AppendUint16(dst, 0)
	dst = binary.BigEndian.AppendUint16(dst, sign)
	return binary.BigEndian.AppendUint16(dst, 0), true
}

// ExactMarker starts a value read from a column with an exact companion
// when the companion holds it: ExactSelect sends the companion's bytes
// after it, and the date and decimal FromPG converters return them as
// they are. No date (4 bytes) or numeric (whose digit count is below
// 0xffff) send form starts with it.
var ExactMarker = []byte{0xff, 0xff, 0xff, 0xff, 0xff}

// ExactSelect is the SQL expression reading column c, whose value column
// is the SQL expression value (its send form, as bytea), through its
// exact companion; alias qualifies the companion.
func ExactSelect(alias string, c *Column, value string) string {
	return "CASE WHEN " + alias + "." + Quote(c.ExactColumn()) + " IS NULL THEN " + value +
		" ELSE '\\xffffffffff'::bytea || " + alias + "." + Quote(c.ExactColumn()) + " END"
}

// fromExact returns the CQL bytes of an exact value read with
// ExactSelect, if src is one.
func fromExact(dst, src []byte) ([]byte, bool) {
	if !bytes.HasPrefix(src, ExactMarker) {
		return dst, false
	}
	return append(dst, src[len(ExactMarker):]...), true
}

// ExactKeySQL is the SQL expression giving the order key (OrderKey) of
// the value of column c, with an exact companion, in the table of alias:
// what filters compare, since neither the natural column nor the
// placeholder orders every value.
func ExactKeySQL(alias string, c *Column) string {
	fn := map[Kind]string{Date: "cqlpg.date_key", Decimal: "cqlpg.decimal_key"}[c.Type.Kind]
	return fmt.Sprintf("%s(%s.%s, %s.%s)", fn, alias, Quote(c.PGName), alias, Quote(c.ExactColumn()))
}
