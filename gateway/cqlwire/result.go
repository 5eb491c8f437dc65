package cqlwire

import (
	"crypto/md5"
	"encoding/binary"
	"slices"

	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/translate"
)

// RESULT kinds.
const (
	ResultVoid         int32 = 0x0001
	ResultRows         int32 = 0x0002
	ResultSetKeyspace  int32 = 0x0003
	ResultPrepared     int32 = 0x0004
	ResultSchemaChange int32 = 0x0005
)

// Rows metadata flags.
const (
	rowsGlobalTableSpec int32 = 0x0001
	RowsHasMorePages    int32 = 0x0002
	RowsNoMetadata      int32 = 0x0004
	rowsMetadataChanged int32 = 0x0008
)

// vectorClass is the marshal class drivers expect for vector<float, n>.
const vectorClass = "org.apache.cassandra.db.marshal.VectorType"

// marshalClasses names scalar types as Cassandra's marshal classes, which
// the protocol uses for custom types such as vector elements.
var marshalClasses = map[pgschema.Kind]string{
	pgschema.Float: "org.apache.cassandra.db.marshal.FloatType", pgschema.Double: "org.apache.cassandra.db.marshal.DoubleType",
	pgschema.Int: "org.apache.cassandra.db.marshal.Int32Type", pgschema.Bigint: "org.apache.cassandra.db.marshal.LongType",
	pgschema.Text: "org.apache.cassandra.db.marshal.UTF8Type",
}

// appendType writes a type as an [option].
func appendType(b []byte, t *pgschema.Type) []byte {
	switch t.Kind {
	case pgschema.List, pgschema.Set:
		return appendType(AppendShort(b, uint16(t.Kind)), t.Elem[0])
	case pgschema.Map:
		return appendType(appendType(AppendShort(b, uint16(t.Kind)), t.Elem[0]), t.Elem[1])
	case pgschema.Tuple:
		b = AppendShort(AppendShort(b, uint16(t.Kind)), uint16(len(t.Elem)))
		for _, e := range t.Elem {
			b = appendType(b, e)
		}
		return b
	case pgschema.UDT:
		b = AppendString(AppendString(AppendShort(b, uint16(t.Kind)), t.Keyspace), t.Name)
		b = AppendShort(b, uint16(len(t.Fields)))
		for i, f := range t.Fields {
			b = appendType(AppendString(b, f), t.Elem[i])
		}
		return b
	case pgschema.Vector:
		class := vectorClass + "(" + marshalClasses[t.Elem[0].Kind] + ", " + itoa(t.Dim) + ")"
		return AppendString(AppendShort(b, uint16(pgschema.Custom)), class)
	}
	return AppendShort(b, uint16(t.Kind))
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var d [20]byte
	i := len(d)
	for ; n > 0; n /= 10 {
		i--
		d[i] = byte('0' + n%10)
	}
	return string(d[i:])
}

// sameTable reports whether every spec names the same table, which lets
// metadata give it once (Global_tables_spec).
func sameTable(specs []translate.ColumnSpec) bool {
	for _, s := range specs[1:] {
		if s.Keyspace != specs[0].Keyspace || s.Table != specs[0].Table {
			return false
		}
	}
	return true
}

// AppendColumnSpecs writes a global table spec when possible and then the
// column specifications.
func AppendColumnSpecs(b []byte, specs []translate.ColumnSpec, global bool) []byte {
	if global {
		b = AppendString(AppendString(b, specs[0].Keyspace), specs[0].Table)
	}
	for _, s := range specs {
		if !global {
			b = AppendString(AppendString(b, s.Keyspace), s.Table)
		}
		b = appendType(AppendString(b, s.Name), s.Type)
	}
	return b
}

// AppendRowsMetadata writes <metadata> of a Rows result. With noMetadata
// only the flags, column count and paging state are written, as clients
// that asked for skip_metadata expect.
func AppendRowsMetadata(b []byte, specs []translate.ColumnSpec, noMetadata bool, pagingState []byte) []byte {
	var flags int32
	global := len(specs) > 0 && sameTable(specs)
	switch {
	case noMetadata:
		flags |= RowsNoMetadata
	case global:
		flags |= rowsGlobalTableSpec
	}
	if pagingState != nil {
		flags |= RowsHasMorePages
	}
	b = AppendInt(AppendInt(b, flags), int32(len(specs)))
	if pagingState != nil {
		b = AppendBytes(b, pagingState)
	}
	if noMetadata {
		return b
	}
	return AppendColumnSpecs(b, specs, global)
}

