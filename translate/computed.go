package translate

import (
	"encoding/binary"
	"sort"

	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/sharding"
	"github.com/cqlpg/cqlpg/translate/cqlfunc"
)

// compute registers a value computed at execution and returns it.
func (p *planner) compute(c Computation) Value {
	p.computed = append(p.computed, c)
	return Value{Marker: len(p.markers) + len(p.computed) - 1}
}

// callValue is a function applied to values, such as now() or
// toTimestamp(?).
type callValue struct {
	fn   *cqlfunc.Function
	args []Value
}

func (c *callValue) Compute(b *Bound, ctx *EvalContext) ([]byte, bool, error) {
	args := make([][]byte, len(c.args))
	for i, a := range c.args {
		var unset bool
		if args[i], unset = b.Get(a); unset {
			return nil, false, invalidf("Invalid unset value for argument in call to function %s", c.fn.Name)
		}
	}
	v, err := c.fn.Eval(ctx.functions(), args)
	return v, false, err
}

// tokenValue is token(...) of values typed as the partition key.
type tokenValue struct{ args []Value }

func (c *tokenValue) Compute(b *Bound, _ *EvalContext) ([]byte, bool, error) {
	parts := make([][]byte, len(c.args))
	for i, a := range c.args {
		parts[i], _ = b.Get(a)
	}
	return binary.BigEndian.AppendUint64(nil, uint64(sharding.KeyToken(parts))), false, nil
}

// compositeValue assembles a collection, tuple or UDT literal whose
// elements are not all constants.
type compositeValue struct {
	t      *pgschema.Type
	elems  []Value
	values []Value // a map's values
}

func (c *compositeValue) Compute(b *Bound, _ *EvalContext) ([]byte, bool, error) {
	get := func(vs []Value) ([][]byte, error) {
		out := make([][]byte, len(vs))
		for i, v := range vs {
			data, unset := b.Get(v)
			if unset {
				return nil, invalidf("Invalid unset value in a collection or tuple")
			}
			if data == nil && c.t.IsCollection() {
				return nil, invalidf("null is not supported inside collections")
			}
			out[i] = data
		}
		return out, nil
	}
	elems, err := get(c.elems)
	if err != nil {
		return nil, false, err
	}
	switch c.t.Kind {
	case pgschema.Map:
		values, err := get(c.values)
		if err != nil {
			return nil, false, err
		}
		keys, vals := sortedEntries(c.t.Elem[0], elems, values)
		return pgschema.SerializeMap(keys, vals), false, nil
	case pgschema.Set:
		keys, _ := sortedEntries(c.t.Elem[0], elems, nil)
		return pgschema.SerializeCollection(keys), false, nil
	case pgschema.Tuple, pgschema.UDT:
		return pgschema.SerializeTuple(elems), false, nil
	case pgschema.Vector:
		var out []byte
		for _, e := range elems {
			out = append(out, e...)
		}
		return out, false, nil
	}
	return pgschema.SerializeCollection(elems), false, nil
}

// sortedEntries sorts set elements or map keys (with their values) by the
// key type's comparator, keeping the last of equal keys, as Cassandra's
// sorted collections do.
func sortedEntries(t *pgschema.Type, keys, values [][]byte) ([][]byte, [][]byte) {
	idx := make([]int, len(keys))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return pgschema.Compare(t, keys[idx[a]], keys[idx[b]]) < 0 })
	var outK, outV [][]byte
	for n, i := range idx {
		if n+1 < len(idx) && pgschema.Compare(t, keys[i], keys[idx[n+1]]) == 0 {
			continue
		}
		outK = append(outK, keys[i])
		if values != nil {
			outV = append(outV, values[i])
		}
	}
	return outK, outV
}

// setValue is a bound value that may not be unset: a list index or a map
// key, which Cassandra refuses unset with msg.
type setValue struct {
	v   Value
	msg string
}

func (c *setValue) Compute(b *Bound, _ *EvalContext) ([]byte, bool, error) {
	v, unset := b.Get(c.v)
	if unset {
		return nil, false, invalidf("%s", c.msg)
	}
	return v, false, nil
}

// mustBeSet returns v, or for a marker a value refusing it unset with msg.
func (p *planner) mustBeSet(v Value, msg string) Value {
	if v.Marker < 0 {
		return v
	}
	return p.compute(&setValue{v: v, msg: msg})
}
