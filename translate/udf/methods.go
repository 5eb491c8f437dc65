package udf

import (
	"strings"
)

// Methods of the class library, declared by Java signature with a Go
// implementation, and Java's overload resolution among them.

// methodImpl runs a method on its receiver (zero for a static method) and
// its arguments, converted to the parameter types.
type methodImpl func(fr *frame, recv val, args []val) val

// method is a method or constructor of the library.
type method struct {
	cls     *jclass
	name    string
	static  bool
	tparams []string
	params  []*jtype
	varargs bool
	ret     *jtype
	impl    methodImpl
	// throws is the checked exception the method declares, which a body
	// must catch, or nil.
	throws *jtype
}

// def declares a method of c by its signature, as
// "static <T> List<T> name(int,Class<T>)"; a trailing "..." on the last
// parameter makes it variable arity. One declaration may name several
// classes' copies by calling def again.
func def(c *jclass, sig string, impl methodImpl) *method {
	m := parseSig(c, sig)
	m.impl = impl
	c.methods[m.name] = append(c.methods[m.name], m)
	return m
}

// ctor declares a constructor of c by its parameter list, as
// "(String)" or "(Collection<E>)".
func ctor(c *jclass, params string, impl methodImpl) {
	m := parseSig(c, c.name+" <init>"+params)
	m.impl = impl
	m.ret = classType(c)
	c.ctors = append(c.ctors, m)
}

func parseSig(c *jclass, sig string) *method {
	m := &method{cls: c}
	if strings.HasPrefix(sig, "static ") {
		m.static = true
		sig = sig[len("static "):]
	}
	if strings.HasPrefix(sig, "<") {
		end := strings.IndexByte(sig, '>')
		m.tparams = strings.Split(sig[1:end], ",")
		sig = strings.TrimSpace(sig[end+1:])
	}
	open := strings.IndexByte(sig, '(')
	head := strings.TrimSpace(sig[:open])
	sp := strings.LastIndexByte(head, ' ')
	m.name = head[sp+1:]
	tvars := append(append([]string(nil), c.params...), m.tparams...)
	if m.name != "<init>" {
		m.ret = sigType(head[:sp], tvars)
	}
	for _, p := range splitTop(sig[open+1 : len(sig)-1]) {
		p = strings.TrimSpace(p)
		if strings.HasSuffix(p, "...") {
			m.varargs = true
			p = p[:len(p)-3] + "[]"
		}
		m.params = append(m.params, sigType(p, tvars))
	}
	return m
}

// lookupMethods returns the methods named name of type t and its
// supertypes, the most derived first, without the ones a subtype
// overrides.
func lookupMethods(t *jtype, name string) []*method {
	var out []*method
	seen := map[*jclass]bool{}
	var walk func(t *jtype)
	walk = func(t *jtype) {
		if t == nil || t.cls == nil || seen[t.cls] {
			return
		}
		seen[t.cls] = true
	next:
		for _, m := range t.cls.methods[name] {
			for _, o := range out {
				if sameParams(o, m) {
					continue next
				}
			}
			out = append(out, m)
		}
		for _, s := range supertypes(t) {
			walk(s)
		}
	}
	walk(t)
	return out
}

func sameParams(a, b *method) bool {
	if len(a.params) != len(b.params) || a.static != b.static {
		return false
	}
	for i := range a.params {
		if a.params[i].String() != b.params[i].String() {
			return false
		}
	}
	return true
}

// candidate is a method with its parameter types instantiated for a call.
type candidate struct {
	m      *method
	params []*jtype // one per argument, varargs expanded
	ret    *jtype
	vararg bool // applicable only by variable arity
}

