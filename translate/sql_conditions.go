package translate

import (
	"fmt"
	"strings"

	sq "github.com/Masterminds/squirrel"

	"github.com/cqlpg/cqlpg/pgschema"
)

// conditionSQL renders a restriction as an SQL condition on the table of
// alias, or on the table holding the column when alias is empty. Values of
// regular and static columns are compared only while their cells live; the
// comparison is written on the plain column so that indexes serve it.
func conditionSQL(res Restriction, alias string) (sq.Sqlizer, error) {
	at := func(c *pgschema.Column) string {
		if alias != "" {
			return alias
		}
		return aliasOf(c)
	}
	switch res.Kind {
	case OnTuple:
		return tupleSQL(res, at(res.Columns[0]))
	case OnElement:
		c := res.Column
		return sq.And{expr(fmt.Sprintf("%s @> jsonb_build_object(?::text, ?::jsonb)", qcol(at(c), c.PGName)),
			Param{Kind: ParamValue, Column: c, Type: c.Type.Elem[0], Form: FormJSONKey, Value: res.Key, Element: -1},
			Param{Kind: ParamValue, Column: c, Type: c.Type.Elem[1], Form: FormJSON, Value: res.Values[0], Element: -1}),
			cellLive(at(res.Column), c)}, nil
	}
	c := res.Column
	a := at(c)
	// Key columns compare on their sort column, which may be an order key.
	column, param := c.PGName, valueParam(c, Value{})
	if c.IsKey() {
		column, param = c.SortColumn(), sortParam(c, Value{})
	}
	if !c.IsKey() && c.HasExact() {
		if cond := exactConditionSQL(res, a); cond != nil {
			return sq.And{cond, expr(fmt.Sprintf("(%[1]s IS NULL OR %[1]s > ?)", qcol(a, c.ExpiryColumn())), Param{Kind: ParamNow})}, nil
		}
	}
	var cond sq.Sqlizer
	switch res.Op {
	case OpEQ, OpLT, OpLTE, OpGT, OpGTE:
		param.Value = res.Values[0]
		if (res.Fold != "" || res.Prefixed) && res.Op == OpEQ {
			cond = indexedEqualSQL(res, qcol(a, column), param)
			break
		}
		if fn := orderFunction(c); fn != "" && res.Op.IsSlice() {
			// Compare as Cassandra orders the type, not as Postgres does.
			cond = expr(fn+"("+qcol(a, column)+") "+res.Op.String()+" "+fn+"(?)", param)
			break
		}
		cond = expr(qcol(a, column)+" "+res.Op.String()+" ?", param)
	case OpIN:
		param.Kind, param.Values, param.ListMarker = ParamList, res.Values, res.ListMarker
		cond = expr(qcol(a, column)+" = ANY(?)", param)
	case OpNotIn:
		param.Kind, param.Values, param.ListMarker = ParamList, res.Values, res.ListMarker
		cond = expr(qcol(a, column)+" <> ALL(?)", param)
	case OpContains, OpContainsKey:
		var err error
		if cond, err = containsSQL(res, qcol(a, c.PGName)); err != nil {
			return nil, err
		}
	case OpNotContains, OpNotContainsKey:
		positive := res
		positive.Op = res.Op.Positive()
		inner, err := containsSQL(positive, qcol(a, c.PGName))
		if err != nil {
			return nil, err
		}
		cond = sq.ConcatExpr("NOT (", inner, ")")
	default:
		return nil, invalidf("%s restrictions are not supported", res.Op)
	}
	if c.IsKey() {
		return cond, nil
	}
	return sq.And{cond, expr(fmt.Sprintf("(%[1]s IS NULL OR %[1]s > ?)", qcol(a, c.ExpiryColumn())), Param{Kind: ParamNow})}, nil
}

// exactConditionSQL renders a comparison of a regular or static column
// with an exact companion on the order keys of its values, as Cassandra
// compares them (1E+3 equals 1000); equality also compares the natural
// column, which an index may serve. Nil for other operators.
func exactConditionSQL(res Restriction, a string) sq.Sqlizer {
	c := res.Column
	key := pgschema.ExactKeySQL(c.Type, qcol(a, c.PGName), qcol(a, c.ExactColumn()))
	value, order := valueParam(c, Value{}), valueParam(c, Value{})
	order.Form = FormOrderKey
	switch res.Op {
	case OpEQ:
		value.Value, order.Value = res.Values[0], res.Values[0]
		return expr(qcol(a, c.PGName)+" = ? AND "+key+" = ?", value, order)
	case OpLT, OpLTE, OpGT, OpGTE:
		order.Value = res.Values[0]
		return expr(key+" "+res.Op.String()+" ?", order)
	case OpIN, OpNotIn:
		order.Kind, order.Values, order.ListMarker = ParamList, res.Values, res.ListMarker
		if res.Op == OpNotIn {
			return expr(key+" <> ALL(?)", order)
		}
		value.Kind, value.Values, value.ListMarker = ParamList, res.Values, res.ListMarker
		return expr(qcol(a, c.PGName)+" = ANY(?) AND "+key+" = ANY(?)", value, order)
	}
	return nil
}

