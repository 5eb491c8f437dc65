package translate

import "github.com/cqlpg/cqlpg/pgschema"

// ConstantRow plans an INSERT of constants, such as a sample row typed
// by hand, with the checks of any INSERT: the table it writes and its
// values in the table's column order, nil for the columns it leaves out.
// Values a request would give (bind markers, now(), uuid()) are refused.
func ConstantRow(parsed *Parsed, keyspace string, schema *pgschema.Schema) (*pgschema.Table, [][]byte, error) {
	s, ok := parsed.Statement.(*InsertStmt)
	if !ok {
		return nil, nil, invalidf("only INSERT statements give rows")
	}
	if _, err := Prepare(parsed, keyspace, schema); err != nil {
		return nil, nil, err
	}
	p := &planner{schema: schema, keyspace: keyspace, markers: parsed.MarkerNames, vars: make([]ColumnSpec, len(parsed.MarkerNames))}
	t, err := p.table(s.Table)
	if err != nil {
		return nil, nil, err
	}
	if s.JSON != nil {
		// A constant object, decoded as execution decodes it.
		src, err := p.value(s.JSON, ColumnSpec{Name: "[json]", Type: pgschema.Scalar(pgschema.Text)})
		if err != nil {
			return nil, nil, err
		}
		if src.Marker >= 0 {
			return nil, nil, invalidf("the JSON object is not a constant")
		}
		row, _, err := decodeJSONRow(t, src.Const, s.DefaultUnset)
		return t, row, err
	}
	cols, values, err := p.insertValues(t, s, &Write{Table: t, Kind: WriteUpsert, Keys: make([]Restriction, len(t.KeyColumns()))})
	if err != nil {
		return nil, nil, err
	}
	row := make([][]byte, len(t.Columns))
	for i, c := range cols {
		if values[i].Marker >= 0 {
			return nil, nil, invalidf("the value of %s is not a constant", c.Name)
		}
		row[c.Index] = values[i].Const
	}
	return t, row, nil
}
