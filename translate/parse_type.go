package translate

import (
	"strconv"

	"github.com/cqlpg/cqlpg/pgschema"
)

// cqlType parses a type. A user type's name becomes a placeholder of kind
// UDT with only Keyspace and Name set; planning resolves it.
//
//	type := nativeType | (LIST | SET) '<' type '>' | MAP '<' type ',' type '>'
//	      | TUPLE '<' type (',' type)* '>' | FROZEN '<' type '>'
//	      | VECTOR '<' type ',' INTEGER '>' | (ident '.')? ident
func (p *parser) cqlType() (*pgschema.Type, error) {
	if p.tok.kind == tokString {
		// A custom type written as its class name; none are supported, but
		// the name is kept so that the error can show it.
		return nil, invalidf("Custom types are not supported: '%s'", p.tok.text)
	}
	if p.tok.kind == tokIdent {
		if t, err := pgschema.ParseType(p.tok.text, nil); err == nil && t.Kind < pgschema.List {
			p.next()
			return t, nil
		}
		switch p.tok.text {
		case "list", "set", "frozen":
			word := p.tok.text
			p.next()
			args, err := p.typeArgs(1)
			if err != nil {
				return nil, err
			}
			switch word {
			case "list":
				return pgschema.NewList(args[0], false), nil
			case "set":
				return pgschema.NewSet(args[0], false), nil
			}
			return args[0].Freeze(), nil
		case "map":
			p.next()
			args, err := p.typeArgs(2)
			if err != nil {
				return nil, err
			}
			return pgschema.NewMap(args[0], args[1], false), nil
		case "tuple":
			p.next()
			args, err := p.typeArgs(0)
			if err != nil {
				return nil, err
			}
			return pgschema.NewTuple(args...), nil
		case "vector":
			return p.vectorType()
		}
	}
	name, err := p.ident()
	if err != nil {
		return nil, err
	}
	udt := &pgschema.Type{Kind: pgschema.UDT, Name: name}
	if p.acceptPunct(".") {
		if udt.Name, err = p.ident(); err != nil {
			return nil, err
		}
		udt.Keyspace = name
	}
	return udt, nil
}

// typeArgs parses '<' type (',' type)* '>' with n types, any number if n is 0.
func (p *parser) typeArgs(n int) ([]*pgschema.Type, error) {
	if err := p.expectPunct("<"); err != nil {
		return nil, err
	}
	var out []*pgschema.Type
	for {
		t, err := p.cqlType()
		if err != nil {
			return nil, err
		}
		out = append(out, t)
		if n > 0 && len(out) == n {
			break
		}
		if n > 0 {
			// A fixed number of types: the next one must follow.
			if err := p.expectPunct(","); err != nil {
				return nil, err
			}
			continue
		}
		if !p.acceptPunct(",") {
			break
		}
	}
	return out, p.expectPunct(">")
}

func (p *parser) vectorType() (*pgschema.Type, error) {
	p.next()
	if err := p.expectPunct("<"); err != nil {
		return nil, err
	}
	elem, err := p.cqlType()
	if err != nil {
		return nil, err
	}
	if err := p.expectPunct(","); err != nil {
		return nil, err
	}
	if p.tok.kind != tokInteger {
		return nil, p.unexpected("INTEGER")
	}
	dim, err := strconv.Atoi(p.tok.text)
	if err != nil || dim <= 0 {
		return nil, invalidf("vectors must have a dimension greater than 0")
	}
	p.next()
	return pgschema.NewVector(elem, dim), p.expectPunct(">")
}
