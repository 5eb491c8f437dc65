package translate

import (
	"github.com/cqlpg/cqlpg/pgschema"
)

// CallExpr applies a native function to its arguments.
type CallExpr struct {
	Fn   *Function
	Args []Expr
}

// CastExpr converts its argument with CAST(arg AS T).
type CastExpr struct {
	Arg  Expr
	Conv func([]byte) ([]byte, error)
	T    *pgschema.Type
}

// AggExpr folds its arguments over the rows of a group.
type AggExpr struct {
	Agg  *Aggregate
	Args []Expr
}

// ElementRef is an element of a collection value: a map's value by key, a
// set's element, or a list's element by index.
type ElementRef struct {
	Arg Expr
	Key Expr
	T   *pgschema.Type
}

func (e *CallExpr) Type() *pgschema.Type   { return e.Fn.Returns }
func (e *CastExpr) Type() *pgschema.Type   { return e.T }
func (e *AggExpr) Type() *pgschema.Type    { return e.Agg.Returns }
func (e *ElementRef) Type() *pgschema.Type { return e.T }

// isAggregate reports whether e folds rows.
func isAggregate(e Expr) bool {
	_, ok := e.(*AggExpr)
	return ok
}

// evalFunction evaluates the expressions that call functions.
func evalFunction(e Expr, slots [][]byte, b *Bound, ctx *EvalContext, dst []byte) ([]byte, error) {
	switch x := e.(type) {
	case *CallExpr:
		args := make([][]byte, len(x.Args))
		for i, a := range x.Args {
			v, err := Eval(a, slots, b, ctx, nil)
			if err != nil {
				return nil, err
			}
			args[i] = v
		}
		return x.Fn.Eval(ctx, args)
	case *CastExpr:
		v, err := Eval(x.Arg, slots, b, ctx, dst)
		if err != nil || v == nil {
			return nil, err
		}
		return x.Conv(v)
	case *ElementRef:
		v, err := Eval(x.Arg, slots, b, ctx, dst)
		if err != nil || v == nil {
			return nil, err
		}
		key, err := Eval(x.Key, slots, b, ctx, nil)
		if err != nil || key == nil {
			return nil, err
		}
		return pgschema.Element(x.Arg.Type(), v, key)
	}
	return nil, unknownExpr(e)
}

// Group folds the rows of one group for a SELECT with aggregates: each
// aggregate output keeps its state, and each other output the value of the
// group's first row, as Cassandra does.
type Group struct {
	sel    *Select
	states []AggregateState
	first  [][]byte
	rows   int
}

// NewGroup starts a group.
func (s *Select) NewGroup() *Group {
	g := &Group{sel: s, states: make([]AggregateState, len(s.Outputs)), first: make([][]byte, len(s.Outputs))}
	for i, o := range s.Outputs {
		if a, ok := o.(*AggExpr); ok {
			g.states[i] = a.Agg.New()
		}
	}
	return g
}

// Add folds one row into the group.
func (g *Group) Add(slots [][]byte, b *Bound, ctx *EvalContext) error {
	for i, o := range g.sel.Outputs {
		if a, ok := o.(*AggExpr); ok {
			args := make([][]byte, len(a.Args))
			for j, arg := range a.Args {
				v, err := Eval(arg, slots, b, ctx, nil)
				if err != nil {
					return err
				}
				args[j] = v
			}
			if err := g.states[i].Add(args); err != nil {
				return err
			}
			continue
		}
		if g.rows == 0 {
			v, err := Eval(o, slots, b, ctx, nil)
			if err != nil {
				return err
			}
			g.first[i] = append([]byte(nil), v...)
			if v == nil {
				g.first[i] = nil
			}
		}
	}
	g.rows++
	return nil
}

// Rows returns how many rows the group folded.
func (g *Group) Rows() int { return g.rows }

// Result returns the group's output values.
func (g *Group) Result() ([][]byte, error) {
	out := make([][]byte, len(g.sel.Outputs))
	for i := range g.sel.Outputs {
		if g.states[i] != nil {
			v, err := g.states[i].Result()
			if err != nil {
				return nil, err
			}
			out[i] = v
			continue
		}
		out[i] = g.first[i]
	}
	return out, nil
}
