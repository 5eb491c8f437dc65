package cqlfunc

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"github.com/cqlpg/cqlpg/pgschema"
)

// Functions built for their arguments' types (Cassandra 5.0's
// FunctionFactory): the collection functions, whose overloads are as many
// as the collection types, and the format functions, whose later
// arguments are optional.

// Factory builds a function of a name for the types of a call's
// arguments.
type Factory struct {
	Name   string
	Params []Param
	// Build returns the function for the arguments' types, which the
	// params have checked, or Cassandra's refusal of them.
	Build func(args []*pgschema.Type) (*Function, error)
}

// Param is a parameter of a factory's functions: the types it takes.
type Param struct {
	// Text is the parameter as Cassandra's factory prints it in
	// messages: "map", "collection", "[int|tinyint]".
	Text string
	// Optional parameters may be left out, from the last.
	Optional bool
	// Accepts reports whether an argument of type t may be passed; wants
	// says what it takes in Cassandra's refusal ("a map argument").
	Accepts func(t *pgschema.Type) bool
	wants   string
	// Fixed are the types a parameter declared with a type list takes;
	// a constant or marker gets the first one it may be assigned to.
	Fixed []*pgschema.Type
	// SameAsFirst parameters take the first argument's type.
	SameAsFirst bool
}

// Required is how many parameters are not optional.
func (f *Factory) Required() int {
	n := 0
	for _, p := range f.Params {
		if !p.Optional {
			n++
		}
	}
	return n
}

// String is the factory as Cassandra prints it: "system.map_keys(map)".
func (f *Factory) String() string {
	parts := make([]string, len(f.Params))
	for i, p := range f.Params {
		parts[i] = p.Text
		if p.Optional {
			parts[i] = "[" + p.Text + "]"
		}
	}
	return NativeKeyspace + "." + f.Name + "(" + strings.Join(parts, ", ") + ")"
}

// Refusal is Cassandra's error for an argument of type t, printed as
// text, that parameter p does not take.
func (p Param) Refusal(f *Factory, text string, t *pgschema.Type) error {
	return invalidf("Function %s.%s requires %s, but found argument %s of type %s", NativeKeyspace, f.Name, p.wants,
		text, TypeString(t))
}

// Factories returns the factory of a name, or nil.
func Factories(name string) *Factory { return factories[name] }

var factories = buildFactories()

func buildFactories() map[string]*Factory {
	m := map[string]*Factory{}
	for _, f := range append(append(collectionFactories(), formatFactories()...), vectorFactories()...) {
		m[f.Name] = f
	}
	return m
}

func isCollection(t *pgschema.Type) bool {
	return t.Kind == pgschema.List || t.Kind == pgschema.Set || t.Kind == pgschema.Map
}

func isSetOrList(t *pgschema.Type) bool { return t.Kind == pgschema.List || t.Kind == pgschema.Set }

var (
	anyMap = Param{Text: "map", wants: "a map argument",
		Accepts: func(t *pgschema.Type) bool { return t.Kind == pgschema.Map || t.Kind == pgschema.UDT }}
	anyCollection = Param{Text: "collection", wants: "a collection argument", Accepts: isCollection}
	setOrList     = Param{Text: "numeric_set_or_list", wants: "a set or list argument", Accepts: isSetOrList}
	numericList   = Param{Text: "numeric_set_or_list", wants: "a numeric set/list argument",
		Accepts: func(t *pgschema.Type) bool { return isSetOrList(t) && slices.Contains(numericKinds, t.Elem[0].Kind) }}
)

func collectionFactories() []*Factory {
	elementwise := func(name string, p Param, agg func(elem *pgschema.Type) (*pgschema.Type, func() AggregateState)) *Factory {
		return &Factory{Name: name, Params: []Param{p}, Build: func(args []*pgschema.Type) (*Function, error) {
			ret, newState := agg(args[0].Elem[0])
			return collectionFunction(name, args[0], ret, func(elems [][]byte) ([]byte, error) {
				s := newState()
				for _, e := range elems {
					if err := s.Add([][]byte{e}); err != nil {
						return nil, err
					}
				}
				return s.Result()
			}), nil
		}}
	}
	extreme := func(max bool) func(elem *pgschema.Type) (*pgschema.Type, func() AggregateState) {
		return func(elem *pgschema.Type) (*pgschema.Type, func() AggregateState) {
			return elem, func() AggregateState { return &extremeState{t: elem, max: max} }
		}
	}
	return []*Factory{
		{Name: "map_keys", Params: []Param{anyMap}, Build: func(args []*pgschema.Type) (*Function, error) {
			m := args[0]
			return collectionFunction("map_keys", m, pgschema.NewSet(m.Elem[0], false), func(kv [][]byte) ([]byte, error) {
				keys := make([][]byte, 0, len(kv)/2)
				for i := 0; i < len(kv); i += 2 {
					keys = append(keys, kv[i])
				}
				return pgschema.SerializeCollection(keys), nil
			}), nil
		}},
		{Name: "map_values", Params: []Param{anyMap}, Build: func(args []*pgschema.Type) (*Function, error) {
			m := args[0]
			return collectionFunction("map_values", m, pgschema.NewList(m.Elem[1], false), func(kv [][]byte) ([]byte, error) {
				values := make([][]byte, 0, len(kv)/2)
				for i := 1; i < len(kv); i += 2 {
					values = append(values, kv[i])
				}
				return pgschema.SerializeCollection(values), nil
			}), nil
		}},
		{Name: "collection_count", Params: []Param{anyCollection}, Build: func(args []*pgschema.Type) (*Function, error) {
			c := args[0]
			return collectionFunction("collection_count", c, scalar(pgschema.Int), func(elems [][]byte) ([]byte, error) {
				n := len(elems)
				if c.Kind == pgschema.Map {
					n /= 2
				}
				return binary.BigEndian.AppendUint32(nil, uint32(n)), nil
			}), nil
		}},
		elementwise("collection_min", setOrList, extreme(false)),
		elementwise("collection_max", setOrList, extreme(true)),
		elementwise("collection_sum", numericList, func(elem *pgschema.Type) (*pgschema.Type, func() AggregateState) {
			return elem, func() AggregateState { return newSum(elem.Kind) }
		}),
		elementwise("collection_avg", numericList, func(elem *pgschema.Type) (*pgschema.Type, func() AggregateState) {
			return elem, func() AggregateState { return newAvg(elem.Kind) }
		}),
	}
}

// collectionFunction declares a function of one collection argument:
// null for null, else eval of its elements (a map's keys and values
// alternately).
func collectionFunction(name string, arg, ret *pgschema.Type, eval func([][]byte) ([]byte, error)) *Function {
	return pureFunction(name, ret, []*pgschema.Type{arg}, func(a [][]byte) ([]byte, error) {
		if a[0] == nil {
			return nil, nil
		}
		elems, err := pgschema.Elements(arg, a[0])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return eval(elems)
	})
}
