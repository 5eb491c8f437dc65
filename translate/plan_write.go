package translate

import (
	"slices"

	"github.com/cqlpg/cqlpg/pgschema"
)

// WriteKind says what a write does to the rows it names.
type WriteKind uint8

// Write kinds.
const (
	// WriteUpsert sets cells, creating the row if needed (INSERT, UPDATE,
	// and DELETE of columns, which writes cell tombstones).
	WriteUpsert WriteKind = iota
	// WriteDeleteRow deletes whole rows named by their full key.
	WriteDeleteRow
	// WriteDeleteRange deletes every row of a partition, or of a
	// clustering prefix or slice of it; deleting a partition deletes its
	// static row too.
	WriteDeleteRange
)

// Write changes rows named by their key.
type Write struct {
	Metadata
	Table *pgschema.Table
	Kind  WriteKind
	// Keys restricts the key columns, partition key first, by = or IN; the
	// rows written are their cartesian product. Keys covers every key
	// column, except for writes of static columns only (the partition key)
	// and range deletions (a prefix).
	Keys []Restriction
	// Slice bounds the clustering column after the prefix of a range
	// deletion, when given; TupleSlices bound the clustering columns after
	// it together, (c1, c2) > (v1, v2), on one side or both.
	Slice       []Restriction
	TupleSlices []Restriction
	// SQL writes one row (or range); its parameters take the row's key,
	// token, timestamp and expiry at execution.
	SQL    string
	Params []Param
	// Timestamp and TTL come from USING, when given.
	Timestamp, TTL *Value
	// Counter is set for counter updates.
	Counter bool
	// Views is set when the table has materialized views, which the
	// write's answer waits for (gateway/exec/views.go).
	Views bool
	// Conditions is set for conditional (LWT) writes.
	Conditions *Conditions
	// Deletion is set for DELETE statements.
	Deletion bool
	// JSON is set for INSERT JSON: its values come from the JSON object.
	JSON bool
	// InPlace is set when the order in which a replica applies this write
	// and the next one can change the outcome: the write changes a list
	// or user type in place (append, remove, element or field set), or
	// writes a table that has non-frozen lists or user types, which a
	// later in-place change builds on. cqlpg keeps one timestamp per list
	// and user type where Cassandra keeps one per element; sets and maps
	// keep one per element (pgschema.Column.HasCells), and their changes
	// land alike in any order.
	InPlace bool
	// Accumulates is set for an update that appends or prepends to a
	// list: applied twice, it does not land as once (as a counter update,
	// Counter, does not).
	Accumulates bool
}

// inPlace reports whether the order of writes to t matters, as InPlace
// says.
func inPlace(t *pgschema.Table, cells []cell) bool {
	for _, c := range cells {
		if len(c.changes) > 0 && !c.column.HasCells() {
			return true
		}
	}
	for _, c := range t.Columns {
		if c.Type.IsMultiCell() && !c.HasCells() {
			return true
		}
	}
	return false
}

// conditionsOnlyStatic reports whether conditions name static columns
// alone (with the written columns, Cassandra's appliesOnlyToStaticColumns).
func conditionsOnlyStatic(t *pgschema.Table, conds []Condition) bool {
	for _, cond := range conds {
		if c := t.Column(cond.Column); c != nil && c.Kind != pgschema.Static {
			return false
		}
	}
	return true
}

// accumulates reports whether cells append or prepend to a list.
func accumulates(cells []cell) bool {
	for _, c := range cells {
		for _, ch := range c.changes {
			if ch.accumulates {
				return true
			}
		}
	}
	return false
}

// cell is one column a write sets: to a value, to null (a nil constant), by
// adding to a counter (op), or by changes to the collection or user type it
// holds. A cell with changes leaves the column alone when value, its
// operand, is unset.
type cell struct {
	column  *pgschema.Column
	value   Value
	op      AssignOp
	changes []change
	// dropped marks a column dropped at droppedAt (microseconds) and
	// added again (cell.readded).
	dropped   bool
	droppedAt int64
}

