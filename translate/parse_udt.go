package translate

// createType parses CREATE TYPE.
//
//	createType := CREATE TYPE (IF NOT EXISTS)? (ident '.')? ident
//	              '(' ident type (',' ident type)* ')'
func (p *parser) createType() (Statement, error) {
	p.next()
	p.next()
	ct := &CreateTypeStmt{}
	var err error
	if ct.IfNotExists, err = p.ifNotExists(); err != nil {
		return nil, err
	}
	if ct.Name, err = p.tableName(); err != nil {
		return nil, err
	}
	if err := p.expectPunct("("); err != nil {
		return nil, err
	}
	for {
		f, err := p.field()
		if err != nil {
			return nil, err
		}
		ct.Fields = append(ct.Fields, f)
		if !p.acceptPunct(",") {
			break
		}
	}
	return ct, p.expectPunct(")")
}

// field parses a user type's field: ident type.
func (p *parser) field() (ColumnDef, error) {
	f := ColumnDef{Pos: p.tok.pos}
	var err error
	if f.Name, err = p.ident(); err != nil {
		return f, err
	}
	f.Type, err = p.cqlType()
	return f, err
}

// alterType parses ALTER TYPE.
//
//	alterType := ALTER TYPE (IF EXISTS)? (ident '.')? ident
//	             ( ADD (IF NOT EXISTS)? ident type
//	             | RENAME (IF EXISTS)? ident TO ident (AND ident TO ident)* )
func (p *parser) alterType() (Statement, error) {
	p.next()
	p.next()
	at := &AlterTypeStmt{IfExists: p.ifExists()}
	var err error
	if at.Name, err = p.tableName(); err != nil {
		return nil, err
	}
	switch {
	case p.acceptKeyword("add"):
		if at.IfField, err = p.ifNotExists(); err != nil {
			return nil, err
		}
		f, err := p.field()
		if err != nil {
			return nil, err
		}
		at.Add = &f
	case p.acceptKeyword("rename"):
		at.IfField = p.ifExists()
		if at.Renames, err = p.renames(); err != nil {
			return nil, err
		}
	case p.isKeyword("alter"):
		return nil, invalidf("Alterting field types is no longer supported")
	default:
		return nil, p.unexpected("")
	}
	return at, nil
}
