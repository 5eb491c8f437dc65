package udf

import (
	"math"
	"strconv"
	"strings"
	"sync"

	"github.com/cqlpg/cqlpg/pgschema"
)

// cexpr is a compiled expression: its static type, its evaluation, and
// its value when it is a compile-time constant (int64 for the integral
// types and char, float64 for float and double, bool, string).
type cexpr struct {
	t        *jtype
	eval     func(fr *frame) val
	constant any
	local    *local // the variable a simple name denotes
}

// expr compiles an expression; want is the type its context expects, for
// the diamond and array initializers, or nil.
func (c *compiler) expr(e expr, want *jtype) *cexpr {
	switch e := e.(type) {
	case *litExpr:
		return c.literal(e)
	case *nameExpr:
		return c.name(e)
	case *fieldExpr:
		return c.field(e)
	case *callExpr:
		return c.call(e)
	case *newExpr:
		return c.newObject(e, want)
	case *newArrayExpr:
		return c.newArray(e, want)
	case *indexExpr:
		return c.index(e)
	case *unaryExpr:
		return c.unary(e)
	case *postfixExpr:
		return c.incDec(e.x, e.op, true, e.pos())
	case *binaryExpr:
		return c.binary(e)
	case *assignExpr:
		return c.assign(e)
	case *condExpr:
		return c.conditional(e)
	case *castExpr:
		return c.cast(e)
	case *instanceofExpr:
		return c.instanceof(e)
	case *classLit:
		t := boxOf(c.resolveType(e.typ))
		if t.prim == pVoid {
			t = classType(clsObject)
		}
		return &cexpr{t: classType(clsClass, t), eval: func(*frame) val { return refval(t) }}
	}
	c.failAt(e.pos(), "Syntax error")
	return nil
}

// constExpr makes the compiled form of a constant of type t.
func constExpr(t *jtype, k any) *cexpr {
	v := constVal(k, t)
	return &cexpr{t: t, constant: k, eval: func(*frame) val { return v }}
}

// constVal is the value of constant k as type t.
func constVal(k any, t *jtype) val {
	switch k := k.(type) {
	case int64:
		switch t.prim {
		case pLong:
			return jval(k)
		case pFloat:
			return fval(float32(k))
		case pDouble:
			return dval(float64(k))
		}
		return narrowInt(t.prim, k)
	case float64:
		if t.prim == pFloat {
			return fval(float32(k))
		}
		return dval(k)
	case bool:
		return zval(k)
	case string:
		return strval(intern(k))
	}
	return null
}

// castConstant converts constant k to type t's representation.
func castConstant(k any, t *jtype) any {
	switch k := k.(type) {
	case int64:
		switch t.prim {
		case pFloat:
			return float64(float32(k))
		case pDouble:
			return float64(k)
		case pLong:
			return k
		}
		return int64(narrowInt(t.prim, k).n) & maskOf(t.prim)
	case float64:
		switch t.prim {
		case pFloat:
			return float64(float32(k))
		case pDouble:
			return k
		case pLong:
			return pgschema.JavaDoubleToLong(k)
		}
		return int64(narrowInt(t.prim, int64(pgschema.JavaDoubleToInt(k))).n) & maskOf(t.prim)
	}
	return k
}

// maskOf keeps a narrowed constant's sign right: char is unsigned.
func maskOf(p prim) int64 {
	if p == pChar {
		return 0xffff
	}
	return -1
}

// literal compiles a literal.
func (c *compiler) literal(e *litExpr) *cexpr {
	t := e.tok
	switch t.kind {
	case kInt, kLong:
		return c.intLiteral(e)
	case kFloat, kDouble:
		text := strings.ReplaceAll(t.text, "_", "")
		if n := len(text); text[n-1]|0x20 == 'f' || text[n-1]|0x20 == 'd' {
			text = text[:n-1]
		}
		bits := 64
		typ := tDouble
		if t.kind == kFloat {
			bits, typ = 32, tFloat
		}
		f, err := strconv.ParseFloat(text, bits)
		if err != nil || f == 0 && strings.Trim(mantissa(text), "0.xX") != "" {
			c.failAt(e.pos(), "The literal %s of type %s is out of range ", t.text, typ)
		}
		return constExpr(typ, f)
	case kChar:
		return constExpr(tChar, int64(utf16Units(t.text)[0]))
	case kString:
		return constExpr(typeString, t.text)
	}
	switch t.text {
	case "true":
		return constExpr(tBoolean, true)
	case "false":
		return constExpr(tBoolean, false)
	}
	return &cexpr{t: tNull, eval: func(*frame) val { return null }}
}

