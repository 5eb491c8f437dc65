package pgschema

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

// Converter rewrites one value between its CQL wire form and Postgres's
// binary form, appending the result to dst.
type Converter func(dst, src []byte) ([]byte, error)

// Storage says how a CQL type is kept in Postgres. Values travel in
// Postgres's binary format in both directions; for most scalar types that
// format is byte for byte the CQL one, and the converters are nil.
// docs/types.md explains each choice.
type Storage struct {
	// SQL is the column type as DDL writes it.
	SQL string
	// OID and ArrayOID identify the Postgres type and its array type, used
	// to declare parameters. ArrayOID is 0 where an IN list of the type
	// cannot be sent as an array (the type is itself an array).
	OID, ArrayOID uint32
	// ToPG and FromPG convert values; nil means the bytes are the same.
	// FromPG returns sets and maps sorted by Cassandra's comparator.
	ToPG, FromPG Converter
	// SortKey is an SQL expression, with one %s standing for a column and
	// no question mark, whose bytea value orders like Cassandra's serialized
	// values (unsigned bytes). Cells written with equal timestamps are
	// reconciled with it. For arrays and jsonb it is their binary send
	// form: deterministic, which is all reconciliation needs, but not
	// Cassandra's order.
	SortKey string
	// placeholder, for types with an exact companion, tells values the
	// natural column cannot hold exactly (Storage.Inexact).
	placeholder func(dst, v []byte) ([]byte, bool)
}

// Postgres type OIDs (pg_type.oid), with which statements declare their
// parameters: the types the storage model keeps values in, each followed
// by its array type, and json for repair's row sets.
const (
	OIDBool             = 16
	OIDBoolArray        = 1000
	OIDBytea            = 17
	OIDByteaArray       = 1001
	OIDInt2             = 21
	OIDInt2Array        = 1005
	OIDInt4             = 23
	OIDInt4Array        = 1007
	OIDInt8             = 20
	OIDInt8Array        = 1016
	OIDText             = 25
	OIDTextArray        = 1009
	OIDFloat4           = 700
	OIDFloat4Array      = 1021
	OIDFloat8           = 701
	OIDFloat8Array      = 1022
	OIDInet             = 869
	OIDInetArray        = 1041
	OIDDate             = 1082
	OIDDateArray        = 1182
	OIDTimestamptz      = 1184
	OIDTimestamptzArray = 1185
	OIDNumeric          = 1700
	OIDNumericArray     = 1231
	OIDUUID             = 2950
	OIDUUIDArray        = 2951
	OIDJSON             = 114
	OIDJSONB            = 3802
	OIDJSONBArray       = 3807
)

const textC = `text COLLATE "C"`

// Text and ascii values may hold U+0000, which Postgres text cannot:
// stored, each 0x00 becomes 0x01 0x01 and each 0x01 becomes 0x01 0x02.
// The escape keeps byte order, so the column (COLLATE "C") still sorts as
// Cassandra sorts the values, and leaves every other text as it is.
const textEscape = 0x01

// escapeText stores a text value. An empty value stays empty, not null.
func escapeText(dst, src []byte) ([]byte, error) {
	if dst == nil {
		dst = make([]byte, 0, len(src))
	}
	if bytes.IndexByte(src, 0) < 0 && bytes.IndexByte(src, textEscape) < 0 {
		return append(dst, src...), nil
	}
	for _, c := range src {
		switch c {
		case 0:
			dst = append(dst, textEscape, 0x01)
		case textEscape:
			dst = append(dst, textEscape, 0x02)
		default:
			dst = append(dst, c)
		}
	}
	return dst, nil
}

// unescapeText reads a stored text value back. A 0x01 not followed by
// 0x01 or 0x02, which only SQL could have written, stays as it is.
func unescapeText(dst, src []byte) ([]byte, error) {
	if out, ok := fromExact(dst, src); ok {
		return out, nil // a long key's exact companion (exact.go)
	}
	if dst == nil {
		dst = make([]byte, 0, len(src))
	}
	i := bytes.IndexByte(src, textEscape)
	if i < 0 {
		return append(dst, src...), nil
	}
	dst = append(dst, src[:i]...)
	for ; i < len(src); i++ {
		c := src[i]
		if c == textEscape && i+1 < len(src) && (src[i+1] == 0x01 || src[i+1] == 0x02) {
			c = src[i+1] - 1
			i++
		}
		dst = append(dst, c)
	}
	return dst, nil
}

