package udf

// Statements compile to closures returning how they completed; a
// statement that cannot complete normally (return, throw, break, an
// endless loop) makes the statements after it unreachable, which Java
// refuses, and a body that can complete normally lacks a return.

// flow is how a statement completed.
type flow uint8

const (
	fNormal flow = iota
	fBreak
	fContinue
	fReturn
)

// exec runs a statement.
type exec func(fr *frame) flow

func nop(*frame) flow { return fNormal }

// stmts compiles a sequence of statements in the current scope, reporting
// whether it can complete normally.
func (c *compiler) stmts(list []stmt) (exec, bool) {
	runs := make([]exec, 0, len(list))
	completes := true
	for _, s := range list {
		if !completes {
			c.failAt(s.pos(), "Unreachable code")
		}
		var run exec
		run, completes = c.stmt(s)
		if run != nil {
			runs = append(runs, run)
		}
	}
	return seq(runs), completes
}

// seq runs statements in order, each costing a step.
func seq(runs []exec) exec {
	switch len(runs) {
	case 0:
		return nop
	case 1:
		one := runs[0]
		return func(fr *frame) flow {
			fr.step()
			return one(fr)
		}
	}
	return func(fr *frame) flow {
		for _, run := range runs {
			fr.step()
			if f := run(fr); f != fNormal {
				return f
			}
		}
		return fNormal
	}
}

// stmt compiles one statement.
func (c *compiler) stmt(s stmt) (exec, bool) {
	switch s := s.(type) {
	case *blockStmt:
		c.push()
		defer c.pop()
		return c.stmts(s.list)
	case *emptyStmt:
		return nil, true
	case *localStmt:
		return c.localDecl(s), true
	case *exprStmt:
		x := c.expr(s.x, nil)
		ev := x.eval
		return func(fr *frame) flow { ev(fr); return fNormal }, true
	case *ifStmt:
		return c.ifStmt(s)
	case *whileStmt:
		return c.whileStmt(s)
	case *doStmt:
		return c.doStmt(s)
	case *forStmt:
		return c.forStmt(s)
	case *foreachStmt:
		return c.foreachStmt(s)
	case *breakStmt:
		t := c.innerTarget(false)
		if t == nil {
			c.failAt(s.pos(), "break cannot be used outside of a loop or a switch")
		}
		t.breaks, t.broken = meet(t.breaks, c.da), true
		c.da = deadState
		return func(*frame) flow { return fBreak }, false
	case *continueStmt:
		t := c.innerTarget(true)
		if t == nil {
			c.failAt(s.pos(), "continue cannot be used outside of a loop")
		}
		t.conts = meet(t.conts, c.da)
		c.da = deadState
		return func(*frame) flow { return fContinue }, false
	case *returnStmt:
		return c.returnStmt(s), false
	case *throwStmt:
		return c.throwStmt(s), false
	case *assertStmt:
		c.condition(s.cond)
		if s.msg != nil {
			c.expr(s.msg, nil)
		}
		return nil, true // assertions are disabled, as in Cassandra's JVM
	case *tryStmt:
		return c.tryStmt(s)
	case *switchStmt:
		return c.switchStmt(s)
	}
	c.failAt(s.pos(), "Syntax error")
	return nil, false
}

// innerTarget returns the innermost loop (and, unless loopOnly, switch).
func (c *compiler) innerTarget(loopOnly bool) *target {
	for i := len(c.targets) - 1; i >= 0; i-- {
		if c.targets[i].loop || !loopOnly {
			return c.targets[i]
		}
	}
	return nil
}

// localDecl compiles a local variable declaration.
func (c *compiler) localDecl(s *localStmt) exec {
	var base *jtype
	if s.typ != nil {
		base = c.resolveType(s.typ)
		if base.prim == pVoid {
			c.failAt(s.pos(), "void is an invalid type for the variable %s", s.vars[0].name)
		}
	}
	var runs []exec
	for _, d := range s.vars {
		t := base
		for i := 0; i < d.dims; i++ {
			t = arrayOf(t)
		}
		if t == nil { // var
			if d.init == nil {
				c.failAt(d.pos(), "Cannot use 'var' on variable without initializer")
			}
			if a, ok := d.init.(*newArrayExpr); ok && a.typ == nil {
				c.failAt(d.pos(), "Array initializer needs an explicit target-type")
			}
		}
		var init *cexpr
		if t == nil {
			init = c.expr(d.init, nil)
			if init.t.prim == pNull {
				c.failAt(d.pos(), "Cannot infer type for local variable initialized to 'null'")
			}
			if init.t.prim == pVoid {
				c.failAt(d.pos(), "Cannot infer type for local variable initialized to 'void'")
			}
			t = init.t
		}
		l := c.declare(d.pos(), d.name, t, s.final)
		if d.init == nil {
			continue
		}
		if init == nil {
			init = c.expr(d.init, t)
		}
		ev := c.assignConv(init, t, d.pos())
		if s.final && init.constant != nil && (t.isPrim() || t.cls == clsString) {
			l.constant = castConstant(init.constant, t)
		}
		c.da.set(l.slot)
		slot := l.slot
		runs = append(runs, func(fr *frame) flow {
			fr.locals[slot] = ev(fr)
			return fNormal
		})
	}
	switch len(runs) {
	case 0:
		return nil
	case 1:
		return runs[0]
	}
	return func(fr *frame) flow {
		for _, r := range runs {
			r(fr)
		}
		return fNormal
	}
}

