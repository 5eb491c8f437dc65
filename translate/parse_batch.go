package translate

// batchStatement parses a batch.
//
//	batch := BEGIN (UNLOGGED | COUNTER)? BATCH using?
//	         ((insert | update | delete) ';'?)* APPLY BATCH
func (p *parser) batchStatement() (Statement, error) {
	p.next()
	b := &BatchStmt{}
	switch {
	case p.acceptKeyword("unlogged"):
		b.Kind = UnloggedBatch
	case p.acceptKeyword("counter"):
		b.Kind = CounterBatch
	}
	if err := p.expectKeyword("batch"); err != nil {
		return nil, err
	}
	var err error
	if b.Using, err = p.using(); err != nil {
		return nil, err
	}
	for !p.isKeyword("apply") {
		var stmt Statement
		switch {
		case p.isKeyword("insert"):
			stmt, err = p.insertStatement()
		case p.isKeyword("update"):
			stmt, err = p.updateStatement()
		case p.isKeyword("delete"):
			stmt, err = p.deleteStatement()
		default:
			return nil, p.unexpected("K_APPLY")
		}
		if err != nil {
			return nil, err
		}
		b.Statements = append(b.Statements, stmt)
		p.acceptPunct(";")
	}
	p.next()
	return b, p.expectKeyword("batch")
}
