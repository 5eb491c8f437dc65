package translate

// insertStatement parses an INSERT.
//
//	insert := INSERT INTO tableName
//	          ( '(' idents ')' VALUES '(' terms ')'
//	          | JSON term (DEFAULT (NULL | UNSET))? )
//	          (IF NOT EXISTS)? using?
func (p *parser) insertStatement() (Statement, error) {
	p.next()
	if err := p.expectKeyword("into"); err != nil {
		return nil, err
	}
	ins := &InsertStmt{}
	var err error
	if ins.Table, err = p.tableName(); err != nil {
		return nil, err
	}
	if p.acceptKeyword("json") {
		if ins.JSON, err = p.term(); err != nil {
			return nil, err
		}
		if p.acceptKeyword("default") {
			switch {
			case p.acceptKeyword("unset"):
				ins.DefaultUnset = true
			case p.acceptKeyword("null"):
			default:
				return nil, p.unexpected("")
			}
		}
	} else {
		if ins.Columns, err = p.identList(); err != nil {
			return nil, err
		}
		if err := p.expectKeyword("values"); err != nil {
			return nil, err
		}
		if err := p.expectPunct("("); err != nil {
			return nil, err
		}
		if ins.Values, err = p.terms(")"); err != nil {
			return nil, err
		}
		if err := p.expectPunct(")"); err != nil {
			return nil, err
		}
	}
	if ins.IfNotExists, err = p.ifNotExists(); err != nil {
		return nil, err
	}
	ins.Using, err = p.using()
	return ins, err
}

// using parses an optional USING clause.
//
//	using := USING (TTL term | TIMESTAMP term) (AND (TTL term | TIMESTAMP term))?
func (p *parser) using() (Using, error) {
	var u Using
	if !p.acceptKeyword("using") {
		return u, nil
	}
	for {
		var err error
		switch {
		case p.acceptKeyword("ttl"):
			u.TTL, err = p.term()
		case p.acceptKeyword("timestamp"):
			u.Timestamp, err = p.term()
		default:
			return u, p.unexpected("")
		}
		if err != nil {
			return u, err
		}
		if !p.acceptKeyword("and") {
			return u, nil
		}
	}
}