// varintSortKey turns the integral numeric expression n (which it names
// once, as x.n) into its minimal two's complement bytes, the CQL varint.
const varintSortKey = `(SELECT decode(string_agg(lpad(to_hex(mod(div(c.m, 256::numeric ^ (c.l - i)), 256)::int), 2, '0'), '' ORDER BY i), 'hex') ` +
	`FROM (SELECT CASE WHEN b.n < 0 THEN b.n + 256::numeric ^ b.l ELSE b.n END AS m, b.l ` +
	`FROM (SELECT a.n, (SELECT min(k) FROM generate_series(1, length(trunc(abs(a.n))::text) / 2 + 2) AS k ` +
	`WHERE a.n >= -(2::numeric ^ (8 * k - 1)) AND a.n < 2::numeric ^ (8 * k - 1)) AS l ` +
	`FROM (SELECT trunc(%s) AS n) AS a) AS b) AS c, generate_series(1, c.l) AS i)`

var storages = kindTable[*Storage]{
	Ascii: {SQL: textC, OID: OIDText, ArrayOID: OIDTextArray, SortKey: "textsend(%s)",
		ToPG: escapeText, FromPG: unescapeText},
	Text: {SQL: textC, OID: OIDText, ArrayOID: OIDTextArray, SortKey: "textsend(%s)",
		ToPG: escapeText, FromPG: unescapeText},
	Bigint:   {SQL: "bigint", OID: OIDInt8, ArrayOID: OIDInt8Array, SortKey: "int8send(%s)"},
	Counter:  {SQL: "bigint", OID: OIDInt8, ArrayOID: OIDInt8Array, SortKey: "int8send(%s)"},
	Int:      {SQL: "integer", OID: OIDInt4, ArrayOID: OIDInt4Array, SortKey: "int4send(%s)"},
	Smallint: {SQL: "smallint", OID: OIDInt2, ArrayOID: OIDInt2Array, SortKey: "int2send(%s)"},
	Tinyint: {SQL: "smallint", OID: OIDInt2, ArrayOID: OIDInt2Array, SortKey: "substr(int2send(%s), 2)",
		ToPG: tinyintToPG, FromPG: tinyintFromPG},
	Boolean:  {SQL: "boolean", OID: OIDBool, ArrayOID: OIDBoolArray, SortKey: "boolsend(%s)"},
	Float:    {SQL: "real", OID: OIDFloat4, ArrayOID: OIDFloat4Array, SortKey: "float4send(%s)"},
	Double:   {SQL: "double precision", OID: OIDFloat8, ArrayOID: OIDFloat8Array, SortKey: "float8send(%s)"},
	Blob:     {SQL: "bytea", OID: OIDBytea, ArrayOID: OIDByteaArray, SortKey: "%s"},
	UUID:     {SQL: "uuid", OID: OIDUUID, ArrayOID: OIDUUIDArray, SortKey: "uuid_send(%s)"},
	Timeuuid: {SQL: "uuid", OID: OIDUUID, ArrayOID: OIDUUIDArray, SortKey: "uuid_send(%s)"},
	Timestamp: {SQL: "timestamptz", OID: OIDTimestamptz, ArrayOID: OIDTimestamptzArray,
		SortKey: "int8send(floor(extract(epoch from %s) * 1000)::bigint)",
		ToPG:    timestampToPG, FromPG: timestampFromPG},
	Date: {SQL: "date", OID: OIDDate, ArrayOID: OIDDateArray,
		SortKey: "substr(int8send((%s - date '1970-01-01') + 2147483648), 5)",
		ToPG:    dateToPG, FromPG: dateFromPG, placeholder: datePlaceholder},
	// time is nanoseconds since midnight: Postgres's time keeps only
	// microseconds, a bigint keeps them all, and its binary form is CQL's.
	Time: {SQL: "bigint", OID: OIDInt8, ArrayOID: OIDInt8Array, SortKey: "int8send(%s)"},
	// decimal and varint are numeric, which holds any size and keeps a
	// decimal's scale; see numeric.go.
	Decimal: {SQL: "numeric", OID: OIDNumeric, ArrayOID: OIDNumericArray,
		SortKey: "(SELECT int4send(scale(x.v)) || " + fmtOnce(varintSortKey, "x.v * 10::numeric ^ scale(x.v)") +
			" FROM (SELECT %s AS v) AS x)",
		ToPG: decimalToPG, FromPG: decimalFromPG, placeholder: decimalPlaceholder},
	Varint: {SQL: "numeric", OID: OIDNumeric, ArrayOID: OIDNumericArray, SortKey: varintSortKey,
		ToPG: varintToPG, FromPG: varintFromPG},
	Inet: {SQL: "inet", OID: OIDInet, ArrayOID: OIDInetArray, SortKey: "substr(inet_send(%s), 5)",
		ToPG: inetToPG, FromPG: inetFromPG},
	// duration is {months, days, nanoseconds}: interval keeps only
	// microseconds, and composite types have a different OID in every
	// database. The sort key zigzag-encodes each part as the vints of the
	// CQL form do, which orders the same.
	Duration: {SQL: "bigint[]", OID: OIDInt8Array,
		SortKey: "(SELECT int8send((d.v[1] << 1) # (d.v[1] >> 63)) || int8send((d.v[2] << 1) # (d.v[2] >> 63)) || " +
			"int8send((d.v[3] << 1) # (d.v[3] >> 63)) FROM (SELECT %s AS v) AS d)",
		ToPG: durationToPG, FromPG: durationFromPG},
}

