package translate

import (
	"fmt"
	"slices"
	"strings"

	sq "github.com/Masterminds/squirrel"

	"github.com/cqlpg/cqlpg/pgschema"
)

// change is one operation on a non-frozen collection or user type.
//
// A set, map or list keeps a cell per element (sql_cells.go), and its
// change is a delta: the value it adds and the keys it removes, or for a
// list a listChange. A user type keeps one cell, and its change is an SQL
// call that computes the new value from the live stored one, which is its
// first argument (%s in sql; the ? placeholders after it take args; the
// function is in the cqlpg schema, migration 0003).
type change struct {
	sql  string
	args []Param
	// add and removed are a set's or map's delta: the value it adds and
	// the keys (text[]) it removes, each nil when it has none.
	add, removed sq.Sqlizer
	// list is the change of a list, whose elements are keyed by position
	// keys.
	list *listChange
	// needsValue, when set, is the error to raise when there is no stored
	// value to change: setting or deleting a list element by index.
	needsValue string
	// accumulates is set for a list append or prepend, which applied
	// twice adds twice.
	accumulates bool
}

// listChange is a change of a list: items appended (or prepended), or
// removed wherever they are; or the element at index set to value, or
// deleted when value is nil.
type listChange struct {
	items   Param
	prepend bool
	remove  bool
	index   *Param
	value   *Param
}

// fieldChange builds the change of a user type's field, setting it to val
// (null deletes it).
func fieldChange(c *pgschema.Column, field string, val Param) change {
	return change{sql: "cqlpg.jmap_set(%s, ?, ?)", args: []Param{fieldParam(c, field), val}}
}

// arrayStored reports whether a list or set is stored as a Postgres array;
// other collections and user types are jsonb.
func arrayStored(t *pgschema.Type) bool {
	st, err := pgschema.StorageOf(t)
	return err == nil && st.SQL != "jsonb"
}

// operand is a parameter carrying a value of type typ into a change, in the
// form the column's storage needs: its own storage for arrays and their
// elements, jsonb otherwise.
func operand(c *pgschema.Column, typ *pgschema.Type, v Value) Param {
	p := Param{Kind: ParamValue, Column: c, Type: typ, Value: v, Element: -1}
	if !arrayStored(c.Type) {
		p.Form = FormJSON
	}
	return p
}

// collectionAssignment plans the SET items that change part of a
// collection or user type: appends, prepends, additions, removals, and
// sets of an element, entry or field.
func (p *planner) collectionAssignment(t *pgschema.Table, c *pgschema.Column, a Assignment) (cell, error) {
	typ := c.Type
	text := assignmentText(a)
	switch {
	case a.Field != "":
		return p.fieldAssignment(t, c, a, text)
	case a.Key != nil:
		return p.elementAssignment(t, c, a, text)
	case a.Op == AssignPrepend:
		v, err := p.value(a.Value, specOf(t, c))
		if err != nil {
			return cell{}, err
		}
		if typ.Kind != pgschema.List {
			return cell{}, invalidf("Invalid operation (%s) for non list column %s", text, c.Name)
		}
		if typ.Frozen {
			return cell{}, invalidf("Invalid operation (%s) for frozen list column %s", text, c.Name)
		}
		ch := change{list: &listChange{items: operand(c, typ, v), prepend: true}, accumulates: true}
		return cell{column: c, value: v, changes: []change{ch}}, nil
	}
	if !typ.IsCollection() {
		return cell{}, invalidf("Invalid operation (%s) for non counter column %s", text, c.Name)
	}
	if typ.Frozen {
		return cell{}, invalidf("Invalid operation (%s) for frozen collection column %s", text, c.Name)
	}
	if typ.Kind == pgschema.Map {
		return p.mapAssignment(t, c, a)
	}
	v, err := p.value(a.Value, specOf(t, c))
	if err != nil {
		return cell{}, err
	}
	arg := operand(c, typ, v)
	var ch change
	switch {
	case typ.Kind == pgschema.List:
		ch = change{list: &listChange{items: arg, remove: a.Op == AssignSub}, accumulates: a.Op != AssignSub}
	case a.Op == AssignSub:
		ch = change{removed: keysOf(c, expr("?", arg))}
	default:
		ch = change{add: expr("?", arg)}
	}
	return cell{column: c, value: v, changes: []change{ch}}, nil
}

// keysOf returns the keys (text[]) of the elements of v, a value of c's
// storage.
func keysOf(c *pgschema.Column, v sq.Sqlizer) sq.Sqlizer {
	before, after, _ := strings.Cut(c.CellsKeysSQL("\x00"), "\x00")
	return sq.ConcatExpr(before, v, after)
}

// entryChange is the change setting a map's entry of key to val, which
// removes it when null.
func entryChange(key, val Param) change {
	return change{add: expr("cqlpg.jmap_set(NULL, ?, ?)", key, val), removed: expr("cqlpg.jentry_removed(?, ?)", key, val)}
}

