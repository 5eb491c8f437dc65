package translate

// dropStatement parses DROP KEYSPACE, TABLE, TYPE and INDEX.
//
//	drop := DROP (KEYSPACE | SCHEMA) (IF EXISTS)? ident
//	      | DROP (TABLE | COLUMNFAMILY | TYPE | INDEX) (IF EXISTS)? (ident '.')? ident
//	      | dropRole
func (p *parser) dropStatement() (Statement, error) {
	p.next()
	if p.isKeyword("role") || p.isKeyword("user") {
		return p.dropRole()
	}
	d := &DropStmt{}
	switch {
	case p.acceptKeyword("keyspace"), p.acceptKeyword("schema"):
		d.Kind = DropKeyspace
	case p.acceptKeyword("table"), p.acceptKeyword("columnfamily"):
		d.Kind = DropTable
	case p.acceptKeyword("type"):
		d.Kind = DropType
	case p.acceptKeyword("index"):
		d.Kind = DropIndex
	default:
		return nil, p.unexpected("")
	}
	d.IfExists = p.ifExists()
	if d.Kind == DropKeyspace {
		var err error
		d.Keyspace, err = p.ident()
		return d, err
	}
	name, err := p.tableName()
	d.Keyspace, d.Name = name.Keyspace, name.Name
	return d, err
}
