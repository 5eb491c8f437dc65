package translate

import (
	"encoding/binary"
	"math"
	"slices"
	"strings"

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
	// Conditions is set for conditional (LWT) writes.
	Conditions *Conditions
	// Deletion is set for DELETE statements.
	Deletion bool
	// JSON is set for INSERT JSON: its values come from the JSON object.
	JSON bool
	// InPlace is set when the order in which a replica applies this write
	// and the next one can change the outcome: the write changes a
	// collection or user type in place (append, remove, element or field
	// set), or writes a table that has non-frozen collections or user
	// types, which a later in-place change builds on. cqlpg keeps one
	// timestamp per collection where Cassandra keeps one per element.
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
		if len(c.changes) > 0 {
			return true
		}
	}
	for _, c := range t.Columns {
		if c.Type.IsMultiCell() {
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
	if t.IsCounter() {
		return nil, invalidf("INSERT statements are not allowed on counter tables, use UPDATE instead")
	}
	w := &Write{Table: t, Kind: WriteUpsert, Keys: make([]Restriction, len(t.KeyColumns()))}
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
	w := &Write{Table: t, Kind: WriteUpsert, Counter: t.IsCounter()}
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
	w := &Write{Table: t, Kind: WriteDeleteRow, Deletion: true}
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

// checkDeleteConditions refuses a conditional DELETE that does not name
// whole rows by = or IN when it deletes, or tests, regular columns.
func checkDeleteConditions(w *Write, cells []cell, full bool) error {
	c := w.Conditions
	if c == nil || full {
		return nil
	}
	// Deleting whole rows deletes their regular columns.
	regular := len(cells) == 0
	for _, cl := range cells {
		regular = regular || cl.column.Kind == pgschema.Regular
	}
	if regular {
		return invalidf("DELETE statements must restrict all PRIMARY KEY columns with equality relations in order to delete non static columns")
	}
	// IF EXISTS tests no column in particular.
	for _, cond := range c.Conds {
		regular = regular || cond.Column.Kind == pgschema.Regular
	}
	if regular {
		return invalidf("DELETE statements must restrict all PRIMARY KEY columns with equality relations in order to use IF condition on non static columns")
	}
	return nil
}

// checkAttributes applies Cassandra's checks of a write's USING attributes
// and conditions, in its order.
func checkAttributes(w *Write) error {
	t := w.Table
	switch {
	case w.Conditions != nil && t.IsCounter():
		return invalidf("Conditional updates are not supported on counter tables")
	case w.Conditions != nil && w.Timestamp != nil:
		return invalidf("Cannot provide custom timestamp for conditional updates")
	case t.IsCounter() && w.Timestamp != nil:
		return invalidf("Cannot provide custom timestamp for counter updates")
	case t.IsCounter() && w.TTL != nil:
		return invalidf("Cannot provide custom TTL for counter updates")
	}
	return checkTimestamp(w.Timestamp)
}

// checkTimestamp refuses a constant USING TIMESTAMP of math.MinInt64, which
// Cassandra keeps to mean no timestamp.
func checkTimestamp(v *Value) error {
	if v != nil && v.Marker < 0 && len(v.Const) == 8 && int64(binary.BigEndian.Uint64(v.Const)) == math.MinInt64 {
		return invalidf("Out of bound timestamp, must be in [%d, %d]", int64(math.MinInt64+1), int64(math.MaxInt64))
	}
	return nil
}

// writeKeys checks the WHERE clause of an UPDATE or DELETE of whole rows:
// every key column restricted by = or IN, and nothing else; a write of
// static columns only names the partition key alone.
func (p *planner) writeKeys(t *pgschema.Table, where []Relation, verb string, onlyStatic bool) ([]Restriction, error) {
	r, err := p.keyRestrictions(t, where, verb)
	if err != nil {
		return nil, err
	}
	keys := make([]Restriction, len(t.KeyColumns()))
	for i, rs := range r.partition {
		if len(rs) > 0 {
			keys[i] = rs[0]
		}
	}
	if onlyStatic && r.hasClustering() {
		return nil, invalidf("Invalid restrictions on clustering columns since the %s statement modifies only static columns", verb)
	}
	for i, rs := range r.cluster {
		if len(rs) > 0 && rs[0].Op != OpEQ && rs[0].Op != OpIN {
			return nil, invalidf("Slice restrictions are not supported on the clustering columns in %s statements", verb)
		}
		if len(rs) > 0 {
			keys[len(t.PartitionKey)+i] = rs[0]
		}
	}
	if onlyStatic {
		keys = keys[:len(t.PartitionKey)]
	}
	if err := missingKeys(t, keys); err != nil {
		return nil, err
	}
	return keys, r.checkKeysOnly()
}

// keyRestrictions resolves the WHERE clause of a write, refusing what
// writes may not restrict.
func (p *planner) keyRestrictions(t *pgschema.Table, where []Relation, verb string) (*restrictions, error) {
	r, err := p.restrict(t, where, false)
	if err != nil {
		return nil, err
	}
	if len(r.token) > 0 {
		return nil, invalidf("The token function cannot be used in WHERE clauses for %s statements", verb)
	}
	var pk []string
	for i, rs := range r.partition {
		if len(rs) == 0 {
			pk = append(pk, t.PartitionKey[i].Name)
		}
	}
	if len(pk) > 0 {
		return nil, invalidf("Some partition key parts are missing: %s", strings.Join(pk, ", "))
	}
	for _, rs := range r.partition {
		if rs[0].Op != OpEQ && rs[0].Op != OpIN {
			return nil, invalidf("Only EQ and IN relation are supported on the partition key (unless you use the token() function) for %s statements", verb)
		}
	}
	if err := p.spreadTuples(r, verb); err != nil {
		return nil, err
	}
	return r, nil
}

// spreadTuples turns a write's multi-column relations into the
// restrictions of single clustering columns that its keys are made of:
// (c1, c2) = (...) and (c1, c2) IN (...) stay whole on c1, the columns
// after it marked as part of it (the executor's key product takes the
// tuples together, an = as an IN of one tuple). Slices of tuples are
// kept, in tupleSlices, for a DELETE's range.
func (p *planner) spreadTuples(r *restrictions, verb string) error {
	for _, tr := range r.tuples {
		switch tr.Op {
		case OpEQ, OpIN:
			whole := tr
			whole.Column = tr.Columns[0]
			if tr.Op == OpEQ {
				whole.Tuples, whole.Values = [][]Value{tr.Values}, nil
			}
			r.cluster[whole.Column.Position] = []Restriction{whole}
			for _, c := range tr.Columns[1:] {
				r.cluster[c.Position] = []Restriction{{Kind: OnTuple, Column: c, Op: OpIN}}
			}
		case OpLT, OpLTE, OpGT, OpGTE:
			if verb != "DELETE" {
				return invalidf("Slice restrictions are not supported on the clustering columns in %s statements", verb)
			}
			// A range deletion: deleteRestrictions takes it.
			r.tupleSlices = append(r.tupleSlices, tr)
			continue
		default:
			return invalidf("Multi-column relations are not supported in %s statements", verb)
		}
	}
	r.tuples = nil
	return nil
}

// checkKeysOnly refuses a write's restrictions on columns outside the
// primary key, which Cassandra checks after those on the key.
func (r *restrictions) checkKeysOnly() error {
	if len(r.others) == 0 {
		return nil
	}
	var names []string
	for _, o := range r.others {
		if !slices.Contains(names, o.Column.Name) {
			names = append(names, o.Column.Name)
		}
	}
	return invalidf("Non PRIMARY KEY columns found in where clause: %s ", strings.Join(names, ", "))
}

// deleteKeys is what a DELETE's WHERE clause names: the partition key and
// a prefix of the clustering columns by = or IN, and maybe a slice of the
// next clustering column.
type deleteKeys struct {
	keys   []Restriction
	slice  []Restriction
	tuples []Restriction
}

func (p *planner) deleteRestrictions(t *pgschema.Table, where []Relation, onlyStatic bool) (*deleteKeys, error) {
	r, err := p.keyRestrictions(t, where, "DELETE")
	if err != nil {
		return nil, err
	}
	d := &deleteKeys{}
	for _, rs := range r.partition {
		d.keys = append(d.keys, rs[0])
	}
	if onlyStatic && r.hasClustering() {
		return nil, invalidf("Invalid restrictions on clustering columns since the DELETE statement modifies only static columns")
	}
	if err := r.checkClusteringRestricted(); err != nil {
		return nil, err
	}
	if err := r.checkKeysOnly(); err != nil {
		return nil, err
	}
	for _, rs := range r.cluster {
		if len(rs) == 0 {
			break
		}
		if rs[0].Op.IsSlice() {
			d.slice = rs
			break
		}
		d.keys = append(d.keys, rs[0])
	}
	if len(r.tupleSlices) == 0 {
		return d, nil
	}
	// One tuple slice, or a lower and an upper one on the same columns,
	// right after the prefix fixed by = (a range deletion's shape).
	ts := r.tupleSlices
	first := ts[0].Columns[0].Position
	supported := d.slice == nil && first == len(d.keys)-len(t.PartitionKey) && len(ts) <= 2
	if len(ts) == 2 {
		if ts[0].Op == OpLT || ts[0].Op == OpLTE {
			ts[0], ts[1] = ts[1], ts[0]
		}
		supported = supported && (ts[0].Op == OpGT || ts[0].Op == OpGTE) && (ts[1].Op == OpLT || ts[1].Op == OpLTE) &&
			slices.Equal(ts[0].Columns, ts[1].Columns)
	}
	if !supported {
		return nil, invalidf("Multi-column relations are not supported in DELETE statements")
	}
	d.tuples = ts
	return d, nil
}

// missingKeys names the key columns a write leaves unrestricted.
func missingKeys(t *pgschema.Table, keys []Restriction) error {
	var pk, ck []string
	for i, c := range t.KeyColumns()[:len(keys)] {
		if keys[i].Column == nil {
			if c.Kind == pgschema.PartitionKey {
				pk = append(pk, c.Name)
			} else {
				ck = append(ck, c.Name)
			}
		}
	}
	if len(pk) > 0 {
		return invalidf("Some partition key parts are missing: %s", strings.Join(pk, ", "))
	}
	if len(ck) > 0 {
		return invalidf("Some clustering keys are missing: %s", strings.Join(ck, ", "))
	}
	return nil
}

// using plans USING TIMESTAMP and TTL.
func (p *planner) using(w *Write, u Using) error {
	t := w.Table
	if u.Timestamp != nil {
		v, err := p.value(u.Timestamp, ColumnSpec{Keyspace: t.Keyspace, Table: t.Name, Name: "[timestamp]",
			Type: pgschema.Scalar(pgschema.Bigint)})
		if err != nil {
			return err
		}
		w.Timestamp = &v
	}
	if u.TTL != nil {
		v, err := p.value(u.TTL, ColumnSpec{Keyspace: t.Keyspace, Table: t.Name, Name: "[ttl]",
			Type: pgschema.Scalar(pgschema.Int)})
		if err != nil {
			return err
		}
		w.TTL = &v
	}
	return nil
}
