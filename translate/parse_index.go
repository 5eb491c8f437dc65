package translate

// createIndex parses CREATE INDEX.
//
//	createIndex := CREATE CUSTOM? INDEX (IF NOT EXISTS)? ident? ON tableName
//	               '(' (ident | (KEYS | VALUES | ENTRIES | FULL) '(' ident ')') ')'
//	               (USING STRING (WITH OPTIONS '=' mapLiteral)?)?
func (p *parser) createIndex() (Statement, error) {
	p.next()
	custom := p.acceptKeyword("custom")
	if err := p.expectKeyword("index"); err != nil {
		return nil, err
	}
	ci := &CreateIndexStmt{}
	var err error
	if ci.IfNotExists, err = p.ifNotExists(); err != nil {
		return nil, err
	}
	if !p.isKeyword("on") {
		if ci.Name, err = p.ident(); err != nil {
			return nil, err
		}
	}
	if err := p.expectKeyword("on"); err != nil {
		return nil, err
	}
	if ci.Table, err = p.tableName(); err != nil {
		return nil, err
	}
	if err := p.expectPunct("("); err != nil {
		return nil, err
	}
	targets := map[string]IndexTarget{"keys": IndexKeys, "values": IndexValues, "entries": IndexEntries, "full": IndexFull}
	if t, ok := targets[p.tok.text]; ok && p.tok.kind == tokIdent && p.peek(1).kind == tokPunct && p.peek(1).text == "(" {
		p.next()
		p.next()
		ci.Target = t
		if ci.Column, err = p.ident(); err != nil {
			return nil, err
		}
		if err := p.expectPunct(")"); err != nil {
			return nil, err
		}
	} else if ci.Column, err = p.ident(); err != nil {
		return nil, err
	}
	if err := p.expectPunct(")"); err != nil {
		return nil, err
	}
	if p.acceptKeyword("using") {
		if p.tok.kind != tokString {
			return nil, p.unexpected("STRING_LITERAL")
		}
		ci.Class = p.tok.text
		p.next()
		if p.acceptKeyword("with") {
			if err := p.expectKeyword("options"); err != nil {
				return nil, err
			}
			if err := p.expectPunct("="); err != nil {
				return nil, err
			}
			if ci.Options, err = p.term(); err != nil {
				return nil, err
			}
		}
	} else if custom {
		return nil, p.unexpected("K_USING")
	}
	return ci, nil
}
