package translate

import (
	"errors"
	"regexp"
	"strconv"

	"github.com/cqlpg/cqlpg/pgschema"
)

// validName matches the keyspace and table names Cassandra accepts.
var validName = regexp.MustCompile(`^\w{1,48}$`)

func (p *planner) planCreateTable(s *CreateTableStmt) (Plan, error) {
	ks, err := p.keyspaceName(s.Table.Keyspace)
	if err != nil {
		return nil, err
	}
	name := s.Table.Name
	if !validName.MatchString(name) {
		return nil, invalidf("Table name must not be empty, more than 48 characters long, or contain non-alphanumeric-underscore characters (got \"%s\")", name)
	}
	if err := p.unloadable("table", ks, name); err != nil {
		return nil, err
	}
	k := p.schema.Keyspace(ks)
	if k == nil {
		return nil, invalidf("Keyspace '%s' doesn't exist", ks)
	}
	if k.Virtual {
		return nil, &UnauthorizedError{Msg: "Cannot create tables in keyspace " + ks}
	}
	if s.CompactStorage {
		return nil, invalidf("COMPACT STORAGE tables are not supported starting with version 4.0")
	}
	if len(s.PartitionKey) == 0 {
		return nil, invalidf("No PRIMARY KEY specifed for table '%s' (exactly one required)", name)
	}
	byName := map[string]*pgschema.Column{}
	var cols []*pgschema.Column
	for _, def := range s.Columns {
		if byName[def.Name] != nil {
			return nil, invalidf("Duplicate column '%s' declaration for table '%s'", def.Name, name)
		}
		typ, err := resolveType(k, def.Type)
		if err != nil {
			return nil, err
		}
		if _, err := pgschema.StorageOf(typ); err != nil {
			return nil, invalidf("%v", err)
		}
		c := &pgschema.Column{Name: def.Name, Type: typ, Kind: pgschema.Regular, Position: -1}
		if def.Static {
			c.Kind = pgschema.Static
		}
		byName[def.Name] = c
		cols = append(cols, c)
	}
	for part, names := range [][]string{s.PartitionKey, s.Clustering} {
		for i, n := range names {
			c := byName[n]
			if c == nil {
				return nil, invalidf("Unknown column '%s' referenced in PRIMARY KEY for table '%s'", n, name)
			}
			if c.Kind != pgschema.Regular {
				return nil, invalidf("Column '%s' appears more than once in PRIMARY KEY", n)
			}
			c.Kind, c.Position = pgschema.PartitionKey, i
			if part == 1 {
				c.Kind = pgschema.Clustering
			}
		}
	}
	if err := clusteringOrder(s, byName); err != nil {
		return nil, err
	}
	counters, others := 0, 0
	for _, c := range cols {
		if c.Kind == pgschema.Static && len(s.Clustering) == 0 {
			return nil, invalidf("Static columns are only useful (and thus allowed) if the table has at least one clustering column")
		}
		switch {
		case c.Type.IsCounter() && c.IsKey():
			return nil, invalidf("counter type is not supported for PRIMARY KEY column '%s'", c.Name)
		case c.Type.IsCounter():
			counters++
		case !c.IsKey():
			others++
		}
	}
	if counters > 0 && others > 0 {
		return nil, invalidf("Cannot mix counter and non counter columns in the same table")
	}
	options, err := tableOptions(s.Properties)
	if err != nil {
		return nil, err
	}
	if ttl, _ := strconv.Atoi(options[pgschema.OptDefaultTimeToLive]); counters > 0 && ttl > 0 {
		return nil, invalidf("Cannot set %s on a table with counters", pgschema.OptDefaultTimeToLive)
	}
	t := pgschema.NewTable(ks, name, [16]byte{}, cols, options)
	t.PGSchema = k.PGSchema
	return &SchemaChange{Statement: s, Change: "CREATED", Target: "TABLE", Keyspace: ks, Name: name, NewTable: t}, nil
}

// clusteringOrder applies WITH CLUSTERING ORDER BY, which must list
// clustering columns in their declared order.
func clusteringOrder(s *CreateTableStmt, byName map[string]*pgschema.Column) error {
	for i, o := range s.ClusteringOrder {
		c := byName[o.Column]
		if c == nil || c.Kind != pgschema.Clustering {
			return invalidf("Only clustering key columns can be defined in CLUSTERING ORDER directive")
		}
		if c.Position != i {
			return invalidf("The order of columns in the CLUSTERING ORDER directive must match that of the clustering columns (%s must appear before %s)",
				s.Clustering[i], o.Column)
		}
		c.Desc = o.Desc
	}
	if n := len(s.ClusteringOrder); n > 0 && n < len(s.Clustering) {
		return invalidf("Missing CLUSTERING ORDER for column %s", s.Clustering[n])
	}
	return nil
}

