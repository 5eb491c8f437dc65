package gateway

import (
	"crypto/md5"
	"encoding/binary"
	"slices"

	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/translate"
)

// RESULT kinds.
const (
	resultVoid         int32 = 0x0001
	resultRows         int32 = 0x0002
	resultSetKeyspace  int32 = 0x0003
	resultPrepared     int32 = 0x0004
	resultSchemaChange int32 = 0x0005
)

// Rows metadata flags.
const (
	rowsGlobalTableSpec int32 = 0x0001
	rowsHasMorePages    int32 = 0x0002
	rowsNoMetadata      int32 = 0x0004
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
		return appendType(appendShort(b, uint16(t.Kind)), t.Elem[0])
	case pgschema.Map:
		return appendType(appendType(appendShort(b, uint16(t.Kind)), t.Elem[0]), t.Elem[1])
	case pgschema.Tuple:
		b = appendShort(appendShort(b, uint16(t.Kind)), uint16(len(t.Elem)))
		for _, e := range t.Elem {
			b = appendType(b, e)
		}
		return b
	case pgschema.UDT:
		b = appendString(appendString(appendShort(b, uint16(t.Kind)), t.Keyspace), t.Name)
		b = appendShort(b, uint16(len(t.Fields)))
		for i, f := range t.Fields {
			b = appendType(appendString(b, f), t.Elem[i])
		}
		return b
	case pgschema.Vector:
		class := vectorClass + "(" + marshalClasses[t.Elem[0].Kind] + ", " + itoa(t.Dim) + ")"
		return appendString(appendShort(b, uint16(pgschema.Custom)), class)
	}
	return appendShort(b, uint16(t.Kind))
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

// appendColumnSpecs writes a global table spec when possible and then the
// column specifications.
func appendColumnSpecs(b []byte, specs []translate.ColumnSpec, global bool) []byte {
	if global {
		b = appendString(appendString(b, specs[0].Keyspace), specs[0].Table)
	}
	for _, s := range specs {
		if !global {
			b = appendString(appendString(b, s.Keyspace), s.Table)
		}
		b = appendType(appendString(b, s.Name), s.Type)
	}
	return b
}

// appendRowsMetadata writes <metadata> of a Rows result. With noMetadata
// only the flags, column count and paging state are written, as clients
// that asked for skip_metadata expect.
func appendRowsMetadata(b []byte, specs []translate.ColumnSpec, noMetadata bool, pagingState []byte) []byte {
	var flags int32
	global := len(specs) > 0 && sameTable(specs)
	switch {
	case noMetadata:
		flags |= rowsNoMetadata
	case global:
		flags |= rowsGlobalTableSpec
	}
	if pagingState != nil {
		flags |= rowsHasMorePages
	}
	b = appendInt(appendInt(b, flags), int32(len(specs)))
	if pagingState != nil {
		b = appendBytes(b, pagingState)
	}
	if noMetadata {
		return b
	}
	return appendColumnSpecs(b, specs, global)
}

// appendPrepared writes a Prepared result for protocol version v; from
// v5 it carries the result metadata id.
func appendPrepared(b []byte, v byte, id, resultID []byte, md *translate.Metadata) []byte {
	b = appendShortBytes(appendInt(b, resultPrepared), id)
	if v >= 5 {
		b = appendShortBytes(b, resultID)
	}
	vars := md.Variables
	global := len(vars) > 0 && sameTable(vars)
	var flags int32
	if global {
		flags = rowsGlobalTableSpec
	}
	b = appendInt(appendInt(b, flags), int32(len(vars)))
	if v >= 4 {
		b = appendInt(b, int32(len(md.PKIndexes)))
		for _, i := range md.PKIndexes {
			b = appendShort(b, i)
		}
	}
	b = appendColumnSpecs(b, vars, global)
	if len(md.Result) == 0 {
		return appendInt(appendInt(b, rowsNoMetadata), 0)
	}
	return appendRowsMetadata(b, md.Result, false, nil)
}

// resultMetadataID digests a statement's result metadata: v5 clients
// send it back with EXECUTE, and learn from a different one in the Rows
// result that the metadata changed. It covers what the client decodes rows
// with: each column's table, name and type.
func resultMetadataID(specs []translate.ColumnSpec) [16]byte {
	var id [16]byte
	h := md5.New()
	h.Write(appendColumnSpecs(nil, specs, false))
	h.Sum(id[:0])
	return id
}

// markMetadataChanged turns the Rows result written at resp[start:] with
// full metadata into one that says the metadata changed: the flag, then
// the new id after the paging state. Other results are left as they are.
func markMetadataChanged(resp *[]byte, start int, id []byte) {
	b := *resp
	if len(b) < start+12 || int32(binary.BigEndian.Uint32(b[start:])) != resultRows {
		return
	}
	flags := int32(binary.BigEndian.Uint32(b[start+4:]))
	binary.BigEndian.PutUint32(b[start+4:], uint32(flags|rowsMetadataChanged))
	at := start + 12
	if flags&rowsHasMorePages != 0 {
		d := decoder{b: b[at:]}
		state, _ := d.value()
		at += 4 + len(state)
	}
	*resp = slices.Insert(b, at, appendShortBytes(nil, id)...)
}

// addWarnings puts warnings into a response (v4 and later): the flag, and
// the list after the header and the tracing id, where the protocol puts
// them. A response carries warnings rarely, so moving its body is cheap
// enough.
func addWarnings(resp *[]byte, v byte, warnings []string) {
	if v < 4 || len(warnings) == 0 {
		return
	}
	at := headerSize
	if (*resp)[1]&flagTracing != 0 {
		at += 16
	}
	list := appendShort(nil, uint16(len(warnings)))
	for _, w := range warnings {
		list = appendString(list, w)
	}
	*resp = slices.Insert(*resp, at, list...)
	(*resp)[1] |= flagWarning
}

// appendSchemaChange writes a Schema_change result or event body:
// change type (CREATED, UPDATED, DROPPED), target (KEYSPACE, TABLE) and
// the names.
func appendSchemaChange(b []byte, change, target, keyspace, name string) []byte {
	b = appendString(appendString(b, change), target)
	b = appendString(b, keyspace)
	if target != "KEYSPACE" {
		b = appendString(b, name)
	}
	return b
}
