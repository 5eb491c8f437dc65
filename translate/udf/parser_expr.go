package udf

// primitiveNames are the primitive type keywords.
var primitiveNames = map[string]bool{
	"boolean": true, "byte": true, "short": true, "char": true, "int": true,
	"long": true, "float": true, "double": true, "void": true,
}

// typ parses Type: PrimitiveType {[]} | ClassType {[]}, where ClassType is
// Identifier [TypeArguments] {. Identifier [TypeArguments]}.
func (p *parser) typ() *typeRef {
	t := p.tok()
	r := &typeRef{at: at(t.line)}
	switch {
	case t.kind == kKeyword && primitiveNames[t.text]:
		p.advance()
		r.name = t.text
	case t.kind == kIdent:
		r.name = p.advance().text
		for {
			if p.isOp("<") {
				if r.args != nil || r.diamond {
					p.fail("Syntax error on token \"<\", delete this token")
				}
				p.typeArgs(r)
			}
			if !(p.isOp(".") && p.peekAt(1).kind == kIdent) {
				break
			}
			p.advance()
			r.name += "." + p.advance().text
		}
	default:
		p.fail("Syntax error on token \"%s\", Type expected", tokText(t))
	}
	for p.isOp("[") && p.peekAt(1).kind == kOp && p.peekAt(1).text == "]" {
		p.advance()
		p.advance()
		r.dims++
	}
	return r
}

// typeArgs parses TypeArguments: < TypeArgument {, TypeArgument} >, or the
// diamond <>.
func (p *parser) typeArgs(r *typeRef) {
	p.enter()
	defer p.leave()
	p.advance()
	if p.closeAngle() {
		r.diamond = true
		return
	}
	for {
		if p.isOp("?") {
			w := &typeRef{at: at(p.tok().line), name: "Object", wild: true}
			p.advance()
			if p.tok().kind == kKeyword && (p.tok().text == "extends" || p.tok().text == "super") {
				p.advance()
				w = p.typ()
				w.wild = true
			}
			r.args = append(r.args, w)
		} else {
			r.args = append(r.args, p.typ())
		}
		if !p.acceptOp(",") {
			break
		}
	}
	if !p.closeAngle() {
		p.fail("Syntax error, insert \">\" to complete ReferenceType")
	}
}

// closeAngle takes one '>' of the current token, which may be >> or >>>
// closing several type argument lists at once.
func (p *parser) closeAngle() bool {
	t := p.tok()
	if t.kind != kOp || len(t.text) <= p.gt || t.text[p.gt] != '>' {
		return false
	}
	for _, c := range t.text[p.gt:] {
		if c != '>' {
			return false
		}
	}
	p.gt++
	if p.gt == len(t.text) {
		p.advance()
	}
	return true
}

// expr parses Expression: an assignment or a conditional expression.
func (p *parser) expr() expr {
	p.enter()
	defer p.leave()
	x := p.conditional()
	t := p.tok()
	if t.kind == kOp && assignOps[t.text] && p.gt == 0 {
		switch x.(type) {
		case *nameExpr, *fieldExpr, *indexExpr:
		default:
			p.fail("The left-hand side of an assignment must be a variable")
		}
		p.advance()
		return &assignExpr{at: at(t.line), op: t.text, x: x, y: p.expr()}
	}
	if p.isOp("->") {
		p.refuse("lambda expressions")
	}
	return x
}

var assignOps = map[string]bool{
	"=": true, "+=": true, "-=": true, "*=": true, "/=": true, "%=": true,
	"&=": true, "|=": true, "^=": true, "<<=": true, ">>=": true, ">>>=": true,
}

// conditional parses ConditionalExpression: BinaryExpression [? Expression
// : ConditionalExpression].
func (p *parser) conditional() expr {
	c := p.binary(0)
	if !p.isOp("?") {
		return c
	}
	line := p.advance().line
	p.enter()
	defer p.leave()
	x := p.expr()
	p.expectOp(":")
	return &condExpr{at: at(line), c: c, x: x, y: p.conditional()}
}

// binaryLevels are the binary operators by increasing precedence.
var binaryLevels = [][]string{
	{"||"}, {"&&"}, {"|"}, {"^"}, {"&"}, {"==", "!="}, {"<", ">", "<=", ">=", "instanceof"},
	{"<<", ">>", ">>>"}, {"+", "-"}, {"*", "/", "%"},
}

