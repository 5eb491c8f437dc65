package pgschema

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// The CQL that DESCRIBE prints, in Cassandra 4.1's exact layout
// (KeyspaceMetadata, TableMetadata, UserType and IndexMetadata's
// toCqlString, and DescribeStatement's element order).

// SchemaElement is one schema element as a DESCRIBE result row shows it: its
// keyspace, kind and name, each name quoted as CQL needs, and the CQL that
// creates it.
type SchemaElement struct {
	Keyspace, Type, Name, Create string
}

// Element kinds, as DESCRIBE's type column names them.
const (
	ElemKeyspace  = "keyspace"
	ElemType      = "type"
	ElemTable     = "table"
	ElemIndex     = "index"
	ElemView      = "materialized_view"
	ElemFunction  = "function"
	ElemAggregate = "aggregate"
)

// isVirtualKeyspace reports whether Cassandra itself serves the keyspace
// as a virtual keyspace; system and system_schema are ordinary (local)
// keyspaces there, though cqlpg answers them itself too.
func isVirtualKeyspace(name string) bool {
	return name == "system_virtual_schema" || name == "system_views"
}

// virtualComments are the comments of Cassandra's virtual schema tables.
var virtualComments = map[string]string{
	"system_virtual_schema.keyspaces": "virtual keyspace definitions",
	"system_virtual_schema.tables":    "virtual table definitions",
	"system_virtual_schema.columns":   "virtual column definitions",
	"system_views.clients":            "currently connected clients",
	"system_views.settings":           "current settings",
}

// CompareNames orders schema elements as DESCRIBE lists them: by name,
// ignoring case (SchemaElement.NAME_COMPARATOR), then bytewise so that the
// order is total.
func CompareNames(a, b string) int {
	if c := strings.Compare(strings.ToLower(a), strings.ToLower(b)); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

// KeyspaceElements returns what DESCRIBE KEYSPACE shows: the keyspace,
// then, unless only is set, its types (each after the types it uses), its
// tables by name, each followed by its indexes.
func KeyspaceElements(k *Keyspace, only, internals bool) []SchemaElement {
	out := []SchemaElement{k.SchemaElement()}
	if only {
		return out
	}
	for _, t := range k.SortedTypes() {
		out = append(out, TypeElement(t))
	}
	for _, f := range k.Functions {
		out = append(out, FunctionElement(f))
	}
	for _, a := range k.Aggregates {
		out = append(out, AggregateElement(a))
	}
	for _, t := range k.SortedTables() {
		if !t.IsView() {
			out = append(out, TableElements(k, t, internals)...)
		}
	}
	return out
}

// TableElements returns what DESCRIBE TABLE shows: the table, its
// indexes by name, and its materialized views by name.
func TableElements(k *Keyspace, t *Table, internals bool) []SchemaElement {
	out := []SchemaElement{{Keyspace: QuoteIdentifier(t.Keyspace), Type: ElemTable, Name: QuoteIdentifier(t.Name),
		Create: t.Describe(internals)}}
	for _, idx := range t.SortedIndexes() {
		out = append(out, IndexElement(t, idx))
	}
	views := k.ViewsOf(t.Name)
	slices.SortFunc(views, func(a, b *Table) int { return CompareNames(a.Name, b.Name) })
	for _, v := range views {
		out = append(out, ViewElement(v, internals))
	}
	return out
}

// FunctionElement returns a function as DESCRIBE FUNCTION shows it, named
// with its argument types: "f(int, text)".
func FunctionElement(f *Function) SchemaElement {
	return SchemaElement{Keyspace: QuoteIdentifier(f.Keyspace), Type: ElemFunction,
		Name: QuoteIdentifier(f.Name) + "(" + strings.Join(f.ArgTypeNames(), ", ") + ")", Create: f.CreateStatement()}
}

// AggregateElement returns an aggregate as DESCRIBE AGGREGATE shows it.
func AggregateElement(a *Aggregate) SchemaElement {
	return SchemaElement{Keyspace: QuoteIdentifier(a.Keyspace), Type: ElemAggregate,
		Name: QuoteIdentifier(a.Name) + "(" + strings.Join(a.ArgTypeNames(), ", ") + ")", Create: a.CreateStatement()}
}

// ViewElement returns a materialized view as DESCRIBE MATERIALIZED VIEW
// shows it.
func ViewElement(v *Table, internals bool) SchemaElement {
	return SchemaElement{Keyspace: QuoteIdentifier(v.Keyspace), Type: ElemView, Name: QuoteIdentifier(v.Name),
		Create: v.Describe(internals)}
}

// IndexElement returns an index as DESCRIBE INDEX shows it.
func IndexElement(t *Table, idx *Index) SchemaElement {
	return SchemaElement{Keyspace: QuoteIdentifier(t.Keyspace), Type: ElemIndex, Name: QuoteIdentifier(idx.Name),
		Create: idx.CreateStatement(t)}
}

// TypeElement returns a user type as DESCRIBE TYPE shows it.
func TypeElement(t *Type) SchemaElement {
	return SchemaElement{Keyspace: QuoteIdentifier(t.Keyspace), Type: ElemType, Name: QuoteIdentifier(t.Name),
		Create: t.CreateStatement()}
}

// SchemaElement returns the keyspace as DESCRIBE ONLY KEYSPACE shows it.
func (k *Keyspace) SchemaElement() SchemaElement {
	return SchemaElement{Keyspace: QuoteIdentifier(k.Name), Type: ElemKeyspace, Name: QuoteIdentifier(k.Name),
		Create: k.CreateStatement()}
}

// SortedTables returns the keyspace's tables in DESCRIBE's order.
func (k *Keyspace) SortedTables() []*Table {
	out := make([]*Table, 0, len(k.Tables))
	for _, t := range k.Tables {
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b *Table) int { return CompareNames(a.Name, b.Name) })
	return out
}

