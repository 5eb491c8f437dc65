package translate

import (
	"fmt"
	"strings"

	"github.com/cqlpg/cqlpg/pgschema"
)

// Parsed is a parsed statement and what its bind markers are called.
type Parsed struct {
	Statement Statement
	// MarkerNames holds one entry per bind marker: the name of a :name
	// marker, or "" for ?.
	MarkerNames []string
}

// Parse parses one CQL statement, optionally followed by a semicolon.
func Parse(cql string) (*Parsed, error) {
	p := &parser{s: newScanner(cql)}
	p.tok = p.s.next()
	stmt, err := p.statement()
	if err != nil {
		return nil, err
	}
	p.acceptPunct(";")
	if p.tok.kind != tokEOF {
		return nil, p.unexpected("")
	}
	return &Parsed{Statement: stmt, MarkerNames: p.markers}, nil
}

// ParseScript parses statements separated by semicolons.
func ParseScript(cql string) ([]*Parsed, error) {
	p := &parser{s: newScanner(cql)}
	p.tok = p.s.next()
	var out []*Parsed
	for p.acceptPunct(";") {
	}
	for p.tok.kind != tokEOF {
		p.markers = nil
		stmt, err := p.statement()
		if err != nil {
			return out, err
		}
		out = append(out, &Parsed{Statement: stmt, MarkerNames: p.markers})
		if !p.acceptPunct(";") && p.tok.kind != tokEOF {
			return out, p.unexpected("")
		}
		for p.acceptPunct(";") {
		}
	}
	return out, nil
}

// parser is a recursive-descent parser over the scanner's tokens, with
// unbounded lookahead for the few places CQL needs it.
type parser struct {
	s       *scanner
	tok     token
	ahead   []token
	markers []string
}

func (p *parser) next() {
	if len(p.ahead) > 0 {
		p.tok, p.ahead = p.ahead[0], p.ahead[1:]
		return
	}
	p.tok = p.s.next()
}

// peek returns the token i places after the current one.
func (p *parser) peek(i int) token {
	for len(p.ahead) < i {
		p.ahead = append(p.ahead, p.s.next())
	}
	return p.ahead[i-1]
}

// peekKeyword reports whether the token i places after the current one is
// the keyword kw (given in lower case).
func (p *parser) peekKeyword(i int, kw string) bool {
	t := p.peek(i)
	return t.kind == tokIdent && t.text == kw
}

// isKeyword reports whether the current token is the keyword kw (given in
// lower case).
func (p *parser) isKeyword(kw string) bool { return p.tok.kind == tokIdent && p.tok.text == kw }

func (p *parser) acceptKeyword(kw string) bool {
	if p.isKeyword(kw) {
		p.next()
		return true
	}
	return false
}

func (p *parser) expectKeyword(kw string) error {
	if !p.acceptKeyword(kw) {
		return p.unexpected("K_" + strings.ToUpper(kw))
	}
	return nil
}

func (p *parser) isPunct(s string) bool { return p.tok.kind == tokPunct && p.tok.text == s }

func (p *parser) acceptPunct(s string) bool {
	if p.isPunct(s) {
		p.next()
		return true
	}
	return false
}

func (p *parser) expectPunct(s string) error {
	if !p.acceptPunct(s) {
		return p.unexpected("'" + s + "'")
	}
	return nil
}

// unexpected reports the current token as a syntax error, saying what was
// expected when that is one thing.
func (p *parser) unexpected(expecting string) error {
	t := p.tok
	if t.kind == tokIllegal && t.msg != "" {
		return &SyntaxError{Pos: t.pos, Token: t.raw, Msg: t.msg}
	}
	if t.kind == tokIllegal {
		return &SyntaxError{Pos: t.pos, Token: t.raw, Msg: fmt.Sprintf("token recognition error at: '%s'", t.raw)}
	}
	if expecting == "" {
		return &SyntaxError{Pos: t.pos, Token: t.raw, Msg: fmt.Sprintf("no viable alternative at input '%s'", t.raw)}
	}
	return &SyntaxError{Pos: t.pos, Token: t.raw, Msg: fmt.Sprintf("mismatched input '%s' expecting %s", t.raw, expecting)}
}

// ident parses an identifier: unquoted (folded to lower case, and not a
// reserved keyword) or double-quoted (kept as written).
//
//	ident := IDENT | QUOTED_NAME
func (p *parser) ident() (string, error) {
	switch p.tok.kind {
	case tokIdent:
		if pgschema.IsReserved(p.tok.text) {
			return "", p.unexpected("")
		}
	case tokQuotedIdent:
		if p.tok.text == "" {
			return "", &SyntaxError{Pos: p.tok.pos, Token: p.tok.raw, Msg: "no viable alternative at input '\"\"'"}
		}
	default:
		return "", p.unexpected("")
	}
	name := p.tok.text
	p.next()
	return name, nil
}

