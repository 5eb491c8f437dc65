package translate

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/translate/cqlfunc"
)

// callTerm plans a function call used as a value: deterministic calls of
// constants are evaluated now, others at each execution.
func (p *planner) callTerm(call *FunctionCall, recv ColumnSpec) (Value, error) {
	if strings.ToLower(call.Name) == "token" {
		return p.tokenTerm(call, recv)
	}
	fargs, err := p.funcArgs(call.Args)
	if err != nil {
		return Value{}, err
	}
	fn, err := p.resolveFunction(call.Name, fargs, recv.Type)
	if err != nil {
		return Value{}, err
	}
	if err := assignResult(fn, recv.Name, recv.Type); err != nil {
		return Value{}, err
	}
	args := make([]Value, len(call.Args))
	constant := fn.Deterministic
	for i, a := range call.Args {
		spec := ColumnSpec{Keyspace: recv.Keyspace, Table: recv.Table, Name: fn.ArgName(i), Type: fn.Args[i]}
		if args[i], err = p.value(a, spec); err != nil {
			return Value{}, err
		}
		constant = constant && args[i].Marker < 0
	}
	if constant {
		consts := make([][]byte, len(args))
		for i, a := range args {
			consts[i] = a.Const
		}
		if v, err := fn.Eval(&cqlfunc.EvalContext{}, consts); err == nil {
			return constValue(v), nil
		}
		// A constant call that fails reports it at each execution, as
		// Cassandra does.
	}
	return p.compute(&callValue{fn: fn, args: args}), nil
}

// funcArgs describes a call's arguments for overload resolution: literals
// by kind, markers untyped, type hints and nested calls by their type.
func (p *planner) funcArgs(terms []Term) ([]FuncArg, error) {
	fargs := make([]FuncArg, len(terms))
	for i, a := range terms {
		switch v := a.(type) {
		case *Literal:
			fargs[i] = FuncArg{Literal: v}
		case *TypeHint:
			fargs[i] = FuncArg{Type: v.Type}
		case *FunctionCall:
			inner, err := p.funcArgs(v.Args)
			if err != nil {
				return nil, err
			}
			fn, err := p.resolveFunction(v.Name, inner, nil)
			if err != nil {
				return nil, err
			}
			fargs[i] = FuncArg{Type: fn.Returns}
		default:
			fargs[i] = FuncArg{Marker: true}
		}
	}
	return fargs, nil
}

// tokenTerm plans token(...) as a value: its arguments take the types of
// the table's partition key.
func (p *planner) tokenTerm(call *FunctionCall, recv ColumnSpec) (Value, error) {
	t := p.schema.Table(recv.Keyspace, recv.Table)
	if t == nil || len(call.Args) != len(t.PartitionKey) {
		return Value{}, invalidf("Invalid number of arguments in call to function token")
	}
	args := make([]Value, len(call.Args))
	for i, a := range call.Args {
		// The arguments are the function's, not the key columns', so a
		// marker among them does not count as a partition key variable.
		spec := ColumnSpec{Keyspace: t.Keyspace, Table: t.Name, Name: fmt.Sprintf("arg%d(system.token)", i),
			Type: t.PartitionKey[i].Type}
		v, err := p.value(a, spec)
		if err != nil {
			return Value{}, err
		}
		args[i] = v
	}
	return p.compute(&tokenValue{args: args}), nil
}

// collectionTerm plans a list, set, map or vector literal.
func (p *planner) collectionTerm(c *Collection, recv ColumnSpec) (Value, error) {
	t := recv.Type
	kind := map[CollectionKind]string{ListLiteral: "list", SetLiteral: "set", MapLiteral: "map"}[c.Kind]
	empty := len(c.Elems) == 0
	switch {
	case t.Kind == pgschema.Vector && c.Kind == ListLiteral:
		return p.vectorTerm(c, recv)
	case c.Kind == ListLiteral && t.Kind == pgschema.List,
		c.Kind == SetLiteral && (t.Kind == pgschema.Set || empty && t.Kind == pgschema.Map),
		c.Kind == MapLiteral && t.Kind == pgschema.Map:
	default:
		return Value{}, invalidf("Invalid %s literal for %s of type %s", kind, recv.Name, t)
	}
	elemSpec := ColumnSpec{Keyspace: recv.Keyspace, Table: recv.Table, Name: "value(" + recv.Name + ")", Type: t.Elem[0]}
	keySpec := elemSpec
	if t.Kind == pgschema.Map {
		keySpec.Name, elemSpec.Type = "key("+recv.Name+")", t.Elem[1]
	}
	comp := &compositeValue{t: t}
	for i, e := range c.Elems {
		spec := elemSpec
		if t.Kind == pgschema.Map {
			spec = keySpec
		}
		v, err := p.value(e, spec)
		if err != nil {
			return Value{}, err
		}
		if v.Marker < 0 && v.Const == nil {
			return Value{}, invalidf("null is not supported inside collections")
		}
		comp.elems = append(comp.elems, v)
		if t.Kind == pgschema.Map {
			mv, err := p.value(c.Values[i], elemSpec)
			if err != nil {
				return Value{}, err
			}
			if mv.Marker < 0 && mv.Const == nil {
				return Value{}, invalidf("null is not supported inside collections")
			}
			comp.values = append(comp.values, mv)
		}
	}
	return p.composite(comp), nil
}