// orderFunction names the SQL function (migration 0004) whose result
// sorts a column's stored values as Cassandra sorts them, when Postgres
// sorts them otherwise and the column keeps no order key.
func orderFunction(c *pgschema.Column) string {
	if c.OrderColumn() != "" {
		return ""
	}
	switch c.Type.Kind {
	case pgschema.UUID:
		return "cqlpg.uuid_order"
	case pgschema.Timeuuid:
		return "cqlpg.timeuuid_order"
	case pgschema.Inet:
		return "cqlpg.inet_order"
	}
	return ""
}

// isJSONStorage reports whether a type is stored as jsonb.
func isJSONStorage(t *pgschema.Type) bool {
	st, err := pgschema.StorageOf(t)
	return err == nil && strings.HasPrefix(st.SQL, "jsonb")
}

// containsSQL renders CONTAINS and CONTAINS KEY on a collection column: an
// array holds its elements, jsonb its list elements, or its map entries
// keyed by the key's JSON text.
func containsSQL(res Restriction, column string) (sq.Sqlizer, error) {
	c := res.Column
	t := c.Type
	switch {
	case res.Op == OpContainsKey:
		return expr(column+" ?? ?::text",
			Param{Kind: ParamValue, Column: c, Type: t.Elem[0], Form: FormJSONKey, Value: res.Values[0], Element: -1}), nil
	case t.Kind == pgschema.Map:
		return expr("jsonb_path_exists("+column+", '$.* ?? (@ == $v)', jsonb_build_object('v', ?::jsonb))",
			Param{Kind: ParamValue, Column: c, Type: t.Elem[1], Form: FormJSON, Value: res.Values[0], Element: -1}), nil
	case isJSONStorage(t):
		return expr(column+" @> jsonb_build_array(?::jsonb)",
			Param{Kind: ParamValue, Column: c, Type: t.Elem[0], Form: FormJSON, Value: res.Values[0], Element: -1}), nil
	}
	return expr(column+" @> ARRAY[?]",
		Param{Kind: ParamValue, Column: c, Type: t.Elem[0], Value: res.Values[0], Element: -1}), nil
}

// tupleSQL renders a multi-column relation: a row comparison, which orders
// as Cassandra's tuple comparison does, or a list of tuples for IN.
func tupleSQL(res Restriction, alias string) (sq.Sqlizer, error) {
	cols := make([]string, len(res.Columns))
	for i, c := range res.Columns {
		cols[i] = qcol(alias, c.SortColumn())
	}
	row := "ROW(" + strings.Join(cols, ", ") + ")"
	element := func(v Value, i int) Param {
		p := sortParam(res.Columns[i], v)
		if res.TupleMarker {
			p.Element = i
		}
		return p
	}
	switch res.Op {
	case OpEQ, OpLT, OpLTE, OpGT, OpGTE:
		params := make([]Param, len(res.Columns))
		marks := make([]string, len(res.Columns))
		for i := range res.Columns {
			v := res.Values[0]
			if !res.TupleMarker {
				v = res.Values[i]
			}
			params[i], marks[i] = element(v, i), "?"
		}
		return expr(row+" "+res.Op.String()+" ROW("+strings.Join(marks, ", ")+")", params...), nil
	case OpIN:
		if res.ListMarker {
			params := make([]Param, len(res.Columns))
			marks := make([]string, len(res.Columns))
			for i, c := range res.Columns {
				params[i] = sortParam(c, Value{})
				params[i].Kind, params[i].Values, params[i].ListMarker, params[i].Element = ParamList, res.Values, true, i
				marks[i] = "?"
			}
			return expr(row+" IN (SELECT * FROM unnest("+strings.Join(marks, ", ")+"))", params...), nil
		}
		var params []Param
		var tuples []string
		for _, tuple := range res.Tuples {
			marks := make([]string, len(res.Columns))
			for i := range res.Columns {
				v := tuple[0]
				if len(tuple) == len(res.Columns) {
					v = tuple[i]
				} else {
					p := sortParam(res.Columns[i], v)
					p.Element = i
					params = append(params, p)
					marks[i] = "?"
					continue
				}
				params = append(params, sortParam(res.Columns[i], v))
				marks[i] = "?"
			}
			tuples = append(tuples, "ROW("+strings.Join(marks, ", ")+")")
		}
		if len(tuples) == 0 {
			return sq.Expr("false"), nil
		}
		return expr(row+" IN ("+strings.Join(tuples, ", ")+")", params...), nil
	}
	return nil, invalidf("%s is not supported on multi-column relations", res.Op)
}

// indexedEqualSQL is an = on an indexed text or blob column, written so
// that Postgres finds it through the index: on the folded value when the
// index folds it, and on the value's prefix, which is what the index
// holds, before the whole value.
func indexedEqualSQL(res Restriction, col string, param Param) sq.Sqlizer {
	c := res.Column
	rhs := "?::text"
	if c.Type.Kind == pgschema.Blob {
		rhs = "?::bytea"
	}
	lhs := col
	if res.Fold != "" {
		lhs, rhs = fmt.Sprintf(res.Fold, lhs), fmt.Sprintf(res.Fold, rhs)
	}
	eq := expr(lhs+" = "+rhs, param)
	if !res.Prefixed {
		return eq
	}
	return sq.And{expr(pgschema.PrefixExpr(c.Type, lhs)+" = "+pgschema.PrefixExpr(c.Type, rhs), param), eq}
}
