package translate

import (
	"fmt"

	"github.com/cqlpg/cqlpg/translate/cqlfunc"
)

// SyntaxError is a statement that does not parse (CQL Syntax_error, 0x2000).
// Its message gives the line, column and offending token; a zero Pos marks
// a syntax error Cassandra finds after parsing (an unknown WITH option),
// whose message has no position.
type SyntaxError struct {
	Pos   Pos
	Token string
	Msg   string
}

func (e *SyntaxError) Error() string {
	if e.Pos.Line == 0 {
		return e.Msg
	}
	return fmt.Sprintf("line %d:%d %s", e.Pos.Line, e.Pos.Col, e.Msg)
}

// InvalidError is a statement Cassandra refuses (CQL Invalid, 0x2200). Msg
// is Cassandra's text, word for word. The function library answers with
// it too, so it is defined there.
type InvalidError = cqlfunc.InvalidError

func invalidf(format string, args ...any) error {
	return &InvalidError{Msg: fmt.Sprintf(format, args...)}
}

// ConfigError is a schema change with bad options (CQL Config_error, 0x2300).
type ConfigError struct{ Msg string }

func (e *ConfigError) Error() string { return e.Msg }

// AlreadyExistsError is a CREATE of a keyspace or table that exists (CQL
// Already_exists, 0x2400). Table is empty for a keyspace.
type AlreadyExistsError struct{ Keyspace, Table string }

func (e *AlreadyExistsError) Error() string {
	if e.Table == "" {
		return fmt.Sprintf("Cannot add existing keyspace \"%s\"", e.Keyspace)
	}
	return fmt.Sprintf("Cannot add already existing table \"%s\" to keyspace \"%s\"", e.Table, e.Keyspace)
}

// UnauthorizedError is a statement the session may not run (CQL
// Unauthorized, 0x2100), such as a change to a system keyspace.
type UnauthorizedError struct{ Msg string }

func (e *UnauthorizedError) Error() string { return e.Msg }
