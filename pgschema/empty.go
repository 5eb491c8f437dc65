package pgschema

import "strings"

// Cassandra accepts an empty value (zero bytes, distinct from null) for
// most types: an empty int, uuid or timestamp is a live cell that reads back
// as zero bytes. Postgres has no empty integer, so a regular or static
// column of such a type keeps a flag beside its value: c$empty is true
// while the cell holds the empty value, and c itself is then null. Text,
// ascii and blob hold empty values as they are. Key columns and collection
// elements cannot be empty here (Validate refuses them); Cassandra refuses
// empty partition keys too.

// EmptyColumn names the Postgres column flagging that a regular or static
// column's cell holds the empty value, or is "" when the column needs no
// flag: its storage holds empty values itself, the type has none
// (smallint, tinyint, date, time), or the column is a key, a counter or a
// non-frozen collection (which an empty value empties).
func (c *Column) EmptyColumn() string {
	if c.IsKey() || c.Type.Kind == Counter || c.Type.IsMultiCell() || emptyStorable(c.Type.Kind) ||
		validate(c.Type, []byte{}) != nil {
		return ""
	}
	return c.PGName + suffixEmpty
}

// Send returns the SQL expression giving a stored value's binary send
// form: the bytes Postgres sends for it as a binary result. Reads of a
// column with an empty flag select it as bytea this way, so that an empty
// value can come back as zero bytes.
func (s *Storage) Send(column string) string {
	var fn string
	switch {
	case strings.HasSuffix(s.SQL, "[]") || strings.Contains(s.SQL, "[] "):
		fn = "array_send"
	case strings.HasPrefix(s.SQL, "text"):
		fn = "textsend"
	default:
		fn = map[string]string{"bigint": "int8send", "integer": "int4send", "smallint": "int2send",
			"boolean": "boolsend", "real": "float4send", "double precision": "float8send", "uuid": "uuid_send",
			"timestamptz": "timestamptz_send", "date": "date_send", "numeric": "numeric_send",
			"inet": "inet_send", "jsonb": "jsonb_send", "bytea": "byteasend"}[s.SQL]
	}
	return fn + "(" + column + ")"
}
