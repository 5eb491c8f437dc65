package udf

import "strings"

// Method calls, instance creation and arrays.

// typeList prints argument types as ECJ does in its messages.
func typeList(ts []*jtype) string {
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = t.String()
	}
	return strings.Join(names, ", ")
}

// args compiles call arguments.
func (c *compiler) args(es []expr) ([]*cexpr, []*jtype) {
	xs := make([]*cexpr, len(es))
	ts := make([]*jtype, len(es))
	for i, e := range es {
		xs[i] = c.expr(e, nil)
		if xs[i].t.prim == pVoid {
			c.failAt(e.pos(), "The method returns void, which is not a valid argument")
		}
		ts[i] = xs[i].t
	}
	return xs, ts
}

// systemAllowed are the methods of System bodies may call.
var systemAllowed = map[string]bool{"currentTimeMillis": true, "nanoTime": true, "arraycopy": true, "lineSeparator": true}

// call compiles a method call.
func (c *compiler) call(e *callExpr) *cexpr {
	xs, ts := c.args(e.args)
	if e.x == nil {
		c.failAt(e.pos(), "The method %s(%s) is undefined for the type %s", e.name, typeList(ts), "cqlpg user function")
	}
	switch e.name {
	case "getClass", "wait", "notify", "notifyAll", "printStackTrace":
		c.failAt(e.pos(), "%s() is not supported by cqlpg user functions", e.name)
	case "stream", "parallelStream":
		c.refuseAt(e.pos(), "streams")
	}
	if cls := c.qualifiedClass(e.x); cls != nil {
		if cls == clsSystem && !systemAllowed[e.name] {
			c.failAt(e.pos(), "System.%s is not supported by cqlpg user functions", e.name)
		}
		if cls == clsClass {
			c.failAt(e.pos(), "Class.%s is not supported by cqlpg user functions", e.name)
		}
		if cls == clsInetAddress && inetRefused[e.name] {
			c.failAt(e.pos(), "InetAddress.%s is not supported by cqlpg user functions", e.name)
		}
		ms := lookupMethods(classType(cls), e.name)
		cand := c.pick(ms, nil, ts, e, cls.name)
		if !cand.m.static {
			c.failAt(e.pos(), "Cannot make a static reference to the non-static method %s(%s) from the type %s",
				e.name, typeList(cand.m.params), cls.name)
		}
		return c.invoke(cand, nil, xs)
	}
	c.checkResolves(e.x)
	recv := c.expr(e.x, nil)
	switch {
	case recv.t.isPrim():
		c.failAt(e.pos(), "Cannot invoke %s(%s) on the primitive type %s", e.name, typeList(ts), recv.t)
	case recv.t.prim == pNull:
		c.failAt(e.pos(), "Cannot invoke %s(%s) on the null type", e.name, typeList(ts))
	}
	t := recv.t
	if t.elem != nil {
		t = typeObject
	}
	if t.cls == clsInetAddress && inetRefused[e.name] {
		c.failAt(e.pos(), "InetAddress.%s is not supported by cqlpg user functions", e.name)
	}
	cand := c.pick(lookupMethods(t, e.name), recv.t, ts, e, t.cls.name)
	return c.invoke(cand, recv, xs)
}

// pick resolves a call's overload, failing as ECJ words it.
func (c *compiler) pick(ms []*method, recv *jtype, ts []*jtype, e *callExpr, typeName string) *candidate {
	if len(ms) == 0 {
		c.failAt(e.pos(), "The method %s(%s) is undefined for the type %s", e.name, typeList(ts), typeName)
	}
	cand, ambiguous := resolve(ms, recv, ts)
	if ambiguous {
		c.failAt(e.pos(), "The method %s(%s) is ambiguous for the type %s", e.name, typeList(ts), typeName)
	}
	if cand == nil {
		m := ms[0]
		c.failAt(e.pos(), "The method %s(%s) in the type %s is not applicable for the arguments (%s)",
			e.name, typeList(m.params), m.cls.name, typeList(ts))
	}
	if cand.m.throws != nil {
		c.checkHandled(cand.m.throws, e.pos())
	}
	return cand
}

