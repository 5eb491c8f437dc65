package cqlfunc

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/cqlpg/cqlpg/pgschema"
)

// Native scalar functions: their type, the registry by name, and what
// evaluating them may depend on.

// Function is a native scalar function, one overload of a name.
type Function struct {
	// Name is the function's name in the system keyspace as Cassandra
	// declares it: lower case ("totimestamp", "blobasint") except for the
	// cast functions ("castAsInt").
	Name    string
	Args    []*pgschema.Type
	Returns *pgschema.Type
	// Deterministic is false for now(), uuid(), currentTimestamp() and the
	// like (Cassandra's isPure), which must be evaluated per execution, and
	// in a selection per row; a deterministic call whose arguments are all
	// constants may be evaluated once at planning time.
	Deterministic bool
	// Eval computes the function. A nil argument or result is null. Errors
	// are *InvalidError or *FunctionFailureError when Cassandra answers
	// Invalid or Function_failure; any other error is a server error.
	Eval func(ctx *EvalContext, args [][]byte) ([]byte, error)
	// Keyspace is a user-defined function's keyspace; "" for a native
	// function, whose keyspace is system.
	Keyspace string
}

// EvalContext is what evaluating a function may depend on besides its
// arguments.
type EvalContext struct {
	// Now is the request's time; now(), currentTimestamp() and the other
	// current* functions read it instead of the clock.
	Now time.Time
}

// FunctionFailureError is a function that failed while executing (CQL
// Function_failure, 0x1400), such as fromJson() given bad JSON. Keyspace,
// Function and ArgTypes are the error body's fields.
type FunctionFailureError struct {
	Keyspace, Function string
	ArgTypes           []string
	Msg                string
}

func (e *FunctionFailureError) Error() string { return e.Msg }

// NativeKeyspace is the keyspace Cassandra declares native functions in.
const NativeKeyspace = "system"

// QualifiedName returns the name as Cassandra's FunctionName prints it in
// messages: "system.totimestamp".
func (f *Function) QualifiedName() string { return keyspaceOf(f.Keyspace) + "." + f.Name }

// String returns the signature as Cassandra prints it in overload lists:
// "system.totimestamp : (timeuuid) -> timestamp".
func (f *Function) String() string {
	return signatureIn(keyspaceOf(f.Keyspace), f.Name, f.Args, f.Returns)
}

// keyspaceOf returns a function's keyspace: ks, or system for "".
func keyspaceOf(ks string) string {
	if ks == "" {
		return NativeKeyspace
	}
	return ks
}

// ColumnName returns the result column's name for a call whose arguments
// are named args: "system.totimestamp(t)", or "cast(v as int)" for a cast.
func (f *Function) ColumnName(args []string) string {
	if strings.HasPrefix(f.Name, castPrefix) {
		return fmt.Sprintf("cast(%s as %s)", args[0], TypeString(f.Returns))
	}
	return f.QualifiedName() + "(" + strings.Join(args, ", ") + ")"
}

// ArgName returns the name Cassandra gives argument i of the function when
// a bind marker stands there ("arg0(system.blobasint)"), and which its
// errors quote for a constant of the wrong kind.
func (f *Function) ArgName(i int) string {
	return "arg" + strconv.Itoa(i) + "(" + strings.ToLower(f.QualifiedName()) + ")"
}

// UnsetArgument returns Cassandra's error for an unset value bound to one of
// the function's arguments.
func (f *Function) UnsetArgument() error {
	return invalidf("Invalid unset value for argument in call to function %s", f.Name)
}

// SignatureString prints a native function's signature as Cassandra's
// AbstractFunction.toString does; the name is quoted when it needs to be.
func SignatureString(name string, args []*pgschema.Type, ret *pgschema.Type) string {
	return signatureIn(NativeKeyspace, name, args, ret)
}

// UserSignature prints a user-defined function's signature as Cassandra
// does: "ks.f : (int, text) -> int".
func UserSignature(keyspace, name string, args []*pgschema.Type, ret *pgschema.Type) string {
	return signatureIn(keyspace, name, args, ret)
}

func signatureIn(keyspace, name string, args []*pgschema.Type, ret *pgschema.Type) string {
	var b strings.Builder
	b.WriteString(keyspace + "." + pgschema.QuoteIdentifier(name) + " : (")
	for i, a := range args {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(TypeString(a))
	}
	b.WriteString(") -> ")
	b.WriteString(TypeString(ret))
	return b.String()
}

// EmptyType stands for Cassandra's internal "empty" type, which has count,
// min and max overloads that show in overload lists but match no argument.
var EmptyType = &pgschema.Type{Kind: pgschema.Custom, Name: "empty"}

// TypeString prints a type as Cassandra's messages do.
func TypeString(t *pgschema.Type) string {
	if t == EmptyType {
		return "empty"
	}
	return t.String()
}

// Natives returns the native scalar functions of a name (without its
// keyspace), in the order Cassandra declares them.
func Natives(name string) []*Function { return natives[name] }

// natives holds the native scalar functions by name, each name's overloads
// in the order Cassandra declares them (which its overload lists follow).
var natives = buildNatives()

func buildNatives() map[string][]*Function {
	m := map[string][]*Function{}
	for _, group := range [][]*Function{uuidFunctions(), timeFunctions(), blobFunctions(), castFunctions(), mathFunctions()} {
		for _, f := range group {
			m[f.Name] = append(m[f.Name], f)
		}
	}
	return m
}

// SplitName separates a keyspace from a function name as written;
// native functions may be called bare or qualified by "system".
func SplitName(name string) (keyspace, base string) {
	if i := strings.IndexByte(name, '.'); i >= 0 {
		return name[:i], name[i+1:]
	}
	return "", name
}

// NativeName returns the native function a name as written calls, or "" if
// it names a user keyspace, where cqlpg has no functions.
func NativeName(name string) string {
	ks, base := SplitName(name)
	if ks != "" && ks != NativeKeyspace {
		return ""
	}
	return base
}

// scalar is shorthand for a scalar kind's shared type.
func scalar(k pgschema.Kind) *pgschema.Type { return pgschema.Scalar(k) }

// Signature returns the function's name, parameter types and result type.
func (f *Function) Signature() (string, []*pgschema.Type, *pgschema.Type) {
	return f.Name, f.Args, f.Returns
}
