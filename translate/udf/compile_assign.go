package udf

// Assignments: =, the compound assignments (which cast their result back
// to the variable's type), ++ and --, to local variables and array
// elements.

// lvalue is a variable an assignment writes: a local or an array element.
type lvalue struct {
	t     *jtype
	local *local
	arr   func(*frame) val
	idx   func(*frame) val
}

// lvalueOf compiles the target of an assignment.
func (c *compiler) lvalueOf(e expr, compound bool) *lvalue {
	switch e := e.(type) {
	case *nameExpr:
		l := c.lookup(e.name)
		if l == nil {
			if e.name == "udfContext" {
				c.failAt(e.pos(), "The final field udfContext cannot be assigned")
			}
			c.name(e) // fails as a read of an unknown name does
		}
		if compound && !c.da.has(l.slot) {
			c.failAt(e.pos(), "The local variable %s may not have been initialized", e.name)
		}
		if l.final && (compound || c.da.has(l.slot)) {
			c.failAt(e.pos(), "The final local variable %s may already have been assigned", e.name)
		}
		return &lvalue{t: l.t, local: l}
	case *indexExpr:
		x := c.expr(e.x, nil)
		if x.t.elem == nil {
			c.failAt(e.pos(), "The type of the expression must be an array type but it resolved to %s", x.t)
		}
		return &lvalue{t: x.t.elem, arr: x.eval, idx: c.intIndex(e.i)}
	case *fieldExpr:
		if cls := c.qualifiedClass(e.x); cls != nil && cls.fields[e.name] != nil {
			c.failAt(e.pos(), "The final field %s.%s cannot be assigned", cls.name, e.name)
		}
		x := c.expr(e.x, nil)
		if x.t.elem != nil && e.name == "length" {
			c.failAt(e.pos(), "The final field array.length cannot be assigned")
		}
		c.field(e)
	}
	c.failAt(e.pos(), "The left-hand side of an assignment must be a variable")
	return nil
}

// assigned records an assignment to a local for definite assignment.
func (c *compiler) assigned(lv *lvalue) {
	if lv.local != nil {
		c.da.set(lv.local.slot)
	}
}

// access returns the loading and storing of an lvalue: prep evaluates
// the array and index once, then load and store use them.
func (lv *lvalue) access() (prep func(*frame) (*jarray, int), load func(*frame, *jarray, int) val, store func(*frame, *jarray, int, val)) {
	if lv.local != nil {
		slot := lv.local.slot
		return func(*frame) (*jarray, int) { return nil, 0 },
			func(fr *frame, _ *jarray, _ int) val { return fr.locals[slot] },
			func(fr *frame, _ *jarray, _ int, v val) { fr.locals[slot] = v }
	}
	av, iv := lv.arr, lv.idx
	return func(fr *frame) (*jarray, int) { return arrayAt(av(fr), iv(fr)) },
		func(_ *frame, a *jarray, i int) val { return a.vals[i] },
		func(_ *frame, a *jarray, i int, v val) { a.vals[i] = v }
}

// assign compiles an assignment expression.
func (c *compiler) assign(e *assignExpr) *cexpr {
	if e.op != "=" {
		return c.compound(e)
	}
	lv := c.lvalueOf(e.x, false)
	y := c.expr(e.y, lv.t)
	ev := c.assignConv(y, lv.t, e.y.pos())
	c.assigned(lv)
	if lv.local != nil {
		slot := lv.local.slot
		return &cexpr{t: lv.t, eval: func(fr *frame) val {
			v := ev(fr)
			fr.locals[slot] = v
			return v
		}}
	}
	av, iv := lv.arr, lv.idx
	return &cexpr{t: lv.t, eval: func(fr *frame) val {
		a, i, v := av(fr), iv(fr), ev(fr)
		arr, n := arrayAt(a, i)
		arr.vals[n] = v
		return v
	}}
}

