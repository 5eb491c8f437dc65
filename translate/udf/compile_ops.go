package udf

// Operators: Java's numeric promotion, string concatenation, the
// comparisons, logical and conditional operators, assignments, casts.

// promote is binary numeric promotion of two numeric types.
func promote(a, b *jtype) *jtype {
	switch {
	case a.prim == pDouble || b.prim == pDouble:
		return tDouble
	case a.prim == pFloat || b.prim == pFloat:
		return tFloat
	case a.prim == pLong || b.prim == pLong:
		return tLong
	}
	return tInt
}

// unaryPromote is unary numeric promotion: byte, short and char become int.
func unaryPromote(a *jtype) *jtype {
	if a.prim == pByte || a.prim == pShort || a.prim == pChar {
		return tInt
	}
	return a
}

func (c *compiler) undefinedOp(line int, op string, ts ...*jtype) {
	if len(ts) == 1 {
		c.failAt(line, "The operator %s is undefined for the argument type(s) %s", op, ts[0])
	}
	c.failAt(line, "The operator %s is undefined for the argument type(s) %s, %s", op, ts[0], ts[1])
}

// fold evaluates an operator on constants at compile time; an operation
// that throws (a division by zero) is left for run time.
func fold(t *jtype, f func(*frame) val) (k any, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return valConstant(f(nil), t), true
}

// valConstant is a primitive or String value as a constant.
func valConstant(v val, t *jtype) any {
	switch t.prim {
	case pBoolean:
		return v.z()
	case pFloat, pDouble:
		return v.d()
	case pChar:
		return int64(v.c())
	case pRef:
		return v.r
	}
	return v.j()
}

// constant wraps a compiled expression as a constant when all its
// operands are constants and it folds.
func constantOf(x *cexpr, operands ...*cexpr) *cexpr {
	for _, o := range operands {
		if o.constant == nil {
			return x
		}
	}
	if !(x.t.isPrim() || x.t.cls == clsString) {
		return x
	}
	if k, ok := fold(x.t, x.eval); ok {
		if s, isStr := k.(string); isStr {
			k = intern(s)
		}
		return constExpr(x.t, k)
	}
	return x
}

// unary compiles a prefix operator.
func (c *compiler) unary(e *unaryExpr) *cexpr {
	if e.op == "++" || e.op == "--" {
		return c.incDec(e.x, e.op, false, e.pos())
	}
	x := c.expr(e.x, nil)
	if e.op == "!" {
		if !booleanOf(x.t) {
			c.undefinedOp(e.pos(), "!", x.t)
		}
		ev := c.convert(x, tBoolean, false)
		return constantOf(&cexpr{t: tBoolean, eval: func(fr *frame) val { return zval(!ev(fr).z()) }}, x)
	}
	n := numericOf(x.t)
	if n == nil || e.op == "~" && !n.isIntegral() && n.prim != pChar {
		c.undefinedOp(e.pos(), e.op, x.t)
	}
	t := unaryPromote(n)
	ev := c.convert(x, t, false)
	var f func(v val) val
	switch {
	case e.op == "+":
		f = func(v val) val { return v }
	case e.op == "~" && t.prim == pInt:
		f = func(v val) val { return ival(^v.i()) }
	case e.op == "~":
		f = func(v val) val { return jval(^v.j()) }
	case t.prim == pInt:
		f = func(v val) val { return ival(-v.i()) }
	case t.prim == pLong:
		f = func(v val) val { return jval(-v.j()) }
	case t.prim == pFloat:
		f = func(v val) val { return fval(-v.f()) }
	default:
		f = func(v val) val { return dval(-v.d()) }
	}
	return constantOf(&cexpr{t: t, eval: func(fr *frame) val { return f(ev(fr)) }}, x)
}

