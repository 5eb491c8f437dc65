package exec

import (
	"bytes"
	"encoding/binary"
	"slices"

	"github.com/cqlpg/cqlpg/gateway/cqlwire"
	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/translate"
)

// casState is what a lightweight transaction found under its lock, each
// part as values of the table's columns in SELECT * order (t.Columns):
// the row its conditions test, nil when it does not exist; values whose
// static columns hold the partition's static row, nil when that is dead;
// and the row a refused write shows, nil for none. Columns the read does
// not fetch are null in all three, as in Cassandra's read.
type casState struct {
	row, static, shown [][]byte
}

// fetchFunc says whether a lightweight transaction's read fetches a
// column's value.
type fetchFunc func(*pgschema.Column) bool

// fetchOf returns the columns one write's read fetches.
func fetchOf(c *translate.Conditions) fetchFunc {
	return func(col *pgschema.Column) bool {
		switch col.Kind {
		case pgschema.Static:
			return c.FetchesStatic(col)
		case pgschema.Regular:
			return c.FetchesRegular(col)
		}
		return true
	}
}

// casReads returns the reads of what a conditional write's conditions
// test (CQL3CasRequest.readCommand): the row it names, and the partition's
// static row in case that row is missing when static columns are fetched;
// or, when only the static row is tested, the partition's first live row
// joined with it.
func (e *Execution) casReads(c *translate.Conditions, r *rowArgs, fetch fetchFunc) []casRead {
	if !c.TestsRow() {
		read := c.PartitionRead
		if read == nil {
			read = c.Read
		}
		return []casRead{{e: e, read: read, args: r}}
	}
	reads := []casRead{{e: e, read: c.Read, args: r}}
	if c.PartitionRead != nil && fetchesStatic(c.Read.Table, fetch) {
		reads = append(reads, casRead{e: e, read: c.PartitionRead, args: r})
	}
	return reads
}

// casStateOf makes the state a conditional write's reads found.
func casStateOf(c *translate.Conditions, reads []casRead, found [][][]byte, fetch fetchFunc) (casState, error) {
	var s casState
	first, err := stateRow(reads[0].read, found[0], fetch)
	if err != nil {
		return s, err
	}
	if !c.TestsRow() {
		return partitionState(reads[0].read.Table, first), nil
	}
	if first != nil {
		s.row, s.shown = first, first
		if staticLive(c.Read.Table, first) {
			s.static = first
		}
		return s, nil
	}
	if len(reads) < 2 {
		return s, nil
	}
	p, err := stateRow(reads[1].read, found[1], fetch)
	if err != nil {
		return s, err
	}
	return staticState(reads[1].read.Table, p), nil
}

// partitionState is the state of a partition's first live row joined with
// its static row, or of the static row alone, which a refused write shows.
func partitionState(t *pgschema.Table, p [][]byte) casState {
	var s casState
	if p != nil && staticLive(t, p) {
		s.static = p
	}
	s.shown = p
	return s
}

// staticState is the state of a partition whose rows a transaction tests
// are missing: its static row, shown with the partition key and nulls.
func staticState(t *pgschema.Table, p [][]byte) casState {
	var s casState
	if p == nil || !staticLive(t, p) {
		return s
	}
	for i, col := range t.Columns {
		if col.Kind == pgschema.Clustering || col.Kind == pgschema.Regular {
			p[i] = nil
		}
	}
	s.static, s.shown = p, p
	return s
}

func fetchesStatic(t *pgschema.Table, fetch fetchFunc) bool {
	return slices.ContainsFunc(t.Columns, func(c *pgschema.Column) bool { return c.Kind == pgschema.Static && fetch(c) })
}

// stateRow converts a row a read of the current state returned, as
// Postgres values in the read's slots, to values of the table's columns,
// those not fetched null; nil for no row.
func stateRow(read *translate.Select, values [][]byte, fetch fetchFunc) ([][]byte, error) {
	if values == nil {
		return nil, nil
	}
	t := read.Table
	row := make([][]byte, len(t.Columns))
	for i, v := range values {
		col := read.Slots[i].Column
		if v == nil || !fetch(col) {
			continue
		}
		st, _ := pgschema.StorageOf(col.Type)
		if len(v) > 0 && st.FromPG != nil {
			var err error
			if v, err = st.FromPG(nil, v); err != nil {
				return nil, err
			}
		}
		row[columnIndex(t, col)] = v
	}
	return row, nil
}

