package translate

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/sharding"
	"github.com/cqlpg/cqlpg/translate/cqlfunc"
)

// Expr computes one result column of a SELECT from a row's slots.
type Expr interface {
	// Type is the result's CQL type.
	Type() *pgschema.Type
}

// SlotRef is a slot's value as it is.
type SlotRef struct {
	Slot int
	T    *pgschema.Type
}

// TokenOf is the Murmur3 token of slots hashed as a partition key.
type TokenOf struct{ Slots []int }

// ConstExpr is a constant or bind marker used as a selector.
type ConstExpr struct {
	Value Value
	T     *pgschema.Type
}

// FieldRef is one field of a UDT value.
type FieldRef struct {
	Arg   Expr
	Index int
	T     *pgschema.Type
}

func (e *SlotRef) Type() *pgschema.Type   { return e.T }
func (e *TokenOf) Type() *pgschema.Type   { return pgschema.Scalar(pgschema.Bigint) }
func (e *ConstExpr) Type() *pgschema.Type { return e.T }
func (e *FieldRef) Type() *pgschema.Type  { return e.T }

// EvalContext is what evaluating a selection may depend on: the function
// library's context (the request's time) and, while a group's outputs are
// computed, its aggregates' results.
type EvalContext struct {
	cqlfunc.EvalContext
	aggregates map[*AggExpr][]byte
}

// functions returns the function library's part of the context, nil
// when there is none.
func (c *EvalContext) functions() *cqlfunc.EvalContext {
	if c == nil {
		return nil
	}
	return &c.EvalContext
}

// NewEvalContext returns the context of a request arrived at now.
func NewEvalContext(now time.Time) EvalContext {
	return EvalContext{EvalContext: cqlfunc.EvalContext{Now: now}}
}

// Eval computes e for a row whose slot values, in CQL form, are slots.
// It appends to dst and returns the value, nil for null.
func Eval(e Expr, slots [][]byte, b *Bound, ctx *EvalContext, dst []byte) ([]byte, error) {
	switch x := e.(type) {
	case *SlotRef:
		return slots[x.Slot], nil
	case *TokenOf:
		var parts [8][]byte
		key := parts[:0]
		for _, s := range x.Slots {
			key = append(key, slots[s])
		}
		return binary.BigEndian.AppendUint64(dst, uint64(sharding.KeyToken(key))), nil
	case *ConstExpr:
		v, unset := b.Get(x.Value)
		if unset {
			return nil, nil
		}
		return v, nil
	case *FieldRef:
		v, err := Eval(x.Arg, slots, b, ctx, dst)
		if err != nil || v == nil {
			return nil, err
		}
		fields, err := pgschema.Elements(x.Arg.Type(), v)
		if err != nil {
			return nil, err
		}
		if x.Index >= len(fields) {
			return nil, nil // a field added after the value was written
		}
		return fields[x.Index], nil
	}
	return evalFunction(e, slots, b, ctx, dst)
}

// IsPlainSlot reports whether e is a slot's value as it is, which needs no
// evaluation.
func IsPlainSlot(e Expr) (int, bool) {
	if s, ok := e.(*SlotRef); ok {
		return s.Slot, true
	}
	return 0, false
}

func unknownExpr(e Expr) error { return fmt.Errorf("cannot evaluate selector %T", e) }