// composite serializes a literal now when all its parts are constants,
// sorting set elements and map keys as Cassandra does; otherwise it is
// computed at execution.
func (p *planner) composite(c *compositeValue) Value {
	for _, v := range append(append([]Value(nil), c.elems...), c.values...) {
		if v.Marker >= 0 {
			return p.compute(c)
		}
	}
	v, _, err := c.Compute(&Bound{}, nil)
	if err != nil {
		return p.compute(c) // the execution reports it
	}
	return constValue(v)
}

// vectorTerm plans a vector literal: exactly the type's dimension of
// elements.
func (p *planner) vectorTerm(c *Collection, recv ColumnSpec) (Value, error) {
	t := recv.Type
	if len(c.Elems) != t.Dim {
		return Value{}, invalidf("Invalid vector literal for %s of type %s; expected %d elements, but given %d",
			recv.Name, t, t.Dim, len(c.Elems))
	}
	comp := &compositeValue{t: t}
	for _, e := range c.Elems {
		v, err := p.value(e, ColumnSpec{Keyspace: recv.Keyspace, Table: recv.Table, Name: "value(" + recv.Name + ")", Type: t.Elem[0]})
		if err != nil {
			return Value{}, err
		}
		comp.elems = append(comp.elems, v)
	}
	return p.composite(comp), nil
}

// tupleTerm plans a tuple literal.
func (p *planner) tupleTerm(tl *Tuple, recv ColumnSpec) (Value, error) {
	t := recv.Type
	if t.Kind != pgschema.Tuple {
		return Value{}, invalidf("Invalid tuple type literal for %s of type %s", recv.Name, t)
	}
	if len(tl.Elems) > len(t.Elem) {
		return Value{}, invalidf("Invalid tuple literal for %s: too many elements. Type %s expects %d but got %d",
			recv.Name, t, len(t.Elem), len(tl.Elems))
	}
	comp := &compositeValue{t: t}
	for i := range t.Elem {
		if i >= len(tl.Elems) {
			comp.elems = append(comp.elems, constValue(nil))
			continue
		}
		v, err := p.value(tl.Elems[i], ColumnSpec{Keyspace: recv.Keyspace, Table: recv.Table,
			Name: fmt.Sprintf("%s[%d]", recv.Name, i), Type: t.Elem[i]})
		if err != nil {
			return Value{}, err
		}
		comp.elems = append(comp.elems, v)
	}
	return p.composite(comp), nil
}

// udtTerm plans a user type literal: fields by name, missing ones null.
func (p *planner) udtTerm(u *UDTLiteral, recv ColumnSpec) (Value, error) {
	t := recv.Type
	if t.Kind != pgschema.UDT {
		return Value{}, invalidf("Invalid user type literal for %s of type %s", recv.Name, t)
	}
	comp := &compositeValue{t: t, elems: make([]Value, len(t.Fields))}
	for i := range comp.elems {
		comp.elems[i] = constValue(nil)
	}
	for i, f := range u.Fields {
		idx := slices.Index(t.Fields, f)
		if idx < 0 {
			return Value{}, invalidf("Unknown field '%s' in value of user defined type %s", f, t.Name)
		}
		v, err := p.value(u.Values[i], ColumnSpec{Keyspace: recv.Keyspace, Table: recv.Table,
			Name: recv.Name + "." + f, Type: t.Elem[idx]})
		if err != nil {
			return Value{}, err
		}
		comp.elems[idx] = v
	}
	return p.composite(comp), nil
}
