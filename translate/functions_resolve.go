package translate

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"

	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/translate/cqlfunc"
)

// Cassandra 4.1's overload resolution (cql3/functions/FunctionResolver)
// over the native library of cqlfunc: which function or aggregate a call
// names, given its arguments as the planner knows them.

// FuncArg describes one argument of a call at planning time. Exactly one of
// Type, Literal and Marker is set: a known type (a column, a type hint or a
// nested call's result), a constant whose literal kind decides which
// parameter types it may take (Cassandra's Constants.Literal.testAssignment),
// or a bind marker, which may take any type and gets the chosen overload's.
type FuncArg struct {
	Type    *pgschema.Type
	Literal *Literal
	Marker  bool
	// Text is the argument as Cassandra prints it in a type error: a column
	// name, a nested call or a constant as written. When empty it is derived
	// from Literal or Type.
	Text string
}

// assignResult checks that function f's result may be assigned to a
// receiver (a column or an argument) named name of type t, as Cassandra
// checks a call used as a value.
func assignResult(f *cqlfunc.Function, name string, t *pgschema.Type) error {
	if typeAssignment(f.Returns, t) == notAssignable {
		return invalidf("Type error: cannot assign result of function %s (type %s) to %s (type %s)",
			f.QualifiedName(), cqlfunc.TypeString(f.Returns), name, cqlfunc.TypeString(t))
	}
	return nil
}

// overload is one declared signature of a native function or aggregate.
type overload interface {
	Signature() (name string, args []*pgschema.Type, ret *pgschema.Type)
}

