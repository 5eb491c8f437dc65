package translate

import (
	"encoding/binary"
	"strings"

	"github.com/cqlpg/cqlpg/pgschema"
)

// alterTable resolves the table of an ALTER TABLE; nil with no error means
// IF EXISTS found none.
func (p *planner) alterTable(n TableName, ifExists bool) (*pgschema.Table, error) {
	ks, err := p.keyspaceName(n.Keyspace)
	if err != nil {
		return nil, err
	}
	t := p.schema.Table(ks, n.Name)
	if t == nil {
		if err := p.unloadable("table", ks, n.Name); err != nil {
			return nil, err
		}
		if ifExists {
			return nil, nil
		}
		return nil, invalidf("Table '%s.%s' doesn't exist", ks, n.Name)
	}
	if t.Virtual {
		return nil, &UnauthorizedError{Msg: "Cannot alter system table " + t.QualifiedName()}
	}
	if t.IsView() {
		return nil, invalidf("Cannot use ALTER TABLE on a materialized view; use ALTER MATERIALIZED VIEW instead")
	}
	return t, nil
}

// rebuild returns a copy of t with columns cols and options; the copies of
// existing columns keep their Postgres names.
func rebuild(t *pgschema.Table, cols []*pgschema.Column, options map[string]string) *pgschema.Table {
	copies := make([]*pgschema.Column, len(cols))
	for i, c := range cols {
		cc := *c
		copies[i] = &cc
	}
	n := pgschema.NewTable(t.Keyspace, t.Name, t.ID, copies, options)
	n.PGSchema, n.PGName, n.Indexes, n.Dropped, n.View = t.PGSchema, t.PGName, t.Indexes, t.Dropped, t.View
	return n
}

func (p *planner) planAlterTable(s *AlterTableStmt) (Plan, error) {
	t, err := p.alterTable(s.Table, s.IfExists)
	if t == nil {
		if err == nil {
			return &Noop{}, nil
		}
		return nil, err
	}
	change := &SchemaChange{Statement: s, Change: "UPDATED", Target: "TABLE", Keyspace: t.Keyspace, Name: t.Name, OldTable: t}
	cols := append([]*pgschema.Column(nil), t.Columns...)
	options := t.Options
	switch s.Op {
	case AlterAdd:
		err = p.alterAdd(t, s, change, &cols)
	case AlterDrop:
		views := p.schema.Keyspace(t.Keyspace).ViewsOf(t.Name)
		if err = alterDrop(t, s, change, &cols, len(views) > 0); err == nil && s.Timestamp != nil {
			err = p.dropTime(s.Timestamp, change)
		}
	case AlterRename:
		err = alterRename(t, s, change, cols)
	case AlterWith:
		options, err = alterOptions(t, s.Properties)
	}
	if err != nil {
		return nil, err
	}
	if (s.Op == AlterAdd || s.Op == AlterDrop) && len(change.Columns) == 0 ||
		s.Op == AlterRename && len(change.Renames) == 0 {
		return &Noop{}, nil
	}
	change.NewTable = rebuild(t, cols, options)
	if s.Op == AlterAdd {
		for i, c := range change.Columns {
			change.Columns[i] = change.NewTable.Column(c.Name)
		}
		change.Views = viewsAdding(p.schema.Keyspace(t.Keyspace), t, change.Columns)
	}
	for old, c := range change.Renames {
		change.Renames[old] = change.NewTable.Column(c.Name)
	}
	if s.Op == AlterRename {
		change.Views = viewsRenaming(p.schema.Keyspace(t.Keyspace), t, change.Renames)
	}
	return change, nil
}

func (p *planner) alterAdd(t *pgschema.Table, s *AlterTableStmt, change *SchemaChange, cols *[]*pgschema.Column) error {
	k := p.schema.Keyspace(t.Keyspace)
	for _, def := range s.Add {
		if t.Column(def.Name) != nil || containsName(change.Columns, def.Name) {
			if s.IfColumn {
				continue
			}
			return invalidf("Column with name '%s' already exists", def.Name)
		}
		typ, err := resolveType(k, def.Type)
		if err != nil {
			return err
		}
		if def.Static && len(t.Clustering) == 0 {
			return invalidf("Static columns are only useful (and thus allowed) if the table has at least one clustering column")
		}
		if typ.IsCounter() != t.IsCounter() {
			return invalidf("Cannot mix counter and non counter columns in the same table")
		}
		for _, d := range t.Dropped {
			if d.Name == def.Name && d.Type != typ.String() {
				return invalidf("Cannot re-add previously dropped column '%s' of type %s, incompatible with previous type %s",
					def.Name, typ, d.Type)
			}
		}
		if _, err := pgschema.StorageOf(typ); err != nil {
			return invalidf("%v", err)
		}
		c := &pgschema.Column{Name: def.Name, Type: typ, Kind: pgschema.Regular, Position: -1}
		if def.Static {
			c.Kind = pgschema.Static
		}
		change.Columns = append(change.Columns, c)
		*cols = append(*cols, c)
	}
	return nil
}

// dropTime plans DROP's USING TIMESTAMP, which Cassandra's grammar takes
// as an integer literal only: the drop time in microseconds.
func (p *planner) dropTime(ts Term, change *SchemaChange) error {
	v, err := p.value(ts, ColumnSpec{Keyspace: change.Keyspace, Table: change.Name, Name: "[timestamp]",
		Type: pgschema.Scalar(pgschema.Bigint)})
	if err != nil {
		return err
	}
	if v.Marker >= 0 || len(v.Const) != 8 {
		return invalidf("USING TIMESTAMP of ALTER TABLE ... DROP takes an integer literal")
	}
	micros := int64(binary.BigEndian.Uint64(v.Const))
	change.DropTime = &micros
	return nil
}