// AppendPrepared writes a Prepared result for protocol version v; from
// v5 it carries the result metadata id.
func AppendPrepared(b []byte, v byte, id, resultID []byte, md *translate.Metadata) []byte {
	b = AppendShortBytes(AppendInt(b, ResultPrepared), id)
	if v >= 5 {
		b = AppendShortBytes(b, resultID)
	}
	vars := md.Variables
	global := len(vars) > 0 && sameTable(vars)
	var flags int32
	if global {
		flags = rowsGlobalTableSpec
	}
	b = AppendInt(AppendInt(b, flags), int32(len(vars)))
	if v >= 4 {
		b = AppendInt(b, int32(len(md.PKIndexes)))
		for _, i := range md.PKIndexes {
			b = AppendShort(b, i)
		}
	}
	b = AppendColumnSpecs(b, vars, global)
	if len(md.Result) == 0 {
		return AppendInt(AppendInt(b, RowsNoMetadata), 0)
	}
	return AppendRowsMetadata(b, md.Result, false, nil)
}

// ResultMetadataID digests a statement's result metadata: v5 clients
// send it back with EXECUTE, and learn from a different one in the Rows
// result that the metadata changed. It covers what the client decodes rows
// with: each column's table, name and type.
func ResultMetadataID(specs []translate.ColumnSpec) [16]byte {
	var id [16]byte
	h := md5.New()
	h.Write(AppendColumnSpecs(nil, specs, false))
	h.Sum(id[:0])
	return id
}

// MarkMetadataChanged turns the Rows result written at resp[start:] with
// full metadata into one that says the metadata changed: the flag, then
// the new id after the paging state. Other results are left as they are.
func MarkMetadataChanged(resp *[]byte, start int, id []byte) {
	b := *resp
	if len(b) < start+12 || int32(binary.BigEndian.Uint32(b[start:])) != ResultRows {
		return
	}
	flags := int32(binary.BigEndian.Uint32(b[start+4:]))
	binary.BigEndian.PutUint32(b[start+4:], uint32(flags|rowsMetadataChanged))
	at := start + 12
	if flags&RowsHasMorePages != 0 {
		d := Decoder{B: b[at:]}
		state, _ := d.Value()
		at += 4 + len(state)
	}
	*resp = slices.Insert(b, at, AppendShortBytes(nil, id)...)
}

// AddWarnings puts warnings into a response (v4 and later): the flag, and
// the list after the header and the tracing id, where the protocol puts
// them. A response carries warnings rarely, so moving its body is cheap
// enough.
func AddWarnings(resp *[]byte, v byte, warnings []string) {
	if v < 4 || len(warnings) == 0 {
		return
	}
	at := HeaderSize
	if (*resp)[1]&FlagTracing != 0 {
		at += 16
	}
	list := AppendShort(nil, uint16(len(warnings)))
	for _, w := range warnings {
		list = AppendString(list, w)
	}
	*resp = slices.Insert(*resp, at, list...)
	(*resp)[1] |= FlagWarning
}

// AppendSchemaChange writes a Schema_change result or event body:
// change type (CREATED, UPDATED, DROPPED), target (KEYSPACE, TABLE) and
// the names.
func AppendSchemaChange(b []byte, change, target, keyspace, name string, args ...string) []byte {
	b = AppendString(AppendString(b, change), target)
	b = AppendString(b, keyspace)
	if target != "KEYSPACE" {
		b = AppendString(b, name)
	}
	if target == "FUNCTION" || target == "AGGREGATE" {
		// A function or aggregate is named with its argument types: a
		// [string list].
		b = AppendShort(b, uint16(len(args)))
		for _, a := range args {
			b = AppendString(b, a)
		}
	}
	return b
}
