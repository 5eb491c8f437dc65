package translate

import (
	"errors"
	"slices"
	"time"

	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/translate/cqlfunc"
	"github.com/cqlpg/cqlpg/translate/udf"
)

// User-defined functions and aggregates resolve as Cassandra's
// FunctionResolver does: a name without a keyspace names a native
// function when one has it, else a function of the statement's keyspace;
// "ks.f" names ks's. Each call runs the body in the interpreter
// (translate/udf) under UDFBudget.

// UDFBudget bounds one call of a user-defined function: Cassandra 4.1's
// user_defined_functions_fail_timeout (1500 ms), and steps enough for
// it; a call past either fails with Cassandra's timeout text.
var UDFBudget = udf.Budget{Steps: 200_000_000, Timeout: 1500 * time.Millisecond}

// userScope returns the keyspace whose user functions a name as written
// may name, and the name's base; "" when it names native functions only.
func (p *planner) userScope(name string) (*pgschema.Keyspace, string) {
	ks, base := cqlfunc.SplitName(name)
	if ks == cqlfunc.NativeKeyspace {
		return nil, ""
	}
	if ks == "" {
		ks = p.keyspace
	}
	k := p.schema.Keyspace(ks)
	if k == nil {
		return nil, ""
	}
	return k, base
}

// isNative reports whether a name as written names native functions.
func isNative(name string) bool {
	base := cqlfunc.NativeName(name)
	return base != "" && (len(cqlfunc.Natives(base)) > 0 || len(cqlfunc.Aggregates(base)) > 0 ||
		cqlfunc.Factories(base) != nil || base == "tojson" || base == "fromjson" || base == "token" || base == "count")
}

// isAggregate reports whether a name as written names an aggregate,
// native or user-defined.
func (p *planner) isAggregate(name string) bool {
	if isNative(name) {
		return IsAggregate(name)
	}
	k, base := p.userScope(name)
	return k != nil && slices.ContainsFunc(k.Aggregates, func(a *pgschema.Aggregate) bool { return a.Name == base })
}

// resolveFunction is ResolveFunction with the user functions of the
// statement's keyspace.
func (p *planner) resolveFunction(name string, args []FuncArg, receiver *pgschema.Type) (*cqlfunc.Function, error) {
	if isNative(name) {
		return ResolveFunction(name, args, receiver)
	}
	k, base := p.userScope(name)
	var cands []*pgschema.Function
	if k != nil {
		for _, f := range k.Functions {
			if f.Name == base {
				cands = append(cands, f)
			}
		}
	}
	if len(cands) == 0 {
		if k != nil && slices.ContainsFunc(k.Aggregates, func(a *pgschema.Aggregate) bool { return a.Name == base }) && receiver != nil {
			return nil, invalidf("Aggregation function are not supported in the where clause")
		}
		return nil, unknownFunction(name, receiver != nil)
	}
	fns := make([]*cqlfunc.Function, len(cands))
	for i, f := range cands {
		fns[i] = &cqlfunc.Function{Name: f.Name, Keyspace: f.Keyspace, Args: f.ArgTypes, Returns: f.Returns}
	}
	i, err := resolveOverload(name, overloads(fns), args, receiver)
	if err != nil {
		return nil, err
	}
	fn, err := userFunction(cands[i])
	if err != nil {
		return nil, err
	}
	p.useFunction(cands[i].Keyspace, cands[i].Name, cands[i].ArgTypes)
	return fn, nil
}

// resolveAggregate is ResolveAggregate with the user aggregates of the
// statement's keyspace.
func (p *planner) resolveAggregate(name string, args []FuncArg) (*cqlfunc.Aggregate, error) {
	if isNative(name) {
		return ResolveAggregate(name, args)
	}
	k, base := p.userScope(name)
	var cands []*pgschema.Aggregate
	if k != nil {
		for _, a := range k.Aggregates {
			if a.Name == base {
				cands = append(cands, a)
			}
		}
	}
	if len(cands) == 0 {
		return nil, unknownFunction(name, false)
	}
	aggs := make([]*cqlfunc.Aggregate, len(cands))
	for i, a := range cands {
		aggs[i] = &cqlfunc.Aggregate{Name: a.Name, Keyspace: a.Keyspace, Args: a.ArgTypes, Returns: a.Returns}
	}
	i, err := resolveOverload(name, overloads(aggs), args, nil)
	if err != nil {
		return nil, err
	}
	agg, err := p.userAggregate(k, cands[i])
	if err != nil {
		return nil, err
	}
	p.useFunction(k.Name, cands[i].Name, cands[i].ArgTypes)
	return agg, nil
}

