package translate

import "strings"

// term parses a value.
//
//	term := constant | marker | functionCall | collectionLiteral
//	      | tupleLiteral | udtLiteral | '(' type ')' term
func (p *parser) term() (Term, error) {
	pos := p.tok.pos
	switch p.tok.kind {
	case tokMarker, tokNamedMarker:
		return p.marker(), nil
	case tokString, tokInteger, tokFloat, tokUUID, tokHex, tokDuration:
		lit := &Literal{Kind: literalKinds[p.tok.kind], Text: p.tok.text, Pos: pos}
		p.next()
		return lit, nil
	case tokIdent:
		if lit := p.keywordConstant(); lit != nil {
			return lit, nil
		}
		if p.peek(1).kind == tokPunct && (p.peek(1).text == "(" || p.peek(1).text == ".") {
			return p.functionCall()
		}
	case tokPunct:
		switch p.tok.text {
		case "-":
			// -NaN and -Infinity; negative numbers are single tokens.
			if n := p.peek(1); n.kind == tokIdent && (n.text == "nan" || n.text == "infinity") {
				p.next()
				lit := &Literal{Kind: LitFloat, Text: "-" + p.tok.raw, Pos: pos}
				p.next()
				return lit, nil
			}
		case "[":
			return p.listLiteral()
		case "{":
			return p.braceLiteral()
		case "(":
			if p.startsTypeHint() {
				return p.typeHint()
			}
			return p.tupleLiteral()
		}
	}
	return nil, p.unexpected("")
}

var literalKinds = map[tokenKind]LiteralKind{
	tokString: LitString, tokInteger: LitInteger, tokFloat: LitFloat, tokUUID: LitUUID,
	tokHex: LitHex, tokDuration: LitDuration,
}

// keywordConstant parses true, false, null, NaN and Infinity, or returns
// nil if the current token is none of them.
func (p *parser) keywordConstant() *Literal {
	var kind LiteralKind
	switch p.tok.text {
	case "true", "false":
		kind = LitBoolean
	case "null":
		kind = LitNull
	case "nan", "infinity":
		kind = LitFloat
	default:
		return nil
	}
	lit := &Literal{Kind: kind, Text: p.tok.text, Pos: p.tok.pos}
	if kind == LitFloat || kind == LitBoolean {
		// Cassandra's messages show these constants as written.
		lit.Text = p.tok.raw
	}
	p.next()
	return lit
}

// marker parses ? or :name and numbers it.
func (p *parser) marker() *Marker {
	m := &Marker{Index: len(p.markers), Pos: p.tok.pos}
	if p.tok.kind == tokNamedMarker {
		m.Name = p.tok.text
	}
	p.markers = append(p.markers, m.Name)
	p.next()
	return m
}

// functionCall parses a call of a function on terms.
//
//	functionCall := (ident '.')? ident '(' (term (',' term)*)? ')'
func (p *parser) functionCall() (Term, error) {
	pos := p.tok.pos
	name := p.tok.text
	p.next()
	if p.acceptPunct(".") {
		if p.tok.kind != tokIdent && p.tok.kind != tokQuotedIdent {
			return nil, p.unexpected("")
		}
		name += "." + p.tok.text
		p.next()
	}
	if err := p.expectPunct("("); err != nil {
		return nil, err
	}
	call := &FunctionCall{Name: name, Pos: pos}
	for !p.isPunct(")") {
		t, err := p.term()
		if err != nil {
			return nil, err
		}
		call.Args = append(call.Args, t)
		if !p.acceptPunct(",") {
			break
		}
	}
	return call, p.expectPunct(")")
}

// terms parses term (',' term)* up to, not including, the closing token.
func (p *parser) terms(closing string) ([]Term, error) {
	var out []Term
	for !p.isPunct(closing) {
		t, err := p.term()
		if err != nil {
			return nil, err
		}
		out = append(out, t)
		if !p.acceptPunct(",") {
			break
		}
	}
	return out, nil
}

// listLiteral parses '[' terms ']'.
func (p *parser) listLiteral() (Term, error) {
	pos := p.tok.pos
	p.next()
	elems, err := p.terms("]")
	if err != nil {
		return nil, err
	}
	return &Collection{Kind: ListLiteral, Elems: elems, Pos: pos}, p.expectPunct("]")
}

