package translate

import (
	"slices"
	"strconv"
	"strings"

	"github.com/cqlpg/cqlpg/pgschema"
)

// ViewUsageWarning is the warning Cassandra gives with every CREATE
// MATERIALIZED VIEW.
const ViewUsageWarning = "Materialized views are experimental and are not recommended for production use."

// planCreateView checks a CREATE MATERIALIZED VIEW as Cassandra 4.1 does
// (CreateViewStatement), in its order and with its texts, and builds the
// view's table: its key columns and the selected ones, each stored under
// the base column's Postgres name, which the view's updates copy.
func (p *planner) planCreateView(s *CreateViewStmt) (Plan, error) {
	ks, err := p.keyspaceName(s.View.Keyspace)
	if err != nil {
		return nil, err
	}
	if s.Base.Keyspace != "" && s.Base.Keyspace != ks {
		return nil, invalidf("Cannot create a materialized view on a table in a separate keyspace")
	}
	name := s.View.Name
	if !validName.MatchString(name) {
		return nil, invalidf("Table name must not be empty, more than 48 characters long, or contain non-alphanumeric-underscore characters (got \"%s\")", name)
	}
	k := p.schema.Keyspace(ks)
	if k == nil {
		return nil, invalidf("Keyspace '%s' doesn't exist", ks)
	}
	if k.Virtual {
		return nil, &UnauthorizedError{Msg: "Cannot create tables in keyspace " + ks}
	}
	base := k.Tables[s.Base.Name]
	if base == nil {
		return nil, invalidf("Base table '%s' doesn't exist", s.Base.Name)
	}
	if existing := k.Tables[name]; existing != nil {
		if !existing.IsView() {
			return nil, invalidf("Cannot create materialized view '%s' - a table with the same name already exists", name)
		}
		if s.IfNotExists {
			return &Noop{}, nil
		}
		return nil, &AlreadyExistsError{Keyspace: ks, Table: name}
	}
	if base.IsCounter() {
		return nil, invalidf("Materialized views are not supported on counter tables")
	}
	if base.IsView() {
		return nil, invalidf("Materialized views cannot be created against other materialized views")
	}
	if base.Params().GCGraceSeconds == 0 {
		return nil, invalidf("Cannot create materialized view '%s' for base table '%s' with gc_grace_seconds of 0, since this value is "+
			"used to TTL undelivered updates. Setting gc_grace_seconds too low might cause undelivered updates to expire before being replayed.",
			name, base.Name)
	}
	selected, err := viewSelection(s, base)
	if err != nil {
		return nil, err
	}
	for _, c := range base.Columns {
		if selected[c.Name] && c.Kind == pgschema.Static {
			return nil, invalidf("Cannot include static column '%s' in materialized view '%s'", c.Name, name)
		}
	}
	cols, keyColumn, err := viewKey(s, base, selected)
	if err != nil {
		return nil, err
	}
	filters, err := viewWhere(s, base, cols)
	if err != nil {
		return nil, err
	}
	if slices.ContainsFunc(s.Properties, func(pr Property) bool { return pr.Name == pgschema.OptDefaultTimeToLive }) {
		return nil, invalidf("Cannot set default_time_to_live for a materialized view. Data in a materialized view always expire at the same time than " +
			"the corresponding data in the parent table.")
	}
	options, err := tableOptions(s.Properties)
	if err != nil {
		return nil, err
	}
	for _, c := range base.Columns {
		if selected[c.Name] && !c.IsKey() && !slices.ContainsFunc(cols, func(v *pgschema.Column) bool { return v.Name == c.Name }) {
			cols = append(cols, &pgschema.Column{Name: c.Name, Type: c.Type, Kind: pgschema.Regular, Position: -1, PGName: c.PGName, Legacy: c.Legacy})
		}
	}
	v := pgschema.NewTable(ks, name, [16]byte{}, cols, options)
	v.PGSchema = k.PGSchema
	v.View = &pgschema.View{Base: base.Name, IncludeAll: s.Columns == nil, Where: s.WhereText, KeyColumn: keyColumn, Filters: filters}
	if err := v.CheckViewKey(base); err != nil {
		return nil, invalidf("%v", err)
	}
	return &SchemaChange{Statement: s, Change: "CREATED", Target: "TABLE", Keyspace: ks, Name: name, NewTable: v, OldTable: base,
		Views: append(k.ViewsOf(base.Name), v), Warnings: []string{ViewUsageWarning}}, nil
}

