package translate

import (
	"fmt"
	"strings"

	sq "github.com/Masterminds/squirrel"

	"github.com/cqlpg/cqlpg/pgschema"
)

// ParamKind says where an SQL parameter's value comes from at execution.
type ParamKind uint8

// Parameter kinds.
const (
	// ParamNow is the request's time in seconds since the epoch (int4);
	// cells that expire at or before it are dead.
	ParamNow ParamKind = iota
	// ParamToken is the partition's token (int8).
	ParamToken
	// ParamKey is partition key column Key's value for the partition.
	ParamKey
	// ParamValue is Value, converted to Column's storage.
	ParamValue
	// ParamList is an array of Column's storage type built from Values,
	// or from the list bound to the marker in Values[0] if ListMarker.
	ParamList
	// ParamRangeStart and ParamRangeEnd bound a token range (start, end].
	ParamRangeStart
	ParamRangeEnd
	// ParamLimit is the row limit (int8).
	ParamLimit
	// ParamWritetime is the write's timestamp in microseconds (int8), or
	// null for a cell the statement leaves unset (Value tells which).
	ParamWritetime
	// ParamExpiry is the write's expiry in seconds since the epoch (int4),
	// or null when it does not expire or the cell is unset.
	ParamExpiry
	// ParamEmptyFlag is true when Value is the empty value (zero bytes,
	// not null), else null: a cell's empty flag (pgschema.EmptyColumn).
	ParamEmptyFlag
	// ParamAfter is clustering column Key's value at the position where
	// the previous page of a SELECT ended, in the form of the column's
	// sort column; null past the clustering prefix the position holds.
	ParamAfter
	// ParamClock is the gateway's clock at the request, in microseconds
	// since the epoch (int8): what names the elements a write adds to a
	// list, as Cassandra's coordinator names them by a time-based UUID of
	// its clock, whatever the write's timestamp.
	ParamClock
)

// ParamForm says how a parameter's CQL value is sent to Postgres.
type ParamForm uint8

// Parameter forms.
const (
	// FormStorage converts the value to its type's Postgres storage.
	FormStorage ParamForm = iota
	// FormJSON sends the value as jsonb, in Cassandra's JSON format.
	FormJSON
	// FormJSONKey sends the text a map key has in the jsonb that stores
	// the map.
	FormJSONKey
	// FormJSONKeys sends a set of map keys as a text[] of those texts.
	FormJSONKeys
	// FormOrderKey sends the value's order key (pgschema.OrderKey), to
	// compare with a clustering column's order key column.
	FormOrderKey
	// FormExact sends, for a column with an exact companion, the value's
	// CQL bytes when its natural column cannot hold it exactly, else null
	// (pgschema.Storage.Inexact).
	FormExact
)

// Param is one SQL parameter, in placeholder order.
type Param struct {
	Kind   ParamKind
	Key    int
	Column *pgschema.Column
	// Type is the CQL type of the value; nil means Column's type.
	Type   *pgschema.Type
	Form   ParamForm
	Value  Value
	Values []Value
	// ListMarker marks a ParamList whose list is one bound value.
	ListMarker bool
	// Element, when not -1, takes element Element of a tuple value (of
	// each tuple of a list for ParamList).
	Element int
	// Cell marks a ParamWritetime or ParamExpiry that belongs to the
	// value Value of a cell, and is null when that value is unset.
	Cell bool
	// Increment marks a counter increment, which may not be null; an
	// unset one is sent as null and leaves the counter alone.
	Increment bool
	// EmptyAsNull sends an empty value as null: the value of a cell whose
	// empty flag records it.
	EmptyAsNull bool
	// Readded marks a parameter of a cell whose column was dropped at
	// DroppedAt (microseconds) and added again: a write at or before that
	// time leaves the cell alone, as if unset, because Cassandra hides
	// such cells for good (its dropped-columns record outlives the re-add).
	Readded   bool
	DroppedAt int64
}

// ValueType returns the CQL type of the parameter's value.
func (p *Param) ValueType() *pgschema.Type {
	if p.Type != nil {
		return p.Type
	}
	return p.Column.Type
}

// valueParam is a parameter taking a value of column c.
func valueParam(c *pgschema.Column, v Value) Param {
	return Param{Kind: ParamValue, Column: c, Value: v, Element: -1}
}

// sortParam is a parameter compared with key column c's sort column
// (pgschema.Column.SortColumn): the value's order key if c has one, else
// the value.
func sortParam(c *pgschema.Column, v Value) Param {
	p := valueParam(c, v)
	if c.OrderColumn() != "" {
		p.Form = FormOrderKey
	}
	return p
}

// keyParam is the parameter taking key column i of the row a write or read
// names, in the form its sort column holds.
func keyParam(t *pgschema.Table, i int) Param {
	c := t.KeyColumns()[i]
	p := Param{Kind: ParamKey, Key: i, Column: c, Element: -1}
	if c.OrderColumn() != "" {
		p.Form = FormOrderKey
	}
	return p
}