// fmtOnce substitutes s for the %s of an SQL template that has one.
func fmtOnce(template, s string) string { return fmt.Sprintf(template, s) }

// StorageOf returns how t is stored in Postgres: scalars in their natural
// types, lists, sets and vectors of scalars as arrays of them, and maps,
// tuples, user types and other collections as jsonb holding their
// Cassandra JSON form.
func StorageOf(t *Type) (*Storage, error) {
	if s := storages.get(t.Kind); s != nil {
		return s, nil
	}
	if t.Kind < List && t.Kind != Vector {
		return nil, fmt.Errorf("type %s is not supported", t)
	}
	cache := storageCache.Load()
	if s, ok := cache.m.Load(t); ok {
		return s.(*Storage), nil
	}
	s, err := compositeStorage(t)
	if err != nil {
		return nil, err
	}
	// Keep the cache bounded: types are rebuilt with each schema load,
	// so old entries would otherwise accumulate.
	if cache.n.Add(1) > maxCachedStorages {
		storageCache.Store(&storageMap{})
	}
	cache.m.Store(t, s)
	return s, nil
}

const maxCachedStorages = 4096

type storageMap struct {
	m sync.Map // *Type → *Storage
	n atomic.Int64
}

var storageCache atomic.Pointer[storageMap]

func init() { storageCache.Store(&storageMap{}) }

// errPGRange reports a value that Postgres's type cannot hold.
func errPGRange(what, value, pgRange string) error {
	return fmt.Errorf("%s %s is out of the range PostgreSQL can store (%s)", what, value, pgRange)
}

func tinyintToPG(dst, src []byte) ([]byte, error) {
	if len(src) != 1 {
		return dst, fmt.Errorf("Expected 1 byte for a tinyint (%d)", len(src))
	}
	return append(dst, byte(int8(src[0])>>7), src[0]), nil
}

func tinyintFromPG(dst, src []byte) ([]byte, error) {
	if len(src) != 2 {
		return dst, fmt.Errorf("expected 2 bytes for a smallint, got %d", len(src))
	}
	v := int16(binary.BigEndian.Uint16(src))
	if v < -128 || v > 127 {
		return dst, fmt.Errorf("smallint %d is out of the tinyint range", v)
	}
	return append(dst, byte(v)), nil
}

// Postgres counts timestamps in microseconds and dates in days from
// 2000-01-01; CQL counts milliseconds from 1970-01-01 and days from
// 1970-01-01 shifted by 2^31.
const (
	pgEpochMillis = 946684800000
	pgEpochDays   = 10957
	cqlDateCenter = 1 << 31
	// Postgres accepts timestamps in [4714-11-24 BC, 294277-01-01); these
	// are the CQL millisecond bounds of that range.
	minPGTimestampMillis = -210866803200000
	maxPGTimestampMillis = 9224318016000000
	// Postgres dates run from 4714-11-24 BC to 5874897-12-31, in days
	// from 2000-01-01.
	minPGDateDays = -2451545
	maxPGDateDays = 2145031948
	// Postgres's infinite timestamps and dates.
	pgTimestampNoBegin = -1 << 63
	pgTimestampNoEnd   = 1<<63 - 1
	pgDateNoBegin      = -1 << 31
	pgDateNoEnd        = 1<<31 - 1
)

func timestampToPG(dst, src []byte) ([]byte, error) {
	if len(src) != 8 {
		return dst, fmt.Errorf("Expected 8 or 0 byte long for date (%d)", len(src))
	}
	ms := int64(binary.BigEndian.Uint64(src))
	if ms < minPGTimestampMillis || ms >= maxPGTimestampMillis {
		return dst, errPGRange("timestamp", formatTimestampISO(ms),
			"4714-11-24 00:00:00 BC to 294276-12-31 23:59:59.999 UTC")
	}
	return binary.BigEndian.AppendUint64(dst, uint64((ms-pgEpochMillis)*1000)), nil
}

// formatTimestampISO formats milliseconds since the epoch in proleptic
// Gregorian ISO form (-4713-11-23T23:59:59.999Z), for messages.
func formatTimestampISO(ms int64) string {
	days := floorDiv(ms, millisPerDay)
	rest := ms - days*millisPerDay
	return fmt.Sprintf("%sT%02d:%02d:%02d.%03dZ", formatISODate(days), rest/3600000, rest/60000%60, rest/1000%60, rest%1000)
}