// viewSelection returns the base columns a view selects: every one for
// SELECT *, else those named, which must be plain column names.
func viewSelection(s *CreateViewStmt, base *pgschema.Table) (map[string]bool, error) {
	selected := map[string]bool{}
	if s.Columns == nil {
		for _, c := range base.Columns {
			selected[c.Name] = true
		}
		return selected, nil
	}
	for _, sel := range s.Columns {
		col, ok := sel.Expr.(*ColumnSelector)
		if sel.Alias != "" {
			what := "?"
			if ok {
				what = col.Name
			}
			return nil, invalidf("Cannot use aliases when defining a materialized view (got %s AS %s)", what, sel.Alias)
		}
		if !ok {
			return nil, invalidf("Can only select columns by name when defining a materialized view (got %s)", selectorText(sel.Expr))
		}
		if base.Column(col.Name) == nil {
			return nil, invalidf("Undefined column name %s in table %s", col.Name, base.QualifiedName())
		}
		selected[col.Name] = true
	}
	return selected, nil
}

// viewKey checks the view's primary key and returns its columns, typed
// and ordered as the view stores them, and the base's regular column in
// it, if any.
func viewKey(s *CreateViewStmt, base *pgschema.Table, selected map[string]bool) ([]*pgschema.Column, string, error) {
	name := s.View.Name
	if len(s.PartitionKey) == 0 {
		return nil, "", invalidf("Must provide at least one partition key column for materialized view '%s'", name)
	}
	seen := map[string]bool{}
	var cols []*pgschema.Column
	for part, names := range [][]string{s.PartitionKey, s.Clustering} {
		for i, n := range names {
			c := base.Column(n)
			if c == nil || !selected[n] {
				return nil, "", invalidf("Unknown column '%s' referenced in PRIMARY KEY for materialized view '%s'", n, name)
			}
			if seen[n] {
				return nil, "", invalidf("Duplicate column '%s' in PRIMARY KEY clause for materialized view '%s'", n, name)
			}
			seen[n] = true
			switch {
			case c.Type.IsMultiCell() && c.Type.IsCollection():
				return nil, "", invalidf("Invalid non-frozen collection type '%s' for PRIMARY KEY column '%s'", c.Type, n)
			case c.Type.IsMultiCell():
				return nil, "", invalidf("Invalid non-frozen user-defined type '%s' for PRIMARY KEY column '%s'", c.Type, n)
			case c.Type.IsCounter():
				return nil, "", invalidf("counter type is not supported for PRIMARY KEY column '%s'", n)
			case c.Type.Has(func(t *pgschema.Type) bool { return t.Kind == pgschema.Duration }):
				return nil, "", invalidf("duration type is not supported for PRIMARY KEY column '%s'", n)
			}
			kind := pgschema.PartitionKey
			if part == 1 {
				kind = pgschema.Clustering
			}
			// A clustering column keeps its base order unless CLUSTERING
			// ORDER BY says otherwise, as its type does in Cassandra.
			desc := c.Kind == pgschema.Clustering && c.Desc && kind == pgschema.Clustering
			cols = append(cols, &pgschema.Column{Name: n, Type: c.Type, Kind: kind, Position: i, Desc: desc, PGName: c.PGName, Legacy: c.Legacy})
		}
	}
	if len(s.ClusteringOrder) > 0 {
		order := make([]string, len(s.ClusteringOrder))
		for i, o := range s.ClusteringOrder {
			order[i] = o.Column
		}
		if !slices.Equal(order, s.Clustering) {
			return nil, "", invalidf("Clustering key columns must exactly match columns in CLUSTERING ORDER BY directive")
		}
		for i, o := range s.ClusteringOrder {
			cols[len(s.PartitionKey)+i].Desc = o.Desc
		}
	}
	var missing []string
	for _, c := range base.KeyColumns() {
		if !seen[c.Name] {
			missing = append(missing, c.Name)
		}
	}
	if len(missing) > 0 {
		return nil, "", invalidf("Cannot create materialized view '%s' without primary key columns %s from base table '%s'",
			name, strings.Join(missing, ", "), base.Name)
	}
	var regular []string
	for _, c := range cols {
		if !base.Column(c.Name).IsKey() {
			regular = append(regular, c.Name)
		}
	}
	if len(regular) > 1 {
		return nil, "", invalidf("Cannot include more than one non-primary key column in materialized view primary key (got %s)",
			strings.Join(regular, ", "))
	}
	key := ""
	if len(regular) == 1 {
		key = regular[0]
	}
	return cols, key, nil
}