// SortedIndexes returns the table's indexes in DESCRIBE's order.
func (t *Table) SortedIndexes() []*Index {
	out := slices.Clone(t.Indexes)
	slices.SortFunc(out, func(a, b *Index) int { return CompareNames(a.Name, b.Name) })
	return out
}

// SortedTypes returns the keyspace's user types so that each comes after
// the types it uses, taking the types by name and their dependencies
// first, as Cassandra's Types.sortedStream does.
func (k *Keyspace) SortedTypes() []*Type {
	names := make([]string, 0, len(k.Types))
	for n := range k.Types {
		names = append(names, n)
	}
	slices.Sort(names)
	var out []*Type
	seen := map[string]bool{}
	var visit func(t *Type)
	visit = func(t *Type) {
		for _, e := range t.Elem {
			visit(e)
		}
		if t.Kind == UDT && t.Keyspace == k.Name && !seen[t.Name] {
			if own := k.Types[t.Name]; own != nil {
				seen[t.Name] = true
				out = append(out, own)
			}
		}
	}
	for _, n := range names {
		visit(k.Types[n])
	}
	return out
}

// CreateStatement returns the CQL that creates the keyspace, as DESCRIBE
// prints it; Cassandra's virtual keyspaces get a comment instead.
func (k *Keyspace) CreateStatement() string {
	name := QuoteIdentifier(k.Name)
	if isVirtualKeyspace(k.Name) {
		return "/*\nWarning: Keyspace " + name + " is a virtual keyspace and cannot be recreated with CQL.\n" +
			"Structure, for reference:\nVIRTUAL KEYSPACE " + name + ";\n*/"
	}
	return "CREATE KEYSPACE " + name + " WITH replication = " + replicationLiteral(k) +
		"  AND durable_writes = " + strconv.FormatBool(k.DurableWrites) + ";"
}

// replicationLiteral writes the replication map as ReplicationParams does:
// the class first, by its short name when it is one of Cassandra's
// strategies, then the options.
func replicationLiteral(k *Keyspace) string {
	opts := k.Replication.Options()
	class := strings.TrimPrefix(opts["class"], "org.apache.cassandra.locator.")
	delete(opts, "class")
	keys := make([]string, 0, len(opts))
	for key := range opts {
		keys = append(keys, key)
	}
	slices.Sort(keys)
	var b strings.Builder
	b.WriteString("{'class': ")
	b.WriteString(QuoteString(class))
	for _, key := range keys {
		b.WriteString(", ")
		b.WriteString(QuoteString(key))
		b.WriteString(": ")
		b.WriteString(QuoteString(opts[key]))
	}
	b.WriteByte('}')
	return b.String()
}

