package translate

import (
	"fmt"

	"github.com/cqlpg/cqlpg/pgschema"
)

// Conditions are the IF clause of a lightweight transaction.
//
// Cassandra tests a write's conditions against two rows of its partition:
// the row the write names, which IF [NOT] EXISTS and conditions on regular
// columns test, and the partition's static row, which conditions on static
// columns test, as does IF [NOT] EXISTS of a write of static columns alone.
// When no condition tests the named row, it reads the partition's first
// live row instead, so that a refused write shows whether the partition
// exists. It fetches only some columns (FetchesStatic, FetchesRegular);
// a refused write shows the others as null.
type Conditions struct {
	IfNotExists, IfExists bool
	Conds                 []Cond
	// OnStatic says IF [NOT] EXISTS tests the static row: the write sets
	// static columns by partition key alone.
	OnStatic bool
	// Read reads the row the write names, its slots the table's columns
	// in SELECT * order, static ones joined from the partition's static
	// row. For a write of static columns alone it reads the static row.
	Read *Select
	// PartitionRead reads the partition's first live row joined with its
	// static row, or the static row alone when the partition has no rows,
	// its slots every column in SELECT * order; nil for a table without
	// static columns. Conditions that test the static row alone read it.
	PartitionRead *Select
	// Result lists the columns a refused write shows after [applied]: the
	// whole row for IF [NOT] EXISTS, else the condition columns.
	Result []*pgschema.Column
	// UpdatesStatic and UpdatesRegular say whether the write changes the
	// partition's static row and a regular row.
	UpdatesStatic, UpdatesRegular bool
}

// Cond is one IF condition: column op value, on an element of a
// collection or a field of a UDT when Key or Field is set.
type Cond struct {
	Column *pgschema.Column
	Op     Operator
	// Values holds the operand, or the list of IN; ListMarker marks IN ?.
	Values     []Value
	ListMarker bool
	Key        *Value
	Field      int
	// Type is the type compared: the column's, its element's or field's.
	Type *pgschema.Type
}

// MultiCell reports whether the condition compares a whole non-frozen
// collection, which Cassandra compares cell by cell: a null collection is
// then an empty one.
func (c *Cond) MultiCell() bool {
	return c.Key == nil && c.Field < 0 && c.Column.Type.IsCollection() && !c.Column.Type.Frozen
}

// TestsRow reports whether a condition tests the row the write names, as
// opposed to the partition's static row only.
func (c *Conditions) TestsRow() bool {
	if c.IfExists || c.IfNotExists {
		return !c.OnStatic
	}
	for _, cond := range c.Conds {
		if cond.Column.Kind != pgschema.Static {
			return true
		}
	}
	return false
}

// TestsStatic reports whether a condition tests the static row.
func (c *Conditions) TestsStatic() bool {
	if c.IfExists || c.IfNotExists {
		return c.OnStatic
	}
	for _, cond := range c.Conds {
		if cond.Column.Kind == pgschema.Static {
			return true
		}
	}
	return false
}

// FetchesStatic and FetchesRegular report whether the read of the current
// state fetches a column's value: the write's static (regular) columns
// when it changes the static row (a regular row), else those of the
// conditions (CQL3CasRequest.columnsToRead).
func (c *Conditions) FetchesStatic(col *pgschema.Column) bool {
	return c.UpdatesStatic || c.conditionOn(col)
}

// FetchesRegular reports whether the read fetches a regular column.
func (c *Conditions) FetchesRegular(col *pgschema.Column) bool {
	return c.UpdatesRegular || c.conditionOn(col)
}

func (c *Conditions) conditionOn(col *pgschema.Column) bool {
	for _, cond := range c.Conds {
		if cond.Column == col {
			return true
		}
	}
	return false
}

// ConditionColumns returns the columns of the conditions, those of
// regular columns first, each once, in the order written
// (ColumnConditions.getColumns).
func (c *Conditions) ConditionColumns() []*pgschema.Column {
	var out []*pgschema.Column
	for _, static := range []bool{false, true} {
		for _, cond := range c.Conds {
			if (cond.Column.Kind == pgschema.Static) == static && !containsColumn(out, cond.Column) {
				out = append(out, cond.Column)
			}
		}
	}
	return out
}

// UpdatesStatic reports whether a write changes its partition's static
// row: whether it sets or deletes a static column.
func (w *Write) UpdatesStatic() bool {
	for _, p := range w.Params {
		if p.Column != nil && p.Column.Kind == pgschema.Static && p.Kind != ParamKey {
			return true
		}
	}
	return false
}

// UpdatesRegular reports whether a write changes regular rows: whether it
// names its rows by clustering, as every write does but those of static
// columns alone (ModificationStatement.updatesRegularRows).
func (w *Write) UpdatesRegular() bool {
	t := w.Table
	return len(t.Clustering) == 0 || len(w.Keys) > len(t.PartitionKey)
}