func timestampFromPG(dst, src []byte) ([]byte, error) {
	if len(src) != 8 {
		return dst, fmt.Errorf("expected 8 bytes for a timestamptz, got %d", len(src))
	}
	us := int64(binary.BigEndian.Uint64(src))
	if us == pgTimestampNoBegin || us == pgTimestampNoEnd {
		return dst, errors.New("an infinite timestamp cannot be represented as a CQL timestamp")
	}
	ms := us / 1000
	if us%1000 < 0 { // round toward minus infinity, as the stored microseconds
		ms-- // of a row written through SQL may not be whole milliseconds
	}
	return binary.BigEndian.AppendUint64(dst, uint64(ms+pgEpochMillis)), nil
}

func dateToPG(dst, src []byte) ([]byte, error) {
	if len(src) != 4 {
		return dst, fmt.Errorf("Expected 4 byte long for date (%d)", len(src))
	}
	days := int64(binary.BigEndian.Uint32(src)) - cqlDateCenter - pgEpochDays
	if days < minPGDateDays || days > maxPGDateDays {
		return dst, errPGRange("date", formatISODate(days+pgEpochDays), "-4713-11-24 to 5874897-12-31")
	}
	return binary.BigEndian.AppendUint32(dst, uint32(int32(days))), nil
}

func dateFromPG(dst, src []byte) ([]byte, error) {
	if out, ok := fromExact(dst, src); ok {
		return out, nil
	}
	if len(src) != 4 {
		return dst, fmt.Errorf("expected 4 bytes for a date, got %d", len(src))
	}
	pg := int32(binary.BigEndian.Uint32(src))
	if pg == pgDateNoBegin || pg == pgDateNoEnd {
		return dst, errors.New("an infinite date cannot be represented as a CQL date")
	}
	days := int64(pg) + pgEpochDays + cqlDateCenter
	return binary.BigEndian.AppendUint32(dst, uint32(days)), nil
}

// Postgres's inet binary form: family (2 for IPv4, 3 for IPv6), netmask
// bits, is-cidr flag, address length, address.
const (
	pgAFInet  = 2
	pgAFInet6 = 3
)

func inetToPG(dst, src []byte) ([]byte, error) {
	switch len(src) {
	case 4:
		dst = append(dst, pgAFInet, 32, 0, 4)
	case 16:
		dst = append(dst, pgAFInet6, 128, 0, 16)
	default:
		return dst, fmt.Errorf("Expected 4 or 16 byte inetaddress; got %x", src)
	}
	return append(dst, src...), nil
}

// inetFromPG returns an inet's address; a netmask that a row written
// through SQL may carry has no CQL equivalent and is dropped.
func inetFromPG(dst, src []byte) ([]byte, error) {
	if len(src) < 4 || len(src) != 4+int(src[3]) || (src[3] != 4 && src[3] != 16) {
		return dst, fmt.Errorf("malformed inet value of %d bytes", len(src))
	}
	return append(dst, src[4:]...), nil
}

// durationToPG stores a duration as the bigint array {months, days,
// nanoseconds}. Non-minimal vints read back minimal; bytes after the
// three vints, which Cassandra ignores, are refused rather than lost.
func durationToPG(dst, src []byte) ([]byte, error) {
	d, n, err := parseDurationBytes(src)
	if err != nil {
		return dst, fmt.Errorf("Expected at least 3 bytes for a duration (%d)", len(src))
	}
	if n != len(src) {
		return dst, fmt.Errorf("duration value has %d unexpected bytes after its three vints", len(src)-n)
	}
	dst = appendArrayHeader(dst, OIDInt8, 3)
	for _, v := range [3]int64{d.Months, d.Days, d.Nanos} {
		dst = binary.BigEndian.AppendUint32(dst, 8)
		dst = binary.BigEndian.AppendUint64(dst, uint64(v))
	}
	return dst, nil
}

func durationFromPG(dst, src []byte) ([]byte, error) {
	a, err := parsePGArray(src)
	if err != nil {
		return dst, err
	}
	if a.n != 3 {
		return dst, fmt.Errorf("a duration is stored as 3 bigints, found %d", a.n)
	}
	var parts [3]int64
	for i := range parts {
		e, ok, err := a.next()
		if err != nil {
			return dst, err
		}
		if !ok || len(e) != 8 {
			return dst, errors.New("a duration's bigints cannot be null")
		}
		parts[i] = int64(binary.BigEndian.Uint64(e))
	}
	return DurationValue{parts[0], parts[1], parts[2]}.Append(dst), nil
}