// mantissa is a float literal's digits before its exponent.
func mantissa(s string) string {
	if strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X") {
		if i := strings.IndexAny(s, "pP"); i >= 0 {
			return s[2:i]
		}
		return s[2:]
	}
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		return s[:i]
	}
	return s
}

// intLiteral compiles an int or long literal: decimal, hexadecimal, octal
// or binary; a decimal one may reach 2^31 (2^63) only after a minus.
func (c *compiler) intLiteral(e *litExpr) *cexpr {
	text := strings.ReplaceAll(e.tok.text, "_", "")
	long := e.tok.kind == kLong
	if long {
		text = text[:len(text)-1]
	}
	bits := 32
	typ := tInt
	if long {
		bits, typ = 64, tLong
	}
	base, digits := 10, text
	switch {
	case len(text) > 2 && (text[:2] == "0x" || text[:2] == "0X"):
		base, digits = 16, text[2:]
	case len(text) > 2 && (text[:2] == "0b" || text[:2] == "0B"):
		base, digits = 2, text[2:]
	case len(text) > 1 && text[0] == '0':
		base, digits = 8, text[1:]
	}
	u, err := strconv.ParseUint(digits, base, bits)
	if err != nil {
		c.failAt(e.pos(), "The literal %s of type %s is out of range ", e.tok.text, typ)
	}
	var n int64
	if base == 10 {
		limit := uint64(1) << (bits - 1)
		if u > limit || u == limit && !e.neg {
			c.failAt(e.pos(), "The literal %s of type %s is out of range ", e.tok.text, typ)
		}
		n = int64(u)
		if u == limit {
			n = math.MinInt64 >> (64 - bits)
		} else if e.neg {
			n = -n
		}
	} else {
		if bits == 32 {
			n = int64(int32(uint32(u)))
		} else {
			n = int64(u)
		}
		if e.neg {
			if bits == 32 {
				n = int64(-int32(n))
			} else {
				n = -n
			}
		}
	}
	return constExpr(typ, n)
}

// internTable holds the string constants, which are one object each in
// Java, so that == finds them identical as Java does.
var (
	internTable = map[string]string{}
	internMu    sync.Mutex
)

func intern(s string) string {
	internMu.Lock()
	defer internMu.Unlock()
	if i, ok := internTable[s]; ok {
		return i
	}
	s = strings.Clone(s) // its own bytes, which no run-time string shares
	if len(internTable) < 1<<16 {
		internTable[s] = s
	}
	return s
}

// name compiles a simple name: a local variable, or udfContext, the field
// Cassandra's generated class gives bodies.
func (c *compiler) name(e *nameExpr) *cexpr {
	if l := c.lookup(e.name); l != nil {
		if !c.da.has(l.slot) {
			c.failAt(e.pos(), "The local variable %s may not have been initialized", e.name)
		}
		if l.constant != nil {
			x := constExpr(l.t, l.constant)
			x.local = l
			return x
		}
		slot := l.slot
		return &cexpr{t: l.t, local: l, eval: func(fr *frame) val { return fr.locals[slot] }}
	}
	if e.name == "udfContext" {
		return &cexpr{t: classType(clsUDFContext), eval: func(*frame) val { return refval(udfContext{}) }}
	}
	c.failAt(e.pos(), "%s cannot be resolved to a variable", e.name)
	return nil
}

// qualifiedClass returns the class a name or qualified name denotes when
// it is not a variable, or nil.
func (c *compiler) qualifiedClass(e expr) *jclass {
	name := dottedName(e)
	if name == "" {
		return nil
	}
	first := name
	if i := strings.IndexByte(name, '.'); i >= 0 {
		first = name[:i]
	}
	if c.lookup(first) != nil || first == "udfContext" {
		return nil
	}
	cls := sourceNames[name]
	if cls != nil && cls.refused {
		c.failAt(e.pos(), "%s is not supported by cqlpg user functions", cls.name)
	}
	return cls
}

// checkResolves fails on a qualified name whose start is neither a
// variable nor a class: an unknown package or class (java.io.File).
func (c *compiler) checkResolves(e expr) {
	name := dottedName(e)
	if name == "" {
		return
	}
	parts := strings.Split(name, ".")
	if c.lookup(parts[0]) != nil || parts[0] == "udfContext" {
		return
	}
	for i := len(parts); i > 0; i-- {
		if sourceNames[strings.Join(parts[:i], ".")] != nil {
			return
		}
	}
	switch len(parts) {
	case 1:
		return // a simple name fails as one
	case 2:
		c.failAt(e.pos(), "%s cannot be resolved", name)
	}
	// The last part would be a member of the class the rest names.
	c.failAt(e.pos(), "%s cannot be resolved", strings.Join(parts[:len(parts)-1], "."))
}