// viewWhere checks the view's WHERE clause: every view key column
// restricted, IS NOT NULL or otherwise, and other columns only with IS NOT
// NULL. It returns the restrictions other than IS NOT NULL, which fall on
// base key columns and which the view's updates apply.
func viewWhere(s *CreateViewStmt, base *pgschema.Table, key []*pgschema.Column) ([]pgschema.ViewFilter, error) {
	restricted := map[string]bool{}
	var illegal []string
	var filters []pgschema.ViewFilter
	for _, r := range s.Where {
		if r.Kind == TokenRelation {
			return nil, invalidf("Cannot use token relation when defining a materialized view")
		}
		for _, n := range r.Columns {
			c := base.Column(n)
			if c == nil {
				return nil, invalidf("Undefined column name %s in table %s", n, base.QualifiedName())
			}
			restricted[n] = true
			if r.Op != OpIsNotNull && !c.IsKey() && !slices.Contains(illegal, n) {
				illegal = append(illegal, n)
			}
		}
		if r.Op == OpIsNotNull || len(illegal) > 0 {
			continue
		}
		f, err := viewFilter(r, base)
		if err != nil {
			return nil, err
		}
		filters = append(filters, f)
	}
	var unrestricted []string
	for _, c := range key {
		if !restricted[c.Name] {
			unrestricted = append(unrestricted, c.Name)
		}
	}
	if len(unrestricted) > 0 {
		return nil, invalidf("Primary key columns %s must be restricted with 'IS NOT NULL' or otherwise", strings.Join(unrestricted, ", "))
	}
	if len(illegal) > 0 {
		return nil, invalidf("Non-primary key columns can only be restricted with 'IS NOT NULL' (got: %s restricted illegally)", strings.Join(illegal, ","))
	}
	return filters, nil
}

// viewOps are the comparisons a view's WHERE clause may apply to a base
// key column.
var viewOps = map[Operator]string{OpEQ: "=", OpLT: "<", OpLTE: "<=", OpGT: ">", OpGTE: ">="}

// viewFilter reads a restriction of a base key column to a constant.
func viewFilter(r Relation, base *pgschema.Table) (pgschema.ViewFilter, error) {
	op, ok := viewOps[r.Op]
	lit, isLit := r.Value.(*Literal)
	if !ok || len(r.Columns) != 1 || r.Kind != ColumnRelation || !isLit {
		return pgschema.ViewFilter{}, invalidf("cqlpg supports IS NOT NULL and comparisons of a key column with a constant " +
			"in the WHERE clause of a materialized view")
	}
	c := base.Column(r.Columns[0])
	if op != "=" && c.Kind != pgschema.Clustering {
		return pgschema.ViewFilter{}, invalidf("cqlpg compares only clustering columns by order in the WHERE clause of a materialized view "+
			"(got %s %s)", c.Name, op)
	}
	v, err := literalValue(lit, c.Type, c.Name)
	if err != nil {
		return pgschema.ViewFilter{}, err
	}
	if v == nil {
		return pgschema.ViewFilter{}, invalidf("Invalid null value for %s", c.Name)
	}
	return pgschema.ViewFilter{Column: c.Name, Op: op, Value: v}, nil
}

// selectorText names a selector in an error message.
func selectorText(e SelectorExpr) string {
	switch s := e.(type) {
	case *ColumnSelector:
		return s.Name
	case *CallSelector:
		return s.Name + "(...)"
	}
	return "an expression"
}

// planAlterView changes a view's options (AlterViewStatement).
func (p *planner) planAlterView(s *AlterViewStmt) (Plan, error) {
	ks, err := p.keyspaceName(s.View.Keyspace)
	if err != nil {
		return nil, err
	}
	v := p.schema.Table(ks, s.View.Name)
	if v == nil || !v.IsView() {
		if s.IfExists {
			return &Noop{}, nil
		}
		return nil, invalidf("Materialized view '%s.%s' doesn't exist", ks, s.View.Name)
	}
	options, err := alterOptions(v, s.Properties)
	if err != nil {
		return nil, err
	}
	if g, _ := strconv.Atoi(options[pgschema.OptGCGraceSeconds]); g == 0 && options[pgschema.OptGCGraceSeconds] != "" {
		return nil, invalidf("Cannot alter gc_grace_seconds of a materialized view to 0, since this value is used to TTL undelivered updates. " +
			"Setting gc_grace_seconds too low might cause undelivered updates to expire before being replayed.")
	}
	if ttl, _ := strconv.Atoi(options[pgschema.OptDefaultTimeToLive]); ttl > 0 {
		return nil, invalidf("Forbidden default_time_to_live detected for a materialized view. Data in a materialized view always expire at the same time than " +
			"the corresponding data in the parent table. default_time_to_live must be set to zero, see CASSANDRA-12868 for more information")
	}
	return &SchemaChange{Statement: s, Change: "UPDATED", Target: "TABLE", Keyspace: ks, Name: v.Name, OldTable: v,
		NewTable: rebuild(v, v.Columns, options)}, nil
}

