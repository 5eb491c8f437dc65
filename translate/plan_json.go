package translate

import (
	"encoding/json"
	"strings"

	"github.com/cqlpg/cqlpg/pgschema"
)

// jsonValues plans the values of INSERT JSON: every column of the table
// takes its value from the JSON object; a column the object leaves out is
// null (DEFAULT NULL) or left alone (DEFAULT UNSET).
func (p *planner) jsonValues(t *pgschema.Table, s *InsertStmt) ([]*pgschema.Column, []Value, error) {
	src, err := p.value(s.JSON, ColumnSpec{Keyspace: t.Keyspace, Table: t.Name, Name: "[json]", Type: pgschema.Scalar(pgschema.Text)})
	if err != nil {
		return nil, nil, err
	}
	if src.Marker < 0 {
		// A constant object is checked now, so that its errors come at
		// preparation as Cassandra's do.
		if _, err := jsonObject(t, src.Const); err != nil {
			return nil, nil, err
		}
	}
	var values []Value
	for _, c := range t.Columns {
		values = append(values, p.compute(&jsonField{src: src, table: t, column: c, unset: s.DefaultUnset}))
	}
	return t.Columns, values, nil
}

// jsonObject parses an INSERT JSON object into raw values keyed by
// column, refusing keys that name no column.
func jsonObject(t *pgschema.Table, data []byte) (map[*pgschema.Column]json.RawMessage, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, invalidf("Could not decode JSON string as a map: %v. (String was: %s)", err, data)
	}
	out := make(map[*pgschema.Column]json.RawMessage, len(raw))
	for key, v := range raw {
		name := strings.ToLower(key)
		if len(key) > 1 && strings.HasPrefix(key, `"`) && strings.HasSuffix(key, `"`) {
			name = key[1 : len(key)-1]
		}
		c := t.Column(name)
		if c == nil {
			return nil, invalidf("JSON values map contains unrecognized column: %s", key)
		}
		out[c] = v
	}
	return out, nil
}

// jsonField is one column's value taken from an INSERT JSON object.
type jsonField struct {
	src    Value
	table  *pgschema.Table
	column *pgschema.Column
	unset  bool
}

func (f *jsonField) Compute(b *Bound, _ *EvalContext) ([]byte, bool, error) {
	data, _ := b.Get(f.src)
	obj, err := jsonObject(f.table, data)
	if err != nil {
		return nil, false, err
	}
	raw, ok := obj[f.column]
	if !ok || string(raw) == "null" {
		return nil, !ok && f.unset, nil
	}
	v, err := pgschema.FromJSON(f.column.Type, raw)
	if err != nil {
		return nil, false, &InvalidError{Msg: "Error decoding JSON value for " + f.column.Name + ": " + err.Error()}
	}
	return v, false, nil
}
