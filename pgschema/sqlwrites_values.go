package pgschema

import (
	"fmt"
	"strings"
)

// The values a write through SQL may leave in a table (sqlwrites.go): the
// conditions CQL needs them to meet, the forms it needs them in, and the
// CQL bytes and order keys SQL computes from them.

// valueChecks refuses or normalizes a column's value when the statement
// wrote it.
func (b *body) valueChecks(t *Table, c *Column) {
	st, err := StorageOf(c.Type)
	if err != nil {
		return
	}
	v := newField(c.PGName)
	var stmts []string
	if e := c.EmptyColumn(); e != "" {
		// The empty flag is true or null, and a value is not empty; a
		// statement that sets the flag and leaves the value empties it.
		stmts = append(stmts,
			fmt.Sprintf("IF %[1]s IS NOT TRUE THEN %[1]s := NULL; ELSIF %[2]s IS NOT NULL THEN "+
				"IF NOT inserting AND %[2]s IS NOT DISTINCT FROM %[3]s THEN %[2]s := NULL; ELSE %[1]s := NULL; END IF; END IF;",
				newField(e), v, oldField(c.PGName)))
	}
	if c.Type.IsMultiCell() && c.Type.Kind != UDT {
		// A non-frozen collection left empty is null, as in Cassandra.
		if st.SQL == "jsonb" {
			stmts = append(stmts, fmt.Sprintf("IF %[1]s IN ('[]'::jsonb, '{}'::jsonb) THEN %[1]s := NULL; END IF;", v))
		} else {
			stmts = append(stmts, fmt.Sprintf("IF cardinality(%[1]s) = 0 THEN %[1]s := NULL; END IF;", v))
		}
	}
	held := v + " IS NOT NULL"
	if x := c.ExactColumn(); x != "" {
		// A value written in SQL replaces one only the exact companion
		// held; a placeholder beside the companion's value is no error.
		stmts = append(stmts, fmt.Sprintf("IF NOT inserting AND %[1]s IS NOT DISTINCT FROM %[2]s THEN %[1]s := NULL; END IF;",
			newField(x), oldField(x)))
		held += " AND " + newField(x) + " IS NULL"
	}
	checks, fixes := valueRules(c, v)
	for _, chk := range checks {
		stmts = append(stmts, fmt.Sprintf("IF %s AND NOT (%s) THEN RAISE EXCEPTION '%%', %s USING ERRCODE = '22023', COLUMN = %s; END IF;",
			held, chk.cond, bodyLiteral(fmt.Sprintf("invalid value for column %s of %s (%s): %s", c.Name, t.QualifiedName(), c.Type, chk.what)),
			bodyLiteral(c.PGName)))
	}
	for _, fix := range fixes {
		stmts = append(stmts, fmt.Sprintf("IF %[1]s IS NOT NULL THEN %[1]s := %[2]s; END IF;", v, fix))
	}
	if len(stmts) == 0 {
		return
	}
	changed := distinctSQL(c.Type, c.PGName)
	if e := c.EmptyColumn(); e != "" {
		changed += " OR " + distinctSQL(Scalar(Boolean), e)
	}
	b.line(1, "IF inserting OR %s THEN", changed)
	for _, s := range stmts {
		b.line(2, "%s", s)
	}
	b.line(1, "END IF;")
}

// valueRule is a condition a stored value must meet, and what it means.
type valueRule struct{ cond, what string }

