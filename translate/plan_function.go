package translate

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/translate/udf"
)

// planCreateFunction checks a CREATE FUNCTION as Cassandra 4.1 does
// (CreateFunctionStatement), in its order and with its texts, and
// compiles the body: a body the interpreter cannot run is refused here,
// never at a call.
func (p *planner) planCreateFunction(s *CreateFunctionStmt) (Plan, error) {
	ks, err := p.keyspaceName(s.Name.Keyspace)
	if err != nil {
		return nil, err
	}
	name := s.Name.Name
	if s.IfNotExists && s.OrReplace {
		return nil, invalidf("Cannot use both 'OR REPLACE' and 'IF NOT EXISTS' directives")
	}
	if !strings.EqualFold(s.Language, "java") {
		return nil, invalidf("Scripted user-defined functions are disabled in cassandra.yaml - set scripted_user_defined_functions_enabled=true " +
			"to enable if you are aware of the security risks")
	}
	names := make([]string, len(s.Args))
	for i, a := range s.Args {
		names[i] = a.Name
	}
	for i, n := range names {
		if slices.Contains(names[:i], n) {
			return nil, invalidf("Duplicate argument names for given function %s with argument names [%s]", name, strings.Join(names, ", "))
		}
	}
	for _, a := range s.Args {
		if isFrozenText(a.Text) {
			return nil, invalidf("Argument '%s' cannot be frozen; remove frozen<> modifier from '%s'", a.Text, a.Text)
		}
	}
	if isFrozenText(s.Returns.Text) {
		return nil, invalidf("Return type '%s' cannot be frozen; remove frozen<> modifier from '%s'", s.Returns.Text, s.Returns.Text)
	}
	k := p.schema.Keyspace(ks)
	if k == nil {
		return nil, invalidf("Keyspace '%s' doesn't exist", ks)
	}
	if k.Virtual || pgschema.IsSystemKeyspace(ks) {
		return nil, &UnauthorizedError{Msg: "Cannot create functions in keyspace " + ks}
	}
	f := &pgschema.Function{Keyspace: ks, Name: name, ArgNames: names, CalledOnNullInput: s.CalledOnNullInput,
		Language: strings.ToLower(s.Language), Body: s.Body}
	for _, a := range s.Args {
		t, err := functionType(k, a.Type)
		if err != nil {
			return nil, err
		}
		f.ArgTypes = append(f.ArgTypes, t)
	}
	if f.Returns, err = functionType(k, s.Returns.Type); err != nil {
		return nil, err
	}
	if _, err := CompileFunction(f); err != nil {
		return nil, err
	}
	change := &SchemaChange{Statement: s, Change: "CREATED", Target: "FUNCTION", Keyspace: ks, Name: name,
		Args: f.ArgTypeNames(), NewFunction: f}
	if k.Aggregate(name, f.ArgTypes) != nil {
		return nil, invalidf("Function '%s' cannot replace an aggregate", name)
	}
	if old := k.Function(name, f.ArgTypes); old != nil {
		switch {
		case s.IfNotExists:
			return &Noop{}, nil
		case !s.OrReplace:
			return nil, invalidf("Function '%s' already exists", name)
		case old.CalledOnNullInput != f.CalledOnNullInput:
			directive := "RETURNS NULL ON NULL INPUT"
			if f.CalledOnNullInput {
				directive = "CALLED ON NULL INPUT"
			}
			return nil, invalidf("Function '%s' must have %s directive", name, directive)
		case !old.Returns.Equal(f.Returns):
			return nil, invalidf("Cannot replace function '%s', the new return type %s is not compatible with the return type %s of existing function",
				name, f.Returns, old.Returns)
		}
		change.Change = "UPDATED"
	}
	return change, nil
}

// isFrozenText reports whether a type as written is frozen<...>.
func isFrozenText(t string) bool {
	return strings.HasPrefix(strings.ToLower(strings.ReplaceAll(t, " ", "")), "frozen<")
}

// functionType resolves a function's argument, return or state type: its
// user types in keyspace k, and tuples, which are frozen, as such.
func functionType(k *pgschema.Keyspace, t *pgschema.Type) (*pgschema.Type, error) {
	return resolveType(k, t)
}

