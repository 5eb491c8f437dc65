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
		if !p.isPunct("(") {
			return nil, p.unexpected("")
		}
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
			u.TTL, err = p.intValue()
		case p.acceptKeyword("timestamp"):
			u.Timestamp, err = p.intValue()
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

// usingTimestamp parses DELETE's USING clause, which takes a timestamp
// only.
//
//	usingTimestamp := USING TIMESTAMP intValue
func (p *parser) usingTimestamp() (Using, error) {
	var u Using
	if !p.acceptKeyword("using") {
		return u, nil
	}
	if !p.acceptKeyword("timestamp") {
		return u, p.unexpected("K_TIMESTAMP")
	}
	var err error
	u.Timestamp, err = p.intValue()
	return u, err
}

// intValue parses the value of a TTL or TIMESTAMP: an integer or a bind
// marker.
//
//	intValue := INTEGER | '?' | ':' name
func (p *parser) intValue() (Term, error) {
	switch p.tok.kind {
	case tokInteger, tokMarker, tokNamedMarker:
		return p.term()
	}
	return nil, p.unexpected("")
}
