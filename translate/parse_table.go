package translate

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

// alterTable parses ALTER TABLE.
//
//	alterTable := ALTER (TABLE | COLUMNFAMILY) (IF EXISTS)? tableName
//	              ( ADD (IF NOT EXISTS)? (columnDef | '(' columnDef (',' columnDef)* ')')
//	              | DROP (IF EXISTS)? (ident | '(' idents ')') (USING TIMESTAMP term)?
//	              | RENAME (IF EXISTS)? ident TO ident (AND ident TO ident)*
//	              | WITH properties )
func (p *parser) alterTable() (Statement, error) {
	p.next()
	p.next()
	at := &AlterTableStmt{IfExists: p.ifExists()}
	var err error
	if at.Table, err = p.tableName(); err != nil {
		return nil, err
	}
	switch {
	case p.acceptKeyword("add"):
		at.Op = AlterAdd
		if at.IfColumn, err = p.ifNotExists(); err != nil {
			return nil, err
		}
		ct := &CreateTableStmt{}
		if p.acceptPunct("(") {
			for {
				if err := p.columnDef(ct); err != nil {
					return nil, err
				}
				if !p.acceptPunct(",") {
					break
				}
			}
			if err := p.expectPunct(")"); err != nil {
				return nil, err
			}
		} else if err := p.columnDef(ct); err != nil {
			return nil, err
		}
		at.Add = ct.Columns
	case p.acceptKeyword("drop"):
		at.Op, at.IfColumn = AlterDrop, p.ifExists()
		if p.isPunct("(") {
			if at.Drop, err = p.identList(); err != nil {
				return nil, err
			}
		} else {
			col, err := p.ident()
			if err != nil {
				return nil, err
			}
			at.Drop = []string{col}
		}
		if p.acceptKeyword("using") {
			if err := p.expectKeyword("timestamp"); err != nil {
				return nil, err
			}
			if at.Timestamp, err = p.term(); err != nil {
				return nil, err
			}
		}
	case p.acceptKeyword("rename"):
		at.Op, at.IfColumn = AlterRename, p.ifExists()
		if at.Renames, err = p.renames(); err != nil {
			return nil, err
		}
	case p.acceptKeyword("with"):
		at.Op = AlterWith
		if at.Properties, err = p.properties(); err != nil {
			return nil, err
		}
	case p.isKeyword("alter"):
		return nil, invalidf("Altering column types is no longer supported")
	default:
		return nil, p.unexpected("")
	}
	return at, nil
}

// renames parses ident TO ident (AND ident TO ident)*.
func (p *parser) renames() ([][2]string, error) {
	var out [][2]string
	for {
		from, err := p.ident()
		if err != nil {
			return nil, err
		}
		if err := p.expectKeyword("to"); err != nil {
			return nil, err
		}
		to, err := p.ident()
		if err != nil {
			return nil, err
		}
		out = append(out, [2]string{from, to})
		if !p.acceptKeyword("and") {
			return out, nil
		}
	}
}

// truncateStatement parses TRUNCATE.
//
//	truncate := TRUNCATE (TABLE | COLUMNFAMILY)? tableName
func (p *parser) truncateStatement() (Statement, error) {
	p.next()
	if !p.acceptKeyword("table") {
		p.acceptKeyword("columnfamily")
	}
	name, err := p.tableName()
	return &TruncateStmt{Table: name}, err
}
