package translate

// describeStatement parses DESCRIBE, which Cassandra answers on the server
// since 4.0 and cqlsh sends as an ordinary query.
//
//	describe := (DESCRIBE | DESC) describeTarget (WITH INTERNALS)?
//	describeTarget := CLUSTER
//	                | FULL? SCHEMA
//	                | KEYSPACES
//	                | ONLY? KEYSPACE ident?
//	                | TABLES
//	                | (TABLE | COLUMNFAMILY) tableName
//	                | INDEX tableName
//	                | MATERIALIZED VIEW tableName
//	                | TYPES
//	                | TYPE tableName
//	                | FUNCTIONS
//	                | FUNCTION functionName
//	                | AGGREGATES
//	                | AGGREGATE functionName
//	                | tableName
//
// As in Cassandra's grammar, the plural words and CLUSTER always take
// their own form, while TYPE, FUNCTION, AGGREGATE and ONLY not followed by
// a name (or by KEYSPACE) are the generic form's name.
func (p *parser) describeStatement() (Statement, error) {
	p.next()
	d := &DescribeStmt{}
	var err error
	next := p.peek(1)
	nameFollows := next.kind == tokIdent || next.kind == tokQuotedIdent
	switch {
	case p.acceptKeyword("cluster"):
		d.Kind = DescribeCluster
	case p.isKeyword("full") || p.isKeyword("schema"):
		d.Full = p.acceptKeyword("full")
		d.Kind = DescribeSchema
		err = p.expectKeyword("schema")
	case p.acceptKeyword("keyspaces"):
		d.Kind = DescribeKeyspaces
	case p.isKeyword("keyspace") || p.isKeyword("only") && next.kind == tokIdent && next.text == "keyspace":
		d.Only = p.acceptKeyword("only")
		p.next()
		d.Kind = DescribeKeyspace
		if p.tok.kind == tokQuotedIdent || p.tok.kind == tokIdent && !p.isKeyword("with") {
			d.Keyspace, err = p.ident()
		}
	case p.acceptKeyword("tables"):
		d.Kind = DescribeTables
	case p.acceptKeyword("table"), p.acceptKeyword("columnfamily"):
		d.Kind = DescribeTable
		err = p.describeName(d)
	case p.acceptKeyword("index"):
		d.Kind = DescribeIndex
		err = p.describeName(d)
	case p.acceptKeyword("materialized"):
		d.Kind = DescribeView
		if err = p.expectKeyword("view"); err == nil {
			err = p.describeName(d)
		}
	case p.acceptKeyword("types"):
		d.Kind = DescribeTypes
	case p.isKeyword("type") && nameFollows:
		p.next()
		d.Kind = DescribeType
		err = p.describeName(d)
	case p.acceptKeyword("functions"):
		d.Kind = DescribeFunctions
	case p.isKeyword("function") && nameFollows:
		p.next()
		d.Kind = DescribeFunction
		err = p.functionName(d)
	case p.acceptKeyword("aggregates"):
		d.Kind = DescribeAggregates
	case p.isKeyword("aggregate") && nameFollows:
		p.next()
		d.Kind = DescribeAggregate
		err = p.functionName(d)
	default:
		d.Kind = DescribeGeneric
		err = p.describeName(d)
	}
	if err != nil {
		return nil, err
	}
	if p.acceptKeyword("with") {
		if err := p.expectKeyword("internals"); err != nil {
			return nil, err
		}
		d.Internals = true
	}
	return d, nil
}

// describeName parses the element a DESCRIBE names.
//
//	tableName := (ident '.')? ident
func (p *parser) describeName(d *DescribeStmt) error {
	n, err := p.tableName()
	d.Keyspace, d.Name = n.Keyspace, n.Name
	return err
}

// functionName parses a function or aggregate name, which may also be one
// of the keywords token and count.
//
//	functionName := (ident '.')? (ident | TOKEN | COUNT)
func (p *parser) functionName(d *DescribeStmt) error {
	name := func() (string, error) {
		if p.isKeyword("token") || p.isKeyword("count") {
			n := p.tok.text
			p.next()
			return n, nil
		}
		return p.ident()
	}
	first, err := name()
	if err != nil {
		return err
	}
	if !p.acceptPunct(".") {
		d.Name = first
		return nil
	}
	d.Keyspace = first
	d.Name, err = name()
	return err
}
