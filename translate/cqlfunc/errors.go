package cqlfunc

import "fmt"

// InvalidError is a request Cassandra refuses (CQL Invalid, 0x2200): a
// function given a value it cannot take. Msg is Cassandra's text, word
// for word. The planner's own refusals are this type too
// (translate.InvalidError).
type InvalidError struct{ Msg string }

func (e *InvalidError) Error() string { return e.Msg }

func invalidf(format string, args ...any) error {
	return &InvalidError{Msg: fmt.Sprintf(format, args...)}
}
