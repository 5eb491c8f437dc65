package translate

import (
	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/translate/cqlfunc"
)

// CallExpr applies a native function to its arguments.
type CallExpr struct {
	Fn   *cqlfunc.Function
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
	Agg  *cqlfunc.Aggregate
	Args []Expr
}

// ElementRef is an element of a collection value: a map's value by key, a
// set's element, or a list's element by index.
type ElementRef struct {
	Arg Expr
	Key Expr
	T   *pgschema.Type
}

// SliceRef is the elements of a set, or entries of a map, whose keys lie
// between From and To, both included; a nil bound is open.
type SliceRef struct {
	Arg      Expr
	From, To Expr
}

func (e *SliceRef) Type() *pgschema.Type   { return e.Arg.Type() }
func (e *CallExpr) Type() *pgschema.Type   { return e.Fn.Returns }
func (e *CastExpr) Type() *pgschema.Type   { return e.T }
func (e *AggExpr) Type() *pgschema.Type    { return e.Agg.Returns }
func (e *ElementRef) Type() *pgschema.Type { return e.T }

// isAggregate reports whether e folds rows: it is, or calls, an aggregate.
func isAggregate(e Expr) bool { return len(aggregatesIn(e, nil)) > 0 }

// aggregatesIn appends the aggregates e computes, outermost first.
func aggregatesIn(e Expr, out []*AggExpr) []*AggExpr {
	switch x := e.(type) {
	case *AggExpr:
		return append(out, x)
	case *CallExpr:
		for _, a := range x.Args {
			out = aggregatesIn(a, out)
		}
	case *CastExpr:
		out = aggregatesIn(x.Arg, out)
	case *FieldRef:
		out = aggregatesIn(x.Arg, out)
	case *ElementRef:
		out = aggregatesIn(x.Key, aggregatesIn(x.Arg, out))
	case *SliceRef:
		out = aggregatesIn(x.Arg, out)
	}
	return out
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
		return x.Fn.Eval(ctx.functions(), args)
	case *CastExpr:
		v, err := Eval(x.Arg, slots, b, ctx, dst)
		if err != nil || v == nil {
			return nil, err
		}
		return x.Conv(v)
	case *SliceRef:
		return evalSlice(x, slots, b, ctx, dst)
	case *AggExpr:
		// An aggregate inside a function call: its group's result.
		if v, ok := ctx.aggregates[x]; ok {
			return v, nil
		}
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
// aggregate keeps its state, and the other selectors take the group's
// first row, as Cassandra does. An output calling aggregates, such as
// intAsBlob(max(v)), is computed from their results.
type Group struct {
	sel    *Select
	aggs   []*AggExpr
	states []cqlfunc.AggregateState
	first  [][]byte
	rows   int
	b      *Bound
	ctx    *EvalContext
}

// NewGroup starts a group.
func (s *Select) NewGroup() *Group {
	g := &Group{sel: s}
	for _, o := range s.Outputs {
		g.aggs = aggregatesIn(o, g.aggs)
	}
	g.states = make([]cqlfunc.AggregateState, len(g.aggs))
	for i, a := range g.aggs {
		g.states[i] = a.Agg.New()
	}
	return g
}

// Add folds one row into the group.
func (g *Group) Add(slots [][]byte, b *Bound, ctx *EvalContext) error {
	g.b, g.ctx = b, ctx
	for i, a := range g.aggs {
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
	}
	if g.rows == 0 {
		g.first = make([][]byte, len(slots))
		for i, v := range slots {
			if v != nil {
				g.first[i] = append([]byte(nil), v...)
			}
		}
	}
	g.rows++
	return nil
}

// Rows returns how many rows the group folded.
func (g *Group) Rows() int { return g.rows }

// Result returns the group's output values. Over no rows, aggregates give
// their initial results and other selectors null.
func (g *Group) Result() ([][]byte, error) {
	ctx := EvalContext{aggregates: make(map[*AggExpr][]byte, len(g.aggs))}
	if g.ctx != nil {
		ctx.Now = g.ctx.Now
	}
	for i, a := range g.aggs {
		v, err := g.states[i].Result()
		if err != nil {
			return nil, err
		}
		ctx.aggregates[a] = v
	}
	b := g.b
	if b == nil {
		b = &Bound{}
	}
	first := g.first
	if first == nil {
		first = make([][]byte, len(g.sel.Slots))
	}
	out := make([][]byte, len(g.sel.Outputs))
	for i, o := range g.sel.Outputs {
		if g.rows == 0 && !isAggregate(o) {
			continue
		}
		v, err := Eval(o, first, b, &ctx, nil)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// evalSlice selects the part of a set or map between the slice's bounds.
// An empty slice of a non-frozen collection is null, as in Cassandra.
func evalSlice(x *SliceRef, slots [][]byte, b *Bound, ctx *EvalContext, dst []byte) ([]byte, error) {
	v, err := Eval(x.Arg, slots, b, ctx, dst)
	if err != nil || v == nil {
		return nil, err
	}
	t := x.Arg.Type()
	var from, to []byte
	if x.From != nil {
		if from, err = Eval(x.From, slots, b, ctx, nil); err != nil {
			return nil, err
		}
	}
	if x.To != nil {
		if to, err = Eval(x.To, slots, b, ctx, nil); err != nil {
			return nil, err
		}
	}
	elems, err := pgschema.Elements(t, v)
	if err != nil {
		return nil, err
	}
	step := 1
	if t.Kind == pgschema.Map {
		step = 2
	}
	var keys, values [][]byte
	for i := 0; i+step-1 < len(elems); i += step {
		k := elems[i]
		if from != nil && pgschema.Compare(t.Elem[0], k, from) < 0 || to != nil && pgschema.Compare(t.Elem[0], k, to) > 0 {
			continue
		}
		keys = append(keys, k)
		if step == 2 {
			values = append(values, elems[i+1])
		}
	}
	switch {
	case len(keys) == 0 && !t.Frozen:
		return nil, nil
	case step == 2:
		return pgschema.SerializeMap(keys, values), nil
	}
	return pgschema.SerializeCollection(keys), nil
}