// invoke compiles the call of a resolved method on a receiver (nil for a
// static call) with compiled arguments.
func (c *compiler) invoke(cand *candidate, recv *cexpr, xs []*cexpr) *cexpr {
	evs := c.argEvals(cand, xs)
	n := len(evs)
	off := c.callSite(n)
	impl := cand.m.impl
	ret := cand.ret
	if ret == nil {
		ret = tVoid
	}
	if recv == nil || cand.m.static {
		var rv func(*frame) val // a static method called through an instance
		if recv != nil {
			rv = recv.eval
		}
		return &cexpr{t: ret, eval: func(fr *frame) val {
			fr.step()
			if rv != nil {
				rv(fr)
			}
			a := fr.args[off : off+n : off+n]
			for i, ev := range evs {
				a[i] = ev(fr)
			}
			return impl(fr, null, a)
		}}
	}
	rv := recv.eval
	return &cexpr{t: ret, eval: func(fr *frame) val {
		fr.step()
		r := rv(fr)
		a := fr.args[off : off+n : off+n]
		for i, ev := range evs {
			a[i] = ev(fr)
		}
		if r.r == nil {
			npe()
		}
		return impl(fr, r, a)
	}}
}

// argEvals converts each argument to its parameter type, packing the
// trailing arguments of a variable arity call into an array.
func (c *compiler) argEvals(cand *candidate, xs []*cexpr) []func(*frame) val {
	evs := make([]func(*frame) val, 0, len(xs))
	nfixed := len(xs)
	if cand.vararg {
		nfixed = len(cand.m.params) - 1
	}
	for i := 0; i < nfixed; i++ {
		evs = append(evs, c.convert(xs[i], cand.params[i], false))
	}
	if !cand.vararg {
		return evs
	}
	var rest []func(*frame) val
	var elem *jtype
	for i := nfixed; i < len(xs); i++ {
		rest = append(rest, c.convert(xs[i], cand.params[i], false))
		elem = cand.params[i]
	}
	if elem == nil {
		elem = typeObject
	}
	return append(evs, func(fr *frame) val {
		vals := make([]val, len(rest))
		for i, ev := range rest {
			vals[i] = ev(fr)
		}
		fr.alloc(valSize * len(vals))
		return refval(&jarray{elem: elem, vals: vals})
	})
}

// newObject compiles new T(args).
func (c *compiler) newObject(e *newExpr, want *jtype) *cexpr {
	t := c.resolveType(e.typ)
	if t.isPrim() || t.cls == nil {
		c.failAt(e.pos(), "Syntax error on token \"%s\", Identifier expected", e.typ.name)
	}
	xs, ts := c.args(e.args)
	if isInterface(t.cls) || t.cls == clsNumber || len(t.cls.ctors) == 0 {
		c.failAt(e.pos(), "Cannot instantiate the type %s", t)
	}
	ms := t.cls.ctors
	if e.typ.diamond {
		if want != nil && want.cls != nil && len(want.args) == len(t.cls.params) && asSuper(t, want.cls) != nil {
			t = classType(t.cls, want.args...)
		} else {
			// Infer the arguments from the constructor's, as the class's
			// own type variables.
			inferred := make([]*method, len(ms))
			for i, m := range ms {
				cp := *m
				cp.tparams = t.cls.params
				inferred[i] = &cp
			}
			ms = inferred
		}
	}
	recv := t
	if e.typ.diamond && len(t.args) == 0 {
		recv = nil
	}
	cand, ambiguous := resolve(ms, recv, ts)
	if ambiguous {
		c.failAt(e.pos(), "The constructor %s(%s) is ambiguous", t.cls.name, typeList(ts))
	}
	if cand == nil {
		c.failAt(e.pos(), "The constructor %s(%s) is undefined", t.cls.name, typeList(ts))
	}
	if e.typ.diamond && len(t.args) == 0 && len(t.cls.params) > 0 {
		args := make([]*jtype, len(t.cls.params))
		for i, p := range t.cls.params {
			args[i] = subst(&jtype{tvar: p}, nil, nil, boundOf(cand, t.cls.params, ts))
		}
		t = classType(t.cls, args...)
	}
	x := c.invoke(cand, nil, xs)
	x.t = t
	return x
}