// valueRules returns the conditions a column's value must meet for CQL to
// read it, and the expressions that bring it to CQL's form.
func valueRules(c *Column, v string) (checks []valueRule, fixes []string) {
	typ := c.Type
	st, _ := StorageOf(typ)
	if rule, ok := scalarRule(typ.Kind, v); ok {
		checks = append(checks, rule)
	}
	if fix := scalarFix(typ.Kind, v); fix != "" {
		fixes = append(fixes, fix)
	}
	if typ.Kind != List && typ.Kind != Set && typ.Kind != Vector || !strings.Contains(st.SQL, "[]") {
		return checks, fixes
	}
	// Lists, sets and vectors of scalars are arrays.
	elem := typ.Elem[0]
	checks = append(checks,
		valueRule{fmt.Sprintf("coalesce(array_ndims(%s), 1) = 1", v), "arrays must have one dimension"},
		valueRule{fmt.Sprintf("array_position(%s, NULL) IS NULL", v), "collections cannot hold nulls"})
	if typ.Kind == Vector {
		checks = append(checks, valueRule{fmt.Sprintf("cardinality(%s) = %d", v, typ.Dim),
			fmt.Sprintf("the vector must have %d elements", typ.Dim)})
	}
	if rule, ok := scalarRule(elem.Kind, "e"); ok {
		checks = append(checks, valueRule{fmt.Sprintf("NOT EXISTS (SELECT FROM unnest(%s) AS e WHERE NOT (%s))", v, rule.cond),
			"an element is invalid: " + rule.what})
	}
	if fix := scalarFix(elem.Kind, "a.e"); fix != "" {
		fixes = append(fixes, fmt.Sprintf("ARRAY(SELECT %s FROM unnest(%s) WITH ORDINALITY AS a (e, n) ORDER BY a.n)", fix, v))
	}
	if typ.Kind == Set {
		// Sets are kept sorted by Cassandra's comparator, without repeats.
		fixes = append(fixes, fmt.Sprintf("ARRAY(SELECT s.e FROM (SELECT DISTINCT ON (%[2]s) e FROM unnest(%[1]s) AS e ORDER BY %[2]s) AS s ORDER BY %[3]s)",
			v, elementOrderSQL(elem, "e"), elementOrderSQL(elem, "s.e")))
	}
	return checks, fixes
}

// scalarRule returns the condition a stored scalar of kind k meets when
// CQL can read it back.
func scalarRule(k Kind, v string) (valueRule, bool) {
	switch k {
	case Tinyint:
		return valueRule{v + " BETWEEN -128 AND 127", "a tinyint is between -128 and 127"}, true
	case Timeuuid:
		return valueRule{"get_byte(uuid_send(" + v + "), 6) >> 4 = 1", "a timeuuid is a version 1 uuid"}, true
	case Ascii:
		return valueRule{"octet_length(" + v + ") = char_length(" + v + ")", "ascii text holds only ASCII characters"}, true
	case Time:
		return valueRule{v + " BETWEEN 0 AND 86399999999999", "a time counts nanoseconds since midnight, 0 to 86399999999999"}, true
	case Varint:
		return valueRule{v + " > '-Infinity' AND " + v + " < 'Infinity' AND " + v + " = trunc(" + v + ")",
			"a varint is a finite integer"}, true
	case Decimal:
		return valueRule{v + " > '-Infinity' AND " + v + " < 'Infinity'", "a decimal is a finite number"}, true
	case Timestamp, Date:
		return valueRule{"isfinite(" + v + ")", "CQL has no infinite " + scalarNames[k] + "s"}, true
	case Duration:
		return valueRule{"array_ndims(" + v + ") = 1 AND array_lower(" + v + ", 1) = 1 AND cardinality(" + v + ") = 3 AND " +
			"array_position(" + v + ", NULL) IS NULL AND (" + v + "[1] >= 0 AND " + v + "[2] >= 0 AND " + v + "[3] >= 0 OR " +
			v + "[1] <= 0 AND " + v + "[2] <= 0 AND " + v + "[3] <= 0)",
			"a duration is {months, days, nanoseconds}, all of one sign"}, true
	}
	return valueRule{}, false
}

// scalarFix returns the expression bringing a stored scalar to the form
// CQL reads back, or "".
func scalarFix(k Kind, v string) string {
	switch k {
	case Timestamp:
		return "date_trunc('milliseconds', " + v + ")"
	case Inet:
		return "set_masklen(" + v + ", CASE family(" + v + ") WHEN 4 THEN 32 ELSE 128 END)"
	}
	return ""
}