// binary parses the binary operators of precedence level and above, left
// associative; each operand of a chain counts as a level of nesting.
func (p *parser) binary(level int) expr {
	if level == len(binaryLevels) {
		return p.unary()
	}
	x := p.binary(level + 1)
	depth := p.depth
	defer func() { p.depth = depth }()
	for {
		t := p.tok()
		op := ""
		for _, o := range binaryLevels[level] {
			if (t.kind == kOp || t.kind == kKeyword) && t.text == o && p.gt == 0 {
				op = o
			}
		}
		if op == "" {
			return x
		}
		p.advance()
		p.enter()
		if op == "instanceof" {
			if p.isKw("final") {
				p.refuse("instanceof patterns")
			}
			typ := p.typ()
			if p.tok().kind == kIdent {
				p.refuse("instanceof patterns")
			}
			x = &instanceofExpr{at: at(t.line), x: x, typ: typ}
			continue
		}
		x = &binaryExpr{at: at(t.line), op: op, x: x, y: p.binary(level + 1)}
	}
}

// unary parses UnaryExpression: prefix operators, casts and postfix
// expressions.
func (p *parser) unary() expr {
	p.enter()
	defer p.leave()
	t := p.tok()
	if t.kind == kOp {
		switch t.text {
		case "+", "-", "!", "~", "++", "--":
			p.advance()
			if t.text == "-" && (p.tok().kind == kInt || p.tok().kind == kLong) {
				lit := p.advance()
				return p.postfix(&litExpr{at: at(lit.line), tok: lit, neg: true}, true)
			}
			return &unaryExpr{at: at(t.line), op: t.text, x: p.unary()}
		case "(":
			if c := p.tryCast(); c != nil {
				return c
			}
		}
	}
	return p.postfix(p.primary(), false)
}

// tryCast parses a cast when the parenthesis starts one: ( PrimitiveType )
// UnaryExpression, or ( ReferenceType ) UnaryExpressionNotPlusMinus.
func (p *parser) tryCast() expr {
	m := p.mark()
	line := p.advance().line
	t := p.tok()
	if t.kind == kKeyword && primitiveNames[t.text] {
		typ := p.typ()
		p.expectOp(")")
		return &castExpr{at: at(line), typ: typ, x: p.unary()}
	}
	if t.kind != kIdent || !p.speculateType() || !p.acceptOp(")") {
		p.reset(m)
		return nil
	}
	n := p.tok()
	startsOperand := n.kind == kIdent || n.kind == kInt || n.kind == kLong || n.kind == kFloat ||
		n.kind == kDouble || n.kind == kChar || n.kind == kString ||
		n.kind == kKeyword && (n.text == "new" || n.text == "true" || n.text == "false" || n.text == "null" ||
			n.text == "this" || n.text == "super" || primitiveNames[n.text]) ||
		n.kind == kOp && (n.text == "(" || n.text == "!" || n.text == "~")
	if !startsOperand {
		p.reset(m)
		return nil
	}
	p.reset(m)
	p.advance()
	typ := p.typ()
	p.expectOp(")")
	return &castExpr{at: at(line), typ: typ, x: p.unary()}
}

// postfix parses the selectors, indexes and postfix operators after a
// primary expression.
func (p *parser) postfix(x expr, negLit bool) expr {
	depth := p.depth
	defer func() { p.depth = depth }()
	for {
		t := p.tok()
		switch {
		case p.isOp("."):
			p.advance()
			switch {
			case p.isOp("<"):
				p.refuse("explicit type arguments")
			case p.isKw("class"):
				p.fail("Syntax error on token \"class\", Identifier expected")
			case p.isKw("this") || p.isKw("super"):
				p.refuse("this and super")
			case p.isKw("new"):
				p.refuse("inner class creations")
			}
			name := p.expectIdent()
			if p.isOp("(") {
				x = &callExpr{at: at(name.line), x: x, name: name.text, args: p.args()}
			} else if p.isKw("class") {
				p.fail("Syntax error on token \"class\", Identifier expected")
			} else {
				x = &fieldExpr{at: at(name.line), x: x, name: name.text}
			}
		case p.isOp("["):
			p.advance()
			p.enter()
			i := p.expr()
			p.leave()
			p.expectOp("]")
			x = &indexExpr{at: at(t.line), x: x, i: i}
		case p.isOp("++") || p.isOp("--"):
			p.advance()
			x = &postfixExpr{at: at(t.line), op: t.text, x: x}
		case p.isOp("::"):
			p.refuse("method references")
		default:
			return x
		}
		if negLit {
			p.fail("Syntax error on token \"%s\", delete this token", tokText(t))
		}
		p.enter()
	}
}

// args parses Arguments: ( [Expression {, Expression}] ).
func (p *parser) args() []expr {
	p.expectOp("(")
	list := []expr{}
	for !p.isOp(")") {
		list = append(list, p.expr())
		if !p.acceptOp(",") {
			break
		}
	}
	p.expectOp(")")
	return list
}