// identList parses '(' ident (',' ident)* ')'.
func (p *parser) identList() ([]string, error) {
	if err := p.expectPunct("("); err != nil {
		return nil, err
	}
	var out []string
	for {
		n, err := p.ident()
		if err != nil {
			return nil, err
		}
		out = append(out, n)
		if !p.acceptPunct(",") {
			break
		}
	}
	return out, p.expectPunct(")")
}

// tableName parses a table name with an optional keyspace.
//
//	tableName := (ident '.')? ident
func (p *parser) tableName() (TableName, error) {
	pos := p.tok.pos
	if p.tok.kind == tokMarker {
		p.next()
		if p.isPunct(".") {
			return TableName{}, noMarker("keyspace")
		}
		return TableName{}, noMarker("table")
	}
	first, err := p.ident()
	if err != nil {
		return TableName{}, err
	}
	if !p.acceptPunct(".") {
		return TableName{Name: first, Pos: pos}, nil
	}
	if p.tok.kind == tokMarker {
		return TableName{}, noMarker("table")
	}
	second, err := p.ident()
	return TableName{Keyspace: first, Name: second, Pos: pos}, err
}

// noMarker is Cassandra's refusal of a bind marker where a name of what
// goes (keyspace, table) belongs.
func noMarker(what string) error {
	return &SyntaxError{Msg: "Bind variables cannot be used for " + what + " names"}
}

// statement dispatches on the first keyword.
func (p *parser) statement() (Statement, error) {
	switch {
	case p.isKeyword("select"):
		return p.selectStatement()
	case p.isKeyword("insert"):
		return p.insertStatement()
	case p.isKeyword("update"):
		return p.updateStatement()
	case p.isKeyword("delete"):
		return p.deleteStatement()
	case p.isKeyword("begin"):
		return p.batchStatement()
	case p.isKeyword("use"):
		return p.useStatement()
	case p.isKeyword("create"), p.isKeyword("alter"):
		return p.schemaStatement()
	case p.isKeyword("truncate"):
		return p.truncateStatement()
	case p.isKeyword("drop"):
		return p.dropStatement()
	case p.isKeyword("describe"), p.isKeyword("desc"):
		return p.describeStatement()
	case p.isKeyword("grant"), p.isKeyword("revoke"):
		return p.grantStatement()
	case p.isKeyword("list"):
		return p.listStatement()
	}
	return nil, p.unexpected("")
}

// schemaStatement dispatches CREATE and ALTER on the word after them.
func (p *parser) schemaStatement() (Statement, error) {
	create := p.isKeyword("create")
	next := p.peek(1)
	word := ""
	if next.kind == tokIdent {
		word = next.text
	}
	if create && (word == "function" || word == "aggregate" || word == "or" && p.peekKeyword(2, "replace")) {
		p.next()
		orReplace := false
		if word == "or" {
			p.next()
			p.next()
			orReplace = true
		}
		switch {
		case p.isKeyword("function"):
			return p.createFunction(orReplace)
		case p.isKeyword("aggregate"):
			return p.createAggregate(orReplace)
		}
		return nil, p.unexpected("K_FUNCTION")
	}
	switch {
	case word == "keyspace" || word == "schema":
		if create {
			return p.createKeyspace()
		}
		return p.alterKeyspace()
	case word == "table" || word == "columnfamily":
		if create {
			return p.createTable()
		}
		return p.alterTable()
	case word == "type":
		if create {
			return p.createType()
		}
		return p.alterType()
	case word == "materialized":
		if create {
			return p.createView()
		}
		return p.alterView()
	case create && (word == "index" || word == "custom"):
		return p.createIndex()
	case word == "role" || word == "user":
		if create {
			return p.createRole()
		}
		return p.alterRole()
	}
	p.next()
	return nil, p.unexpected("")
}

// ifNotExists parses an optional IF NOT EXISTS.
func (p *parser) ifNotExists() (bool, error) {
	if !p.acceptKeyword("if") {
		return false, nil
	}
	if err := p.expectKeyword("not"); err != nil {
		return false, err
	}
	return true, p.expectKeyword("exists")
}

// ifExists parses an optional IF EXISTS.
func (p *parser) ifExists() bool {
	if p.isKeyword("if") && p.peek(1).kind == tokIdent && p.peek(1).text == "exists" {
		p.next()
		p.next()
		return true
	}
	return false
}