// elementOrderSQL orders array elements of scalar type t as Cassandra's
// comparator does.
func elementOrderSQL(t *Type, e string) string {
	if key, ok := OrderKeySQL(t, e); ok {
		return key
	}
	if t.Kind == Ascii || t.Kind == Text {
		return e + ` COLLATE "C"`
	}
	return e
}

// distinctSQL is the condition that a statement changed column c: float,
// double and numeric values compare by their text, which tells -0.0 from
// 0.0 and 1.0 from 1.00.
func distinctSQL(t *Type, c string) string {
	st, err := StorageOf(t)
	if err == nil && (strings.Contains(st.SQL, "real") || strings.Contains(st.SQL, "double") ||
		strings.Contains(st.SQL, "numeric") || st.SQL == "jsonb") {
		return fmt.Sprintf("%s::text IS DISTINCT FROM %s::text", newField(c), oldField(c))
	}
	return fmt.Sprintf("%s IS DISTINCT FROM %s", newField(c), oldField(c))
}

// cellHoldsSQL is the condition that a cell of the row alias holds a
// value, empty or not.
func cellHoldsSQL(c *Column, alias string) string {
	v := alias + "." + Quote(c.PGName)
	if e := c.EmptyColumn(); e != "" {
		return fmt.Sprintf("(%s IS NOT NULL OR %s.%s IS TRUE)", v, alias, Quote(e))
	}
	return "(" + v + " IS NOT NULL)"
}

// rowLiveSQL is the condition that the row x is live at now_s: a live
// marker (main table) or a live cell of the given kind.
func (t *Table) rowLiveSQL(cells ColumnKind) string {
	var live []string
	if cells == Regular {
		live = append(live, fmt.Sprintf("(x.%s IS NOT NULL AND (x.%[2]s IS NULL OR x.%[2]s > now_s))",
			Quote(RowWritetimeColumn), Quote(RowExpiryColumn)))
	}
	for _, c := range t.Columns {
		if c.Kind == cells {
			live = append(live, fmt.Sprintf("(%s AND (x.%[2]s IS NULL OR x.%[2]s > now_s))", cellHoldsSQL(c, "x"), Quote(c.ExpiryColumn())))
		}
	}
	if len(live) == 0 {
		return "false"
	}
	return strings.Join(live, " OR ")
}

// KeyBytesSQL returns the SQL expression giving the CQL serialization of
// the stored value v of scalar type t, the bytes its token is computed
// from; false for types that have none in SQL (collections, tuples, user
// types, vectors, durations).
func KeyBytesSQL(t *Type, v string) (string, bool) {
	switch t.Kind {
	case Ascii, Text:
		return "cqlpg.text_bytes(" + v + ")", true
	case Bigint, Counter, Time:
		return "int8send(" + v + ")", true
	case Int:
		return "int4send(" + v + ")", true
	case Smallint:
		return "int2send(" + v + ")", true
	case Boolean:
		return "boolsend(" + v + ")", true
	case Float:
		return "float4send(" + v + ")", true
	case Double:
		return "float8send(" + v + ")", true
	case Blob:
		return v, true
	case UUID, Timeuuid:
		return "uuid_send(" + v + ")", true
	}
	fn := map[Kind]string{Tinyint: "tinyint_bytes", Timestamp: "timestamp_bytes", Date: "date_bytes",
		Decimal: "decimal_bytes", Varint: "varint_bytes", Inet: "inet_bytes"}[t.Kind]
	if fn == "" {
		return "", false
	}
	return "cqlpg." + fn + "(" + v + ")", true
}

// OrderKeySQL returns the SQL expression giving OrderKey of the stored
// value v of scalar type t; false for types without an order key or with
// one only the gateway computes (frozen collections, tuples, user types,
// vectors).
func OrderKeySQL(t *Type, v string) (string, bool) {
	fn := map[Kind]string{UUID: "uuid_order_key", Timeuuid: "timeuuid_order_key", Inet: "inet_order_key",
		Float: "float_order_key", Double: "double_order_key", Date: "date_order_key", Decimal: "decimal_order_key"}[t.Kind]
	if fn == "" {
		return "", false
	}
	return "cqlpg." + fn + "(" + v + ")", true
}