// expr returns an SQL fragment whose ? placeholders take params in order.
func expr(sql string, params ...Param) sq.Sqlizer {
	args := make([]any, len(params))
	for i, p := range params {
		args[i] = p
	}
	return sq.Expr(sql, args...)
}

// toSQL renders a squirrel builder with $n placeholders and returns its
// parameters, which are all Params.
func toSQL(b sq.Sqlizer) (string, []Param, error) {
	sql, args, err := b.ToSql()
	if err != nil {
		return "", nil, err
	}
	if sql, err = sq.Dollar.ReplacePlaceholders(sql); err != nil {
		return "", nil, err
	}
	params := make([]Param, len(args))
	for i, a := range args {
		p, ok := a.(Param)
		if !ok {
			return "", nil, fmt.Errorf("sql parameter %d is %T, not a Param", i, a)
		}
		params[i] = p
	}
	return sql, params, nil
}

// quote returns a quoted Postgres identifier for use in a squirrel
// fragment, where a question mark must be doubled to stay literal.
func quote(name string) string { return strings.ReplaceAll(pgschema.Quote(name), "?", "??") }

// tableIdent returns a table's quoted name for use in a squirrel fragment.
func tableIdent(t *pgschema.Table) string { return strings.ReplaceAll(t.Ident(), "?", "??") }

// winsIdent returns the quoted name of the wins function of a table, or
// of its static table, for use in a squirrel fragment.
func winsIdent(t *pgschema.Table, static bool) string {
	return strings.ReplaceAll(t.WinsFunction(static), "?", "??")
}

// qcol returns a table column's name qualified by a table alias, for a
// squirrel fragment.
func qcol(alias, name string) string { return alias + "." + quote(name) }

// exactParam is p in the form of its column's exact companion.
func exactParam(p Param) Param {
	p.Form = FormExact
	return p
}

// storedValue is the SQL expression reading a column's stored value: as
// its natural column, or as bytea, with the empty value as zero bytes
// and a value only the exact companion holds as that (pgschema.ExactSelect).
func storedValue(alias string, c *pgschema.Column) string {
	value := qcol(alias, c.PGName)
	e, x := c.EmptyColumn(), c.HasExact()
	if e == "" && !x {
		return value
	}
	st, _ := pgschema.StorageOf(c.Type)
	value = st.Send(value)
	if x {
		value = pgschema.ExactSelect(c.Type, qcol(alias, c.ExactColumn()), value)
	}
	if e != "" {
		value = fmt.Sprintf("CASE WHEN %s THEN ''::bytea ELSE %s END", qcol(alias, e), value)
	}
	return value
}

// liveValue is the SQL expression for a column's value as CQL sees it now:
// a key column as stored, a regular or static column only while its cell
// has not expired.
func liveValue(alias string, c *pgschema.Column) sq.Sqlizer {
	value := storedValue(alias, c)
	if c.IsKey() {
		return sq.Expr(value)
	}
	return expr(fmt.Sprintf("CASE WHEN %[1]s IS NULL OR %[1]s > ? THEN %[2]s END",
		qcol(alias, c.ExpiryColumn()), value), Param{Kind: ParamNow})
}

// cellHolds is the SQL condition that a cell holds a value, empty or not.
func cellHolds(alias string, c *pgschema.Column) string {
	if e := c.EmptyColumn(); e != "" {
		return fmt.Sprintf("(%s IS NOT NULL OR %s)", qcol(alias, c.PGName), qcol(alias, e))
	}
	return qcol(alias, c.PGName) + " IS NOT NULL"
}

// cellLive is the condition for a cell to be live: a value that has not
// expired.
func cellLive(alias string, c *pgschema.Column) sq.Sqlizer {
	return expr(cellLiveText(alias, c), Param{Kind: ParamNow})
}

// rowLive is the condition for a row to exist: a live row marker, or some
// live regular cell.
func rowLive(alias string, t *pgschema.Table) sq.Sqlizer {
	or := sq.Or{expr(fmt.Sprintf("(%[1]s IS NOT NULL AND (%[2]s IS NULL OR %[2]s > ?))",
		qcol(alias, pgschema.RowWritetimeColumn), qcol(alias, pgschema.RowExpiryColumn)), Param{Kind: ParamNow})}
	if t.StrictLiveness() {
		return or // a view row whose key holds a base regular column lives by its marker alone
	}
	for _, c := range t.Columns {
		if c.Kind == pgschema.Regular {
			or = append(or, cellLive(alias, c))
		}
	}
	if t.HasBaseCells() {
		or = append(or, expr(fmt.Sprintf("cqlpg.view_cells_live(%s, ?)", qcol(alias, pgschema.BaseCellsColumn)), Param{Kind: ParamNow}))
	}
	return or
}

// staticLive is the condition for a partition's static row to exist: some
// live static cell.
func staticLive(alias string, t *pgschema.Table) sq.Sqlizer {
	var or sq.Or
	for _, c := range t.Columns {
		if c.Kind == pgschema.Static {
			or = append(or, cellLive(alias, c))
		}
	}
	return or
}