// compound compiles x op= y: x = (T)(x op y), x evaluated once.
func (c *compiler) compound(e *assignExpr) *cexpr {
	lv := c.lvalueOf(e.x, true)
	y := c.expr(e.y, nil)
	op := e.op[:len(e.op)-1]
	prep, load, store := lv.access()
	c.assigned(lv)
	if op == "+" && lv.t.cls == clsString && lv.t.prim == pRef {
		if y.t.prim == pVoid {
			c.undefinedOp(e.pos(), op, lv.t, y.t)
		}
		ys := c.stringer(y)
		return &cexpr{t: lv.t, eval: func(fr *frame) val {
			a, i := prep(fr)
			old := load(fr, a, i)
			s := "null"
			if old.r != nil {
				s = old.str()
			}
			s += ys(fr)
			fr.alloc(len(s))
			v := strval(s)
			store(fr, a, i, v)
			return v
		}}
	}
	var t, xt *jtype
	if booleanOf(lv.t) && booleanOf(y.t) && (op == "&" || op == "|" || op == "^") {
		t, xt = tBoolean, tBoolean
	} else {
		nx, ny := numericOf(lv.t), numericOf(y.t)
		if nx == nil || ny == nil {
			c.undefinedOp(e.pos(), op, lv.t, y.t)
		}
		xt = nx
		t = promote(nx, ny)
		if op == "<<" || op == ">>" || op == ">>>" {
			if !(nx.isIntegral() || nx.prim == pChar) || !(ny.isIntegral() || ny.prim == pChar) {
				c.undefinedOp(e.pos(), op, lv.t, y.t)
			}
			t = unaryPromote(nx)
		}
	}
	f := arith(op, t.prim)
	if f == nil {
		c.undefinedOp(e.pos(), op, lv.t, y.t)
	}
	yt := t
	if op == "<<" || op == ">>" || op == ">>>" {
		yt = unaryPromote(numericOf(y.t))
	}
	ye := c.convert(y, yt, false)
	toT := converter(lv.t, t, true)
	back := converter(t, xt, true)
	box := converter(xt, lv.t, false)
	return &cexpr{t: lv.t, eval: func(fr *frame) val {
		a, i := prep(fr)
		x := load(fr, a, i)
		if toT != nil {
			x = toT(fr, x)
		}
		v := f(x, ye(fr))
		if back != nil {
			v = back(fr, v)
		}
		if box != nil {
			v = box(fr, v)
		}
		store(fr, a, i, v)
		return v
	}}
}

// incDec compiles ++ and --, prefix or postfix.
func (c *compiler) incDec(x expr, op string, postfix bool, line int) *cexpr {
	lv := c.lvalueOf(x, true)
	n := numericOf(lv.t)
	if n == nil {
		c.failAt(line, "Invalid argument to operation %s, variable expected", op)
	}
	prep, load, store := lv.access()
	c.assigned(lv)
	t := unaryPromote(n)
	f := arith(op[:1], t.prim)
	one := constVal(int64(1), t)
	toT := converter(lv.t, t, true)
	back := converter(t, lv.t, true)
	if u := unboxed(lv.t); u != nil {
		unbox, rebox := converter(lv.t, u, false), converter(u, lv.t, false)
		narrow := converter(t, u, true)
		back = func(fr *frame, v val) val {
			if narrow != nil {
				v = narrow(fr, v)
			}
			return rebox(fr, v)
		}
		widen := converter(u, t, false)
		toT = func(fr *frame, v val) val {
			v = unbox(fr, v)
			if widen != nil {
				v = widen(fr, v)
			}
			return v
		}
	}
	return &cexpr{t: lv.t, eval: func(fr *frame) val {
		a, i := prep(fr)
		old := load(fr, a, i)
		x := old
		if toT != nil {
			x = toT(fr, x)
		}
		v := f(x, one)
		if back != nil {
			v = back(fr, v)
		}
		store(fr, a, i, v)
		if postfix {
			return old
		}
		return v
	}}
}