// binary compiles a binary operator.
func (c *compiler) binary(e *binaryExpr) *cexpr {
	if e.op == "&&" || e.op == "||" {
		return c.logical(e)
	}
	x := c.expr(e.x, nil)
	y := c.expr(e.y, nil)
	if x.t.prim == pVoid || y.t.prim == pVoid {
		c.undefinedOp(e.pos(), e.op, x.t, y.t)
	}
	if e.op == "+" && (x.t.cls == clsString && x.t.prim == pRef || y.t.cls == clsString && y.t.prim == pRef) {
		return c.concat(x, y)
	}
	switch e.op {
	case "==", "!=":
		return c.equality(e, x, y)
	case "<", ">", "<=", ">=":
		nx, ny := numericOf(x.t), numericOf(y.t)
		if nx == nil || ny == nil {
			c.undefinedOp(e.pos(), e.op, x.t, y.t)
		}
		t := promote(nx, ny)
		xe, ye, f := c.convert(x, t, false), c.convert(y, t, false), compare(e.op, t.prim)
		return constantOf(&cexpr{t: tBoolean, eval: func(fr *frame) val { return f(xe(fr), ye(fr)) }}, x, y)
	case "<<", ">>", ">>>":
		nx, ny := numericOf(x.t), numericOf(y.t)
		if nx == nil || ny == nil || !(nx.isIntegral() || nx.prim == pChar) || !(ny.isIntegral() || ny.prim == pChar) {
			c.undefinedOp(e.pos(), e.op, x.t, y.t)
		}
		t := unaryPromote(nx)
		xe, ye, f := c.convert(x, t, false), c.convert(y, unaryPromote(ny), false), arith(e.op, t.prim)
		return constantOf(&cexpr{t: t, eval: func(fr *frame) val { return f(xe(fr), ye(fr)) }}, x, y)
	}
	var t *jtype
	if booleanOf(x.t) && booleanOf(y.t) && (e.op == "&" || e.op == "|" || e.op == "^") {
		t = tBoolean
	} else {
		nx, ny := numericOf(x.t), numericOf(y.t)
		if nx == nil || ny == nil {
			c.undefinedOp(e.pos(), e.op, x.t, y.t)
		}
		t = promote(nx, ny)
	}
	f := arith(e.op, t.prim)
	if f == nil {
		c.undefinedOp(e.pos(), e.op, x.t, y.t)
	}
	xe, ye := c.convert(x, t, false), c.convert(y, t, false)
	return constantOf(&cexpr{t: t, eval: func(fr *frame) val { return f(xe(fr), ye(fr)) }}, x, y)
}

// logical compiles && and ||, which evaluate their right operand only
// when needed; its assignments count on neither path afterwards.
func (c *compiler) logical(e *binaryExpr) *cexpr {
	x := c.expr(e.x, nil)
	before := c.da.clone()
	y := c.expr(e.y, nil)
	c.da = before
	if !booleanOf(x.t) || !booleanOf(y.t) {
		c.undefinedOp(e.pos(), e.op, x.t, y.t)
	}
	xe, ye := c.convert(x, tBoolean, false), c.convert(y, tBoolean, false)
	and := e.op == "&&"
	return constantOf(&cexpr{t: tBoolean, eval: func(fr *frame) val {
		if xe(fr).z() != and {
			return zval(!and)
		}
		return ye(fr)
	}}, x, y)
}

// equality compiles == and !=: numeric or boolean when an operand is
// primitive, else reference comparison.
func (c *compiler) equality(e *binaryExpr, x, y *cexpr) *cexpr {
	var f binop
	var t *jtype
	switch {
	case (x.t.isPrim() || y.t.isPrim()) && numericOf(x.t) != nil && numericOf(y.t) != nil:
		t = promote(numericOf(x.t), numericOf(y.t))
		f = compare(e.op, t.prim)
	case (x.t.isPrim() || y.t.isPrim()) && booleanOf(x.t) && booleanOf(y.t):
		t = tBoolean
		f = compare(e.op, pBoolean)
	case x.t.isRef() && y.t.isRef():
		if !castable(x.t, y.t) && !castable(y.t, x.t) {
			c.failAt(e.pos(), "Incompatible operand types %s and %s", x.t, y.t)
		}
		xe, ye := x.eval, y.eval
		ne := e.op == "!="
		return constantOf(&cexpr{t: tBoolean, eval: func(fr *frame) val {
			return zval(refEquals(xe(fr), ye(fr)) != ne)
		}}, x, y)
	default:
		c.failAt(e.pos(), "Incompatible operand types %s and %s", x.t, y.t)
	}
	xe, ye := c.convert(x, t, false), c.convert(y, t, false)
	return constantOf(&cexpr{t: tBoolean, eval: func(fr *frame) val { return f(xe(fr), ye(fr)) }}, x, y)
}

