package translate

// useStatement parses USE.
//
//	use := USE ident
func (p *parser) useStatement() (Statement, error) {
	p.next()
	name, err := p.ident()
	return &UseStmt{Keyspace: name}, err
}

// createKeyspace parses CREATE KEYSPACE.
//
//	createKeyspace := CREATE (KEYSPACE | SCHEMA) (IF NOT EXISTS)? ident WITH properties
func (p *parser) createKeyspace() (Statement, error) {
	p.next()
	p.next()
	ck := &CreateKeyspaceStmt{}
	var err error
	if ck.IfNotExists, err = p.ifNotExists(); err != nil {
		return nil, err
	}
	if ck.Name, err = p.ident(); err != nil {
		return nil, err
	}
	if err := p.expectKeyword("with"); err != nil {
		return nil, err
	}
	ck.Properties, err = p.properties()
	return ck, err
}

// properties parses WITH options.
//
//	properties := property (AND property)*
//	property := ident '=' (constant | mapLiteral)
func (p *parser) properties() ([]Property, error) {
	var out []Property
	for {
		prop, err := p.property()
		if err != nil {
			return nil, err
		}
		out = append(out, prop)
		if !p.acceptKeyword("and") {
			return out, nil
		}
	}
}

// property parses one WITH option.
//
//	property := ident '=' (constant | mapLiteral)
func (p *parser) property() (Property, error) {
	prop := Property{Pos: p.tok.pos}
	var err error
	if prop.Name, err = p.ident(); err != nil {
		return prop, err
	}
	if err := p.expectPunct("="); err != nil {
		return prop, err
	}
	prop.Value, err = p.term()
	return prop, err
}

// createTable parses CREATE TABLE.
//
//	createTable := CREATE (TABLE | COLUMNFAMILY) (IF NOT EXISTS)? tableName
//	               '(' columnDef (',' columnDef)* (',' PRIMARY KEY '(' key ')')? ')'
//	               (WITH tableOption (AND tableOption)*)?
//	columnDef := ident type STATIC? (PRIMARY KEY)?
//	key := (ident | '(' idents ')') (',' ident)*
//	tableOption := property | CLUSTERING ORDER BY '(' ident (ASC | DESC)? (',' ...)* ')'
//	             | COMPACT STORAGE
func (p *parser) createTable() (Statement, error) {
	p.next()
	p.next()
	ct := &CreateTableStmt{}
	var err error
	if ct.IfNotExists, err = p.ifNotExists(); err != nil {
		return nil, err
	}
	if ct.Table, err = p.tableName(); err != nil {
		return nil, err
	}
	if err := p.expectPunct("("); err != nil {
		return nil, err
	}
	for {
		if p.isKeyword("primary") {
			if err := p.primaryKey(ct); err != nil {
				return nil, err
			}
		} else if err := p.columnDef(ct); err != nil {
			return nil, err
		}
		if !p.acceptPunct(",") {
			break
		}
		if p.isPunct(")") { // a trailing comma is accepted, as Cassandra does
			break
		}
	}
	if err := p.expectPunct(")"); err != nil {
		return nil, err
	}
	if !p.acceptKeyword("with") {
		return ct, nil
	}
	for {
		switch {
		case p.acceptKeyword("clustering"):
			if err := p.clusteringOrder(ct); err != nil {
				return nil, err
			}
		case p.acceptKeyword("compact"):
			if err := p.expectKeyword("storage"); err != nil {
				return nil, err
			}
			ct.CompactStorage = true
		default:
			// Options come in any order, CLUSTERING ORDER among them.
			prop, err := p.property()
			if err != nil {
				return nil, err
			}
			ct.Properties = append(ct.Properties, prop)
		}
		if !p.acceptKeyword("and") {
			return ct, nil
		}
	}
}

func (p *parser) columnDef(ct *CreateTableStmt) error {
	col := ColumnDef{Pos: p.tok.pos}
	var err error
	if col.Name, err = p.ident(); err != nil {
		return err
	}
	if col.Type, err = p.cqlType(); err != nil {
		return err
	}
	col.Static = p.acceptKeyword("static")
	if p.acceptKeyword("primary") {
		if err := p.expectKeyword("key"); err != nil {
			return err
		}
		if ct.PartitionKey != nil {
			return invalidf("Multiple PRIMARY KEYs specified (exactly one required)")
		}
		ct.PartitionKey = []string{col.Name}
	}
	ct.Columns = append(ct.Columns, col)
	return nil
}

func (p *parser) primaryKey(ct *CreateTableStmt) error {
	p.next()
	if err := p.expectKeyword("key"); err != nil {
		return err
	}
	if ct.PartitionKey != nil {
		return invalidf("Multiple PRIMARY KEYs specified (exactly one required)")
	}
	if err := p.expectPunct("("); err != nil {
		return err
	}
	if p.isPunct("(") {
		cols, err := p.identList()
		if err != nil {
			return err
		}
		ct.PartitionKey = cols
	} else {
		col, err := p.ident()
		if err != nil {
			return err
		}
		ct.PartitionKey = []string{col}
	}
	for p.acceptPunct(",") {
		col, err := p.ident()
		if err != nil {
			return err
		}
		ct.Clustering = append(ct.Clustering, col)
	}
	return p.expectPunct(")")
}

func (p *parser) clusteringOrder(ct *CreateTableStmt) error {
	if err := p.expectKeyword("order"); err != nil {
		return err
	}
	if err := p.expectKeyword("by"); err != nil {
		return err
	}
	if err := p.expectPunct("("); err != nil {
		return err
	}
	for {
		o := Ordering{Pos: p.tok.pos}
		var err error
		if o.Column, err = p.ident(); err != nil {
			return err
		}
		if !p.acceptKeyword("asc") {
			o.Desc = p.acceptKeyword("desc")
		}
		ct.ClusteringOrder = append(ct.ClusteringOrder, o)
		if !p.acceptPunct(",") {
			break
		}
	}
	return p.expectPunct(")")
}

// dropStatement parses DROP KEYSPACE and DROP TABLE.
//
//	drop := DROP (KEYSPACE | SCHEMA) (IF EXISTS)? ident
//	      | DROP (TABLE | COLUMNFAMILY) (IF EXISTS)? tableName
func (p *parser) dropStatement() (Statement, error) {
	p.next()
	d := &DropStmt{}
	switch {
	case p.acceptKeyword("keyspace"), p.acceptKeyword("schema"):
		d.Kind = DropKeyspace
	case p.acceptKeyword("table"), p.acceptKeyword("columnfamily"):
		d.Kind = DropTable
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
