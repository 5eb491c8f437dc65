package udf

import "fmt"

// The parser reads a body as the block statements of a Java method, by
// recursive descent. It refuses the constructs outside the subset by name
// (class declarations, lambdas, synchronized...), and bodies nested deeper
// than maxDepth, so that neither it nor the compiled closures can exhaust
// the Go stack.

// maxDepth bounds the nesting of statements and expressions, operands of
// an operator chain counted as nesting (a+b+c is three deep).
const maxDepth = 256

// parser reads tokens; its errors are *CompileError panics, recovered by
// parseBody.
type parser struct {
	toks  []token
	p     int
	gt    int // '>' characters already taken from the current token (List<List<T>>)
	depth int
}

// parseBody parses a function body into its statements.
func parseBody(src string) (list []stmt, err error) {
	toks, err := lex(src)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks}
	defer func() {
		if r := recover(); r != nil {
			ce, ok := r.(*CompileError)
			if !ok {
				panic(r)
			}
			err = ce
		}
	}()
	for p.tok().kind != kEOF {
		if p.isOp("}") {
			p.fail("Syntax error on token \"}\", delete this token")
		}
		list = append(list, p.blockStatement())
	}
	return list, nil
}

func (p *parser) tok() token { return p.toks[p.p] }

func (p *parser) peekAt(n int) token {
	if p.p+n < len(p.toks) {
		return p.toks[p.p+n]
	}
	return p.toks[len(p.toks)-1]
}

func (p *parser) advance() token {
	t := p.toks[p.p]
	if t.kind != kEOF {
		p.p++
	}
	p.gt = 0
	return t
}

// isOp reports whether the current token is the operator or separator op.
func (p *parser) isOp(op string) bool {
	t := p.tok()
	return t.kind == kOp && t.text == op && p.gt == 0
}

// isKw reports whether the current token is the keyword kw.
func (p *parser) isKw(kw string) bool {
	t := p.tok()
	return t.kind == kKeyword && t.text == kw
}

func (p *parser) acceptOp(op string) bool {
	if p.isOp(op) {
		p.advance()
		return true
	}
	return false
}

func (p *parser) fail(format string, args ...any) {
	panic(compileErrorf(p.tok().line, format, args...))
}

// refuse fails on a construct the interpreter does not run.
func (p *parser) refuse(what string) {
	panic(refusal(p.tok().line, what))
}

// refusal is the compile error naming a construct outside the subset.
func refusal(line int, what string) *CompileError {
	return compileErrorf(line, "%s are not supported by cqlpg user functions", what)
}

// tokText is a token as a syntax error quotes it.
func tokText(t token) string {
	switch t.kind {
	case kEOF:
		return "EOF"
	case kString:
		return fmt.Sprintf("%q", t.text)
	case kChar:
		return "'" + t.text + "'"
	}
	return t.text
}

// expectOp consumes op or fails as ECJ words a missing token.
func (p *parser) expectOp(op string) {
	if p.acceptOp(op) {
		return
	}
	t := p.tok()
	if op == ";" || t.kind == kEOF {
		p.failAt(p.prevLine(), "Syntax error, insert \"%s\" to complete BlockStatements", op)
	}
	p.fail("Syntax error on token \"%s\", %s expected", tokText(t), op)
}

func (p *parser) failAt(line int, format string, args ...any) {
	panic(compileErrorf(line, format, args...))
}

// prevLine is the line of the previous token, where a missing ; belongs.
func (p *parser) prevLine() int {
	if p.p > 0 {
		return p.toks[p.p-1].line
	}
	return p.tok().line
}

func (p *parser) expectIdent() token {
	t := p.tok()
	if t.kind != kIdent {
		p.fail("Syntax error on token \"%s\", Identifier expected", tokText(t))
	}
	return p.advance()
}

// enter counts one level of nesting, failing beyond maxDepth.
func (p *parser) enter() {
	p.depth++
	if p.depth > maxDepth {
		p.fail("the body nests statements or expressions more than %d deep, which cqlpg user functions do not support", maxDepth)
	}
}

func (p *parser) leave() { p.depth-- }

// mark and reset save and restore the position for speculative parsing.
type mark struct{ p, gt, depth int }

func (p *parser) mark() mark   { return mark{p.p, p.gt, p.depth} }
func (p *parser) reset(m mark) { p.p, p.gt, p.depth = m.p, m.gt, m.depth }

// block parses Block: { BlockStatements }.
func (p *parser) block() *blockStmt {
	b := &blockStmt{at: at(p.tok().line)}
	p.expectOp("{")
	for !p.isOp("}") {
		if p.tok().kind == kEOF {
			p.failAt(p.prevLine(), "Syntax error, insert \"}\" to complete Block")
		}
		b.list = append(b.list, p.blockStatement())
	}
	p.advance()
	return b
}