func (p *planner) planInsert(s *InsertStmt) (Plan, error) {
	t, err := p.table(s.Table)
	if err != nil {
		return nil, err
	}
	if t.Virtual {
		return nil, &UnauthorizedError{Msg: "Modification on virtual table " + t.QualifiedName() + " is not supported"}
	}
	if t.IsView() {
		return nil, invalidf("Cannot directly modify a materialized view")
	}
	if t.IsCounter() {
		return nil, invalidf("INSERT statements are not allowed on counter tables, use UPDATE instead")
	}
	w := &Write{Table: t, Kind: WriteUpsert, Keys: make([]Restriction, len(t.KeyColumns())), Views: p.hasViews(t)}
	cols, values, err := p.insertValues(t, s, w)
	if err != nil {
		return nil, err
	}
	var cells []cell
	for i, c := range cols {
		v := values[i]
		if c.IsKey() {
			if err := checkNotNull(v, c); err != nil {
				return nil, err
			}
			w.Keys[c.Index] = Restriction{Kind: OnColumn, Column: c, Op: OpEQ, Values: []Value{v}}
			continue
		}
		cells = append(cells, cell{column: c, value: v})
	}
	if err := p.using(w, s.Using); err != nil {
		return nil, err
	}
	if err := writesOnlyStatic(t, cells, w); err != nil {
		return nil, err
	}
	if s.IfNotExists {
		w.Conditions = &Conditions{IfNotExists: true}
	}
	w.InPlace = inPlace(t, cells)
	if err := checkAttributes(w); err != nil {
		return nil, err
	}
	if len(w.Keys) == len(t.PartitionKey) && len(t.Clustering) > 0 {
		w.SQL, w.Params, err = staticUpsertSQL(t, cells)
	} else {
		w.SQL, w.Params, err = upsertSQL(t, cells, true)
	}
	if err != nil {
		return nil, err
	}
	w.PKIndexes = pkIndexes(t, p.vars)
	return w, p.planConditions(w, "updates")
}

// insertValues returns the columns an INSERT names and their values: from
// VALUES, or from the JSON object of INSERT JSON.
func (p *planner) insertValues(t *pgschema.Table, s *InsertStmt, w *Write) ([]*pgschema.Column, []Value, error) {
	if s.JSON != nil {
		w.JSON = true
		return p.jsonValues(t, s)
	}
	if len(s.Columns) == 0 {
		return nil, nil, invalidf("No columns provided to INSERT")
	}
	if len(s.Columns) != len(s.Values) {
		return nil, nil, invalidf("Unmatched column names/values")
	}
	for i, name := range s.Columns {
		if slices.Contains(s.Columns[:i], name) {
			return nil, nil, invalidf("The column names contains duplicates")
		}
	}
	var cols []*pgschema.Column
	var values []Value
	for i, name := range s.Columns {
		c, err := column(t, name)
		if err != nil {
			return nil, nil, err
		}
		v, err := p.value(s.Values[i], specOf(t, c))
		if err != nil {
			return nil, nil, err
		}
		cols, values = append(cols, c), append(values, v)
	}
	return cols, values, nil
}

// writesOnlyStatic checks the key a write names: all of it, or just the
// partition key when the write sets static columns only.
func writesOnlyStatic(t *pgschema.Table, cells []cell, w *Write) error {
	onlyStatic := len(cells) > 0
	for _, c := range cells {
		onlyStatic = onlyStatic && c.column.Kind == pgschema.Static
	}
	if onlyStatic && !anyClustering(t, w.Keys) {
		w.Keys = w.Keys[:len(t.PartitionKey)]
		return missingKeys(t, w.Keys)
	}
	return missingKeys(t, w.Keys)
}

func anyClustering(t *pgschema.Table, keys []Restriction) bool {
	for _, k := range keys[len(t.PartitionKey):] {
		if k.Column != nil {
			return true
		}
	}
	return false
}

func (p *planner) planUpdate(s *UpdateStmt) (Plan, error) {
	t, err := p.table(s.Table)
	if err != nil {
		return nil, err
	}
	if t.Virtual {
		return nil, &UnauthorizedError{Msg: "Modification on virtual table " + t.QualifiedName() + " is not supported"}
	}
	if t.IsView() {
		return nil, invalidf("Cannot directly modify a materialized view")
	}
	w := &Write{Table: t, Kind: WriteUpsert, Counter: t.IsCounter(), Views: p.hasViews(t)}
	if err := p.using(w, s.Using); err != nil {
		return nil, err
	}
	var cells []cell
	for _, a := range s.Assignments {
		c, err := p.assignment(t, a)
		if err != nil {
			return nil, err
		}
		cells = append(cells, c)
	}
	if cells, err = mergeCells(cells, false, s.Assignments); err != nil {
		return nil, err
	}
	w.InPlace = inPlace(t, cells)
	w.Accumulates = accumulates(cells)
	// Only static columns are written when both the assignments and the
	// conditions name static columns alone (Cassandra's
	// appliesOnlyToStaticColumns): then the partition key is the key.
	onlyStatic := true
	for _, c := range cells {
		onlyStatic = onlyStatic && c.column.Kind == pgschema.Static
	}
	onlyStatic = onlyStatic && conditionsOnlyStatic(t, s.Conditions)
	if w.Keys, err = p.writeKeys(t, s.Where, "UPDATE", onlyStatic); err != nil {
		return nil, err
	}
	if err := p.updateConditions(w, s.IfExists, s.Conditions, "updates"); err != nil {
		return nil, err
	}
	if err := checkAttributes(w); err != nil {
		return nil, err
	}
	if w.Counter {
		w.SQL, w.Params, err = counterSQL(t, cells)
	} else {
		w.SQL, w.Params, err = upsertSQL(t, cells, false)
	}
	if err != nil {
		return nil, err
	}
	w.PKIndexes = pkIndexes(t, p.vars)
	return w, p.planConditions(w, "updates")
}

