package translate

// dropStatement parses DROP KEYSPACE, TABLE, TYPE, INDEX and MATERIALIZED
// VIEW.
//
//	drop := DROP (KEYSPACE | SCHEMA) (IF EXISTS)? ident
//	      | DROP (TABLE | COLUMNFAMILY | TYPE | INDEX | MATERIALIZED VIEW) (IF EXISTS)? (ident '.')? ident
//	      | dropRole
func (p *parser) dropStatement() (Statement, error) {
	p.next()
	if p.isKeyword("role") || p.isKeyword("user") {
		return p.dropRole()
	}
	if p.acceptKeyword("function") {
		return p.dropFunction(false)
	}
	if p.acceptKeyword("aggregate") {
		return p.dropFunction(true)
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
	case p.acceptKeyword("materialized"):
		if err := p.expectKeyword("view"); err != nil {
			return nil, err
		}
		d.Kind = DropView
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