// columnIndex returns a column's place in SELECT * order.
func columnIndex(t *pgschema.Table, c *pgschema.Column) int {
	return slices.Index(t.Columns, c)
}

// staticLive reports whether values hold a live static cell.
func staticLive(t *pgschema.Table, values [][]byte) bool {
	for i, c := range t.Columns {
		if c.Kind == pgschema.Static && values[i] != nil {
			return true
		}
	}
	return false
}

// conditionsHold checks a write's conditions against the row it names and
// the partition's static row (nil when missing): static conditions first,
// as CQL3CasRequest.appliesTo does.
func (e *Execution) conditionsHold(c *translate.Conditions, row, static [][]byte) (bool, error) {
	switch {
	case c.IfNotExists && c.OnStatic:
		return static == nil, nil
	case c.IfNotExists:
		return row == nil, nil
	case c.IfExists && c.OnStatic:
		return static != nil, nil
	case c.IfExists:
		return row != nil, nil
	}
	t := c.Read.Table
	for _, onStatic := range []bool{true, false} {
		values := row
		if onStatic {
			values = static
		}
		for _, cond := range c.Conds {
			if (cond.Column.Kind == pgschema.Static) != onStatic {
				continue
			}
			var v []byte
			if values != nil {
				v = values[columnIndex(t, cond.Column)]
			}
			v, err := e.conditionOperand(cond, v)
			if err != nil {
				return false, err
			}
			ok, err := e.condition(cond, v)
			if err != nil || !ok {
				return false, err
			}
		}
	}
	return true, nil
}

// checkConditionValues refuses the IN lists Cassandra refuses when it
// binds the conditions, before it reads anything.
func (e *Execution) checkConditionValues(c *translate.Conditions) error {
	for _, cond := range c.Conds {
		if cond.Op != translate.OpIN || !cond.ListMarker {
			continue
		}
		switch list, unset := e.bound.Get(cond.Values[0]); {
		case unset:
			return invalidf("Invalid 'unset' value in condition")
		case list == nil:
			return invalidf("Invalid null list in IN condition")
		}
	}
	return nil
}

// conditionOperand narrows a column's value to the element or field a
// condition names (ColumnCondition's ElementAccessBound and
// UDTFieldAccessBound).
func (e *Execution) conditionOperand(cond translate.Cond, v []byte) ([]byte, error) {
	switch {
	case cond.Key != nil:
		key, _ := e.bound.Get(*cond.Key)
		list := cond.Column.Type.Kind == pgschema.List
		if key == nil {
			return nil, invalidf("Invalid null value for %s element access", map[bool]string{true: "list", false: "map"}[list])
		}
		// A non-frozen list checks its index before it looks at its cells.
		if list && len(key) == 4 && (v != nil || !cond.Column.Type.Frozen) {
			if i := int32(binary.BigEndian.Uint32(key)); i < 0 {
				return nil, invalidf("Invalid negative list index %d", i)
			}
		}
		if v == nil {
			return nil, nil
		}
		return pgschema.Element(cond.Column.Type, v, key)
	case cond.Field >= 0:
		if v == nil {
			return nil, nil
		}
		fields, err := pgschema.Elements(cond.Column.Type, v)
		if err != nil || cond.Field >= len(fields) {
			return nil, err
		}
		return fields[cond.Field], nil
	}
	return v, nil
}

// emptyCollection is the serialized empty list, set or map, which a null
// non-frozen collection is when conditions compare it.
var emptyCollection = []byte{0, 0, 0, 0}

// condition applies one condition's operator to the current value. Like
// ColumnCondition.Bound, a null operand equals only null and has no order,
// and a current null satisfies only != against a value; a whole
// non-frozen collection compares as the collection of its cells instead,
// null being empty.
func (e *Execution) condition(cond translate.Cond, current []byte) (bool, error) {
	values, err := e.conditionValues(cond)
	if err != nil {
		return false, err
	}
	op := cond.Op
	if op == translate.OpIN {
		op = translate.OpEQ
	}
	for _, v := range values {
		ok, err := compareCondition(cond, op, current, v)
		if err != nil || ok {
			return ok, err
		}
	}
	return false, nil
}