// dottedName returns a.b.c for a name or chain of field accesses, or "".
func dottedName(e expr) string {
	switch e := e.(type) {
	case *nameExpr:
		return e.name
	case *fieldExpr:
		if x := dottedName(e.x); x != "" {
			return x + "." + e.name
		}
	}
	return ""
}

// field compiles x.name: a static field of a class, or an array's length.
func (c *compiler) field(e *fieldExpr) *cexpr {
	if cls := c.qualifiedClass(e.x); cls != nil {
		f := cls.fields[e.name]
		if cls == clsSystem {
			c.failAt(e.pos(), "System.%s is not supported by cqlpg user functions", e.name)
		}
		if f == nil {
			if sourceNames[dottedName(e)] != nil {
				c.failAt(e.pos(), "%s cannot be resolved to a variable", dottedName(e))
			}
			c.failAt(e.pos(), "%s cannot be resolved or is not a field", e.name)
		}
		if f.constant != nil {
			return constExpr(f.t, f.constant)
		}
		v := f.v
		return &cexpr{t: f.t, eval: func(*frame) val { return v }}
	}
	c.checkResolves(e.x)
	x := c.expr(e.x, nil)
	if x.t.elem != nil && e.name == "length" {
		ev := x.eval
		return &cexpr{t: tInt, eval: func(fr *frame) val {
			a := ev(fr)
			if a.r == nil {
				npe()
			}
			return ival(int32(len(a.r.(*jarray).vals)))
		}}
	}
	if x.t.isPrim() {
		c.failAt(e.pos(), "Cannot reference a field of the primitive type %s", x.t)
	}
	c.failAt(e.pos(), "%s cannot be resolved or is not a field", e.name)
	return nil
}

// resolveType resolves a type as written.
func (c *compiler) resolveType(r *typeRef) *jtype {
	var t *jtype
	if p, ok := primTypes[r.name]; ok {
		if r.args != nil {
			c.failAt(r.pos(), "Syntax error on token \"%s\", Identifier expected", r.name)
		}
		t = p
	} else {
		cls := sourceNames[r.name]
		if cls == nil {
			c.failAt(r.pos(), "%s cannot be resolved to a type", r.name)
		}
		if cls.refused {
			c.failAt(r.pos(), "%s is not supported by cqlpg user functions", cls.name)
		}
		t = &jtype{cls: cls}
		if len(r.args) > 0 {
			if len(r.args) != len(cls.params) {
				c.failAt(r.pos(), "Incorrect number of arguments for type %s; it cannot be parameterized with arguments <%s>", genericName(cls), typeRefList(r.args))
			}
			for _, a := range r.args {
				at := c.resolveType(a)
				if at.isPrim() {
					c.failAt(a.pos(), "Syntax error, insert \"Dimensions\" to complete ReferenceType")
				}
				if a.wild {
					at = wildObject
				}
				t.args = append(t.args, at)
			}
		}
	}
	for i := 0; i < r.dims; i++ {
		t = arrayOf(t)
	}
	return t
}

// genericName is a class with its type parameters: List<E>.
func genericName(c *jclass) string {
	if len(c.params) == 0 {
		return c.name
	}
	return c.name + "<" + strings.Join(c.params, ",") + ">"
}

func typeRefList(rs []*typeRef) string {
	names := make([]string, len(rs))
	for i, r := range rs {
		names[i] = r.name
	}
	return strings.Join(names, ",")
}

// assignConv checks that x may be assigned to type t and returns its
// evaluation converted to t.
func (c *compiler) assignConv(x *cexpr, t *jtype, line int) func(*frame) val {
	if !assignable(x.t, t, x.constant) {
		c.failAt(line, "Type mismatch: cannot convert from %s to %s", x.t, t)
	}
	return c.convert(x, t, false)
}

// convert returns x's evaluation converted to t, folding constants.
func (c *compiler) convert(x *cexpr, t *jtype, cast bool) func(*frame) val {
	if x.constant != nil && t.isPrim() {
		v := constVal(castConstant(x.constant, t), t)
		return func(*frame) val { return v }
	}
	if u := unboxed(t); x.constant != nil && x.t.isPrim() && u != nil {
		// A constant boxed to its target's class, after narrowing
		// (Short s = 1).
		v := constVal(castConstant(x.constant, u), u)
		v.r = t.cls
		return func(*frame) val { return v }
	}
	conv := converter(x.t, t, cast)
	if conv == nil {
		return x.eval
	}
	ev := x.eval
	return func(fr *frame) val { return conv(fr, ev(fr)) }
}