// assignment plans one SET item.
func (p *planner) assignment(t *pgschema.Table, a Assignment) (cell, error) {
	c, err := column(t, a.Column)
	if err != nil {
		return cell{}, err
	}
	if c.IsKey() {
		return cell{}, invalidf("PRIMARY KEY part %s found in SET part", c.Name)
	}
	if c.Type.IsCounter() {
		if a.Op != AssignAdd && a.Op != AssignSub {
			return cell{}, invalidf("Cannot set the value of counter column %s (counters can only be incremented/decremented, not set)", c.Name)
		}
		v, err := p.value(a.Value, specOf(t, c))
		if err != nil {
			return cell{}, err
		}
		if v.Marker < 0 && v.Const == nil {
			return cell{}, invalidf("Invalid null value for counter increment")
		}
		return cell{column: c, value: v, op: a.Op}, nil
	}
	if a.Key != nil || a.Field != "" || a.Op != AssignSet {
		return p.collectionAssignment(t, c, a)
	}
	v, err := p.value(a.Value, specOf(t, c))
	if err != nil {
		return cell{}, err
	}
	return cell{column: c, value: v}, nil
}

func (p *planner) planDelete(s *DeleteStmt) (Plan, error) {
	t, err := p.table(s.Table)
	if err != nil {
		return nil, err
	}
	if t.Virtual {
		return nil, &UnauthorizedError{Msg: "Modification on virtual table " + t.QualifiedName() + " is not supported"}
	}
	if t.IsView() {
		return nil, invalidf("Cannot directly modify a materialized view")
	}
	w := &Write{Table: t, Kind: WriteDeleteRow, Deletion: true, Views: p.hasViews(t)}
	if err := p.using(w, s.Using); err != nil {
		return nil, err
	}
	var cells []cell
	onlyStatic := len(s.Columns) > 0
	for _, d := range s.Columns {
		c, err := column(t, d.Column)
		if err != nil {
			return nil, err
		}
		if c.IsKey() {
			return nil, invalidf("Invalid identifier %s for deletion (should not be a PRIMARY KEY part)", c.Name)
		}
		if d.Key != nil || d.Field != "" {
			dc, err := p.elementDeletion(t, c, d)
			if err != nil {
				return nil, err
			}
			cells = append(cells, dc)
		} else {
			cells = append(cells, cell{column: c, value: constValue(nil)})
		}
		onlyStatic = onlyStatic && c.Kind == pgschema.Static
	}
	if cells, err = mergeCells(cells, true, nil); err != nil {
		return nil, err
	}
	w.InPlace = inPlace(t, cells)
	onlyStatic = onlyStatic && conditionsOnlyStatic(t, s.Conditions) // as in planUpdate
	r, err := p.deleteRestrictions(t, s.Where, onlyStatic)
	if err != nil {
		return nil, err
	}
	w.Keys, w.Slice, w.TupleSlices = r.keys, r.slice, r.tuples
	if err := p.updateConditions(w, s.IfExists, s.Conditions, "deletions"); err != nil {
		return nil, err
	}
	if err := checkAttributes(w); err != nil {
		return nil, err
	}
	full := len(w.Keys) == len(t.KeyColumns()) && len(w.Slice) == 0 && len(w.TupleSlices) == 0
	if err := checkDeleteConditions(w, cells, full); err != nil {
		return nil, err
	}
	switch {
	case len(cells) > 0 && (full || onlyStatic && len(w.Keys) == len(t.PartitionKey)):
		w.Kind = WriteUpsert
		w.SQL, w.Params, err = upsertSQL(t, cells, false)
	case len(cells) > 0:
		// Cassandra refuses this when it applies the deletion, after
		// every check of the statement.
		return nil, invalidf("Range deletions are not supported for specific columns")
	case full:
		w.SQL, w.Params, err = deleteRowSQL(t)
	default:
		w.Kind = WriteDeleteRange
		w.SQL, w.Params, err = deleteRangeSQL(t, len(w.Keys), w.Slice, w.TupleSlices)
	}
	if err != nil {
		return nil, err
	}
	w.PKIndexes = pkIndexes(t, p.vars)
	return w, p.planConditions(w, "deletions")
}

// hasViews reports whether t is the base table of materialized views.
func (p *planner) hasViews(t *pgschema.Table) bool {
	k := p.schema.Keyspace(t.Keyspace)
	return k != nil && k.HasViews(t.Name)
}
