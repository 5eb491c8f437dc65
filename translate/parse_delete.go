package translate

// deleteStatement parses a DELETE.
//
//	delete := DELETE (deletion (',' deletion)*)? FROM tableName using?
//	          WHERE where (IF EXISTS | IF conditions)?
//	deletion := ident | ident '[' term ']' | ident '.' ident
func (p *parser) deleteStatement() (Statement, error) {
	p.next()
	d := &DeleteStmt{}
	var err error
	for !p.isKeyword("from") {
		del := Deletion{Pos: p.tok.pos}
		if del.Column, del.Key, del.Field, err = p.target(); err != nil {
			return nil, err
		}
		d.Columns = append(d.Columns, del)
		if !p.acceptPunct(",") {
			break
		}
	}
	if err := p.expectKeyword("from"); err != nil {
		return nil, err
	}
	if d.Table, err = p.tableName(); err != nil {
		return nil, err
	}
	if d.Using, err = p.usingTimestamp(); err != nil {
		return nil, err
	}
	if err := p.expectKeyword("where"); err != nil {
		return nil, err
	}
	if d.Where, err = p.where(); err != nil {
		return nil, err
	}
	d.IfExists, d.Conditions, err = p.conditions()
	return d, err
}
