package translate

import (
	"github.com/cqlpg/cqlpg/pgschema"
)

// Conditions are the IF clause of a lightweight transaction.
type Conditions struct {
	IfNotExists, IfExists bool
	Conds                 []Cond
	// Read reads the current row (or partition, for conditions on static
	// columns only) that the conditions are checked against; its slots are
	// the table's columns in SELECT * order.
	Read *Select
	// Result lists the columns a refused write shows after [applied]: the
	// whole row for IF [NOT] EXISTS, else the condition columns.
	Result []*pgschema.Column
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
			if !col.Type.IsCollection() || col.Type.Kind == pgschema.Set {
				return invalidf("Invalid element access on non-map, non-list column %s", col.Name)
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
// plans the read of the current row.
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
	read := &Select{Table: t, Route: RoutePartitions}
	read.Keys = w.Keys[:len(t.PartitionKey)]
	read.Filters = w.Keys[len(t.PartitionKey):]
	onlyStatic := len(w.Keys) == len(t.PartitionKey) && len(t.Clustering) > 0
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
	if c.IfExists || c.IfNotExists {
		for _, sl := range read.Slots {
			c.Result = append(c.Result, sl.Column)
		}
		return nil
	}
	for _, cond := range c.Conds {
		if !containsColumn(c.Result, cond.Column) {
			c.Result = append(c.Result, cond.Column)
		}
	}
	return nil
}