// braceLiteral parses a set, map or UDT literal; '{}' is an empty map or
// set, told apart later by the type it is assigned to.
//
//	set := '{' terms '}'
//	map := '{' term ':' term (',' term ':' term)* '}'
//	udt := '{' ident ':' term (',' ident ':' term)* '}'
func (p *parser) braceLiteral() (Term, error) {
	pos := p.tok.pos
	p.next()
	if p.acceptPunct("}") {
		return &Collection{Kind: SetLiteral, Pos: pos}, nil
	}
	if (p.tok.kind == tokIdent && p.keywordLike() == "") || p.tok.kind == tokQuotedIdent {
		if n := p.peek(1); (n.kind == tokPunct && n.text == ":") || n.kind == tokNamedMarker {
			return p.udtLiteral(pos)
		}
	}
	first, err := p.term()
	if err != nil {
		return nil, err
	}
	if !p.acceptColon() {
		elems := []Term{first}
		for p.acceptPunct(",") {
			t, err := p.term()
			if err != nil {
				return nil, err
			}
			elems = append(elems, t)
		}
		return &Collection{Kind: SetLiteral, Elems: elems, Pos: pos}, p.expectPunct("}")
	}
	m := &Collection{Kind: MapLiteral, Pos: pos}
	key := first
	for {
		value, err := p.term()
		if err != nil {
			return nil, err
		}
		m.Elems, m.Values = append(m.Elems, key), append(m.Values, value)
		if !p.acceptPunct(",") {
			break
		}
		if key, err = p.term(); err != nil {
			return nil, err
		}
		if !p.acceptColon() {
			return nil, p.unexpected("':'")
		}
	}
	return m, p.expectPunct("}")
}

// acceptColon accepts a ':'. The scanner cannot tell {'a':true} from a
// named marker and reads ":true" as one; here, where only a colon can
// come, such a token is split into the colon and the word after it.
func (p *parser) acceptColon() bool {
	if p.acceptPunct(":") {
		return true
	}
	if p.tok.kind != tokNamedMarker {
		return false
	}
	t := p.tok
	word := token{kind: tokIdent, text: t.text, raw: t.raw[1:],
		pos: Pos{Offset: t.pos.Offset + 1, Line: t.pos.Line, Col: t.pos.Col + 1}}
	if strings.HasPrefix(word.raw, `"`) {
		word.kind = tokQuotedIdent
	}
	p.tok = word
	return true
}

// keywordLike returns the current identifier's text if it is a keyword that
// starts a term (true, false, null, nan, infinity), else "".
func (p *parser) keywordLike() string {
	switch p.tok.text {
	case "true", "false", "null", "nan", "infinity":
		return p.tok.text
	}
	return ""
}

func (p *parser) udtLiteral(pos Pos) (Term, error) {
	u := &UDTLiteral{Pos: pos}
	for {
		field, err := p.ident()
		if err != nil {
			return nil, err
		}
		if !p.acceptColon() {
			return nil, p.unexpected("':'")
		}
		v, err := p.term()
		if err != nil {
			return nil, err
		}
		u.Fields, u.Values = append(u.Fields, field), append(u.Values, v)
		if !p.acceptPunct(",") {
			break
		}
	}
	return u, p.expectPunct("}")
}

// tupleLiteral parses '(' terms ')'.
func (p *parser) tupleLiteral() (Term, error) {
	pos := p.tok.pos
	p.next()
	elems, err := p.terms(")")
	if err != nil {
		return nil, err
	}
	if len(elems) == 0 {
		return nil, p.unexpected("")
	}
	return &Tuple{Elems: elems, Pos: pos}, p.expectPunct(")")
}

// startsTypeHint reports whether '(' begins a cast like (int) ? rather than
// a tuple: a type name followed by ')' or '<'.
func (p *parser) startsTypeHint() bool {
	n := p.peek(1)
	if n.kind != tokIdent && n.kind != tokQuotedIdent {
		return false
	}
	after := p.peek(2)
	if after.kind != tokPunct || (after.text != ")" && after.text != "<") {
		return false
	}
	if after.text == "<" {
		return true
	}
	return isTypeName(n.text) || n.kind == tokQuotedIdent
}

func (p *parser) typeHint() (Term, error) {
	pos := p.tok.pos
	p.next()
	t, err := p.cqlType()
	if err != nil {
		return nil, err
	}
	if err := p.expectPunct(")"); err != nil {
		return nil, err
	}
	v, err := p.term()
	if err != nil {
		return nil, err
	}
	return &TypeHint{Type: t, Term: v, Pos: pos}, nil
}

