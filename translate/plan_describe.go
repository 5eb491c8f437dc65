package translate

import (
	"slices"

	"github.com/cqlpg/cqlpg/pgschema"
)

// Describe is a DESCRIBE statement with its names resolved against the
// session's keyspace. The gateway answers it from its schema snapshot with
// Elements (or, for DESCRIBE CLUSTER, from its own configuration and ring).
type Describe struct {
	Metadata
	// Kind is never DescribeGeneric: planning resolves a bare name to a
	// keyspace, table, index or view, as Cassandra does.
	Kind DescribeKind
	// Keyspace is the keyspace described, or listed by a plural form; it
	// is empty when a listing covers every keyspace (no USE).
	Keyspace, Name        string
	Full, Only, Internals bool
	// RangeOwnership is set on DESCRIBE CLUSTER in a session whose
	// keyspace is not a system one: the result then has range_ownership.
	RangeOwnership bool
}

// The result columns of DESCRIBE (DescribeStatement's LIST_METADATA and
// ELEMENT_METADATA, and DESCRIBE CLUSTER's), all in table system.describe.
var (
	describeText = pgschema.Scalar(pgschema.Text)
	listColumns  = describeColumns("keyspace_name", "type", "name")
	elemColumns  = describeColumns("keyspace_name", "type", "name", "create_statement")
	clusterCols  = describeColumns("cluster", "partitioner", "snitch")
	// rangeOwnership is map<text, frozen<list<text>>>: each token range's
	// end token and its replicas' addresses.
	rangeOwnership = pgschema.NewMap(describeText, pgschema.NewList(describeText, true), false)
)

func describeColumns(names ...string) []ColumnSpec {
	specs := make([]ColumnSpec, len(names))
	for i, n := range names {
		specs[i] = ColumnSpec{Keyspace: "system", Table: "describe", Name: n, Type: describeText}
	}
	return specs
}

