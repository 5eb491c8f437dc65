package translate

import "strings"

// createFunction parses CREATE FUNCTION.
//
//	createFunction := CREATE (OR REPLACE)? FUNCTION (IF NOT EXISTS)? functionName
//	                  '(' (ident type (',' ident type)*)? ')'
//	                  (CALLED | RETURNS NULL) ON NULL INPUT RETURNS type
//	                  LANGUAGE ident AS string
func (p *parser) createFunction(orReplace bool) (Statement, error) {
	p.next() // FUNCTION
	f := &CreateFunctionStmt{OrReplace: orReplace}
	var err error
	if f.IfNotExists, err = p.ifNotExists(); err != nil {
		return nil, err
	}
	if f.Name, err = p.tableName(); err != nil {
		return nil, err
	}
	if f.Args, err = p.functionArgs(true); err != nil {
		return nil, err
	}
	switch {
	case p.acceptKeyword("called"):
		f.CalledOnNullInput = true
	case p.acceptKeyword("returns"):
		if err := p.expectKeyword("null"); err != nil {
			return nil, err
		}
	default:
		return nil, p.unexpected("K_CALLED")
	}
	for _, kw := range []string{"on", "null", "input", "returns"} {
		if err := p.expectKeyword(kw); err != nil {
			return nil, err
		}
	}
	if f.Returns, err = p.functionType(); err != nil {
		return nil, err
	}
	if err := p.expectKeyword("language"); err != nil {
		return nil, err
	}
	if p.tok.kind != tokIdent {
		return nil, p.unexpected("IDENT")
	}
	f.Language = p.tok.text
	p.next()
	if err := p.expectKeyword("as"); err != nil {
		return nil, err
	}
	if p.tok.kind != tokString {
		return nil, p.unexpected("STRING_LITERAL")
	}
	f.Body = p.tok.text
	p.next()
	return f, nil
}

// createAggregate parses CREATE AGGREGATE.
//
//	createAggregate := CREATE (OR REPLACE)? AGGREGATE (IF NOT EXISTS)? functionName
//	                   '(' (type (',' type)*)? ')' SFUNC ident STYPE type
//	                   (FINALFUNC ident)? (INITCOND term)?
func (p *parser) createAggregate(orReplace bool) (Statement, error) {
	p.next() // AGGREGATE
	a := &CreateAggregateStmt{OrReplace: orReplace}
	var err error
	if a.IfNotExists, err = p.ifNotExists(); err != nil {
		return nil, err
	}
	if a.Name, err = p.tableName(); err != nil {
		return nil, err
	}
	if a.Args, err = p.functionArgs(false); err != nil {
		return nil, err
	}
	if err := p.expectKeyword("sfunc"); err != nil {
		return nil, err
	}
	if a.StateFunc, err = p.ident(); err != nil {
		return nil, err
	}
	if err := p.expectKeyword("stype"); err != nil {
		return nil, err
	}
	if a.StateType, err = p.functionType(); err != nil {
		return nil, err
	}
	if p.acceptKeyword("finalfunc") {
		if a.FinalFunc, err = p.ident(); err != nil {
			return nil, err
		}
	}
	if p.acceptKeyword("initcond") {
		if a.InitCond, err = p.term(); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// dropFunction parses DROP FUNCTION and DROP AGGREGATE, after their
// keyword.
//
//	dropFunction := DROP (FUNCTION | AGGREGATE) (IF EXISTS)? functionName ('(' (type (',' type)*)? ')')?
func (p *parser) dropFunction(aggregate bool) (Statement, error) {
	d := &DropFunctionStmt{Aggregate: aggregate, IfExists: p.ifExists()}
	var err error
	if d.Name, err = p.tableName(); err != nil {
		return nil, err
	}
	if p.isPunct("(") {
		d.ArgsGiven = true
		if d.Args, err = p.functionArgs(false); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// functionArgs parses a parenthesized list of arguments: names and types,
// or types alone.
func (p *parser) functionArgs(named bool) ([]FunctionArg, error) {
	if err := p.expectPunct("("); err != nil {
		return nil, err
	}
	var args []FunctionArg
	for !p.isPunct(")") {
		var name string
		if named {
			var err error
			if name, err = p.ident(); err != nil {
				return nil, err
			}
		}
		a, err := p.functionType()
		if err != nil {
			return nil, err
		}
		a.Name = name
		args = append(args, a)
		if !p.acceptPunct(",") {
			break
		}
	}
	return args, p.expectPunct(")")
}

// functionType parses a type and keeps its text as written.
func (p *parser) functionType() (FunctionArg, error) {
	start := p.tok.pos.Offset
	t, err := p.cqlType()
	if err != nil {
		return FunctionArg{}, err
	}
	return FunctionArg{Type: t, Text: strings.Join(strings.Fields(p.s.src[start:p.tok.pos.Offset]), " ")}, nil
}
