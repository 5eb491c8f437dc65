package translate

// updateStatement parses an UPDATE.
//
//	update := UPDATE tableName using? SET assignment (',' assignment)*
//	          WHERE where (IF EXISTS | IF conditions)?
func (p *parser) updateStatement() (Statement, error) {
	p.next()
	u := &UpdateStmt{}
	var err error
	if u.Table, err = p.tableName(); err != nil {
		return nil, err
	}
	if u.Using, err = p.using(); err != nil {
		return nil, err
	}
	if err := p.expectKeyword("set"); err != nil {
		return nil, err
	}
	for {
		a, err := p.assignment()
		if err != nil {
			return nil, err
		}
		u.Assignments = append(u.Assignments, a)
		if !p.acceptPunct(",") {
			break
		}
	}
	if err := p.expectKeyword("where"); err != nil {
		return nil, err
	}
	if u.Where, err = p.where(); err != nil {
		return nil, err
	}
	u.IfExists, u.Conditions, err = p.conditions()
	return u, err
}

// assignment parses one SET item.
//
//	assignment := ident '=' term | ident '=' ident ('+' | '-') term
//	            | ident '=' term '+' ident | ident ('+=' | '-=') term
//	            | ident '[' term ']' '=' term | ident '.' ident '=' term
func (p *parser) assignment() (Assignment, error) {
	a := Assignment{Pos: p.tok.pos}
	var err error
	if a.Column, a.Key, a.Field, err = p.target(); err != nil {
		return a, err
	}
	switch {
	case p.acceptPunct("+="):
		a.Op = AssignAdd
		a.Value, err = p.term()
		return a, err
	case p.acceptPunct("-="):
		a.Op = AssignSub
		a.Value, err = p.term()
		return a, err
	}
	if err := p.expectPunct("="); err != nil {
		return a, err
	}
	// c = c + v and c = c - v name the column again on the right.
	if (p.tok.kind == tokIdent || p.tok.kind == tokQuotedIdent) && p.tok.text == a.Column && a.Key == nil && a.Field == "" {
		if n := p.peek(1); n.kind == tokPunct && (n.text == "+" || n.text == "-") {
			p.next()
			a.Op = AssignAdd
			if p.tok.text == "-" {
				a.Op = AssignSub
			}
			p.next()
			a.Value, err = p.term()
			return a, err
		}
	}
	if a.Value, err = p.term(); err != nil {
		return a, err
	}
	// c = v + c prepends to a list.
	if a.Key == nil && a.Field == "" && p.acceptPunct("+") {
		name, err := p.ident()
		if err != nil {
			return a, err
		}
		if name != a.Column {
			return a, invalidf("Only expressions of the form X = <value> + X are supported.")
		}
		a.Op = AssignPrepend
	}
	return a, nil
}

// conditions parses an optional IF EXISTS or IF condition list.
//
//	conditions := IF EXISTS | IF condition (AND condition)*
//	condition := ident ('[' term ']' | '.' ident)? (op term | IN ('(' terms ')' | marker))
func (p *parser) conditions() (bool, []Condition, error) {
	if !p.acceptKeyword("if") {
		return false, nil, nil
	}
	if p.acceptKeyword("exists") {
		return true, nil, nil
	}
	var out []Condition
	for {
		c := Condition{Pos: p.tok.pos}
		var err error
		if c.Column, c.Key, c.Field, err = p.target(); err != nil {
			return false, nil, err
		}
		if p.acceptKeyword("in") {
			c.Op = OpIN
			if p.tok.kind == tokMarker || p.tok.kind == tokNamedMarker {
				c.Value = p.marker()
			} else {
				if err := p.expectPunct("("); err != nil {
					return false, nil, err
				}
				if c.Values, err = p.terms(")"); err != nil {
					return false, nil, err
				}
				if err := p.expectPunct(")"); err != nil {
					return false, nil, err
				}
			}
		} else {
			op, ok := comparison[p.tok.text]
			if p.tok.kind != tokPunct || !ok {
				return false, nil, p.unexpected("")
			}
			p.next()
			c.Op = op
			if c.Value, err = p.term(); err != nil {
				return false, nil, err
			}
		}
		out = append(out, c)
		if !p.acceptKeyword("and") {
			return false, out, nil
		}
	}
}

// target parses the column an assignment, condition or deletion names,
// with an optional collection element or UDT field.
//
//	target := ident ('[' term ']' | '.' ident)?
func (p *parser) target() (column string, key Term, field string, err error) {
	if column, err = p.ident(); err != nil {
		return
	}
	switch {
	case p.acceptPunct("["):
		if key, err = p.term(); err != nil {
			return
		}
		err = p.expectPunct("]")
	case p.acceptPunct("."):
		field, err = p.ident()
	}
	return
}