func (p *planner) planDescribe(s *DescribeStmt) (Plan, error) {
	d := &Describe{Kind: s.Kind, Keyspace: s.Keyspace, Name: s.Name, Full: s.Full, Only: s.Only, Internals: s.Internals}
	switch {
	case s.Kind == DescribeCluster:
		d.RangeOwnership = p.keyspace != "" && !pgschema.IsSystemKeyspace(p.keyspace)
		d.Result = slices.Clone(clusterCols)
		if d.RangeOwnership {
			d.Result = append(d.Result, ColumnSpec{Keyspace: "system", Table: "describe", Name: "range_ownership", Type: rangeOwnership})
		}
		return d, nil
	case s.Kind == DescribeKeyspaces || s.Kind == DescribeSchema:
	case s.Kind.IsListing():
		d.Keyspace = p.keyspace
	case s.Kind == DescribeGeneric:
		if err := p.resolveGeneric(d); err != nil {
			return nil, err
		}
	case d.Keyspace == "":
		if p.keyspace == "" {
			return nil, invalidf("No keyspace specified and no current keyspace")
		}
		d.Keyspace = p.keyspace
	}
	d.Result = slices.Clone(elemColumns)
	if d.Kind.IsListing() {
		d.Result = slices.Clone(listColumns)
	}
	// Names that do not resolve fail now; the gateway builds the rows
	// again from its own snapshot.
	if d.Kind != DescribeKeyspaces && d.Kind != DescribeSchema {
		if _, err := d.Elements(p.schema); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// resolveGeneric resolves DESCRIBE [ks.]name as Cassandra does: a bare name
// is a keyspace if one has that name; otherwise the name is looked up in
// the keyspace given or in use (or, with neither, taken as a keyspace
// name) as a table, an index, then a materialized view.
func (p *planner) resolveGeneric(d *Describe) error {
	if d.Keyspace == "" {
		if p.schema.Keyspace(d.Name) != nil {
			d.Kind, d.Keyspace, d.Name = DescribeKeyspace, d.Name, ""
			return nil
		}
		d.Keyspace = p.keyspace
		if d.Keyspace == "" {
			d.Keyspace = d.Name
		}
	}
	k, err := describedKeyspace(p.schema, d.Keyspace)
	if err != nil {
		return err
	}
	switch t := k.Tables[d.Name]; {
	case t != nil && !t.IsView():
		d.Kind = DescribeTable
	case indexNamed(k, d.Name) != nil:
		d.Kind = DescribeIndex
	case t != nil:
		d.Kind = DescribeView
	default:
		return invalidf("'%s' not found in keyspace '%s'", d.Name, d.Keyspace)
	}
	return nil
}

// describedKeyspace finds the keyspace a DESCRIBE names.
func describedKeyspace(s *pgschema.Schema, name string) (*pgschema.Keyspace, error) {
	if k := s.Keyspace(name); k != nil {
		return k, nil
	}
	return nil, invalidf("'%s' not found in keyspaces", name)
}

// indexNamed returns the keyspace's index with the given name, or nil.
func indexNamed(k *pgschema.Keyspace, name string) *pgschema.Table {
	for _, t := range k.Tables {
		for _, idx := range t.Indexes {
			if idx.Name == name {
				return t
			}
		}
	}
	return nil
}

// sortedKeyspaces returns the keyspaces in DESCRIBE's order, the system
// keyspaces only when system is set.
func sortedKeyspaces(s *pgschema.Schema, system bool) []*pgschema.Keyspace {
	var out []*pgschema.Keyspace
	for _, k := range s.Keyspaces() {
		if system || !pgschema.IsSystemKeyspace(k.Name) {
			out = append(out, k)
		}
	}
	slices.SortFunc(out, func(a, b *pgschema.Keyspace) int { return pgschema.CompareNames(a.Name, b.Name) })
	return out
}

// Elements returns the rows of the DESCRIBE in Cassandra's order, built
// from one schema snapshot; listings leave Create empty. Names that do not
// resolve get Cassandra's errors.
func (d *Describe) Elements(s *pgschema.Schema) ([]pgschema.SchemaElement, error) {
	switch d.Kind {
	case DescribeKeyspaces:
		var out []pgschema.SchemaElement
		for _, k := range sortedKeyspaces(s, true) {
			name := pgschema.QuoteIdentifier(k.Name)
			out = append(out, pgschema.SchemaElement{Keyspace: name, Type: pgschema.ElemKeyspace, Name: name})
		}
		return out, nil
	case DescribeSchema:
		var out []pgschema.SchemaElement
		for _, k := range sortedKeyspaces(s, d.Full) {
			out = append(out, pgschema.KeyspaceElements(k, false, d.Internals)...)
		}
		return out, nil
	case DescribeTables, DescribeTypes, DescribeFunctions, DescribeAggregates:
		return d.listing(s)
	case DescribeCluster:
		return nil, nil
	}
	k, err := describedKeyspace(s, d.Keyspace)
	if err != nil {
		return nil, err
	}
	switch d.Kind {
	case DescribeKeyspace:
		return pgschema.KeyspaceElements(k, d.Only, d.Internals), nil
	case DescribeTable:
		t := k.Tables[d.Name]
		if t == nil || t.IsView() {
			return nil, invalidf("Table '%s' not found in keyspace '%s'", d.Name, k.Name)
		}
		return pgschema.TableElements(k, t, d.Internals), nil
	case DescribeIndex:
		t := indexNamed(k, d.Name)
		if t == nil {
			// Cassandra looks for the index's table first.
			return nil, invalidf("Table for existing index '%s' not found in '%s'", d.Name, k.Name)
		}
		for _, idx := range t.Indexes {
			if idx.Name == d.Name {
				return []pgschema.SchemaElement{pgschema.IndexElement(t, idx)}, nil
			}
		}
	case DescribeType:
		if t := k.Types[d.Name]; t != nil {
			return []pgschema.SchemaElement{pgschema.TypeElement(t)}, nil
		}
		return nil, invalidf("User defined type '%s' not found in '%s'", d.Name, k.Name)
	case DescribeFunction:
		var out []pgschema.SchemaElement
		for _, f := range k.Functions {
			if f.Name == d.Name {
				out = append(out, pgschema.FunctionElement(f))
			}
		}
		if len(out) == 0 {
			return nil, invalidf("User defined function '%s' not found in '%s'", d.Name, k.Name)
		}
		return out, nil
	case DescribeAggregate:
		var out []pgschema.SchemaElement
		for _, a := range k.Aggregates {
			if a.Name == d.Name {
				out = append(out, pgschema.AggregateElement(a))
			}
		}
		if len(out) == 0 {
			return nil, invalidf("User defined aggregate '%s' not found in '%s'", d.Name, k.Name)
		}
		return out, nil
	case DescribeView:
		if t := k.Tables[d.Name]; t != nil && t.IsView() {
			return []pgschema.SchemaElement{pgschema.ViewElement(t, d.Internals)}, nil
		}
		return nil, invalidf("Materialized view '%s' not found in '%s'", d.Name, k.Name)
	}
	return nil, invalidf("'%s' not found in keyspace '%s'", d.Name, k.Name)
}

// listing answers the plural forms: the keyspace in use, or every
// keyspace, each with its elements by name.
func (d *Describe) listing(s *pgschema.Schema) ([]pgschema.SchemaElement, error) {
	keyspaces := sortedKeyspaces(s, true)
	if d.Keyspace != "" {
		k, err := describedKeyspace(s, d.Keyspace)
		if err != nil {
			return nil, err
		}
		keyspaces = []*pgschema.Keyspace{k}
	}
	var out []pgschema.SchemaElement
	for _, k := range keyspaces {
		var names []string
		kind := pgschema.ElemTable
		switch d.Kind {
		case DescribeTables:
			for n, t := range k.Tables {
				if !t.IsView() {
					names = append(names, n)
				}
			}
		case DescribeTypes:
			kind = pgschema.ElemType
			for n := range k.Types {
				names = append(names, n)
			}
		case DescribeFunctions:
			kind = pgschema.ElemFunction
			for _, f := range k.Functions {
				names = append(names, pgschema.FunctionElement(f).Name)
			}
		case DescribeAggregates:
			kind = pgschema.ElemAggregate
			for _, a := range k.Aggregates {
				names = append(names, pgschema.AggregateElement(a).Name)
			}
		}
		slices.SortFunc(names, pgschema.CompareNames)
		for _, n := range names {
			if kind != pgschema.ElemFunction && kind != pgschema.ElemAggregate {
				n = pgschema.QuoteIdentifier(n) // function names come quoted, with their arguments
			}
			out = append(out, pgschema.SchemaElement{Keyspace: pgschema.QuoteIdentifier(k.Name), Type: kind, Name: n})
		}
	}
	return out, nil
}