// CreateStatement returns the CQL that creates a user type, as DESCRIBE
// TYPE prints it; it is empty for other types.
func (t *Type) CreateStatement() string {
	if t.Kind != UDT {
		return ""
	}
	var b strings.Builder
	b.WriteString("CREATE TYPE ")
	b.WriteString(QuoteIdentifier(t.Keyspace))
	b.WriteByte('.')
	b.WriteString(QuoteIdentifier(t.Name))
	b.WriteString(" (\n")
	for i, f := range t.Fields {
		b.WriteString("    ")
		b.WriteString(QuoteIdentifier(f))
		b.WriteByte(' ')
		b.WriteString(t.Elem[i].String())
		if i < len(t.Fields)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString(");")
	return b.String()
}

// CreateStatement returns the CQL that creates the index on t, as
// DESCRIBE INDEX prints it: a custom index names its class and the options
// other than target and class_name.
func (i *Index) CreateStatement(t *Table) string {
	var b strings.Builder
	if i.Kind == "CUSTOM" {
		b.WriteString("CREATE CUSTOM INDEX ")
	} else {
		b.WriteString("CREATE INDEX ")
	}
	b.WriteString(QuoteIdentifier(i.Name))
	b.WriteString(" ON ")
	b.WriteString(t.QualifiedName())
	b.WriteString(" (")
	b.WriteString(i.Options["target"])
	b.WriteByte(')')
	if i.Kind == "CUSTOM" {
		b.WriteString(" USING ")
		b.WriteString(QuoteString(i.Options["class_name"]))
		others := map[string]string{}
		for k, v := range i.Options {
			if k != "target" && k != "class_name" {
				others[k] = v
			}
		}
		if len(others) > 0 {
			b.WriteString(" WITH OPTIONS = ")
			b.WriteString(MapLiteral(others))
		}
	}
	b.WriteByte(';')
	return b.String()
}

// CreateStatement returns the CQL that creates t, as DESCRIBE TABLE prints
// it.
func (t *Table) CreateStatement() string { return t.Describe(false) }

// Describe returns the CQL that creates t in Cassandra 4.1's layout: the
// key columns, then static and regular columns (single-cell before
// multi-cell, each by name), the primary key, and every option in
// DESCRIBE's order. With internals it also gives the table's id and its
// dropped columns, with the ALTER statements that drop them. Tables of
// Cassandra's virtual keyspaces get a commented-out VIRTUAL TABLE.
func (t *Table) Describe(internals bool) string {
	if t.View != nil {
		return t.describeView(internals)
	}
	var b strings.Builder
	virtual := isVirtualKeyspace(t.Keyspace)
	create := "CREATE"
	if virtual {
		b.WriteString("/*\nWarning: Table " + t.QualifiedName() + " is a virtual table and cannot be recreated with CQL.\n" +
			"Structure, for reference:\n")
		create = "VIRTUAL"
	}
	b.WriteString(create + " TABLE " + t.QualifiedName() + " (\n")

	single := len(t.PartitionKey) == 1 && len(t.Clustering) == 0
	var defs []string
	dropped := map[string]bool{}
	if internals && !virtual {
		for _, d := range t.Dropped {
			dropped[d.Name] = true
		}
	}
	for _, c := range t.createOrder() {
		if dropped[c.Name] {
			continue // listed as dropped below, then added back by ALTER
		}
		def := columnDefinition(c.Name, c.Type.String(), c.Kind == Static)
		if single && c.Kind == PartitionKey {
			def += " PRIMARY KEY"
		}
		defs = append(defs, def)
	}
	for _, d := range t.sortedDropped(dropped) {
		defs = append(defs, columnDefinition(d.Name, d.Type, d.Kind == Static.String()))
	}
	for i, def := range defs {
		b.WriteString("    ")
		b.WriteString(def)
		if !single || i < len(defs)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	if !single {
		b.WriteString("    " + t.primaryKeyClause() + "\n")
	}

	var with []string
	if internals {
		with = append(with, "ID = "+UUIDText(t.ID[:]))
	}
	with = append(with, t.clusteringOrderOption()...)
	if virtual {
		comment := t.Params().Comment
		if c, ok := virtualComments[t.Keyspace+"."+t.Name]; ok && comment == "" {
			comment = c
		}
		with = append(with, "comment = "+QuoteString(comment))
	} else {
		p := t.Params()
		for _, name := range TableOptionNames {
			with = append(with, name+" = "+p.Literal(name))
		}
	}
	b.WriteString(") WITH ")
	b.WriteString(strings.Join(with, "\n    AND "))
	b.WriteByte(';')
	if virtual {
		b.WriteString("\n*/")
	}
	if internals && !virtual {
		for _, d := range t.sortedDropped(dropped) {
			fmt.Fprintf(&b, "\nALTER TABLE %s DROP %s USING TIMESTAMP %d;", t.QualifiedName(), QuoteIdentifier(d.Name), d.Dropped.UnixMicro())
			if c := t.Column(d.Name); c != nil {
				fmt.Fprintf(&b, "\nALTER TABLE %s ADD %s;", t.QualifiedName(), columnDefinition(c.Name, c.Type.String(), c.Kind == Static))
			}
		}
	}
	return b.String()
}

// sortedDropped returns the dropped columns named in set, by name.
func (t *Table) sortedDropped(set map[string]bool) []DroppedColumn {
	var out []DroppedColumn
	for _, d := range t.Dropped {
		if set[d.Name] {
			out = append(out, d)
		}
	}
	slices.SortFunc(out, func(a, b DroppedColumn) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// createOrder returns the columns in the order CREATE TABLE lists them
// (TableMetadata.allColumnsInCreateOrder): partition key and clustering
// columns in key order, then static and then regular columns, each with
// single-cell columns before multi-cell ones, by name.
func (t *Table) createOrder() []*Column {
	out := slices.Clone(t.KeyColumns())
	rest := slices.Clone(t.Columns[len(out):])
	rank := func(c *Column) int {
		r := 0
		if c.Kind == Regular {
			r = 2
		}
		if c.Type.IsMultiCell() {
			r++
		}
		return r
	}
	slices.SortStableFunc(rest, func(a, b *Column) int {
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra - rb
		}
		return strings.Compare(a.Name, b.Name)
	})
	return append(out, rest...)
}

func columnDefinition(name, typ string, static bool) string {
	def := QuoteIdentifier(name) + " " + typ
	if static {
		def += " static"
	}
	return def
}

func columnList(cols []*Column) string {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = QuoteIdentifier(c.Name)
	}
	return strings.Join(names, ", ")
}

// clusteringOrderOption returns t's CLUSTERING ORDER BY option, if it
// has clustering columns.
func (t *Table) clusteringOrderOption() []string {
	if len(t.Clustering) == 0 {
		return nil
	}
	order := make([]string, len(t.Clustering))
	for i, c := range t.Clustering {
		order[i] = QuoteIdentifier(c.Name) + " " + strings.ToUpper(c.ClusteringOrder())
	}
	return []string{"CLUSTERING ORDER BY (" + strings.Join(order, ", ") + ")"}
}

// describeView returns the CQL that creates the view t in Cassandra
// 4.1's layout (ViewMetadata's toCqlString): its SELECT, the base's
// WHERE clause, its primary key, and its options, which have no
// default_time_to_live.
func (t *Table) describeView(internals bool) string {
	var b strings.Builder
	b.WriteString("CREATE MATERIALIZED VIEW " + t.QualifiedName() + " AS\n    SELECT ")
	if t.View.IncludeAll {
		b.WriteString("*")
	} else {
		b.WriteString(columnList(t.createOrder()))
	}
	fmt.Fprintf(&b, "\n    FROM %s.%s\n    WHERE %s\n    %s\n WITH ", QuoteIdentifier(t.Keyspace), QuoteIdentifier(t.View.Base),
		t.View.Where, t.primaryKeyClause())
	var with []string
	if internals {
		with = append(with, "ID = "+UUIDText(t.ID[:]))
	}
	with = append(with, t.clusteringOrderOption()...)
	p := t.Params()
	for _, name := range TableOptionNames {
		if name != OptDefaultTimeToLive {
			with = append(with, name+" = "+p.Literal(name))
		}
	}
	b.WriteString(strings.Join(with, "\n    AND "))
	b.WriteByte(';')
	return b.String()
}

// primaryKeyClause is t's PRIMARY KEY (...) clause, a composite
// partition key in its own parentheses.
func (t *Table) primaryKeyClause() string {
	pk := columnList(t.PartitionKey)
	if len(t.PartitionKey) > 1 {
		pk = "(" + pk + ")"
	}
	if len(t.Clustering) > 0 {
		pk += ", " + columnList(t.Clustering)
	}
	return "PRIMARY KEY (" + pk + ")"
}