func compareCondition(cond translate.Cond, op translate.Operator, current, v []byte) (bool, error) {
	if cond.MultiCell() {
		if current == nil {
			current = emptyCollection
		}
		if v == nil {
			switch op {
			case translate.OpEQ:
				return bytes.Equal(current, emptyCollection), nil
			case translate.OpNEQ:
				return !bytes.Equal(current, emptyCollection), nil
			}
			return false, invalidf("Invalid comparison with null for operator \"%s\"", op)
		}
		return satisfies(op, pgschema.Compare(cond.Type, current, v)), nil
	}
	switch {
	case v == nil:
		switch op {
		case translate.OpEQ:
			return current == nil, nil
		case translate.OpNEQ:
			return current != nil, nil
		}
		return false, invalidf("Invalid comparison with null for operator \"%s\"", op)
	case current == nil:
		return op == translate.OpNEQ, nil
	}
	c := 0
	if !bytes.Equal(current, v) {
		c = pgschema.Compare(cond.Type, current, v)
	}
	return satisfies(op, c), nil
}

// satisfies reports whether a comparison's result satisfies an operator.
func satisfies(op translate.Operator, c int) bool {
	switch op {
	case translate.OpEQ:
		return c == 0
	case translate.OpNEQ:
		return c != 0
	case translate.OpLT:
		return c < 0
	case translate.OpLTE:
		return c <= 0
	case translate.OpGT:
		return c > 0
	}
	return c >= 0
}

// conditionValues returns a condition's operands, in Cassandra's stored
// form: one for a comparison, an IN list's values without the unset ones.
func (e *Execution) conditionValues(cond translate.Cond) ([][]byte, error) {
	var out [][]byte
	switch {
	case cond.ListMarker:
		list, _ := e.bound.Get(cond.Values[0])
		d := cqlwire.Decoder{B: list}
		n := int(d.Int())
		for i := 0; i < n && d.Err == nil; i++ {
			v, _ := d.Value()
			out = append(out, v)
		}
		if d.Err != nil {
			return nil, d.Err
		}
	case cond.Op == translate.OpIN:
		for _, val := range cond.Values {
			if v, unset := e.bound.Get(val); !unset {
				out = append(out, v)
			}
		}
	default:
		v, unset := e.bound.Get(cond.Values[0])
		if unset {
			return nil, invalidf("Invalid 'unset' value in condition")
		}
		out = [][]byte{v}
	}
	for i, v := range out {
		n, err := pgschema.Normalize(cond.Type, v)
		if err != nil {
			return nil, invalidf("%s", err.Error())
		}
		out[i] = n
	}
	return out, nil
}

// appendCASResult writes an LWT's Rows result: [applied] first, then, for
// a refused write whose read found something, the columns Cassandra shows
// (ModificationStatement.buildCasResultSet): the row's for IF EXISTS and
// IF NOT EXISTS, else those of the conditions.
func appendCASResult(b []byte, t *pgschema.Table, c *translate.Conditions, applied bool, shown [][]byte) []byte {
	specs := []translate.ColumnSpec{appliedSpec(t)}
	values := [][]byte{BoolValue(applied)}
	if !applied && shown != nil {
		for _, col := range c.Result {
			specs = append(specs, translate.ColumnSpec{Keyspace: t.Keyspace, Table: t.Name, Name: col.Name, Type: col.Type})
			values = append(values, shown[columnIndex(t, col)])
		}
	}
	b = cqlwire.AppendInt(b, cqlwire.ResultRows)
	b = cqlwire.AppendRowsMetadata(b, specs, false, nil)
	b = cqlwire.AppendInt(b, 1)
	for _, v := range values {
		b = cqlwire.AppendBytes(b, v)
	}
	return b
}

func appliedSpec(t *pgschema.Table) translate.ColumnSpec {
	return translate.ColumnSpec{Keyspace: t.Keyspace, Table: t.Name, Name: "[applied]", Type: pgschema.Scalar(pgschema.Boolean)}
}
