package translate

import (
	"encoding/binary"
	"encoding/json"
	"slices"
	"strings"

	"github.com/cqlpg/cqlpg/pgschema"
)

// jsonValues plans the values of INSERT JSON: every column of the table
// takes its value from the JSON object; a column the object leaves out is
// null (DEFAULT NULL) or left alone (DEFAULT UNSET). The object is decoded
// once per execution (jsonRow), and each column's value taken from that.
func (p *planner) jsonValues(t *pgschema.Table, s *InsertStmt) ([]*pgschema.Column, []Value, error) {
	src, err := p.value(s.JSON, ColumnSpec{Keyspace: t.Keyspace, Table: t.Name, Name: "[json]", Type: pgschema.Scalar(pgschema.Text)})
	if err != nil {
		return nil, nil, err
	}
	if src.Marker < 0 {
		// A constant object is decoded now, so that its errors come at
		// preparation as Cassandra's do.
		if _, _, err := decodeJSONRow(t, src.Const, s.DefaultUnset); err != nil {
			return nil, nil, err
		}
	}
	row := p.compute(&jsonRow{src: src, table: t, unset: s.DefaultUnset})
	var values []Value
	for i := range t.Columns {
		values = append(values, p.compute(&jsonField{row: row, index: i}))
	}
	return t.Columns, values, nil
}

// decodeJSONRow decodes an INSERT JSON object into the value of every
// column of the table, in column order: null when the object has null or
// leaves the column out, and unset instead in the latter case when
// defaultUnset.
func decodeJSONRow(t *pgschema.Table, data []byte, defaultUnset bool) ([][]byte, []bool, error) {
	if data == nil {
		return nil, nil, invalidf("Got null for INSERT JSON values")
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil || raw == nil {
		return nil, nil, invalidf("Could not decode JSON string as a map: the text is not a JSON object. (String was: %s)", data)
	}
	values := make([][]byte, len(t.Columns))
	unset := make([]bool, len(t.Columns))
	found := make([]bool, len(t.Columns))
	for key, v := range raw {
		name := strings.ToLower(key)
		if len(key) > 1 && strings.HasPrefix(key, `"`) && strings.HasSuffix(key, `"`) {
			name = key[1 : len(key)-1]
		}
		c := t.Column(name)
		if c == nil {
			return nil, nil, invalidf("JSON values map contains unrecognized column: %s", key)
		}
		i := slices.Index(t.Columns, c)
		found[i] = true
		if string(v) == "null" {
			continue
		}
		val, err := pgschema.FromJSON(c.Type, v)
		if err != nil {
			return nil, nil, invalidf("Error decoding JSON value for %s: %s", c.Name, err.Error())
		}
		values[i] = val
	}
	for i := range t.Columns {
		unset[i] = !found[i] && defaultUnset
	}
	return values, unset, nil
}

// jsonRow decodes the object of an INSERT JSON into one value holding
// every column's, each as [int length][bytes] with -1 for null and -2 for
// unset, for the jsonField computations that follow it.
type jsonRow struct {
	src   Value
	table *pgschema.Table
	unset bool
}

func (r *jsonRow) Compute(b *Bound, _ *EvalContext) ([]byte, bool, error) {
	data, _ := b.Get(r.src)
	values, unset, err := decodeJSONRow(r.table, data, r.unset)
	if err != nil {
		return nil, false, err
	}
	var out []byte
	for i, v := range values {
		switch {
		case unset[i]:
			out = binary.BigEndian.AppendUint32(out, uint32(0xfffffffe))
		case v == nil:
			out = binary.BigEndian.AppendUint32(out, uint32(0xffffffff))
		default:
			out = binary.BigEndian.AppendUint32(out, uint32(len(v)))
			out = append(out, v...)
		}
	}
	return out, false, nil
}

// jsonField is one column's value taken from a decoded jsonRow.
type jsonField struct {
	row   Value
	index int
}

func (f *jsonField) Compute(b *Bound, _ *EvalContext) ([]byte, bool, error) {
	row, _ := b.Get(f.row)
	for i := 0; ; i++ {
		n := int32(binary.BigEndian.Uint32(row))
		row = row[4:]
		if i == f.index {
			switch n {
			case -2:
				return nil, true, nil
			case -1:
				return nil, false, nil
			}
			return row[:n], false, nil
		}
		if n > 0 {
			row = row[n:]
		}
	}
}