// planDropView drops a view (DropViewStatement); its base keeps the
// trigger for the views that remain.
func (p *planner) planDropView(s *DropStmt, ks string) (Plan, error) {
	k := p.schema.Keyspace(ks)
	var v *pgschema.Table
	if k != nil {
		v = k.Tables[s.Name]
	}
	if v == nil || !v.IsView() {
		if s.IfExists {
			return &Noop{}, nil
		}
		return nil, invalidf("Materialized view '%s.%s' doesn't exist", ks, s.Name)
	}
	base := k.Tables[v.View.Base]
	views := slices.DeleteFunc(k.ViewsOf(base.Name), func(t *pgschema.Table) bool { return t.Name == v.Name })
	return &SchemaChange{Statement: s, Change: "DROPPED", Target: "TABLE", Keyspace: ks, Name: s.Name, OldTable: base, Views: views}, nil
}

// viewsOfTable refuses what Cassandra refuses on a table with views, or
// on a view, for DROP TABLE.
func dropTableChecks(k *pgschema.Keyspace, name string) error {
	if k == nil {
		return nil
	}
	t := k.Tables[name]
	if t == nil {
		return nil
	}
	if t.IsView() {
		return invalidf("Cannot use DROP TABLE on a materialized view. Please use DROP MATERIALIZED VIEW instead.")
	}
	if views := k.ViewsOf(name); len(views) > 0 {
		names := make([]string, len(views))
		for i, v := range views {
			names[i] = v.Name
		}
		return invalidf("Cannot drop table when materialized views still depend on it (%s.{%s})", k.Name, strings.Join(names, ","))
	}
	return nil
}

// renameInWhere returns a view's WHERE clause with its column names
// renamed (old name to new), each written as CQL needs it.
func renameInWhere(where string, renames map[string]string) string {
	s := newScanner(where)
	var b strings.Builder
	last := 0
	for {
		tok := s.next()
		if tok.kind == tokEOF || tok.kind == tokIllegal {
			break
		}
		if tok.kind != tokIdent && tok.kind != tokQuotedIdent {
			continue
		}
		if n, ok := renames[tok.text]; ok {
			b.WriteString(where[last:tok.pos.Offset])
			b.WriteString(pgschema.QuoteIdentifier(n))
			last = tok.pos.Offset + len(tok.raw)
		}
	}
	b.WriteString(where[last:])
	return b.String()
}

// viewsRenaming returns the views of t once ALTER TABLE t RENAME has
// renamed the base's key columns (renames, old name to the new table's
// column): each view's columns of those names renamed alike, Postgres
// names included, and its WHERE clause and filters with them. Every view
// of t is returned, renamed or not, since t's view trigger names them all.
func viewsRenaming(k *pgschema.Keyspace, t *pgschema.Table, renames map[string]*pgschema.Column) []*pgschema.Table {
	names := map[string]string{}
	for old, c := range renames {
		names[old] = c.Name
	}
	var out []*pgschema.Table
	for _, v := range k.ViewsOf(t.Name) {
		cols := make([]*pgschema.Column, len(v.Columns))
		for i, c := range v.Columns {
			cc := *c
			if r := renames[c.Name]; r != nil {
				cc.Name, cc.PGName = r.Name, r.PGName
			}
			cols[i] = &cc
		}
		nv := rebuild(v, cols, v.Options)
		view := *v.View
		view.Where = renameInWhere(view.Where, names)
		view.Filters = slices.Clone(view.Filters)
		for i, f := range view.Filters {
			if n, ok := names[f.Column]; ok {
				view.Filters[i].Column = n
			}
		}
		nv.View = &view
		out = append(out, nv)
	}
	return out
}