// resolve picks the method a call with arguments of types args invokes on
// a receiver of type recv (nil for a static call or a constructor), in
// Java's three phases: without boxing, with boxing, with variable arity;
// then the most specific. ambiguous reports several equally specific.
func resolve(ms []*method, recv *jtype, args []*jtype) (c *candidate, ambiguous bool) {
	for phase := 1; phase <= 3; phase++ {
		var ok []*candidate
		for _, m := range ms {
			if c := instantiate(m, recv, args, phase); c != nil && applicable(c, args, phase) {
				ok = append(ok, c)
			}
		}
		if len(ok) == 0 {
			continue
		}
		best := mostSpecific(ok)
		return best, best == nil
	}
	return nil, false
}

// instantiate substitutes the receiver's type arguments and the method's
// inferred type variables into its parameter types, for n arguments.
func instantiate(m *method, recv *jtype, args []*jtype, phase int) *candidate {
	n := len(m.params)
	vararg := phase == 3 && m.varargs
	if vararg && len(args) < n-1 || !vararg && len(args) != n {
		return nil
	}
	var recvArgs []*jtype
	if recv != nil && !m.static {
		if s := asSuper(recv, m.cls); s != nil {
			recvArgs = s.args
		}
	}
	raw := make([]*jtype, len(args))
	for i := range args {
		if vararg && i >= n-1 {
			raw[i] = m.params[n-1].elem
		} else {
			raw[i] = m.params[i]
		}
	}
	bound := map[string]*jtype{}
	for i, p := range raw {
		infer(subst(p, m.cls, recvArgs, map[string]*jtype{}), args[i], m.tparams, bound)
	}
	for _, tp := range m.tparams {
		if _, ok := bound[tp]; !ok {
			bound[tp] = wildObject
		}
	}
	c := &candidate{m: m, vararg: vararg, params: make([]*jtype, len(args))}
	for i, p := range raw {
		c.params[i] = subst(p, m.cls, recvArgs, bound)
	}
	if m.ret != nil {
		c.ret = subst(m.ret, m.cls, recvArgs, bound)
	}
	return c
}

// infer binds the method type variables in parameter type p from the
// argument type a.
func infer(p, a *jtype, tparams []string, bound map[string]*jtype) {
	if a == nil || a.prim == pNull {
		return
	}
	if p.tvar != "" {
		for _, tp := range tparams {
			if tp == p.tvar {
				if _, ok := bound[tp]; !ok {
					bound[tp] = boxOf(a)
				}
			}
		}
		return
	}
	if p.elem != nil {
		if a.elem != nil {
			infer(p.elem, a.elem, tparams, bound)
		}
		return
	}
	if len(p.args) == 0 || p.cls == nil {
		return
	}
	s := asSuper(boxOf(a), p.cls)
	if s == nil || len(s.args) != len(p.args) {
		return
	}
	for i := range p.args {
		infer(p.args[i], s.args[i], tparams, bound)
	}
}

// applicable reports whether each argument converts to its parameter by
// method invocation conversion of the phase: strict (1) or loose (2, 3).
func applicable(c *candidate, args []*jtype, phase int) bool {
	for i, a := range args {
		if !invocable(a, c.params[i], phase > 1) {
			return false
		}
	}
	return true
}

// mostSpecific returns the one candidate more specific than all others, or
// nil.
func mostSpecific(cs []*candidate) *candidate {
	var best *candidate
	for _, c := range cs {
		ok := true
		for _, o := range cs {
			if o != c && !moreSpecific(c, o) {
				ok = false
				break
			}
		}
		if ok {
			if best != nil {
				return nil
			}
			best = c
		}
	}
	if best == nil {
		// Declarations with the same parameters (an override and the
		// method it overrides): the most derived, found first, wins.
		for _, o := range cs[1:] {
			if !sameParams(o.m, cs[0].m) {
				return nil
			}
		}
		return cs[0]
	}
	return best
}

// moreSpecific reports whether each parameter of a converts strictly to
// the one of b.
func moreSpecific(a, b *candidate) bool {
	for i := range a.params {
		if !invocable(a.params[i], b.params[i], false) {
			return false
		}
	}
	return true
}
