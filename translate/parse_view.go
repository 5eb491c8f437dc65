package translate

import (
	"strings"

	"github.com/cqlpg/cqlpg/pgschema"
)

// createView parses CREATE MATERIALIZED VIEW.
//
//	createView := CREATE MATERIALIZED VIEW (IF NOT EXISTS)? tableName AS
//	              SELECT ('*' | selector (',' selector)*) FROM tableName
//	              WHERE where PRIMARY KEY '(' key ')'
//	              (WITH viewOption (AND viewOption)*)?
//	viewOption := property | CLUSTERING ORDER BY '(' ident (ASC | DESC)? (',' ...)* ')'
func (p *parser) createView() (Statement, error) {
	p.next() // CREATE
	p.next() // MATERIALIZED
	if err := p.expectKeyword("view"); err != nil {
		return nil, err
	}
	v := &CreateViewStmt{}
	var err error
	if v.IfNotExists, err = p.ifNotExists(); err != nil {
		return nil, err
	}
	if v.View, err = p.tableName(); err != nil {
		return nil, err
	}
	if err := p.expectKeyword("as"); err != nil {
		return nil, err
	}
	if err := p.expectKeyword("select"); err != nil {
		return nil, err
	}
	if !p.acceptPunct("*") {
		for {
			sel, err := p.selector()
			if err != nil {
				return nil, err
			}
			v.Columns = append(v.Columns, sel)
			if !p.acceptPunct(",") {
				break
			}
		}
	}
	if err := p.expectKeyword("from"); err != nil {
		return nil, err
	}
	if v.Base, err = p.tableName(); err != nil {
		return nil, err
	}
	if p.acceptKeyword("where") {
		// Each relation as written, spaced out as Cassandra prints them;
		// IS NOT NULL in its canonical case.
		var texts []string
		for {
			start := p.tok.pos.Offset
			r, err := p.relation()
			if err != nil {
				return nil, err
			}
			v.Where = append(v.Where, r)
			text := strings.Join(strings.Fields(p.s.src[start:p.tok.pos.Offset]), " ")
			if r.Op == OpIsNotNull && len(r.Columns) == 1 {
				text = pgschema.QuoteIdentifier(r.Columns[0]) + " IS NOT NULL"
			}
			texts = append(texts, text)
			if !p.acceptKeyword("and") {
				break
			}
		}
		v.WhereText = strings.Join(texts, " AND ")
	}
	if !p.isKeyword("primary") {
		return nil, p.unexpected("K_PRIMARY")
	}
	key := &CreateTableStmt{}
	if err := p.primaryKey(key); err != nil {
		return nil, err
	}
	v.PartitionKey, v.Clustering = key.PartitionKey, key.Clustering
	if !p.acceptKeyword("with") {
		return v, nil
	}
	for {
		if p.acceptKeyword("clustering") {
			if err := p.clusteringOrder(key); err != nil {
				return nil, err
			}
			v.ClusteringOrder = key.ClusteringOrder
		} else {
			prop, err := p.property()
			if err != nil {
				return nil, err
			}
			v.Properties = append(v.Properties, prop)
		}
		if !p.acceptKeyword("and") {
			return v, nil
		}
	}
}

// alterView parses ALTER MATERIALIZED VIEW.
//
//	alterView := ALTER MATERIALIZED VIEW (IF EXISTS)? tableName WITH property (AND property)*
func (p *parser) alterView() (Statement, error) {
	p.next() // ALTER
	p.next() // MATERIALIZED
	if err := p.expectKeyword("view"); err != nil {
		return nil, err
	}
	a := &AlterViewStmt{IfExists: p.ifExists()}
	var err error
	if a.View, err = p.tableName(); err != nil {
		return nil, err
	}
	if err := p.expectKeyword("with"); err != nil {
		return nil, err
	}
	for {
		prop, err := p.property()
		if err != nil {
			return nil, err
		}
		a.Properties = append(a.Properties, prop)
		if !p.acceptKeyword("and") {
			return a, nil
		}
	}
}
