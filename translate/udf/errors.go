package udf

import (
	"fmt"
	"strings"
	"time"
)

// Cassandra's texts, which the gateway returns word for word:
//
// A body that does not compile fails CREATE FUNCTION with an Invalid
// error whose message JavaBasedUDFunction builds as "Java source
// compilation failed:\n" followed by one "Line N: <problem>\n" per
// problem the Java compiler (ECJ) reports, N counted from the body's
// first line. CompileError.Msg is that message, with the first problem;
// constructs the interpreter refuses are problems worded "<construct>
// are not supported by cqlpg user functions".
//
// A body that throws fails the statement with a Function_failure error
// (FunctionExecutionException.create) whose message is
// "execution of '<keyspace>.<name>[<argument types>]' failed: <exception>",
// where the argument types are the CQL types joined by ", " and the
// exception is Throwable.toString: the class's name, then ": " and the
// message if it has one ("java.lang.ArithmeticException: / by zero").
// Failure.Msg is the exception; Failure.Text makes the whole message.
//
// A call that outlives user_defined_functions_fail_timeout fails the same
// way with a java.util.concurrent.TimeoutException whose message
// UDFunction builds as "User defined function <function> ran longer than
// <timeout>ms", <function> being Function.toString
// ("ks.f : (int, text) -> int"); Cassandra appends " - will stop Cassandra
// VM" when its user_function_timeout_policy is die, which the gateway,
// which stops nothing, never does. Timeout.Text makes the whole message.

// CompileError is a body that does not compile.
type CompileError struct{ Msg string }

func (e *CompileError) Error() string { return e.Msg }

// compileErrorf is the compile error at line of the body.
func compileErrorf(line int, format string, args ...any) *CompileError {
	return &CompileError{Msg: fmt.Sprintf("Java source compilation failed:\nLine %d: %s\n", line, fmt.Sprintf(format, args...))}
}

// Failure is a Java exception a call threw: Msg is the exception as Java
// prints it.
type Failure struct{ Msg string }

func (e *Failure) Error() string { return e.Msg }

// Text returns Cassandra's Function_failure message for the failure of
// function ("ks.f") with the CQL argument types argTypes.
func (e *Failure) Text(function string, argTypes []string) string {
	return "execution of '" + function + "[" + strings.Join(argTypes, ", ") + "]' failed: " + e.Msg
}

// Timeout is a call stopped by its budget, of steps or of time: Limit is
// the budget's timeout, which Cassandra's message gives.
type Timeout struct{ Limit time.Duration }

func (e *Timeout) Error() string {
	return fmt.Sprintf("user function ran longer than %dms", e.Limit.Milliseconds())
}

// Text returns Cassandra's Function_failure message for a timeout of
// function ("ks.f") with the CQL argument types argTypes, whose signature
// as Cassandra prints functions is signature ("ks.f : (int) -> int").
func (e *Timeout) Text(function string, argTypes []string, signature string) string {
	f := &Failure{Msg: fmt.Sprintf("java.util.concurrent.TimeoutException: User defined function %s ran longer than %dms",
		signature, e.Limit.Milliseconds())}
	return f.Text(function, argTypes)
}
