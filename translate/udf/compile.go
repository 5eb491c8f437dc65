package udf

import (
	"time"

	"github.com/cqlpg/cqlpg/pgschema"
)

// Param is one declared argument of a function.
type Param struct {
	Name string
	Type *pgschema.Type
}

// Budget bounds one call: steps (a statement, a loop iteration or a method
// call each cost one), wall-clock time, looked at every 1024 steps, and
// the bytes of strings and collection elements the call makes. A zero
// Steps or Timeout sets no bound of that kind; a zero Memory is
// DefaultMemory.
type Budget struct {
	Steps   int64
	Timeout time.Duration
	Memory  int64
}

// DefaultMemory is the bytes a call may allocate when its Budget does not
// say: past it the body fails with java.lang.OutOfMemoryError.
const DefaultMemory = 16 << 20

// Func is a compiled body, safe for concurrent calls.
type Func struct {
	params  []Param
	ret     *pgschema.Type
	strict  bool
	body    exec
	nlocals int
	nargs   int
	argIn   []func(fr *frame, b []byte) val
	retOut  func(fr *frame, v val) []byte
	byName  map[string]int
}

// Compile parses and type-checks the body of a function declared CALLED
// ON NULL INPUT: its arguments are the boxed Java types of their CQL
// types (Integer for int), which may be null. ret is the declared return
// type. Errors are *CompileError.
func Compile(params []Param, ret *pgschema.Type, body string) (*Func, error) {
	return compile(params, ret, body, false)
}

// CompileStrict is Compile for a function declared RETURNS NULL ON NULL
// INPUT: its arguments of int, bigint, smallint, tinyint, float, double,
// boolean, counter and time types are Java primitives (int, not Integer),
// as Cassandra declares them, and Call returns null without running the
// body when an argument is null.
func CompileStrict(params []Param, ret *pgschema.Type, body string) (*Func, error) {
	return compile(params, ret, body, true)
}

func compile(params []Param, ret *pgschema.Type, body string, strict bool) (f *Func, err error) {
	list, err := parseBody(body)
	if err != nil {
		return nil, err
	}
	f = &Func{params: params, ret: ret, strict: strict, byName: map[string]int{}}
	c := &compiler{fn: f}
	c.push()
	for i, p := range params {
		if !isJavaIdentifier(p.Name) {
			// Cassandra declares the argument in the generated method,
			// which then does not compile.
			return nil, compileErrorf(1, "Syntax error on token \"%s\", invalid VariableDeclaratorId", p.Name)
		}
		t, err := javaTypeOf(p.Type, strict)
		if err != nil {
			return nil, compileErrorf(1, "%s", err)
		}
		f.argIn = append(f.argIn, argReader(p.Type, t))
		l := c.declare(1, p.Name, t, false)
		l.param = true
		c.da.set(l.slot)
		f.byName[p.Name] = i
	}
	if c.retType, err = javaTypeOf(ret, false); err != nil {
		return nil, compileErrorf(1, "%s", err)
	}
	f.retOut = resultWriter(ret, c.retType)
	defer func() {
		if r := recover(); r != nil {
			ce, ok := r.(*CompileError)
			if !ok {
				panic(r)
			}
			f, err = nil, ce
		}
	}()
	run, completes := c.stmts(list)
	if completes {
		last := 1
		if len(list) > 0 {
			last = lastLine(body)
		}
		c.failAt(last, "This method must return a result of type %s", c.retType)
	}
	f.body, f.nlocals, f.nargs = run, c.nslots, c.nargs
	return f, nil
}

// isJavaIdentifier reports whether name may name a Java variable.
func isJavaIdentifier(name string) bool {
	toks, err := lex(name)
	return err == nil && len(toks) == 2 && toks[0].kind == kIdent && toks[0].text == name
}

// lastLine is the line of the body's end, where Java reports a missing
// return.
func lastLine(body string) int {
	n := 1
	for i := 0; i < len(body); i++ {
		if body[i] == '\n' {
			n++
		}
	}
	return n
}

// compiler checks a body's types and turns it into closures.
type compiler struct {
	fn      *Func
	retType *jtype
	scopes  []map[string]*local
	nslots  int
	nargs   int
	da      flowState
	targets []*target
	// handlers holds the exception types the catch clauses of each
	// enclosing try statement handle.
	handlers [][]*jtype
}

// local is a local variable or parameter.
type local struct {
	name  string
	t     *jtype
	slot  int
	final bool
	param bool
	// constant is the value of a final local initialized with a constant
	// expression (a constant variable), else nil.
	constant any
}

// target is a statement break or continue leaves: a loop or a switch.
type target struct {
	loop   bool
	breaks flowState // the meet of the states at the breaks
	conts  flowState
	broken bool // a reachable break targets it
}

func (c *compiler) failAt(line int, format string, args ...any) {
	panic(compileErrorf(line, format, args...))
}

// refuseAt fails on a construct outside the subset.
func (c *compiler) refuseAt(line int, what string) { panic(refusal(line, what)) }

func (c *compiler) push() { c.scopes = append(c.scopes, map[string]*local{}) }
func (c *compiler) pop()  { c.scopes = c.scopes[:len(c.scopes)-1] }

// lookup finds a local variable by name.
func (c *compiler) lookup(name string) *local {
	for i := len(c.scopes) - 1; i >= 0; i-- {
		if l, ok := c.scopes[i][name]; ok {
			return l
		}
	}
	return nil
}

// declare adds a local variable, refusing a name already declared in an
// enclosing scope as Java does.
func (c *compiler) declare(line int, name string, t *jtype, final bool) *local {
	if l := c.lookup(name); l != nil {
		if l.param {
			c.failAt(line, "Duplicate parameter %s", name)
		}
		c.failAt(line, "Duplicate local variable %s", name)
	}
	l := &local{name: name, t: t, slot: c.nslots, final: final}
	c.nslots++
	c.scopes[len(c.scopes)-1][name] = l
	return l
}

// callSite reserves n argument slots in the frame for a call site.
func (c *compiler) callSite(n int) int {
	off := c.nargs
	c.nargs += n
	return off
}