// mapAssignment plans m = m + {k: v, ...} and m = m - {k, ...}.
func (p *planner) mapAssignment(t *pgschema.Table, c *pgschema.Column, a Assignment) (cell, error) {
	if a.Op == AssignAdd {
		v, err := p.value(a.Value, specOf(t, c))
		if err != nil {
			return cell{}, invalidf("Value for a map addition has to be a map, but was: '%s'", termString(a.Value))
		}
		ch := change{add: expr("?", operand(c, c.Type, v))}
		return cell{column: c, value: v, changes: []change{ch}}, nil
	}
	keys := pgschema.NewSet(c.Type.Elem[0], true)
	spec := specOf(t, c)
	spec.Type, spec.Column = keys, nil
	v, err := p.value(a.Value, spec)
	if err != nil {
		return cell{}, invalidf("Value for a map substraction has to be a set, but was: '%s'", termString(a.Value))
	}
	arg := Param{Kind: ParamValue, Column: c, Type: keys, Form: FormJSONKeys, Value: v, Element: -1}
	ch := change{removed: expr("?", arg)}
	return cell{column: c, value: v, changes: []change{ch}}, nil
}

// elementAssignment plans l[i] = v and m[k] = v.
func (p *planner) elementAssignment(t *pgschema.Table, c *pgschema.Column, a Assignment, text string) (cell, error) {
	typ := c.Type
	if !typ.IsCollection() {
		return cell{}, invalidf("Invalid operation (%s) for non collection column %s", text, c.Name)
	}
	if typ.Frozen {
		return cell{}, invalidf("Invalid operation (%s) for frozen collection column %s", text, c.Name)
	}
	spec := func(role string, typ *pgschema.Type) ColumnSpec {
		return ColumnSpec{Keyspace: t.Keyspace, Table: t.Name, Name: role + "(" + c.Name + ")", Type: typ}
	}
	switch typ.Kind {
	case pgschema.Set:
		return cell{}, invalidf("Invalid operation (%s) for set column %s", text, c.Name)
	case pgschema.List:
		idx, err := p.value(a.Key, spec("idx", pgschema.Scalar(pgschema.Int)))
		if err != nil {
			return cell{}, err
		}
		v, err := p.value(a.Value, spec("value", typ.Elem[0]))
		if err != nil {
			return cell{}, err
		}
		idx = p.mustBeSet(idx, "Invalid unset value for list index")
		index, value := indexParam(idx), operand(c, typ.Elem[0], v)
		ch := change{list: &listChange{index: &index, value: &value}, needsValue: "Attempted to set an element on a list which is null"}
		return cell{column: c, value: v, changes: []change{ch}}, nil
	}
	k, err := p.value(a.Key, spec("key", typ.Elem[0]))
	if err != nil {
		return cell{}, err
	}
	v, err := p.value(a.Value, spec("value", typ.Elem[1]))
	if err != nil {
		return cell{}, err
	}
	k = p.mustBeSet(k, "Invalid unset map key")
	key := Param{Kind: ParamValue, Column: c, Type: typ.Elem[0], Form: FormJSONKey, Value: k, Element: -1}
	ch := entryChange(key, operand(c, typ.Elem[1], v))
	return cell{column: c, value: v, changes: []change{ch}}, nil
}

// fieldAssignment plans u.f = v on a non-frozen user type.
func (p *planner) fieldAssignment(t *pgschema.Table, c *pgschema.Column, a Assignment, text string) (cell, error) {
	typ := c.Type
	if typ.Kind != pgschema.UDT {
		return cell{}, invalidf("Invalid operation (%s) for non-UDT column %s", text, c.Name)
	}
	if typ.Frozen {
		return cell{}, invalidf("Invalid operation (%s) for frozen UDT column %s", text, c.Name)
	}
	i := slices.Index(typ.Fields, a.Field)
	if i < 0 {
		return cell{}, invalidf("UDT column %s does not have a field named %s", c.Name, a.Field)
	}
	v, err := p.value(a.Value, ColumnSpec{Keyspace: t.Keyspace, Table: t.Name, Name: c.Name + "." + a.Field, Type: typ.Elem[i]})
	if err != nil {
		return cell{}, err
	}
	ch := fieldChange(c, a.Field, operand(c, typ.Elem[i], v))
	return cell{column: c, value: v, changes: []change{ch}}, nil
}