// boundOf re-infers the class type variables a diamond constructor call
// binds.
func boundOf(cand *candidate, params []string, ts []*jtype) map[string]*jtype {
	bound := map[string]*jtype{}
	for i, p := range cand.m.params {
		if i < len(ts) {
			infer(p, ts[i], params, bound)
		}
	}
	for _, p := range params {
		if _, ok := bound[p]; !ok {
			bound[p] = wildObject
		}
	}
	return bound
}

// newArray compiles an array creation or initializer.
func (c *compiler) newArray(e *newArrayExpr, want *jtype) *cexpr {
	var t *jtype
	if e.typ != nil {
		t = c.resolveType(e.typ)
	} else {
		if want == nil || want.elem == nil {
			c.failAt(e.pos(), "Array constants can only be used in initializers")
		}
		t = want
	}
	if e.lit {
		elem := t.elem
		evs := make([]func(*frame) val, len(e.init))
		for i, x := range e.init {
			if sub, ok := x.(*newArrayExpr); ok && sub.typ == nil {
				if elem.elem == nil {
					c.failAt(x.pos(), "Type mismatch: cannot convert from %s to %s", "Object[]", elem)
				}
				evs[i] = c.newArray(sub, elem).eval
				continue
			}
			evs[i] = c.assignConv(c.expr(x, elem), elem, x.pos())
		}
		return &cexpr{t: t, eval: func(fr *frame) val {
			vals := make([]val, len(evs))
			for i, ev := range evs {
				vals[i] = ev(fr)
			}
			fr.alloc(valSize * len(vals))
			return refval(&jarray{elem: elem, vals: vals})
		}}
	}
	dims := make([]func(*frame) val, len(e.dims))
	for i, d := range e.dims {
		dims[i] = c.intIndex(d)
	}
	return &cexpr{t: t, eval: func(fr *frame) val {
		ns := make([]int, len(dims))
		for i, d := range dims {
			ns[i] = int(d(fr).i())
			if ns[i] < 0 {
				throw(clsNegativeArray, "%d", ns[i])
			}
		}
		return makeArray(fr, t, ns)
	}}
}

// makeArray makes an array of type t with the given dimensions, its
// elements zero.
func makeArray(fr *frame, t *jtype, ns []int) val {
	fr.alloc(valSize * ns[0])
	a := &jarray{elem: t.elem, vals: make([]val, ns[0])}
	if len(ns) > 1 {
		for i := range a.vals {
			a.vals[i] = makeArray(fr, t.elem, ns[1:])
		}
	}
	return refval(a)
}

// intIndex compiles an array index or dimension, which promotes to int.
func (c *compiler) intIndex(e expr) func(*frame) val {
	x := c.expr(e, nil)
	n := numericOf(x.t)
	if n == nil || !(n.prim == pInt || n.prim == pShort || n.prim == pByte || n.prim == pChar) {
		c.failAt(e.pos(), "Type mismatch: cannot convert from %s to int", x.t)
	}
	return c.convert(x, tInt, false)
}

// index compiles x[i].
func (c *compiler) index(e *indexExpr) *cexpr {
	x := c.expr(e.x, nil)
	if x.t.elem == nil {
		c.failAt(e.pos(), "The type of the expression must be an array type but it resolved to %s", x.t)
	}
	av, iv := x.eval, c.intIndex(e.i)
	return &cexpr{t: x.t.elem, eval: func(fr *frame) val {
		a, i := arrayAt(av(fr), iv(fr))
		return a.vals[i]
	}}
}

// arrayAt checks an array access.
func arrayAt(a, i val) (*jarray, int) {
	if a.r == nil {
		npe()
	}
	arr := a.r.(*jarray)
	n := int(i.i())
	if n < 0 || n >= len(arr.vals) {
		indexOutOfBounds(clsArrayIndex, n, len(arr.vals))
	}
	return arr, n
}