// where parses the relations of a WHERE clause.
//
//	where := relation (AND relation)*
func (p *parser) where() ([]Relation, error) {
	var out []Relation
	for {
		r, err := p.relation()
		if err != nil {
			return nil, err
		}
		out = append(out, r)
		if !p.acceptKeyword("and") {
			return out, nil
		}
	}
}

// relation parses one restriction.
//
//	relation := ident op term | ident '[' term ']' op term
//	          | ident NOT? IN ('(' terms ')' | marker) | ident NOT? CONTAINS KEY? term
//	          | ident IS NOT NULL | ident LIKE term
//	          | TOKEN '(' idents ')' op term
//	          | '(' idents ')' (op (tuple | marker) | IN ('(' tuples ')' | marker))
func (p *parser) relation() (Relation, error) {
	r := Relation{Pos: p.tok.pos}
	switch {
	case p.isKeyword("token") && p.peek(1).kind == tokPunct && p.peek(1).text == "(":
		p.next()
		cols, err := p.identList()
		if err != nil {
			return r, err
		}
		r.Kind, r.Columns = TokenRelation, cols
	case p.isPunct("("):
		cols, err := p.identList()
		if err != nil {
			return r, err
		}
		r.Kind, r.Columns = TupleRelation, cols
	default:
		col, err := p.ident()
		if err != nil {
			return r, err
		}
		r.Columns = []string{col}
		if p.acceptPunct("[") {
			if r.Key, err = p.term(); err != nil {
				return r, err
			}
			if err := p.expectPunct("]"); err != nil {
				return r, err
			}
		}
	}
	var err error
	comparing := false
	switch {
	case r.Kind == TokenRelation:
		// token(...) takes only the comparisons; IN, CONTAINS and the
		// rest are syntax errors.
		comparing = true
	case p.isKeyword("not") && (p.peekKeyword(1, "in") || p.peekKeyword(1, "contains")):
		// Cassandra 5.0: NOT IN, NOT CONTAINS [KEY].
		p.next()
		if p.acceptKeyword("contains") {
			r.Op = OpNotContains
			if p.acceptKeyword("key") {
				r.Op = OpNotContainsKey
			}
			break
		}
		p.next()
		r.Op = OpNotIn
		return r, p.inValues(&r)
	case p.acceptKeyword("in"):
		r.Op = OpIN
		return r, p.inValues(&r)
	case p.acceptKeyword("contains"):
		r.Op = OpContains
		if p.acceptKeyword("key") {
			r.Op = OpContainsKey
		}
	case p.acceptKeyword("like"):
		r.Op = OpLike
	case p.isKeyword("is"):
		p.next()
		if err := p.expectKeyword("not"); err != nil {
			return r, err
		}
		r.Op = OpIsNotNull
		return r, p.expectKeyword("null")
	default:
		comparing = true
	}
	if comparing {
		op, ok := comparison[p.tok.text]
		if p.tok.kind != tokPunct || !ok {
			return r, p.unexpected("")
		}
		p.next()
		r.Op = op
	}
	r.Value, err = p.term()
	return r, err
}

// inValues parses IN's operand: '(' terms ')' or a marker.
func (p *parser) inValues(r *Relation) error {
	if p.tok.kind == tokMarker || p.tok.kind == tokNamedMarker {
		r.Value = p.marker()
		return nil
	}
	if err := p.expectPunct("("); err != nil {
		return err
	}
	var err error
	if r.Values, err = p.terms(")"); err != nil {
		return err
	}
	return p.expectPunct(")")
}

var comparison = map[string]Operator{
	"=": OpEQ, "!=": OpNEQ, "<": OpLT, "<=": OpLTE, ">": OpGT, ">=": OpGTE,
}

// isTypeName reports whether w names a native CQL type or a type
// constructor.
func isTypeName(w string) bool {
	switch strings.ToLower(w) {
	case "ascii", "bigint", "blob", "boolean", "counter", "date", "decimal", "double", "duration",
		"float", "inet", "int", "smallint", "text", "time", "timestamp", "timeuuid", "tinyint",
		"uuid", "varchar", "varint", "list", "set", "map", "tuple", "frozen", "vector":
		return true
	}
	return false
}
