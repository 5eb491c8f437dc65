package udf

// The statements with more machinery: enhanced for, switch, throw and
// try.

func (c *compiler) foreachStmt(s *foreachStmt) (exec, bool) {
	x := c.expr(s.x, nil)
	var elem *jtype
	switch {
	case x.t.elem != nil:
		elem = x.t.elem
	case x.t.isRef() && x.t.prim != pNull && asSuper(x.t, clsIterable) != nil:
		it := asSuper(x.t, clsIterable)
		elem = typeObject
		if len(it.args) == 1 {
			elem = it.args[0]
		}
	default:
		c.failAt(s.x.pos(), "Can only iterate over an array or an instance of java.lang.Iterable")
	}
	c.push()
	defer c.pop()
	t := elem
	if s.typ != nil {
		t = c.resolveType(s.typ)
	}
	if !assignable(elem, t, nil) {
		c.failAt(s.pos(), "Type mismatch: cannot convert from element type %s to %s", elem, t)
	}
	conv := converter(elem, t, false)
	l := c.declare(s.pos(), s.name, t, s.final)
	before := c.da.clone()
	c.da.set(l.slot)
	body, tgt, _ := c.loop(s.body)
	c.da = meet(before, tgt.breaks)
	slot, src := l.slot, x.eval
	each := func(fr *frame, v val) (flow, bool) {
		fr.step()
		if conv != nil {
			v = conv(fr, v)
		}
		fr.locals[slot] = v
		switch body(fr) {
		case fBreak:
			return fNormal, false
		case fReturn:
			return fReturn, false
		}
		return fNormal, true
	}
	return func(fr *frame) flow {
		return forEach(fr, src(fr), each)
	}, true
}

// forEach runs each on the elements of an array or collection in Java's
// iteration order, failing fast with ConcurrentModificationException when
// the collection changes meanwhile, as Java's iterators do.
func forEach(fr *frame, v val, each func(*frame, val) (flow, bool)) flow {
	switch r := v.r.(type) {
	case nil:
		npe()
	case *jarray:
		for i := 0; i < len(r.vals); i++ {
			if f, more := each(fr, r.vals[i]); !more {
				return f
			}
		}
	case *jlist:
		mod := modOf(v)
		for i := 0; i != len(r.elems); i++ {
			if modOf(v) != mod || i > len(r.elems) {
				throwBare(clsConcurrentMod)
			}
			if f, more := each(fr, r.elems[i]); !more {
				return f
			}
		}
	case *jmap:
		mod := modOf(v)
		for _, e := range r.entries() {
			if modOf(v) != mod {
				throwBare(clsConcurrentMod)
			}
			if f, more := each(fr, e.k); !more {
				return f
			}
		}
	}
	return fNormal
}

// switchStmt compiles a switch on an int-like or String value.
func (c *compiler) switchStmt(s *switchStmt) (exec, bool) {
	x := c.expr(s.x, nil)
	sel := x.t
	if u := unboxed(sel); u != nil {
		sel = u
	}
	isString := sel.cls == clsString
	if !isString && !(sel.prim == pInt || sel.prim == pChar || sel.prim == pShort || sel.prim == pByte) {
		c.failAt(s.x.pos(), "Cannot switch on a value of type %s. Only convertible int values, strings or enum variables are permitted", x.t)
	}
	selEval := c.assignConv(x, sel, s.x.pos())
	intCases := map[int64]int{}
	strCases := map[string]int{}
	deflt := -1
	for i, cs := range s.cases {
		if cs.labels == nil {
			if deflt >= 0 {
				c.failAt(cs.pos(), "Duplicate default case")
			}
			deflt = i
		}
		for _, lab := range cs.labels {
			k := c.expr(lab, sel)
			if k.constant == nil {
				c.failAt(lab.pos(), "case expressions must be constant expressions")
			}
			if !assignable(k.t, sel, k.constant) {
				c.failAt(lab.pos(), "Type mismatch: cannot convert from %s to %s", k.t, sel)
			}
			if isString {
				key := k.constant.(string)
				if _, dup := strCases[key]; dup {
					c.failAt(lab.pos(), "Duplicate case")
				}
				strCases[key] = i
			} else {
				key := castConstant(k.constant, sel).(int64)
				if _, dup := intCases[key]; dup {
					c.failAt(lab.pos(), "Duplicate case")
				}
				intCases[key] = i
			}
		}
	}
	c.push()
	defer c.pop()
	tgt := &target{breaks: deadState, conts: deadState}
	c.targets = append(c.targets, tgt)
	before := c.da.clone()
	groups := make([]exec, len(s.cases))
	completes := true
	for i, cs := range s.cases {
		if i == 0 || !completes {
			c.da = before.clone()
		} else {
			c.da = meet(c.da, before)
		}
		groups[i], completes = c.stmts(cs.body)
	}
	c.targets = c.targets[:len(c.targets)-1]
	end := c.da
	if len(s.cases) == 0 {
		end = before
	}
	if deflt < 0 {
		end = meet(end, before)
	}
	c.da = meet(end, tgt.breaks)
	return func(fr *frame) flow {
		v := selEval(fr)
		start := deflt
		var ok bool
		var i int
		if isString {
			if v.r == nil {
				npe()
			}
			i, ok = strCases[v.str()]
		} else {
			i, ok = intCases[v.j()]
		}
		if ok {
			start = i
		}
		if start < 0 {
			return fNormal
		}
		for _, g := range groups[start:] {
			switch f := g(fr); f {
			case fBreak:
				return fNormal
			case fNormal:
			default:
				return f
			}
		}
		return fNormal
	}, completes || deflt < 0 || tgt.broken || len(s.cases) == 0
}

