package translate

// useStatement parses USE.
//
//	use := USE ident
func (p *parser) useStatement() (Statement, error) {
	p.next()
	if p.tok.kind == tokMarker {
		return nil, noMarker("keyspace")
	}
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

// alterKeyspace parses ALTER KEYSPACE.
//
//	alterKeyspace := ALTER (KEYSPACE | SCHEMA) (IF EXISTS)? ident WITH properties
func (p *parser) alterKeyspace() (Statement, error) {
	p.next()
	p.next()
	ak := &AlterKeyspaceStmt{IfExists: p.ifExists()}
	var err error
	if ak.Name, err = p.ident(); err != nil {
		return nil, err
	}
	if err := p.expectKeyword("with"); err != nil {
		return nil, err
	}
	ak.Properties, err = p.properties()
	return ak, err
}