// updateConditions resolves an UPDATE's or DELETE's IF clause.
func (p *planner) updateConditions(w *Write, ifExists bool, conds []Condition, verb string) error {
	if !ifExists && len(conds) == 0 {
		return nil
	}
	t := w.Table
	c := &Conditions{IfExists: ifExists}
	for _, cond := range conds {
		col, err := column(t, cond.Column)
		if err != nil {
			return err
		}
		if col.IsKey() {
			return invalidf("PRIMARY KEY column '%s' cannot have IF conditions", col.Name)
		}
		rc := Cond{Column: col, Op: cond.Op, Field: -1, Type: col.Type}
		switch {
		case cond.Key != nil:
			if !col.Type.IsCollection() {
				return invalidf("Invalid element access syntax for non-collection column %s", col.Name)
			}
			if col.Type.Kind == pgschema.Set {
				return invalidf("Invalid element access syntax for set column %s", col.Name)
			}
			keyType := pgschema.Scalar(pgschema.Int)
			if col.Type.Kind == pgschema.Map {
				keyType = col.Type.Elem[0]
			}
			k, err := p.value(cond.Key, ColumnSpec{Keyspace: t.Keyspace, Table: t.Name, Name: "key(" + col.Name + ")", Type: keyType})
			if err != nil {
				return err
			}
			rc.Key, rc.Type = &k, col.Type.Elem[len(col.Type.Elem)-1]
		case cond.Field != "":
			if col.Type.Kind != pgschema.UDT {
				return invalidf("Invalid field selection: %s of type %s is not a user type", col.Name, col.Type)
			}
			for i, f := range col.Type.Fields {
				if f == cond.Field {
					rc.Field, rc.Type = i, col.Type.Elem[i]
				}
			}
			if rc.Field < 0 {
				return invalidf("Unknown field %s for column %s", cond.Field, col.Name)
			}
		}
		if cond.Op.IsSlice() {
			if err := durationRefusal(rc.Type, "Slice conditions are not supported on %s containing durations",
				fmt.Sprintf("Slice conditions ( %s ) are not supported on durations", cond.Op)); err != nil {
				return err
			}
		}
		spec := ColumnSpec{Keyspace: t.Keyspace, Table: t.Name, Name: col.Name, Type: rc.Type, Column: col}
		switch {
		case cond.Op == OpIN && cond.Value != nil:
			spec.Name, spec.Type, spec.Column = "in("+col.Name+")", pgschema.NewList(rc.Type, false), nil
			rc.Values, rc.ListMarker = []Value{p.bind(cond.Value.(*Marker), spec)}, true
		case cond.Op == OpIN:
			for _, term := range cond.Values {
				v, err := p.value(term, spec)
				if err != nil {
					return err
				}
				rc.Values = append(rc.Values, v)
			}
		default:
			v, err := p.value(cond.Value, spec)
			if err != nil {
				return err
			}
			rc.Values = []Value{v}
		}
		c.Conds = append(c.Conds, rc)
	}
	w.Conditions = c
	return nil
}

// planConditions checks that a conditional write names one row (Cassandra
// checks this when it runs the write, after checkAttributes' rules) and
// plans the reads of the current state.
func (p *planner) planConditions(w *Write, verb string) error {
	c := w.Conditions
	if c == nil {
		return nil
	}
	t := w.Table
	for _, k := range w.Keys {
		if k.Op == OpIN {
			if k.Column.Kind == pgschema.PartitionKey {
				return invalidf("IN on the partition key is not supported with conditional %s", verb)
			}
			return invalidf("IN on the clustering key columns is not supported with conditional %s", verb)
		}
	}
	onlyStatic := !w.UpdatesRegular()
	c.OnStatic = onlyStatic
	c.UpdatesStatic, c.UpdatesRegular = w.UpdatesStatic(), w.UpdatesRegular()
	read := &Select{Table: t, Route: RoutePartitions}
	read.Keys = w.Keys[:len(t.PartitionKey)]
	read.Filters = w.Keys[len(t.PartitionKey):]
	for _, col := range t.Columns {
		if onlyStatic && col.Kind != pgschema.PartitionKey && col.Kind != pgschema.Static {
			continue
		}
		read.output(col.Name, &SlotRef{Slot: read.slot(SlotValue, col), T: col.Type})
	}
	read.PerPartition = onlyStatic
	if err := read.buildSQL(); err != nil {
		return err
	}
	c.Read = read
	if t.HasStatic() {
		part := &Select{Table: t, Route: RoutePartitions, Keys: read.Keys, PerPartition: true}
		for _, col := range t.Columns {
			part.output(col.Name, &SlotRef{Slot: part.slot(SlotValue, col), T: col.Type})
		}
		if err := part.buildSQL(); err != nil {
			return err
		}
		c.PartitionRead = part
	}
	if c.IfExists || c.IfNotExists {
		for _, col := range t.Columns {
			c.Result = append(c.Result, col)
		}
		return nil
	}
	c.Result = c.ConditionColumns()
	return nil
}
