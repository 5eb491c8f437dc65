package udf

// statement parses Statement.
func (p *parser) statement() stmt {
	p.enter()
	defer p.leave()
	t := p.tok()
	line := at(t.line)
	if t.kind == kOp {
		switch t.text {
		case "{":
			return p.block()
		case ";":
			p.advance()
			return &emptyStmt{line}
		}
	}
	if t.kind == kIdent && p.peekAt(1).kind == kOp && p.peekAt(1).text == ":" {
		p.refuse("labeled statements")
	}
	if t.kind != kKeyword {
		return p.exprStatement()
	}
	switch t.text {
	case "if":
		p.advance()
		s := &ifStmt{at: line, cond: p.parenExpr()}
		s.then = p.statement()
		if p.isKw("else") {
			p.advance()
			s.els = p.statement()
		}
		return s
	case "while":
		p.advance()
		s := &whileStmt{at: line, cond: p.parenExpr()}
		s.body = p.statement()
		return s
	case "do":
		p.advance()
		s := &doStmt{at: line, body: p.statement()}
		if !p.isKw("while") {
			p.fail("Syntax error, insert \"while ( Expression ) ;\" to complete DoStatement")
		}
		p.advance()
		s.cond = p.parenExpr()
		p.expectOp(";")
		return s
	case "for":
		return p.forStatement()
	case "return":
		p.advance()
		s := &returnStmt{at: line}
		if !p.isOp(";") {
			s.x = p.expr()
		}
		p.expectOp(";")
		return s
	case "break", "continue":
		p.advance()
		if p.tok().kind == kIdent {
			p.refuse("labeled statements")
		}
		p.expectOp(";")
		if t.text == "break" {
			return &breakStmt{line}
		}
		return &continueStmt{line}
	case "throw":
		p.advance()
		s := &throwStmt{at: line, x: p.expr()}
		p.expectOp(";")
		return s
	case "try":
		return p.tryStatement()
	case "switch":
		return p.switchStatement()
	case "assert":
		p.advance()
		s := &assertStmt{at: line, cond: p.expr()}
		if p.acceptOp(":") {
			s.msg = p.expr()
		}
		p.expectOp(";")
		return s
	case "synchronized":
		p.refuse("synchronized statements")
	case "else", "case", "default", "catch", "finally":
		p.fail("Syntax error on token \"%s\", delete this token", t.text)
	}
	return p.exprStatement()
}

// exprStatement parses StatementExpression ;, refusing expressions Java
// does not allow as statements.
func (p *parser) exprStatement() stmt {
	line := at(p.tok().line)
	x := p.expr()
	switch x.(type) {
	case *assignExpr, *callExpr, *newExpr, *postfixExpr:
	case *unaryExpr:
		if op := x.(*unaryExpr).op; op != "++" && op != "--" {
			p.failAt(int(line), "Syntax error, insert \"AssignmentOperator Expression\" to complete Expression")
		}
	default:
		if p.isOp(";") {
			p.failAt(int(line), "Syntax error, insert \"AssignmentOperator Expression\" to complete Expression")
		}
	}
	p.expectOp(";")
	return &exprStmt{at: line, x: x}
}

// parenExpr parses ( Expression ).
func (p *parser) parenExpr() expr {
	p.expectOp("(")
	x := p.expr()
	p.expectOp(")")
	return x
}