// resolveType replaces user-type placeholders, at any depth, with the
// keyspace's types, so that nothing is accepted that the catalog could not
// load again.
func resolveType(k *pgschema.Keyspace, t *pgschema.Type) (*pgschema.Type, error) {
	if t.Kind == pgschema.UDT && t.Fields == nil {
		if t.Keyspace != "" && t.Keyspace != k.Name {
			return nil, invalidf("Statement on keyspace %s cannot refer to a user type in keyspace %s; user types can only be used in the keyspace they are defined in", k.Name, t.Keyspace)
		}
		u := k.Types[t.Name]
		if u == nil {
			return nil, invalidf("Unknown type %s.%s", k.Name, t.Name)
		}
		if t.Frozen {
			return u.Freeze(), nil
		}
		return u, nil
	}
	if t.Kind == pgschema.UDT {
		return t, nil
	}
	for _, e := range t.Elem {
		switch {
		case !e.IsCounter():
		case t.IsCollection():
			return nil, invalidf("Counters are not allowed inside collections: %s", t)
		case t.Kind == pgschema.Tuple:
			return nil, invalidf("Counters are not allowed inside tuples")
		}
	}
	var elems []*pgschema.Type
	for i, e := range t.Elem {
		r, err := resolveType(k, e)
		if err != nil {
			return nil, err
		}
		if r != e && elems == nil {
			elems = append([]*pgschema.Type(nil), t.Elem...)
		}
		if elems != nil {
			elems[i] = r
		}
	}
	if elems == nil {
		return t, nil
	}
	c := *t
	c.Elem = elems
	return &c, nil
}

// tableOptions validates the WITH options of CREATE or ALTER TABLE as
// Cassandra does (names, then values, then ranges, with its texts) and
// returns what the catalog stores: each given option's canonical CQL
// literal by name, such as 864000 for gc_grace_seconds or {'keys': 'ALL',
// 'rows_per_partition': 'NONE'} for caching (pgschema.TableParams.Apply).
func tableOptions(props []Property) (map[string]string, error) {
	given := make([]pgschema.OptionValue, 0, len(props))
	for _, prop := range props {
		v, err := propertyValue(prop)
		if err != nil {
			return nil, err
		}
		given = append(given, v)
	}
	stored, err := pgschema.DefaultTableParams().Apply(given)
	var bad *pgschema.OptionError
	if errors.As(err, &bad) {
		if bad.Syntax {
			return nil, &SyntaxError{Msg: bad.Msg}
		}
		return nil, &ConfigError{Msg: bad.Msg}
	}
	return stored, err
}

// propertyValue reads a WITH option's value as Cassandra's grammar does: a
// constant gives its text (a string's contents, a number as written), a
// map literal a map of such texts.
//
//	propertyValue := constant | '{' (constant ':' constant (',' constant ':' constant)*)? '}'
func propertyValue(prop Property) (pgschema.OptionValue, error) {
	v := pgschema.OptionValue{Name: prop.Name}
	switch t := prop.Value.(type) {
	case *Literal:
		if t.Kind != LitNull {
			v.Text = t.Text
			return v, nil
		}
	case *Collection:
		if t.Kind != MapLiteral && len(t.Elems) > 0 {
			break
		}
		v.IsMap, v.Map = true, map[string]string{}
		for i, key := range t.Elems {
			k, ok := key.(*Literal)
			if !ok || k.Kind == LitNull {
				return v, &SyntaxError{Pos: prop.Pos, Msg: "Invalid property name for property: " + prop.Name}
			}
			val, ok := t.Values[i].(*Literal)
			if !ok || val.Kind == LitNull {
				return v, &SyntaxError{Pos: prop.Pos, Msg: "Invalid property value for property: " + k.Text}
			}
			if _, dup := v.Map[k.Text]; dup {
				return v, &SyntaxError{Msg: "Multiple definition for property " + k.Text}
			}
			v.Map[k.Text] = val.Text
		}
		return v, nil
	}
	return v, &SyntaxError{Pos: prop.Pos, Msg: "Invalid value for property '" + prop.Name + "'"}
}

func (p *planner) planDrop(s *DropStmt) (Plan, error) {
	if s.Kind == DropKeyspace {
		if pgschema.IsSystemKeyspace(s.Keyspace) {
			return nil, &UnauthorizedError{Msg: "Cannot drop keyspace " + s.Keyspace}
		}
		return &SchemaChange{Statement: s, Change: "DROPPED", Target: "KEYSPACE", Keyspace: s.Keyspace}, nil
	}
	ks, err := p.keyspaceName(s.Keyspace)
	if err != nil {
		return nil, err
	}
	if pgschema.IsSystemKeyspace(ks) {
		return nil, &UnauthorizedError{Msg: "Cannot drop objects in keyspace " + ks}
	}
	switch s.Kind {
	case DropType:
		return p.planDropType(s, ks)
	case DropIndex:
		return p.planDropIndex(s, ks)
	case DropView:
		return p.planDropView(s, ks)
	}
	if err := dropTableChecks(p.schema.Keyspace(ks), s.Name); err != nil {
		return nil, err
	}
	return &SchemaChange{Statement: s, Change: "DROPPED", Target: "TABLE", Keyspace: ks, Name: s.Name}, nil
}

func (p *planner) planBatch(s *BatchStmt) (Plan, error) {
	b := &Batch{Kind: s.Kind}
	if s.Using.Timestamp != nil {
		v, err := p.value(s.Using.Timestamp, ColumnSpec{Keyspace: "[batch]", Table: "[batch]", Name: "[timestamp]", Type: pgschema.Scalar(pgschema.Bigint)})
		if err != nil {
			return nil, err
		}
		b.Timestamp = &v
	}
	for _, stmt := range s.Statements {
		plan, err := p.plan(stmt)
		if err != nil {
			return nil, err
		}
		w, ok := plan.(*Write)
		if !ok {
			return nil, invalidf("Only INSERT, UPDATE and DELETE statements are allowed in a BATCH")
		}
		w.PKIndexes = nil
		b.Writes = append(b.Writes, w)
	}
	if err := CheckBatch(s.Kind, s.Using.TTL != nil, b.Timestamp != nil, b.Writes); err != nil {
		return nil, err
	}
	return b, checkTimestamp(b.Timestamp)
}
