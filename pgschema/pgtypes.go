package pgschema

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Converter rewrites one value between its CQL wire form and Postgres's
// binary form, appending the result to dst.
type Converter func(dst, src []byte) ([]byte, error)

// Storage says how a CQL type is kept in Postgres. Values travel in
// Postgres's binary format in both directions; for most types that format is
// byte for byte the CQL one, and the converters are nil.
type Storage struct {
	// SQL is the column type as DDL writes it.
	SQL string
	// OID and ArrayOID identify the Postgres type and its array type, used
	// to declare parameters.
	OID, ArrayOID uint32
	// ToPG and FromPG convert values; nil means the bytes are the same.
	ToPG, FromPG Converter
	// SortKey is an SQL expression, with %s standing for a column, whose
	// bytea value orders like Cassandra's serialized values (unsigned bytes).
	// Cells written with equal timestamps are reconciled with it.
	SortKey string
}

// Postgres type OIDs used by the storage model.
const (
	oidBool        = 16
	oidBytea       = 17
	oidInt8        = 20
	oidInt2        = 21
	oidInt4        = 23
	oidText        = 25
	oidFloat4      = 700
	oidFloat8      = 701
	oidBoolArray   = 1000
	oidByteaArray  = 1001
	oidInt2Array   = 1005
	oidInt4Array   = 1007
	oidTextArray   = 1009
	oidInt8Array   = 1016
	oidFloat4Array = 1021
	oidFloat8Array = 1022
	oidDate        = 1082
	oidDateArray   = 1182
	oidTimestamptz = 1184
	oidTstzArray   = 1185
	oidUUID        = 2950
	oidUUIDArray   = 2951
)

const textC = `text COLLATE "C"`

var storages = map[Kind]*Storage{
	Ascii:    {SQL: textC, OID: oidText, ArrayOID: oidTextArray, SortKey: "textsend(%s)"},
	Text:     {SQL: textC, OID: oidText, ArrayOID: oidTextArray, SortKey: "textsend(%s)"},
	Bigint:   {SQL: "bigint", OID: oidInt8, ArrayOID: oidInt8Array, SortKey: "int8send(%s)"},
	Counter:  {SQL: "bigint", OID: oidInt8, ArrayOID: oidInt8Array, SortKey: "int8send(%s)"},
	Int:      {SQL: "integer", OID: oidInt4, ArrayOID: oidInt4Array, SortKey: "int4send(%s)"},
	Smallint: {SQL: "smallint", OID: oidInt2, ArrayOID: oidInt2Array, SortKey: "int2send(%s)"},
	Tinyint: {SQL: "smallint", OID: oidInt2, ArrayOID: oidInt2Array, SortKey: "substr(int2send(%s), 2)",
		ToPG: tinyintToPG, FromPG: tinyintFromPG},
	Boolean:  {SQL: "boolean", OID: oidBool, ArrayOID: oidBoolArray, SortKey: "boolsend(%s)"},
	Float:    {SQL: "real", OID: oidFloat4, ArrayOID: oidFloat4Array, SortKey: "float4send(%s)"},
	Double:   {SQL: "double precision", OID: oidFloat8, ArrayOID: oidFloat8Array, SortKey: "float8send(%s)"},
	Blob:     {SQL: "bytea", OID: oidBytea, ArrayOID: oidByteaArray, SortKey: "%s"},
	UUID:     {SQL: "uuid", OID: oidUUID, ArrayOID: oidUUIDArray, SortKey: "uuid_send(%s)"},
	Timeuuid: {SQL: "uuid", OID: oidUUID, ArrayOID: oidUUIDArray, SortKey: "uuid_send(%s)"},
	Timestamp: {SQL: "timestamptz", OID: oidTimestamptz, ArrayOID: oidTstzArray,
		SortKey: "int8send(floor(extract(epoch from %s) * 1000)::bigint)",
		ToPG:    timestampToPG, FromPG: timestampFromPG},
	Date: {SQL: "date", OID: oidDate, ArrayOID: oidDateArray,
		SortKey: "substr(int8send((%s - date '1970-01-01') + 2147483648), 5)",
		ToPG:    dateToPG, FromPG: dateFromPG},
}

// StorageOf returns how t is stored in Postgres, or an error for the types
// this version of cqlpg cannot store yet.
func StorageOf(t *Type) (*Storage, error) {
	if s, ok := storages[t.Kind]; ok {
		return s, nil
	}
	return nil, fmt.Errorf("type %s is not supported yet", t)
}

// errOutOfRange reports a value that Postgres's type cannot hold.
var errOutOfRange = errors.New("value out of the range Postgres can store")

func tinyintToPG(dst, src []byte) ([]byte, error) {
	if len(src) != 1 {
		return dst, fmt.Errorf("expected 1 byte for a tinyint, got %d", len(src))
	}
	return append(dst, byte(int8(src[0])>>7), src[0]), nil
}

func tinyintFromPG(dst, src []byte) ([]byte, error) {
	if len(src) != 2 {
		return dst, fmt.Errorf("expected 2 bytes for a smallint, got %d", len(src))
	}
	v := int16(binary.BigEndian.Uint16(src))
	if v < -128 || v > 127 {
		return dst, errOutOfRange
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
	// Postgres accepts timestamps in [4713 BC, 294276 AD); these are the
	// CQL millisecond bounds of that range.
	minPGTimestampMillis = -210866803200000
	maxPGTimestampMillis = 9224318016000000
)

func timestampToPG(dst, src []byte) ([]byte, error) {
	if len(src) != 8 {
		return dst, fmt.Errorf("expected 8 bytes for a timestamp, got %d", len(src))
	}
	ms := int64(binary.BigEndian.Uint64(src))
	if ms < minPGTimestampMillis || ms >= maxPGTimestampMillis {
		return dst, errOutOfRange
	}
	return binary.BigEndian.AppendUint64(dst, uint64((ms-pgEpochMillis)*1000)), nil
}

func timestampFromPG(dst, src []byte) ([]byte, error) {
	if len(src) != 8 {
		return dst, fmt.Errorf("expected 8 bytes for a timestamptz, got %d", len(src))
	}
	us := int64(binary.BigEndian.Uint64(src))
	ms := us / 1000
	if us%1000 < 0 { // round toward minus infinity, as the stored microseconds
		ms-- // of a row written through SQL may not be whole milliseconds
	}
	return binary.BigEndian.AppendUint64(dst, uint64(ms+pgEpochMillis)), nil
}

func dateToPG(dst, src []byte) ([]byte, error) {
	if len(src) != 4 {
		return dst, fmt.Errorf("expected 4 bytes for a date, got %d", len(src))
	}
	days := int64(binary.BigEndian.Uint32(src)) - cqlDateCenter - pgEpochDays
	// Postgres dates run from 4713 BC to 5874897 AD.
	if days < -2451545 || days > 2145031948 {
		return dst, errOutOfRange
	}
	return binary.BigEndian.AppendUint32(dst, uint32(int32(days))), nil
}

func dateFromPG(dst, src []byte) ([]byte, error) {
	if len(src) != 4 {
		return dst, fmt.Errorf("expected 4 bytes for a date, got %d", len(src))
	}
	days := int64(int32(binary.BigEndian.Uint32(src))) + pgEpochDays + cqlDateCenter
	return binary.BigEndian.AppendUint32(dst, uint32(days)), nil
}