// condition compiles a boolean condition, unboxing a Boolean.
func (c *compiler) condition(e expr) *cexpr {
	x := c.expr(e, nil)
	if !booleanOf(x.t) {
		c.failAt(e.pos(), "Type mismatch: cannot convert from %s to boolean", x.t)
	}
	x.eval = c.assignConv(x, tBoolean, e.pos())
	return x
}

// constTrue and constFalse report a condition's constant value.
func constTrue(x *cexpr) bool  { b, ok := x.constant.(bool); return ok && b }
func constFalse(x *cexpr) bool { b, ok := x.constant.(bool); return ok && !b }

func (c *compiler) ifStmt(s *ifStmt) (exec, bool) {
	cond := c.condition(s.cond)
	before := c.da.clone()
	if constFalse(cond) {
		c.da = deadState
	}
	then, thenOK := c.branch(s.then)
	afterThen := c.da
	c.da = before
	if constTrue(cond) {
		c.da = deadState
	}
	var els exec
	elsOK := true
	if s.els != nil {
		els, elsOK = c.branch(s.els)
	}
	c.da = meet(afterThen, c.da)
	ce := cond.eval
	if els == nil {
		els = nop
	}
	if then == nil {
		then = nop
	}
	return func(fr *frame) flow {
		if ce(fr).z() {
			return then(fr)
		}
		return els(fr)
	}, thenOK || elsOK || s.els == nil
}

// branch compiles a statement nested in another, in a scope of its own.
func (c *compiler) branch(s stmt) (exec, bool) {
	c.push()
	defer c.pop()
	run, ok := c.stmt(s)
	if run == nil {
		run = nop
	}
	if _, isBlock := s.(*blockStmt); !isBlock {
		inner := run
		run = func(fr *frame) flow {
			fr.step()
			return inner(fr)
		}
	}
	return run, ok
}

// loop compiles a loop body as a break and continue target.
func (c *compiler) loop(body stmt) (exec, *target, bool) {
	t := &target{loop: true, breaks: deadState, conts: deadState}
	c.targets = append(c.targets, t)
	run, ok := c.branch(body)
	c.targets = c.targets[:len(c.targets)-1]
	return run, t, ok
}

func (c *compiler) whileStmt(s *whileStmt) (exec, bool) {
	cond := c.condition(s.cond)
	before := c.da.clone()
	if constFalse(cond) {
		c.failAt(s.body.pos(), "Unreachable code")
	}
	body, t, _ := c.loop(s.body)
	c.da = before
	if constTrue(cond) {
		c.da = deadState
	}
	c.da = meet(c.da, t.breaks)
	ce := cond.eval
	return func(fr *frame) flow {
		for {
			fr.step()
			if !ce(fr).z() {
				return fNormal
			}
			switch body(fr) {
			case fBreak:
				return fNormal
			case fReturn:
				return fReturn
			}
		}
	}, !constTrue(cond) || t.broken
}

func (c *compiler) doStmt(s *doStmt) (exec, bool) {
	body, t, bodyOK := c.loop(s.body)
	c.da = meet(c.da, t.conts)
	cond := c.condition(s.cond)
	if constTrue(cond) {
		c.da = deadState
	}
	c.da = meet(c.da, t.breaks)
	ce := cond.eval
	completes := (bodyOK || !t.conts.dead) && !constTrue(cond) || t.broken
	return func(fr *frame) flow {
		for {
			fr.step()
			switch body(fr) {
			case fBreak:
				return fNormal
			case fReturn:
				return fReturn
			}
			if !ce(fr).z() {
				return fNormal
			}
		}
	}, completes
}

func (c *compiler) forStmt(s *forStmt) (exec, bool) {
	c.push()
	defer c.pop()
	var inits []exec
	for _, st := range s.init {
		if run, _ := c.stmt(st); run != nil {
			inits = append(inits, run)
		}
	}
	var cond *cexpr
	if s.cond != nil {
		cond = c.condition(s.cond)
		if constFalse(cond) {
			c.failAt(s.body.pos(), "Unreachable code")
		}
	}
	before := c.da.clone()
	body, t, _ := c.loop(s.body)
	c.da = meet(c.da, t.conts)
	var updates []func(*frame) val
	for _, u := range s.update {
		updates = append(updates, c.expr(u, nil).eval)
	}
	endless := cond == nil || constTrue(cond)
	c.da = before
	if endless {
		c.da = deadState
	}
	c.da = meet(c.da, t.breaks)
	var ce func(*frame) val
	if cond != nil {
		ce = cond.eval
	}
	return func(fr *frame) flow {
		for _, i := range inits {
			i(fr)
		}
		for {
			fr.step()
			if ce != nil && !ce(fr).z() {
				return fNormal
			}
			switch body(fr) {
			case fBreak:
				return fNormal
			case fReturn:
				return fReturn
			}
			for _, u := range updates {
				u(fr)
			}
		}
	}, !endless || t.broken
}

func (c *compiler) returnStmt(s *returnStmt) exec {
	if s.x == nil {
		c.failAt(s.pos(), "This method must return a result of type %s", c.retType)
	}
	x := c.expr(s.x, c.retType)
	ev := c.assignConv(x, c.retType, s.x.pos())
	c.da = deadState
	return func(fr *frame) flow {
		fr.ret = ev(fr)
		return fReturn
	}
}