// primary parses Primary: a literal, a parenthesized expression, a name or
// method call, an instance or array creation, or a class literal.
func (p *parser) primary() expr {
	t := p.tok()
	line := at(t.line)
	switch t.kind {
	case kInt, kLong, kFloat, kDouble, kChar, kString:
		p.advance()
		return &litExpr{at: line, tok: t}
	case kIdent:
		p.advance()
		if p.isOp("->") {
			p.refuse("lambda expressions")
		}
		if p.isOp("(") {
			return &callExpr{at: line, name: t.text, args: p.args()}
		}
		if p.isOp("[") && p.peekAt(1).kind == kOp && p.peekAt(1).text == "]" || p.isOp(".") && p.peekAt(1).kind == kKeyword && p.peekAt(1).text == "class" {
			p.p--
			return p.classLiteral()
		}
		if p.isOp("<") && p.genericClassLiteral() {
			p.refuse("class literals of parameterized types")
		}
		return &nameExpr{at: line, name: t.text}
	case kKeyword:
		switch t.text {
		case "true", "false", "null":
			p.advance()
			return &litExpr{at: line, tok: t}
		case "new":
			return p.creator()
		case "this", "super":
			p.refuse("this and super")
		case "switch":
			p.refuse("switch expressions")
		}
		if primitiveNames[t.text] {
			return p.classLiteral()
		}
	case kOp:
		switch t.text {
		case "(":
			if p.lambdaAhead() {
				p.refuse("lambda expressions")
			}
			p.advance()
			x := p.expr()
			p.expectOp(")")
			if p.isOp("->") {
				p.refuse("lambda expressions")
			}
			return x
		case "{":
			p.fail("Array constants can only be used in initializers")
		}
	}
	p.fail("Syntax error on token \"%s\", delete this token", tokText(t))
	return nil
}

// genericClassLiteral reports whether List<Integer>.class or the like
// follows, which Java refuses too.
func (p *parser) genericClassLiteral() bool {
	m := p.mark()
	defer p.reset(m)
	p.p--
	return p.speculateType() && p.isOp(".") && p.peekAt(1).kind == kKeyword && p.peekAt(1).text == "class"
}

// classLiteral parses Type . class.
func (p *parser) classLiteral() expr {
	line := at(p.tok().line)
	typ := p.typ()
	if !p.isOp(".") || !(p.peekAt(1).kind == kKeyword && p.peekAt(1).text == "class") {
		p.fail("Syntax error, insert \". class\" to complete Expression")
	}
	p.advance()
	p.advance()
	return &classLit{at: line, typ: typ}
}

// lambdaAhead reports whether the parenthesis at the current token closes
// before an arrow: a lambda's parameter list.
func (p *parser) lambdaAhead() bool {
	depth := 0
	for i := p.p; i < len(p.toks); i++ {
		t := p.toks[i]
		if t.kind != kOp {
			if t.kind == kEOF {
				return false
			}
			continue
		}
		switch t.text {
		case "(":
			depth++
		case ")":
			depth--
			if depth == 0 {
				n := p.toks[min(i+1, len(p.toks)-1)]
				return n.kind == kOp && n.text == "->"
			}
		case ";", "{", "}":
			return false
		}
	}
	return false
}

// creator parses ClassInstanceCreationExpression: new ClassType (
// [Arguments] ), and ArrayCreationExpression: new Type DimExprs {[]} | new
// Type Dims ArrayInitializer.
func (p *parser) creator() expr {
	line := at(p.tok().line)
	p.advance()
	if p.isOp("<") {
		p.refuse("explicit type arguments")
	}
	typ := p.typ()
	if typ.dims > 0 {
		if !p.isOp("{") {
			p.fail("Syntax error, insert \"ArrayInitializer\" to complete ArrayCreationWithArrayInitializer")
		}
		a := p.arrayInit()
		a.at, a.typ = line, typ
		return a
	}
	if p.isOp("[") {
		a := &newArrayExpr{at: line, typ: typ}
		for p.isOp("[") {
			p.advance()
			if p.acceptOp("]") {
				a.typ.dims++
				for p.isOp("[") {
					p.advance()
					p.expectOp("]")
					a.typ.dims++
				}
				break
			}
			p.enter()
			a.dims = append(a.dims, p.expr())
			p.leave()
			p.expectOp("]")
			a.typ.dims++
		}
		return a
	}
	if !p.isOp("(") {
		p.fail("Syntax error, insert \"( )\" to complete Expression")
	}
	n := &newExpr{at: line, typ: typ, args: p.args()}
	if p.isOp("{") {
		p.refuse("anonymous classes")
	}
	return n
}