// useFunction records that the statement calls a user function or
// aggregate, on which its role needs EXECUTE.
func (p *planner) useFunction(keyspace, name string, args []*pgschema.Type) {
	r := FunctionResourceOf(keyspace, name, args)
	if !slices.Contains(p.functions, r) {
		p.functions = append(p.functions, r)
	}
}

// userFunction returns the function that runs f's body.
func userFunction(f *pgschema.Function) (*cqlfunc.Function, error) {
	compiled, err := CompileFunction(f)
	if err != nil {
		return nil, err
	}
	types := f.ArgTypeNames()
	return &cqlfunc.Function{Name: f.Name, Keyspace: f.Keyspace, Args: f.ArgTypes, Returns: f.Returns,
		Eval: func(_ *cqlfunc.EvalContext, args [][]byte) ([]byte, error) {
			out, err := compiled.Call(args, UDFBudget)
			return out, udfError(err, f.Keyspace, f.Name, types, cqlfunc.UserSignature(f.Keyspace, f.Name, f.ArgTypes, f.Returns))
		}}, nil
}

// udfError gives a call's failure Cassandra's Function_failure error.
func udfError(err error, keyspace, name string, types []string, signature string) error {
	var fail *udf.Failure
	var timeout *udf.Timeout
	switch {
	case err == nil:
		return nil
	case errors.As(err, &fail):
		return &cqlfunc.FunctionFailureError{Keyspace: keyspace, Function: name, ArgTypes: types, Msg: fail.Text(keyspace+"."+name, types)}
	case errors.As(err, &timeout):
		return &cqlfunc.FunctionFailureError{Keyspace: keyspace, Function: name, ArgTypes: types,
			Msg: timeout.Text(keyspace+"."+name, types, signature)}
	}
	return err
}

// userAggregate returns the aggregate that folds a's state function over
// the rows from its initial condition, then applies its final function.
func (p *planner) userAggregate(k *pgschema.Keyspace, a *pgschema.Aggregate) (*cqlfunc.Aggregate, error) {
	sf := k.Function(a.StateFunc, append([]*pgschema.Type{a.StateType}, a.ArgTypes...))
	if sf == nil {
		return nil, invalidf("State function %s.%s of aggregate %s.%s doesn't exist", k.Name, a.StateFunc, k.Name, a.Name)
	}
	state, err := userFunction(sf)
	if err != nil {
		return nil, err
	}
	var final *cqlfunc.Function
	if a.FinalFunc != "" {
		ff := k.Function(a.FinalFunc, []*pgschema.Type{a.StateType})
		if ff == nil {
			return nil, invalidf("Final function %s.%s of aggregate %s.%s doesn't exist", k.Name, a.FinalFunc, k.Name, a.Name)
		}
		if final, err = userFunction(ff); err != nil {
			return nil, err
		}
	}
	var init []byte
	if a.InitCond != "" {
		if init, err = p.literalOf(a.InitCond, a.StateType); err != nil {
			return nil, err
		}
	}
	calledOnNull := sf.CalledOnNullInput
	return &cqlfunc.Aggregate{Name: a.Name, Keyspace: a.Keyspace, Args: a.ArgTypes, Returns: a.Returns,
		New: func() cqlfunc.AggregateState {
			return &udaState{state: init, step: state, final: final, calledOnNull: calledOnNull}
		}}, nil
}

// udaState is one group's aggregation by a user-defined aggregate.
type udaState struct {
	state        []byte
	step, final  *cqlfunc.Function
	calledOnNull bool
	args         [][]byte
}

// Add applies the state function to the state and a row's arguments; a
// row with a null argument is skipped when the state function returns
// null on null input, as Cassandra's UDAggregate does.
func (s *udaState) Add(args [][]byte) error {
	if !s.calledOnNull && slices.ContainsFunc(args, func(a []byte) bool { return a == nil }) {
		return nil
	}
	s.args = append(append(s.args[:0], s.state), args...)
	next, err := s.step.Eval(nil, s.args)
	if err != nil {
		return err
	}
	s.state = next
	return nil
}

// Result returns the final function of the state, or the state.
func (s *udaState) Result() ([]byte, error) {
	if s.final == nil {
		return s.state, nil
	}
	return s.final.Eval(nil, [][]byte{s.state})
}

// literalOf reads a CQL literal of type t, as an aggregate's INITCOND is
// recorded.
func (p *planner) literalOf(text string, t *pgschema.Type) ([]byte, error) {
	ps := &parser{s: newScanner(text)}
	ps.tok = ps.s.next()
	term, err := ps.term()
	if err != nil {
		return nil, err
	}
	v, err := p.value(term, ColumnSpec{Name: "initcond", Type: t})
	if err != nil {
		return nil, err
	}
	return v.Const, nil
}
