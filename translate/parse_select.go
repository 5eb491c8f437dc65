package translate

import "strings"

// selectStatement parses a SELECT.
//
//	select := SELECT JSON? DISTINCT? ('*' | selector (',' selector)*)
//	          FROM tableName (WHERE where)? (GROUP BY idents)?
//	          (ORDER BY ordering (',' ordering)*)?
//	          (PER PARTITION LIMIT term)? (LIMIT term)? (ALLOW FILTERING)?
func (p *parser) selectStatement() (Statement, error) {
	p.next()
	s := &SelectStmt{}
	// JSON and DISTINCT are keywords only where a selector could not be a
	// column of that name: "SELECT json FROM t" selects a column.
	if p.isKeyword("json") && !p.startsSelectorEnd(1) {
		p.next()
		s.JSON = true
	}
	if p.isKeyword("distinct") && !p.startsSelectorEnd(1) {
		p.next()
		s.Distinct = true
	}
	if !p.acceptPunct("*") {
		for {
			sel, err := p.selector()
			if err != nil {
				return nil, err
			}
			s.Selectors = append(s.Selectors, sel)
			if !p.acceptPunct(",") {
				break
			}
		}
	}
	if err := p.expectKeyword("from"); err != nil {
		return nil, err
	}
	var err error
	if s.Table, err = p.tableName(); err != nil {
		return nil, err
	}
	if p.acceptKeyword("where") {
		if s.Where, err = p.where(); err != nil {
			return nil, err
		}
	}
	if p.acceptKeyword("group") {
		if err := p.expectKeyword("by"); err != nil {
			return nil, err
		}
		for {
			c, err := p.ident()
			if err != nil {
				return nil, err
			}
			s.GroupBy = append(s.GroupBy, c)
			if !p.acceptPunct(",") {
				break
			}
		}
	}
	if p.acceptKeyword("order") {
		if err := p.expectKeyword("by"); err != nil {
			return nil, err
		}
		for {
			o := Ordering{Pos: p.tok.pos}
			if o.Column, err = p.ident(); err != nil {
				return nil, err
			}
			if p.acceptKeyword("ann") {
				if err := p.expectKeyword("of"); err != nil {
					return nil, err
				}
				if o.ANN, err = p.term(); err != nil {
					return nil, err
				}
			} else if !p.acceptKeyword("asc") {
				o.Desc = p.acceptKeyword("desc")
			}
			s.OrderBy = append(s.OrderBy, o)
			if !p.acceptPunct(",") {
				break
			}
		}
	}
	if p.acceptKeyword("per") {
		if err := p.expectKeyword("partition"); err != nil {
			return nil, err
		}
		if err := p.expectKeyword("limit"); err != nil {
			return nil, err
		}
		if s.PerPartitionLimit, err = p.term(); err != nil {
			return nil, err
		}
	}
	if p.acceptKeyword("limit") {
		if s.Limit, err = p.term(); err != nil {
			return nil, err
		}
	}
	if p.acceptKeyword("allow") {
		if err := p.expectKeyword("filtering"); err != nil {
			return nil, err
		}
		s.AllowFiltering = true
	}
	return s, nil
}

// startsSelectorEnd reports whether the token i places ahead ends a
// selector (',' or FROM), so that the current word is a column name.
func (p *parser) startsSelectorEnd(i int) bool {
	t := p.peek(i)
	return (t.kind == tokPunct && t.text == ",") || (t.kind == tokIdent && t.text == "from")
}

// selector parses one selection item.
//
//	selector := selectorExpr (AS ident)?
func (p *parser) selector() (Selector, error) {
	expr, err := p.selectorExpr()
	if err != nil {
		return Selector{}, err
	}
	sel := Selector{Expr: expr}
	if p.acceptKeyword("as") {
		sel.Alias, err = p.ident()
	}
	return sel, err
}

// selectorExpr parses what a selector computes.
//
//	selectorExpr := primary ('.' ident | '[' term ']' | '[' term? '..' term? ']')*
//	primary := CAST '(' selectorExpr AS type ')' | (ident '.')? ident '(' ('*' | selectorExprs)? ')'
//	         | ident | term
func (p *parser) selectorExpr() (SelectorExpr, error) {
	expr, err := p.selectorPrimary()
	if err != nil {
		return nil, err
	}
	for {
		pos := p.tok.pos
		switch {
		case p.acceptPunct("."):
			field, err := p.ident()
			if err != nil {
				return nil, err
			}
			expr = &FieldSelector{Expr: expr, Field: field, Pos: pos}
		case p.acceptPunct("["):
			el := &ElementSelector{Expr: expr, Pos: pos}
			if !p.isPunct("..") {
				if el.Key, err = p.term(); err != nil {
					return nil, err
				}
			}
			if p.acceptPunct("..") {
				el.Slice, el.From, el.Key = true, el.Key, nil
				if !p.isPunct("]") {
					if el.To, err = p.term(); err != nil {
						return nil, err
					}
				}
			}
			if err := p.expectPunct("]"); err != nil {
				return nil, err
			}
			expr = el
		default:
			return expr, nil
		}
	}
}

func (p *parser) selectorPrimary() (SelectorExpr, error) {
	pos := p.tok.pos
	isName := p.tok.kind == tokIdent || p.tok.kind == tokQuotedIdent
	if isName && p.tok.kind == tokIdent && p.keywordLike() != "" {
		isName = false
	}
	if !isName {
		t, err := p.term()
		if err != nil {
			return nil, err
		}
		return &TermSelector{Term: t, Pos: pos}, nil
	}
	if p.isKeyword("cast") && p.peek(1).kind == tokPunct && p.peek(1).text == "(" {
		p.next()
		p.next()
		inner, err := p.selectorExpr()
		if err != nil {
			return nil, err
		}
		if err := p.expectKeyword("as"); err != nil {
			return nil, err
		}
		t, err := p.cqlType()
		if err != nil {
			return nil, err
		}
		return &CastSelector{Expr: inner, Type: t, Pos: pos}, p.expectPunct(")")
	}
	qualified := p.peek(1).kind == tokPunct && p.peek(1).text == "." && (p.peek(2).kind == tokIdent || p.peek(2).kind == tokQuotedIdent) &&
		p.peek(3).kind == tokPunct && p.peek(3).text == "("
	if next := p.peek(1); p.tok.kind == tokIdent && next.kind == tokPunct && next.text == "(" || qualified {
		// cqlfunc.Function names include reserved words such as token;
		// ks.f names a function of keyspace ks.
		call := &CallSelector{Name: p.tok.text, Pos: pos}
		if qualified {
			call.Name += "." + p.peek(2).text
			p.next()
			p.next()
		}
		p.next()
		p.next()
		// '*' is an argument of COUNT alone, in Cassandra's grammar.
		if strings.EqualFold(call.Name, "count") && p.acceptPunct("*") {
			call.Star = true
		} else {
			for !p.isPunct(")") {
				arg, err := p.selectorExpr()
				if err != nil {
					return nil, err
				}
				call.Args = append(call.Args, arg)
				if !p.acceptPunct(",") {
					break
				}
			}
		}
		return call, p.expectPunct(")")
	}
	name, err := p.ident()
	if err != nil {
		return nil, err
	}
	return &ColumnSelector{Name: name, Pos: pos}, nil
}