// planCreateAggregate checks a CREATE AGGREGATE as Cassandra does
// (CreateAggregateStatement): its state function takes the state and the
// arguments and returns the state, its final function takes the state,
// and its initial condition is a constant of the state type.
func (p *planner) planCreateAggregate(s *CreateAggregateStmt) (Plan, error) {
	ks, err := p.keyspaceName(s.Name.Keyspace)
	if err != nil {
		return nil, err
	}
	name := s.Name.Name
	if s.IfNotExists && s.OrReplace {
		return nil, invalidf("Cannot use both 'OR REPLACE' and 'IF NOT EXISTS' directives")
	}
	for _, a := range s.Args {
		if a.Type.Kind != pgschema.Tuple && isFrozenText(a.Text) {
			return nil, invalidf("Argument '%s' cannot be frozen; remove frozen<> modifier from '%s'", a.Text, a.Text)
		}
	}
	if s.StateType.Type.Kind != pgschema.Tuple && isFrozenText(s.StateType.Text) {
		return nil, invalidf("State type '%s' cannot be frozen; remove frozen<> modifier from '%s'", s.StateType.Text, s.StateType.Text)
	}
	k := p.schema.Keyspace(ks)
	if k == nil {
		return nil, invalidf("Keyspace '%s' doesn't exist", ks)
	}
	if k.Virtual || pgschema.IsSystemKeyspace(ks) {
		return nil, &UnauthorizedError{Msg: "Cannot create functions in keyspace " + ks}
	}
	a := &pgschema.Aggregate{Keyspace: ks, Name: name, StateFunc: s.StateFunc, FinalFunc: s.FinalFunc}
	var argTexts []string
	for _, arg := range s.Args {
		t, err := functionType(k, arg.Type)
		if err != nil {
			return nil, err
		}
		a.ArgTypes = append(a.ArgTypes, t)
		argTexts = append(argTexts, arg.Text)
	}
	if a.StateType, err = functionType(k, s.StateType.Type); err != nil {
		return nil, err
	}
	stateString := fmt.Sprintf("%s.%s(%s)", ks, s.StateFunc, strings.Join(append([]string{s.StateType.Text}, argTexts...), ", "))
	sf := k.Function(s.StateFunc, append([]*pgschema.Type{a.StateType}, a.ArgTypes...))
	if sf == nil {
		if k.Aggregate(s.StateFunc, append([]*pgschema.Type{a.StateType}, a.ArgTypes...)) != nil {
			return nil, invalidf("State function %s isn't a scalar function", stateString)
		}
		return nil, invalidf("State function %s doesn't exist", stateString)
	}
	if !sf.Returns.Equal(a.StateType) {
		return nil, invalidf("State function %s return type must be the same as the first argument type - check STYPE, argument and return types",
			stateString)
	}
	a.Returns = sf.Returns
	if s.FinalFunc != "" {
		finalString := fmt.Sprintf("%s.%s(%s)", ks, s.FinalFunc, s.StateType.Text)
		ff := k.Function(s.FinalFunc, []*pgschema.Type{a.StateType})
		if ff == nil {
			if k.Aggregate(s.FinalFunc, []*pgschema.Type{a.StateType}) != nil {
				return nil, invalidf("Final function %s isn't a scalar function", finalString)
			}
			return nil, invalidf("Final function %s doesn't exist", finalString)
		}
		a.Returns = ff.Returns
	}
	var init []byte
	if s.InitCond != nil {
		v, err := p.value(s.InitCond, ColumnSpec{Keyspace: ks, Table: name, Name: "initcond", Type: a.StateType})
		if err != nil {
			return nil, err
		}
		if v.Marker >= 0 {
			return nil, invalidf("Bind variables are not supported in INITCOND")
		}
		init = v.Const
		if init != nil {
			if err := pgschema.Validate(a.StateType, init); err != nil {
				return nil, invalidf("Invalid value for INITCOND of type %s", a.StateType)
			}
			if len(init) == 0 && !slices.Contains([]pgschema.Kind{pgschema.Text, pgschema.Ascii, pgschema.Blob}, a.StateType.Kind) {
				return nil, invalidf("INITCOND must not be empty for all types except TEXT, ASCII, BLOB")
			}
		}
		if a.InitCond, err = pgschema.CQLLiteral(a.StateType, init); err != nil {
			return nil, err
		}
	}
	if !sf.CalledOnNullInput && init == nil {
		return nil, invalidf("Cannot create aggregate '%s' without INITCOND because state function %s.%s does not accept 'null' arguments",
			name, ks, s.StateFunc)
	}
	change := &SchemaChange{Statement: s, Change: "CREATED", Target: "AGGREGATE", Keyspace: ks, Name: name,
		Args: a.ArgTypeNames(), NewAggregate: a}
	if k.Function(name, a.ArgTypes) != nil {
		return nil, invalidf("Aggregate '%s' cannot replace a function", name)
	}
	if old := k.Aggregate(name, a.ArgTypes); old != nil {
		switch {
		case s.IfNotExists:
			return &Noop{}, nil
		case !s.OrReplace:
			return nil, invalidf("Aggregate '%s' already exists", name)
		case !old.Returns.Equal(a.Returns):
			return nil, invalidf("Cannot replace aggregate '%s', the new return type %s isn't compatible with the return type %s of existing function",
				name, a.Returns, old.Returns)
		}
		change.Change = "UPDATED"
	}
	return change, nil
}