// modifiers that only a class or member declaration can start with.
var classModifiers = map[string]bool{
	"abstract": true, "static": true, "public": true, "private": true, "protected": true,
	"strictfp": true, "native": true, "transient": true, "volatile": true,
}

// blockStatement parses BlockStatement: LocalVariableDeclarationStatement,
// or Statement. Local classes and the other refused constructs fail here.
func (p *parser) blockStatement() stmt {
	t := p.tok()
	if t.kind == kKeyword {
		switch {
		case t.text == "class" || t.text == "interface" || t.text == "enum" || classModifiers[t.text]:
			p.refuse("class declarations")
		case t.text == "import" || t.text == "package":
			p.refuse("imports")
		case t.text == "final":
			p.advance()
			if p.isKw("class") || classModifiers[p.tok().text] {
				p.refuse("class declarations")
			}
			p.annotations()
			if p.isKw("final") {
				p.advance()
			}
			return p.localDecl(true, true)
		}
	}
	if p.isOp("@") {
		p.annotations()
		final := false
		if p.isKw("final") {
			p.advance()
			final = true
		}
		return p.localDecl(final, true)
	}
	if s := p.tryLocalDecl(); s != nil {
		return s
	}
	return p.statement()
}

// annotations skips annotations before a local declaration
// (@SuppressWarnings("unchecked")), which do not change what it does.
func (p *parser) annotations() {
	for p.acceptOp("@") {
		p.expectIdent()
		for p.acceptOp(".") {
			p.expectIdent()
		}
		if p.isOp("(") {
			depth := 0
			for {
				t := p.advance()
				if t.kind == kEOF {
					p.fail("Syntax error, insert \")\" to complete Modifiers")
				}
				if t.kind == kOp && t.text == "(" {
					depth++
				} else if t.kind == kOp && t.text == ")" {
					if depth--; depth == 0 {
						break
					}
				}
			}
		}
	}
}

// tryLocalDecl parses a local variable declaration when the statement
// starts with one (a type followed by a name), else returns nil with the
// position unchanged.
func (p *parser) tryLocalDecl() stmt {
	t := p.tok()
	switch {
	case t.kind == kKeyword && primitiveNames[t.text] && !(p.peekAt(1).kind == kOp && p.peekAt(1).text == "."):
		return p.localDecl(false, true)
	case t.kind == kIdent:
		if t.text == "var" && p.peekAt(1).kind == kIdent {
			return p.localDecl(false, true)
		}
		m := p.mark()
		if p.speculateType() && p.tok().kind == kIdent {
			p.reset(m)
			return p.localDecl(false, true)
		}
		p.reset(m)
	}
	return nil
}

// speculateType parses a type without failing, reporting whether one was
// there.
func (p *parser) speculateType() (ok bool) {
	defer func() {
		if r := recover(); r != nil {
			if _, isCE := r.(*CompileError); !isCE {
				panic(r)
			}
			ok = false
		}
	}()
	p.typ()
	return true
}

// localDecl parses LocalVariableDeclaration: Type VariableDeclarators, the
// modifiers already read; with semi it also takes the ending ;.
func (p *parser) localDecl(final, semi bool) *localStmt {
	s := &localStmt{at: at(p.tok().line), final: final}
	if p.tok().kind == kIdent && p.tok().text == "var" && p.peekAt(1).kind == kIdent {
		p.advance()
	} else {
		s.typ = p.typ()
	}
	for {
		name := p.expectIdent()
		d := &declarator{at: at(name.line), name: name.text}
		for p.isOp("[") && p.peekAt(1).kind == kOp && p.peekAt(1).text == "]" {
			p.advance()
			p.advance()
			d.dims++
		}
		if p.acceptOp("=") {
			if p.isOp("{") {
				d.init = p.arrayInit()
			} else {
				d.init = p.expr()
			}
		}
		s.vars = append(s.vars, d)
		if !p.acceptOp(",") {
			break
		}
	}
	if semi {
		p.expectOp(";")
	}
	return s
}

// arrayInit parses ArrayInitializer: { [VariableInitializer {,
// VariableInitializer} [,]] }.
func (p *parser) arrayInit() *newArrayExpr {
	p.enter()
	defer p.leave()
	a := &newArrayExpr{at: at(p.tok().line), lit: true}
	p.expectOp("{")
	for !p.isOp("}") {
		if p.isOp("{") {
			a.init = append(a.init, p.arrayInit())
		} else {
			a.init = append(a.init, p.expr())
		}
		if !p.acceptOp(",") {
			break
		}
	}
	p.expectOp("}")
	if a.init == nil {
		a.init = []expr{}
	}
	return a
}
