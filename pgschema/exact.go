package pgschema

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"slices"
	"unicode/utf8"
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

// longKeyKind reports whether a key column of kind k has an exact
// companion for values too long for the key index (see KeyLimit).
func longKeyKind(k Kind) bool { return k == Text || k == Ascii || k == Blob }

// HasExact reports whether c has an exact companion column.
func (c *Column) HasExact() bool {
	return !c.Legacy && (exactKind(c.Type.Kind) || c.IsKey() && longKeyKind(c.Type.Kind))
}

// ExactColumn names c's exact companion column, or "" when it has none.
func (c *Column) ExactColumn() string {
	if !c.HasExact() {
		return ""
	}
	return c.PGName + suffixExact
}

// A B-tree index entry holds at most 2704 bytes, and Postgres compresses
// a key only when that helps: a key index on values of up to Cassandra's
// 65535 bytes cannot hold the incompressible ones. So a text, ascii or
// blob key column whose stored value is longer than its table's key limit
// holds a stand-in in the index's column instead: the value's first
// KeyLimit bytes (for text, up to the end of the character there), then a
// digest of the whole value (40 hex digits for text, 20 bytes for blobs),
// with the value itself in the exact companion. A stand-in is longer than
// the limit, so it never equals a value; it compares with every shorter
// value as the value does, and two values longer than the limit that
// share their first KeyLimit bytes sort by digest. Order keys longer than
// the limit are cut the same way (BoundOrderKey).

// keyIndexBudget is what the key index's variable-length values may take
// together, leaving room for the token, fixed-size keys and headers.
const keyIndexBudget = 2600

// standInExtra is the most a stand-in adds to the limit.
const standInExtra = 48

// setKeyLimits gives each key column of t its table's key limit: the
// budget shared by the variable-length values one index entry of the key
// index or the deletions table can hold (the partition key, each
// clustering column, and a range deletion's second bound).
func (t *Table) setKeyLimits() {
	fixed, variable := 0, 0
	for _, c := range t.KeyColumns() {
		if fixedKey(c) {
			fixed++
		} else {
			variable++
		}
	}
	if slices.ContainsFunc(t.Clustering, func(c *Column) bool { return !fixedKey(c) }) {
		variable++
	}
	limit := keyIndexBudget
	if variable > 0 {
		limit = (keyIndexBudget-16*fixed)/variable - standInExtra
	}
	for _, c := range t.KeyColumns() {
		c.KeyLimit = max(limit, 64)
	}
}

// fixedKey reports whether key column c sorts on a fixed-size value.
func fixedKey(c *Column) bool {
	if c.OrderColumn() != "" {
		return false
	}
	switch c.Type.Kind {
	case Int, Bigint, Smallint, Tinyint, Boolean, Timestamp, Date, Time, UUID, Timeuuid, Float, Double, Inet, Counter:
		return true
	}
	return false
}

// Placeholder returns what c's natural column holds for the CQL value v
// (valid, not empty) when it cannot hold v itself, appended to dst as a
// Postgres binary value, and true; or dst and false when it holds v.
func (c *Column) Placeholder(dst, v []byte) ([]byte, bool) {
	if !c.HasExact() || len(v) == 0 {
		return dst, false
	}
	switch c.Type.Kind {
	case Text, Ascii:
		if len(v) <= c.KeyLimit/2 || escapedLen(v) <= c.KeyLimit {
			return dst, false
		}
		esc, _ := escapeText(nil, v)
		cut := c.KeyLimit
		for cut < len(esc) && !utf8.RuneStart(esc[cut]) {
			cut++
		}
		sum := sha256.Sum256(v)
		dst = append(dst, esc[:cut]...)
		return hex.AppendEncode(dst, sum[:20]), true
	case Blob:
		if len(v) <= c.KeyLimit {
			return dst, false
		}
		sum := sha256.Sum256(v)
		return append(append(dst, v[:c.KeyLimit]...), sum[:20]...), true
	}
	st, err := StorageOf(c.Type)
	if err != nil {
		return dst, false
	}
	return st.Inexact(dst, v)
}

// escapedLen is the length of text v once stored (escapeText).
func escapedLen(v []byte) int {
	return len(v) + bytes.Count(v, []byte{0}) + bytes.Count(v, []byte{textEscape})
}

// BoundOrderKey cuts an order key of key column c longer than its key
// limit to a stand-in: its first KeyLimit bytes and a 20-byte digest.
func (c *Column) BoundOrderKey(key []byte) []byte {
	if c.Legacy || c.KeyLimit == 0 || len(key) <= c.KeyLimit {
		return key
	}
	sum := sha256.Sum256(key)
	return append(key[:c.KeyLimit:c.KeyLimit], sum[:20]...)
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
// after it, and the date, decimal and text FromPG converters return them
// as they are. No date (4 bytes), numeric (whose digit count is below
// 0xffff) or UTF-8 send form starts with it; blobs need no marker.
var ExactMarker = []byte{0xff, 0xff, 0xff, 0xff, 0xff}

// ExactSelect is the SQL expression reading a column of type t through
// its exact companion, exact (quoted, qualified): value is the natural
// column's send form, as bytea.
func ExactSelect(t *Type, exact, value string) string {
	if t.Kind == Blob {
		return "COALESCE(" + exact + ", " + value + ")" // both hold a blob's CQL bytes
	}
	return "CASE WHEN " + exact + " IS NULL THEN " + value + " ELSE '\\xffffffffff'::bytea || " + exact + " END"
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
// the value of a date or decimal column, value, whose exact companion is
// exact (both quoted, qualified): what filters compare, since neither the
// natural column nor the placeholder orders every value.
func ExactKeySQL(t *Type, value, exact string) string {
	fn := map[Kind]string{Date: "cqlpg.date_key", Decimal: "cqlpg.decimal_key"}[t.Kind]
	return fmt.Sprintf("%s(%s, %s)", fn, value, exact)
}