// throwStmt compiles throw x, checking that a checked exception is caught
// by an enclosing try, as the generated method declares none.
func (c *compiler) throwStmt(s *throwStmt) exec {
	x := c.expr(s.x, nil)
	if x.t.prim == pNull {
		x.t = typeThrowable
	}
	if !isSubtype(x.t, typeThrowable) {
		c.failAt(s.x.pos(), "No exception of type %s can be thrown; an exception type must be a subclass of Throwable", x.t)
	}
	c.checkHandled(x.t, s.pos())
	c.da = deadState
	ev := x.eval
	return func(fr *frame) flow {
		v := ev(fr)
		if v.r == nil {
			npe()
		}
		panic(v.r.(*jthrow))
	}
}

// checked reports whether exceptions of class t are checked ones, which a
// method must catch or declare.
func checked(t *jtype) bool {
	return !isSubtype(t, classType(clsRuntimeException)) && !isSubtype(t, classType(clsError))
}

// checkHandled refuses a checked exception no enclosing catch handles.
func (c *compiler) checkHandled(t *jtype, line int) {
	if !checked(t) {
		return
	}
	for i := len(c.handlers) - 1; i >= 0; i-- {
		for _, h := range c.handlers[i] {
			if isSubtype(t, h) {
				return
			}
		}
	}
	c.failAt(line, "Unhandled exception type %s", t)
}

// catchExec is a compiled catch clause.
type catchExec struct {
	types []*jtype
	slot  int
	body  exec
}

func (c *compiler) tryStmt(s *tryStmt) (exec, bool) {
	var types [][]*jtype
	var handled []*jtype
	for _, cc := range s.catches {
		var ts []*jtype
		for _, tr := range cc.types {
			t := c.resolveType(tr)
			if !isSubtype(t, typeThrowable) {
				c.failAt(tr.pos(), "No exception of type %s can be thrown; an exception type must be a subclass of Throwable", t)
			}
			for _, h := range handled {
				if isSubtype(t, h) {
					c.failAt(tr.pos(), "Unreachable catch block for %s. It is already handled by the catch block for %s", t, h)
				}
			}
			ts = append(ts, t)
		}
		handled = append(handled, ts...)
		types = append(types, ts)
	}
	before := c.da.clone()
	c.handlers = append(c.handlers, handled)
	body, ok := c.stmt(s.body)
	c.handlers = c.handlers[:len(c.handlers)-1]
	after := c.da
	var catches []catchExec
	for i, cc := range s.catches {
		c.da = before.clone()
		c.push()
		t := types[i][0]
		if len(types[i]) > 1 {
			t = typeThrowable
			for _, u := range types[i] {
				if isSubtype(u, classType(clsRuntimeException)) {
					t = classType(clsRuntimeException)
				}
			}
		}
		l := c.declare(cc.pos(), cc.name, t, len(types[i]) > 1)
		c.da.set(l.slot)
		run, cok := c.stmt(cc.body)
		c.pop()
		ok = ok || cok
		after = meet(after, c.da)
		catches = append(catches, catchExec{types: types[i], slot: l.slot, body: run})
	}
	var finally exec
	if s.finally != nil {
		c.da = before.clone()
		var fok bool
		finally, fok = c.stmt(s.finally)
		ok = ok && fok
		after = join(after, c.da)
		if !fok {
			after = deadState
		}
	}
	c.da = after
	return func(fr *frame) flow {
		return runTry(fr, body, catches, finally)
	}, ok
}

// runTry runs a try statement: the body, the first catch clause matching
// an exception it throws, and the finally block, whose own abrupt
// completion discards the exception and result before it. A call stopped
// by its budget runs no catch or finally block.
func runTry(fr *frame, body exec, catches []catchExec, finally exec) flow {
	f, thrown := protect(fr, body)
	if thrown != nil {
	match:
		for _, cc := range catches {
			for _, t := range cc.types {
				if isSubtype(classType(thrown.cls), t) {
					fr.locals[cc.slot] = refval(thrown)
					f, thrown = protect(fr, cc.body)
					break match
				}
			}
		}
	}
	if finally != nil {
		if ff := finally(fr); ff != fNormal {
			return ff
		}
	}
	if thrown != nil {
		panic(thrown)
	}
	return f
}

// protect runs a statement, returning a Java exception it throws.
func protect(fr *frame, run exec) (f flow, thrown *jthrow) {
	defer func() {
		if r := recover(); r != nil {
			t, ok := r.(*jthrow)
			if !ok {
				panic(r)
			}
			thrown = t
		}
	}()
	return run(fr), nil
}