// stringer returns how an operand of string concatenation prints.
func (c *compiler) stringer(x *cexpr) func(*frame) string {
	ev := x.eval
	switch {
	case x.t.prim == pNull:
		return func(*frame) string { return "null" }
	case x.t.isPrim():
		p := x.t.prim
		return func(fr *frame) string { return primString(p, ev(fr)) }
	case x.t.cls == clsString:
		return func(fr *frame) string {
			v := ev(fr)
			if v.r == nil {
				return "null"
			}
			return v.str()
		}
	}
	return func(fr *frame) string { return toJavaString(fr, ev(fr)) }
}

// concat compiles string concatenation.
func (c *compiler) concat(x, y *cexpr) *cexpr {
	xs, ys := c.stringer(x), c.stringer(y)
	return constantOf(&cexpr{t: typeString, eval: func(fr *frame) val {
		a := xs(fr)
		b := ys(fr)
		if fr != nil {
			fr.alloc(len(a) + len(b))
		}
		return strval(a + b)
	}}, x, y)
}

// conditional compiles c ? x : y with Java's rules for its type.
func (c *compiler) conditional(e *condExpr) *cexpr {
	cond := c.condition(e.c)
	before := c.da.clone()
	x := c.expr(e.x, nil)
	c.da = before.clone()
	y := c.expr(e.y, nil)
	c.da = before
	var t *jtype
	nx, ny := numericOf(x.t), numericOf(y.t)
	switch {
	case same(x.t, y.t) && x.t.prim != pNull:
		t = x.t
	case booleanOf(x.t) && booleanOf(y.t):
		t = tBoolean
	case nx != nil && ny != nil:
		t = promote(nx, ny)
		switch {
		case nx.prim == ny.prim:
			t = nx
		case x.constant != nil && x.t.prim == pInt && assignable(x.t, ny, x.constant) && ny.prim != pInt:
			t = ny
		case y.constant != nil && y.t.prim == pInt && assignable(y.t, nx, y.constant) && nx.prim != pInt:
			t = nx
		}
	case x.t.prim == pNull && y.t.prim == pNull:
		t = tNull
	case x.t.prim == pNull:
		t = boxOf(y.t)
	case y.t.prim == pNull:
		t = boxOf(x.t)
	default:
		bx, by := boxOf(x.t), boxOf(y.t)
		switch {
		case x.t.prim == pVoid || y.t.prim == pVoid:
			c.failAt(e.pos(), "Type mismatch: cannot convert from void to Object")
		case isSubtype(bx, by):
			t = by
		case isSubtype(by, bx):
			t = bx
		default:
			t = typeObject
		}
	}
	ce := cond.eval
	xe, ye := c.convert(x, t, false), c.convert(y, t, false)
	out := &cexpr{t: t, eval: func(fr *frame) val {
		if ce(fr).z() {
			return xe(fr)
		}
		return ye(fr)
	}}
	if cond.constant != nil && x.constant != nil && y.constant != nil {
		return constantOf(out, cond, x, y)
	}
	return out
}

// cast compiles (T) x.
func (c *compiler) cast(e *castExpr) *cexpr {
	t := c.resolveType(e.typ)
	x := c.expr(e.x, t)
	if x.t.prim == pVoid || t.prim == pVoid || !castable(x.t, t) {
		c.failAt(e.pos(), "Cannot cast from %s to %s", x.t, t)
	}
	out := &cexpr{t: t, eval: c.convert(x, t, true)}
	if x.constant != nil && (t.isPrim() || t.cls == clsString) {
		return constExpr(t, castConstant(x.constant, t))
	}
	return out
}

// instanceof compiles x instanceof T.
func (c *compiler) instanceof(e *instanceofExpr) *cexpr {
	x := c.expr(e.x, nil)
	t := c.resolveType(e.typ)
	if x.t.isPrim() || t.isPrim() {
		c.failAt(e.pos(), "Incompatible conditional operand types %s and %s", x.t, t)
	}
	if !castable(x.t, t) {
		c.failAt(e.pos(), "Incompatible conditional operand types %s and %s", x.t, t)
	}
	ev := x.eval
	return &cexpr{t: tBoolean, eval: func(fr *frame) val {
		v := ev(fr)
		return zval(v.r != nil && instanceOf(v, t))
	}}
}