// elementDeletion plans DELETE of a list element by index, a set element,
// a map entry by key, or a user type's field.
func (p *planner) elementDeletion(t *pgschema.Table, c *pgschema.Column, d Deletion) (cell, error) {
	typ := c.Type
	none := constValue(nil)
	if d.Field != "" {
		if typ.Kind != pgschema.UDT {
			return cell{}, invalidf("Invalid field deletion operation for non-UDT column %s", c.Name)
		}
		if typ.Frozen {
			return cell{}, invalidf("Frozen UDT column %s does not support field deletions", c.Name)
		}
		if !slices.Contains(typ.Fields, d.Field) {
			return cell{}, invalidf("UDT column %s does not have a field named %s", c.Name, d.Field)
		}
		ch := fieldChange(c, d.Field, nullJSON)
		return cell{column: c, value: none, changes: []change{ch}}, nil
	}
	if !typ.IsCollection() {
		return cell{}, invalidf("Invalid deletion operation for non collection column %s", c.Name)
	}
	if typ.Frozen {
		return cell{}, invalidf("Invalid deletion operation for frozen collection column %s", c.Name)
	}
	spec := func(role string, typ *pgschema.Type) ColumnSpec {
		return ColumnSpec{Keyspace: t.Keyspace, Table: t.Name, Name: role + "(" + c.Name + ")", Type: typ}
	}
	switch typ.Kind {
	case pgschema.List:
		idx, err := p.value(d.Key, spec("idx", pgschema.Scalar(pgschema.Int)))
		if err != nil {
			return cell{}, err
		}
		idx = p.mustBeSet(idx, "Invalid unset value for list index")
		index := indexParam(idx)
		ch := change{list: &listChange{index: &index}, needsValue: "Attempted to delete an element from a list which is null"}
		return cell{column: c, value: none, changes: []change{ch}}, nil
	case pgschema.Set:
		e, err := p.value(d.Key, spec("value", typ.Elem[0]))
		if err != nil {
			return cell{}, err
		}
		elem := operand(c, typ.Elem[0], e)
		one := "ARRAY[?]"
		if !arrayStored(typ) {
			one = "jsonb_build_array(?)"
		}
		ch := change{removed: keysOf(c, expr(one, elem))}
		return cell{column: c, value: none, changes: []change{ch}}, nil
	}
	k, err := p.value(d.Key, spec("key", typ.Elem[0]))
	if err != nil {
		return cell{}, err
	}
	k = p.mustBeSet(k, "Invalid unset map key")
	key := Param{Kind: ParamValue, Column: c, Type: typ.Elem[0], Form: FormJSONKey, Value: k, Element: -1}
	ch := entryChange(key, nullJSON)
	return cell{column: c, value: none, changes: []change{ch}}, nil
}

// nullJSON is a jsonb parameter that is always null: the value that
// removes an entry or field.
var nullJSON = Param{Kind: ParamValue, Type: pgschema.Scalar(pgschema.Text), Form: FormJSON, Value: constValue(nil), Element: -1}

// indexParam carries a list index.
func indexParam(v Value) Param {
	return Param{Kind: ParamValue, Type: pgschema.Scalar(pgschema.Int), Value: v, Element: -1}
}

// fieldParam carries the key under which a user type's jsonb holds a field.
func fieldParam(c *pgschema.Column, field string) Param {
	return Param{Kind: ParamValue, Type: pgschema.Scalar(pgschema.Text),
		Value: constValue([]byte(pgschema.JSONFieldName(field))), Element: -1}
}

// mergeCells joins the cells an UPDATE or DELETE names more than once: the
// changes of one column apply in order. Setting a column whole, or one
// field twice, does not combine with anything else; a DELETE of a whole
// column makes its element deletions moot.
func mergeCells(cells []cell, deletion bool, assignments []Assignment) ([]cell, error) {
	var out []cell
	for i, c := range cells {
		j := slices.IndexFunc(out, func(o cell) bool { return o.column == c.column })
		if j < 0 {
			out = append(out, c)
			continue
		}
		o := &out[j]
		switch {
		case deletion && (len(o.changes) == 0 || len(c.changes) == 0):
			o.changes, o.value = nil, constValue(nil)
		case deletion:
			o.changes = append(o.changes, c.changes...)
		case len(o.changes) == 0 || len(c.changes) == 0 || sameField(assignments, c.column.Name, i):
			return nil, invalidf("Multiple incompatible setting of column %s", c.column.Name)
		default:
			o.changes = append(o.changes, c.changes...)
		}
	}
	return out, nil
}

// sameField reports whether assignment i sets a field that an earlier
// assignment of the same column sets too.
func sameField(assignments []Assignment, column string, i int) bool {
	if assignments == nil || assignments[i].Field == "" {
		return false
	}
	for _, a := range assignments[:i] {
		if a.Column == column && a.Field == assignments[i].Field {
			return true
		}
	}
	return false
}

// assignmentText is an assignment as Cassandra's messages print it.
func assignmentText(a Assignment) string {
	switch {
	case a.Field != "":
		return fmt.Sprintf("%s.%s = %s", a.Column, a.Field, termString(a.Value))
	case a.Key != nil:
		return fmt.Sprintf("%s[%s] = %s", a.Column, termString(a.Key), termString(a.Value))
	case a.Op == AssignPrepend:
		// Cassandra prints a prepend with a minus sign.
		return fmt.Sprintf("%s = %s - %s", a.Column, termString(a.Value), a.Column)
	case a.Op == AssignAdd:
		return fmt.Sprintf("%s = %s + %s", a.Column, a.Column, termString(a.Value))
	case a.Op == AssignSub:
		return fmt.Sprintf("%s = %s - %s", a.Column, a.Column, termString(a.Value))
	}
	return fmt.Sprintf("%s = %s", a.Column, termString(a.Value))
}