// overloads lists functions or aggregates as overloads.
func overloads[T overload](xs []T) []overload {
	out := make([]overload, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}

// ResolveFunction picks the native scalar function a call names, as
// Cassandra's FunctionResolver does. name is the name as written (already
// lower case unless it was quoted, optionally qualified by "system"); args
// describe the arguments. receiver is the type the call's result is
// assigned to in a term (an inserted or compared column, or an enclosing
// function's parameter); it is nil in a SELECT clause, which is how the
// errors for unknown functions, toJson() and fromJson() tell the two apart.
//
// The planner still checks a term's result with AssignTo, prepares constant
// and marker arguments against the chosen parameter types (named ArgName),
// and calls ResolveAggregate for the names IsAggregate reports. token() is
// not in the library: the planner plans it itself.
func ResolveFunction(name string, args []FuncArg, receiver *pgschema.Type) (*cqlfunc.Function, error) {
	base := cqlfunc.NativeName(name)
	switch base {
	case "tojson":
		return resolveToJSON(args, receiver)
	case "fromjson":
		return resolveFromJSON(args, receiver)
	case "token":
		return nil, fmt.Errorf("token() is planned by the planner, not the function library")
	}
	if fac := cqlfunc.Factories(base); base != "" && fac != nil {
		return resolveFactory(fac, args)
	}
	if aggs := cqlfunc.Aggregates(base); base != "" && len(aggs) > 0 {
		if _, err := resolveOverload(name, overloads(aggs), args, receiver); err != nil {
			return nil, err
		}
		if receiver == nil {
			return nil, fmt.Errorf("%s is an aggregate: resolve it with ResolveAggregate", name)
		}
		return nil, invalidf("Aggregation function are not supported in the where clause")
	}
	fns := cqlfunc.Natives(base)
	if base == "" || len(fns) == 0 {
		return nil, unknownFunction(name, receiver != nil)
	}
	i, err := resolveOverload(name, overloads(fns), args, receiver)
	if err != nil {
		return nil, err
	}
	return fns[i], nil
}

// resolveFactory builds a factory's function for a call's arguments, as
// Cassandra's FunctionFactory does: each argument's type is its own, or,
// for a constant or marker given where a list of types is declared, the
// first of those it may take; a type the parameter does not take is
// refused.
func resolveFactory(fac *cqlfunc.Factory, args []FuncArg) (*cqlfunc.Function, error) {
	if len(args) < fac.Required() || len(args) > len(fac.Params) {
		return nil, invalidf("Invalid number of arguments for function %s", fac)
	}
	types := make([]*pgschema.Type, len(args))
	for i, a := range args {
		p := fac.Params[i]
		t := a.Type
		if p.SameAsFirst && i > 0 {
			t = types[0]
		}
		if t == nil {
			for _, f := range p.Fixed {
				if a.Marker || a.testAssignment(f) != notAssignable {
					t = f
					break
				}
			}
		}
		if t == nil {
			return nil, invalidf("Cannot infer type of argument %s in call to function %s: use type casts to disambiguate",
				a.text(), fac)
		}
		if p.Accepts != nil && !p.Accepts(t) {
			return nil, p.Refusal(fac, a.text(), t)
		}
		types[i] = t
	}
	return fac.Build(types)
}

// unknownFunction is Cassandra's error for a name with no function: a term
// (FunctionCall) and a selector (Selectable.WithFunction) word it
// differently.
func unknownFunction(name string, inTerm bool) error {
	if inTerm {
		return invalidf("Unknown function %s called", name)
	}
	return invalidf("Unknown function '%s'", name)
}

// resolveOverload chooses among a name's overloads (FunctionResolver.get):
// a lone candidate is checked argument by argument; otherwise an exact match
// wins, else exactly one candidate must accept the arguments. name is the
// name as called, which the errors about the whole overload set print.
func resolveOverload(name string, cands []overload, args []FuncArg, receiver *pgschema.Type) (int, error) {
	if len(cands) == 1 {
		return 0, validateArgs(cands[0], args)
	}
	var compatible []int
	for i, c := range cands {
		_, params, ret := c.Signature()
		if receiver != nil && typeAssignment(ret, receiver) == notAssignable {
			continue
		}
		switch matchArgs(params, args) {
		case exactMatch:
			return i, nil
		case weaklyAssignable:
			compatible = append(compatible, i)
		}
	}
	switch len(compatible) {
	case 0:
		return 0, invalidf("Invalid call to function %s, none of its type signatures match (known type signatures: %s)",
			name, overloadList(cands, nil))
	case 1:
		return compatible[0], nil
	}
	return 0, invalidf("Ambiguous call to function %s (can be matched by following signatures: %s): use type casts to disambiguate",
		name, overloadList(cands, compatible))
}

// overloadList prints the overloads at indexes which (all if nil).
func overloadList(cands []overload, which []int) string {
	var parts []string
	for i, c := range cands {
		if which != nil && !containsInt(which, i) {
			continue
		}
		parts = append(parts, cqlfunc.SignatureString(c.Signature()))
	}
	return strings.Join(parts, ", ")
}

func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// validateArgs checks the arguments of a name with a single overload, with
// Cassandra's more precise errors for that case (validateTypes).
func validateArgs(c overload, args []FuncArg) error {
	name, params, _ := c.Signature()
	qualified := cqlfunc.NativeKeyspace + "." + name
	if len(args) != len(params) {
		return invalidf("Invalid number of arguments in call to function %s: %d required but %d provided",
			qualified, len(params), len(args))
	}
	for i, a := range args {
		if a.Marker {
			continue
		}
		if a.testAssignment(params[i]) == notAssignable {
			return invalidf("Type error: %s cannot be passed as argument %d of function %s of type %s",
				a.text(), i, qualified, cqlfunc.TypeString(params[i]))
		}
	}
	return nil
}

// matchResult is Cassandra's AssignmentTestable.TestResult.
type matchResult uint8

const (
	notAssignable matchResult = iota
	weaklyAssignable
	exactMatch
)

// matchArgs tests all arguments against one overload: an exact match if
// every argument matches exactly, not assignable as soon as one is not.
func matchArgs(params []*pgschema.Type, args []FuncArg) matchResult {
	if len(params) != len(args) {
		return notAssignable
	}
	res := exactMatch
	for i, a := range args {
		switch a.testAssignment(params[i]) {
		case notAssignable:
			return notAssignable
		case weaklyAssignable:
			res = weaklyAssignable
		}
	}
	return res
}

// testAssignment tests whether the argument may be passed as a parameter of
// type param.
func (a FuncArg) testAssignment(param *pgschema.Type) matchResult {
	switch {
	case a.Marker:
		return weaklyAssignable
	case a.Literal != nil:
		return literalAssignment(a.Literal, param)
	case a.Type != nil:
		return typeAssignment(a.Type, param)
	}
	return weaklyAssignable
}

// text returns the argument as Cassandra prints it in a type error.
func (a FuncArg) text() string {
	switch {
	case a.Text != "":
		return a.Text
	case a.Literal != nil:
		switch a.Literal.Kind {
		case LitString:
			return "'" + a.Literal.Text + "'"
		case LitNull:
			return "NULL"
		}
		return a.Literal.Text
	case a.Marker:
		return "?"
	case a.Type != nil:
		return cqlfunc.TypeString(a.Type)
	}
	return ""
}

// typeAssignment tests a value of type t against a receiver of type recv
// (AbstractType.testAssignment): the same type is an exact match, a type
// whose values recv can read is weakly assignable.
func typeAssignment(t, recv *pgschema.Type) matchResult {
	switch {
	case t.Equal(recv):
		return exactMatch
	case valueCompatible(recv, t):
		return weaklyAssignable
	}
	return notAssignable
}

// valueCompatible reports whether every value of type t is a valid value of
// type recv, as Cassandra's isValueCompatibleWith says for native types: a
// blob reads anything, text reads ascii, bigint and timestamp read each
// other, varint reads int and everything bigint reads, date reads int, time
// reads bigint and uuid reads timeuuid.
func valueCompatible(recv, t *pgschema.Type) bool {
	if recv.Equal(t) {
		return true
	}
	if recv == cqlfunc.EmptyType || t == cqlfunc.EmptyType {
		return false
	}
	switch recv.Kind {
	case pgschema.Blob:
		return true
	case pgschema.Text:
		return t.Kind == pgschema.Ascii
	case pgschema.Bigint:
		return t.Kind == pgschema.Timestamp
	case pgschema.Timestamp:
		return t.Kind == pgschema.Bigint
	case pgschema.Varint:
		return t.Kind == pgschema.Int || t.Kind == pgschema.Bigint || t.Kind == pgschema.Timestamp
	case pgschema.Date:
		return t.Kind == pgschema.Int
	case pgschema.Time:
		return t.Kind == pgschema.Bigint
	case pgschema.UUID:
		return t.Kind == pgschema.Timeuuid
	}
	return false
}

// literalAssignment tests a constant against a parameter type as
// Cassandra's Constants.Literal.testAssignment does: the constant's
// preferred type is an exact match, the other types its kind may be written
// as are weakly assignable. null goes anywhere but to a counter.
func literalAssignment(lit *Literal, param *pgschema.Type) matchResult {
	if lit.Kind == LitNull {
		if param.Kind == pgschema.Counter {
			return notAssignable
		}
		return weaklyAssignable
	}
	if param == cqlfunc.EmptyType || param.Kind >= pgschema.List {
		return notAssignable
	}
	if pref := preferredKind(lit); pref != 0 && param.Kind == pref {
		return exactMatch
	}
	for _, k := range assignable[lit.Kind] {
		if k == param.Kind {
			return weaklyAssignable
		}
	}
	return notAssignable
}

// preferredKind is the type a constant matches exactly
// (Constants.Type.getPreferedTypeFor): ascii for an all-ASCII string, the
// smallest of int, bigint and varint that holds an integer, double for a
// float a double holds exactly and decimal otherwise, timeuuid for a
// version 1 uuid. Cassandra prefers tinyint for a hex constant, not blob.
func preferredKind(lit *Literal) pgschema.Kind {
	s := lit.Text
	switch lit.Kind {
	case LitString:
		for i := 0; i < len(s); i++ {
			if s[i] >= 0x80 {
				return pgschema.Text
			}
		}
		return pgschema.Ascii
	case LitInteger:
		if _, err := strconv.ParseInt(s, 10, 32); err == nil {
			return pgschema.Int
		}
		if _, err := strconv.ParseInt(s, 10, 64); err == nil {
			return pgschema.Bigint
		}
		return pgschema.Varint
	case LitFloat:
		switch strings.ToLower(s) {
		case "nan", "-nan", "infinity", "-infinity":
			return pgschema.Double
		}
		exact, ok := new(big.Rat).SetString(s)
		f, err := strconv.ParseFloat(s, 64)
		if !ok || err != nil {
			return pgschema.Decimal
		}
		// BigDecimal.valueOf(double) goes through the double's shortest
		// decimal form.
		short, _ := new(big.Rat).SetString(strconv.FormatFloat(f, 'g', -1, 64))
		if exact.Cmp(short) == 0 {
			return pgschema.Double
		}
		return pgschema.Decimal
	case LitBoolean:
		return pgschema.Boolean
	case LitUUID:
		if len(s) > 14 && s[14] == '1' {
			return pgschema.Timeuuid
		}
		return pgschema.UUID
	case LitHex:
		return pgschema.Tinyint
	case LitDuration:
		return pgschema.Duration
	}
	return 0
}

// resolveToJSON builds toJson() for its argument's type. Cassandra declares
// no overloads: the selection clause makes one for whatever it is given.
func resolveToJSON(args []FuncArg, receiver *pgschema.Type) (*cqlfunc.Function, error) {
	if receiver != nil {
		return nil, invalidf("toJson() may only be used within the selection clause of SELECT statements")
	}
	if len(args) != 1 {
		return nil, invalidf("toJson() only accepts one argument (got %d)", len(args))
	}
	t := args[0].Type
	if t == nil {
		return nil, invalidf("Cannot infer type for term %s in selection clause (try using a cast to force a type)",
			args[0].text())
	}
	return cqlfunc.ToJSONFunction(t), nil
}

// resolveFromJSON builds fromJson() returning the receiver's type.
func resolveFromJSON(args []FuncArg, receiver *pgschema.Type) (*cqlfunc.Function, error) {
	if receiver == nil {
		return nil, invalidf("fromJson() cannot be used in the selection clause of a SELECT statement")
	}
	f := cqlfunc.FromJSONFunction(receiver)
	if len(args) != 1 {
		return nil, invalidf("Incorrect number of arguments specified for function %s (expected %d, found %d)",
			f, 1, len(args))
	}
	return f, nil
}

// IsAggregate reports whether a function name as written names a native
// aggregate rather than a scalar function.
func IsAggregate(name string) bool {
	base := cqlfunc.NativeName(name)
	return base != "" && len(cqlfunc.Aggregates(base)) > 0
}

// ResolveAggregate picks the aggregate a selector calls, as Cassandra's
// FunctionResolver does (see ResolveFunction). count(*) is count with no
// arguments (or cqlfunc.CountRows itself); count of a constant, as in count(1), is
// count(*) too.
func ResolveAggregate(name string, args []FuncArg) (*cqlfunc.Aggregate, error) {
	base := cqlfunc.NativeName(name)
	if base == "count" && (len(args) == 0 ||
		len(args) == 1 && args[0].Literal != nil && args[0].Literal.Kind != LitNull) {
		return cqlfunc.CountRows, nil
	}
	aggs := cqlfunc.Aggregates(base)
	if base == "" || len(aggs) == 0 {
		if len(cqlfunc.Natives(base)) > 0 || base == "tojson" || base == "token" {
			return nil, fmt.Errorf("%s is not an aggregate: resolve it with ResolveFunction", name)
		}
		return nil, unknownFunction(name, false)
	}
	i, err := resolveOverload(name, overloads(aggs), args, nil)
	if err != nil {
		return nil, err
	}
	return aggs[i], nil
}

// CastFunction returns the function CAST(x AS to) applies to an x of type
// from, chosen among the castAsType overloads as Cassandra's
// Selectable.WithCast does, or nil when from is to, in which case Cassandra
// leaves the selector as it is (its value and its column name). column is
// the name Cassandra's error names: the first column the SELECT clause
// reads (Cassandra prints defs.get(0), which is not always the cast's own
// argument).
func CastFunction(from, to *pgschema.Type, column string) (*cqlfunc.Function, error) {
	if from.Equal(to) {
		return nil, nil
	}
	name := cqlfunc.CastFunctionName(to)
	fns := cqlfunc.Natives(name)
	if len(fns) == 0 {
		return nil, invalidf("%s cannot be cast to %s", column, to)
	}
	i, err := resolveOverload(cqlfunc.NativeKeyspace+"."+name, overloads(fns), []FuncArg{{Type: from, Text: column}}, nil)
	if err != nil {
		return nil, err
	}
	return fns[i], nil
}

// Cast returns the conversion CAST(x AS to) performs on a value of type
// from (nil stays nil), or Cassandra's error when there is no such cast.
// Casting to the value's own type returns the value unchanged. Where
// Cassandra's refusal names a column ("v cannot be cast to boolean"), Cast
// names the type from instead; CastFunction takes the column and also tells
// a same-type cast apart, which keeps the argument's column name.
func Cast(from, to *pgschema.Type) (func([]byte) ([]byte, error), error) {
	f, err := CastFunction(from, to, from.String())
	if err != nil {
		return nil, err
	}
	if f == nil {
		return func(b []byte) ([]byte, error) { return b, nil }, nil
	}
	return func(b []byte) ([]byte, error) { return f.Eval(nil, [][]byte{b}) }, nil
}