func alterDrop(t *pgschema.Table, s *AlterTableStmt, change *SchemaChange, cols *[]*pgschema.Column, views bool) error {
	for _, name := range s.Drop {
		c := t.Column(name)
		if c == nil {
			if s.IfColumn {
				continue
			}
			return invalidf("Column %s was not found in table '%s'", name, t.QualifiedName())
		}
		if c.IsKey() {
			return invalidf("Cannot drop PRIMARY KEY column %s", name)
		}
		if c.Type.Kind == pgschema.UDT && !c.Type.Frozen {
			return invalidf("Cannot drop non-frozen column %s of user type %s", name, c.Type)
		}
		if deps := dependentIndexes(t, c); deps != "" {
			return invalidf("Cannot drop column %s because it has dependent secondary indexes (%s)", name, deps)
		}
		if views {
			return invalidf("Cannot drop column %s on base table %s with materialized views", name, t.Name)
		}
		change.Columns = append(change.Columns, c)
		for i, x := range *cols {
			if x == c {
				*cols = append((*cols)[:i:i], (*cols)[i+1:]...)
				break
			}
		}
	}
	return nil
}

func alterRename(t *pgschema.Table, s *AlterTableStmt, change *SchemaChange, cols []*pgschema.Column) error {
	change.Renames = map[string]*pgschema.Column{}
	for _, r := range s.Renames {
		c := t.Column(r[0])
		if c == nil {
			if s.IfColumn {
				continue
			}
			return invalidf("Column %s was not found in table %s", r[0], t.QualifiedName())
		}
		if !c.IsKey() {
			return invalidf("Cannot rename non PRIMARY KEY column %s", r[0])
		}
		if t.Column(r[1]) != nil {
			return invalidf("Cannot rename column %s to %s in table '%s'; another column with that name already exists",
				r[0], r[1], t.QualifiedName())
		}
		if deps := dependentIndexes(t, c); deps != "" {
			return invalidf("Cannot rename column %s because it has dependent secondary indexes (%s)", r[0], deps)
		}
		renamed := *c
		renamed.Name, renamed.PGName = r[1], pgschema.PGColumnName(r[1])
		for i, x := range cols {
			if x == c {
				cols[i] = &renamed
			}
		}
		change.Renames[r[0]] = &renamed
	}
	return nil
}

// alterOptions merges ALTER TABLE WITH options into the table's.
func alterOptions(t *pgschema.Table, props []Property) (map[string]string, error) {
	given, err := tableOptions(props)
	if err != nil {
		return nil, err
	}
	merged := map[string]string{}
	for k, v := range t.Options {
		merged[k] = v
	}
	for k, v := range given {
		merged[k] = v
	}
	return merged, nil
}

// dependentIndexes names the indexes on column c, comma-separated.
func dependentIndexes(t *pgschema.Table, c *pgschema.Column) string {
	var names []string
	for _, idx := range t.Indexes {
		if indexColumn(idx) == c.Name {
			names = append(names, idx.Name)
		}
	}
	return strings.Join(names, ", ")
}

// indexColumn returns the column an index's target names.
func indexColumn(idx *pgschema.Index) string {
	target := idx.Target()
	if i := strings.IndexByte(target, '('); i >= 0 && strings.HasSuffix(target, ")") {
		target = target[i+1 : len(target)-1]
	}
	if strings.HasPrefix(target, `"`) {
		target = strings.ReplaceAll(target[1:len(target)-1], `""`, `"`)
	}
	return target
}

func containsName(cols []*pgschema.Column, name string) bool {
	for _, c := range cols {
		if c.Name == name {
			return true
		}
	}
	return false
}

func (p *planner) planTruncate(s *TruncateStmt) (Plan, error) {
	t, err := p.table(s.Table)
	if err != nil {
		return nil, err
	}
	if t.Virtual {
		return nil, &UnauthorizedError{Msg: "Cannot TRUNCATE system table " + t.QualifiedName()}
	}
	if t.IsView() {
		return nil, invalidf("Cannot TRUNCATE materialized view directly; must truncate base table instead")
	}
	return &Truncate{Table: t, Views: p.schema.Keyspace(t.Keyspace).ViewsOf(t.Name)}, nil
}

// viewsAdding returns the views of t that select all its columns, each
// as it becomes with the columns ALTER TABLE ADD adds to t (added, which
// are static columns or regular ones; views take the regular ones).
func viewsAdding(k *pgschema.Keyspace, t *pgschema.Table, added []*pgschema.Column) []*pgschema.Table {
	var out []*pgschema.Table
	for _, v := range k.ViewsOf(t.Name) {
		if !v.View.IncludeAll {
			continue
		}
		cols := append([]*pgschema.Column(nil), v.Columns...)
		for _, c := range added {
			if c.Kind == pgschema.Regular {
				cols = append(cols, &pgschema.Column{Name: c.Name, Type: c.Type, Kind: pgschema.Regular, Position: -1, PGName: c.PGName})
			}
		}
		out = append(out, rebuild(v, cols, v.Options))
	}
	return out
}