// planDropFunction drops a function or an aggregate (DropFunctionStatement,
// DropAggregateStatement), found by its argument types when given, else
// by its name alone, which must then name one overload.
func (p *planner) planDropFunction(s *DropFunctionStmt) (Plan, error) {
	ks, err := p.keyspaceName(s.Name.Keyspace)
	if err != nil {
		return nil, err
	}
	name := s.Name.Name
	what, verb := "Function", "FUNCTION"
	if s.Aggregate {
		what, verb = "Aggregate", "AGGREGATE"
	}
	full := ks + "." + name
	if s.ArgsGiven {
		texts := make([]string, len(s.Args))
		for i, a := range s.Args {
			texts[i] = a.Text
		}
		full += "(" + strings.Join(texts, ", ") + ")"
	}
	k := p.schema.Keyspace(ks)
	missing := func() (Plan, error) {
		if s.IfExists {
			return &Noop{}, nil
		}
		return nil, invalidf("%s '%s' doesn't exist", what, full)
	}
	if k == nil {
		return missing()
	}
	var sigs [][]*pgschema.Type
	if s.Aggregate {
		for _, a := range k.Aggregates {
			if a.Name == name {
				sigs = append(sigs, a.ArgTypes)
			}
		}
	} else {
		for _, f := range k.Functions {
			if f.Name == name {
				sigs = append(sigs, f.ArgTypes)
			}
		}
	}
	if len(sigs) > 1 && !s.ArgsGiven {
		return nil, invalidf("'DROP %s %s' matches multiple function definitions; specify the argument types by issuing a statement like "+
			"'DROP %s %s (type, type, ...)'. You can use cqlsh 'DESCRIBE %s %s' command to find all overloads", verb, name, verb, name, verb, name)
	}
	for _, a := range s.Args {
		if a.Type.Kind != pgschema.Tuple && isFrozenText(a.Text) {
			return nil, invalidf("Argument '%s' cannot be frozen; remove frozen<> modifier from '%s'", a.Text, a.Text)
		}
	}
	args := sigs
	if s.ArgsGiven {
		var want []*pgschema.Type
		for _, a := range s.Args {
			t, err := functionType(k, a.Type)
			if err != nil {
				return nil, err
			}
			want = append(want, t)
		}
		args = slices.DeleteFunc(args, func(sig []*pgschema.Type) bool { return !slices.EqualFunc(sig, want, (*pgschema.Type).Equal) })
	}
	if len(args) == 0 {
		return missing()
	}
	change := &SchemaChange{Statement: s, Change: "DROPPED", Target: verb, Keyspace: ks, Name: name}
	if s.Aggregate {
		change.NewAggregate = k.Aggregate(name, args[0])
		change.Args = change.NewAggregate.ArgTypeNames()
		return change, nil
	}
	f := k.Function(name, args[0])
	var users []string
	for _, a := range k.Aggregates {
		if a.StateFunc == name && f.SameArgs(append([]*pgschema.Type{a.StateType}, a.ArgTypes...)) ||
			a.FinalFunc == name && f.SameArgs([]*pgschema.Type{a.StateType}) {
			users = append(users, ks+"."+a.Name)
		}
	}
	if len(users) > 0 {
		return nil, invalidf("Function '%s' is still referenced by aggregates %s", full, strings.Join(users, ", "))
	}
	change.NewFunction, change.Args = f, f.ArgTypeNames()
	return change, nil
}

// CompileFunction compiles a function's body for the interpreter, as
// its null-input directive declares its arguments. A body it cannot run
// is an Invalid error with Cassandra's compilation text.
func CompileFunction(f *pgschema.Function) (*udf.Func, error) {
	params := make([]udf.Param, len(f.ArgNames))
	for i, n := range f.ArgNames {
		params[i] = udf.Param{Name: n, Type: f.ArgTypes[i]}
	}
	compile := udf.CompileStrict
	if f.CalledOnNullInput {
		compile = udf.Compile
	}
	fn, err := compile(params, f.Returns, f.Body)
	if ce, ok := err.(*udf.CompileError); ok {
		return nil, invalidf("%s", ce.Msg)
	}
	return fn, err
}