// forStatement parses BasicForStatement: for ( [ForInit] ; [Expression] ;
// [ForUpdate] ) Statement, and EnhancedForStatement: for ( {Modifier} Type
// Identifier : Expression ) Statement.
func (p *parser) forStatement() stmt {
	line := at(p.tok().line)
	p.advance()
	p.expectOp("(")
	final := false
	for p.isKw("final") || p.isOp("@") {
		if p.isKw("final") {
			p.advance()
			final = true
		}
		p.annotations()
	}
	if final || p.declStarts() {
		decl := p.localDecl(final, false)
		if p.acceptOp(":") {
			if len(decl.vars) != 1 || decl.vars[0].init != nil {
				p.fail("Syntax error on token \":\", ; expected")
			}
			typ := decl.typ
			if typ != nil && decl.vars[0].dims > 0 {
				c := *typ
				c.dims += decl.vars[0].dims
				typ = &c
			}
			s := &foreachStmt{at: line, final: final, typ: typ, name: decl.vars[0].name, x: p.expr()}
			p.expectOp(")")
			s.body = p.statement()
			return s
		}
		s := &forStmt{at: line, init: []stmt{decl}}
		return p.forRest(s)
	}
	s := &forStmt{at: line}
	for !p.isOp(";") {
		s.init = append(s.init, &exprStmt{at: at(p.tok().line), x: p.expr()})
		if !p.acceptOp(",") {
			break
		}
	}
	return p.forRest(s)
}

// declStarts reports whether a local declaration starts here.
func (p *parser) declStarts() bool {
	t := p.tok()
	if t.kind == kKeyword && primitiveNames[t.text] {
		return true
	}
	if t.kind != kIdent {
		return false
	}
	if t.text == "var" && p.peekAt(1).kind == kIdent {
		return true
	}
	m := p.mark()
	defer p.reset(m)
	return p.speculateType() && p.tok().kind == kIdent
}

// forRest parses ; [Expression] ; [ForUpdate] ) Statement.
func (p *parser) forRest(s *forStmt) stmt {
	p.expectOp(";")
	if !p.isOp(";") {
		s.cond = p.expr()
	}
	p.expectOp(";")
	for !p.isOp(")") {
		s.update = append(s.update, p.expr())
		if !p.acceptOp(",") {
			break
		}
	}
	p.expectOp(")")
	s.body = p.statement()
	return s
}

// tryStatement parses try Block Catches [Finally] | try Block Finally.
func (p *parser) tryStatement() stmt {
	s := &tryStmt{at: at(p.tok().line)}
	p.advance()
	if p.isOp("(") {
		p.refuse("try-with-resources statements")
	}
	s.body = p.block()
	for p.isKw("catch") {
		c := &catchClause{at: at(p.tok().line)}
		p.advance()
		p.expectOp("(")
		if p.isKw("final") {
			p.advance()
		}
		c.types = append(c.types, p.typ())
		for p.acceptOp("|") {
			c.types = append(c.types, p.typ())
		}
		c.name = p.expectIdent().text
		p.expectOp(")")
		c.body = p.block()
		s.catches = append(s.catches, c)
	}
	if p.isKw("finally") {
		p.advance()
		s.finally = p.block()
	}
	if s.catches == nil && s.finally == nil {
		p.fail("Syntax error, insert \"Finally\" to complete TryStatement")
	}
	return s
}

// switchStatement parses switch ( Expression ) SwitchBlock, with the
// case labels of Java 11 (one constant per case, no arrows).
func (p *parser) switchStatement() stmt {
	s := &switchStmt{at: at(p.tok().line)}
	p.advance()
	s.x = p.parenExpr()
	p.expectOp("{")
	for !p.acceptOp("}") {
		c := &switchCase{at: at(p.tok().line)}
		switch {
		case p.isKw("case"):
			for p.isKw("case") {
				p.advance()
				c.labels = append(c.labels, p.conditional())
				if p.isOp("->") {
					p.refuse("switch rules (case ... ->)")
				}
				if p.isOp(",") {
					p.refuse("case labels with several constants")
				}
				p.expectOp(":")
			}
		case p.isKw("default"):
			p.advance()
			if p.isOp("->") {
				p.refuse("switch rules (case ... ->)")
			}
			p.expectOp(":")
		default:
			p.fail("Syntax error on token \"%s\", case expected", tokText(p.tok()))
		}
		for !p.isKw("case") && !p.isKw("default") && !p.isOp("}") {
			if p.tok().kind == kEOF {
				p.failAt(p.prevLine(), "Syntax error, insert \"}\" to complete SwitchBlock")
			}
			c.body = append(c.body, p.blockStatement())
		}
		s.cases = append(s.cases, c)
	}
	return s
}
