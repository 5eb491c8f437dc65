package translate

import (
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/translate/cqlfunc"
)

var nonWord = regexp.MustCompile(`\W`)

var targetNames = map[IndexTarget]string{IndexKeys: "keys", IndexValues: "values", IndexEntries: "entries", IndexFull: "full"}

func (p *planner) planCreateIndex(s *CreateIndexStmt) (Plan, error) {
	ks, err := p.keyspaceName(s.Table.Keyspace)
	if err != nil {
		return nil, err
	}
	if err := p.unloadable("table", ks, s.Table.Name); err != nil {
		return nil, err
	}
	k := p.schema.Keyspace(ks)
	if k == nil {
		return nil, invalidf("Keyspace '%s' doesn't exist", ks)
	}
	t := k.Tables[s.Table.Name]
	if t == nil {
		return nil, invalidf("Table '%s' doesn't exist", s.Table.Name)
	}
	if t.Virtual {
		return nil, &UnauthorizedError{Msg: "Cannot create indexes on system table " + t.QualifiedName()}
	}
	if t.IsView() {
		return nil, invalidf("Secondary indexes are not supported on materialized views")
	}
	if s.Name != "" {
		if idx, _ := k.Index(s.Name); idx != nil {
			if s.IfNotExists {
				return &Noop{}, nil
			}
			return nil, invalidf("Index '%s' already exists", s.Name)
		}
	}
	if t.IsCounter() {
		return nil, invalidf("Secondary indexes on counter tables aren't supported")
	}
	c := t.Column(s.Column)
	if c == nil {
		return nil, invalidf("Column '%s' doesn't exist", s.Column)
	}
	kind := s.Target
	if kind == IndexSimple && c.Type.IsCollection() {
		// A collection named alone is indexed on its values, as Cassandra
		// does for compatibility with the older syntax.
		kind = IndexValues
	}
	if err := checkIndexTarget(t, c, kind); err != nil {
		return nil, err
	}
	target := pgschema.QuoteIdentifier(c.Name)
	if kind != IndexSimple {
		target = targetNames[kind] + "(" + target + ")"
	}
	idx := &pgschema.Index{Name: s.Name, Kind: "COMPOSITES", Options: map[string]string{"target": target}}
	if s.Class != "" {
		idx.Kind = "CUSTOM"
		idx.Options["class_name"] = indexClass(s.Class)
		// OPTIONS is a map literal; the parser takes any term there, and a
		// set such as {'a'} has keys and no values.
		if m, ok := s.Options.(*Collection); ok && m.Kind == MapLiteral {
			for i, key := range m.Elems {
				kl, ok1 := key.(*Literal)
				vl, ok2 := m.Values[i].(*Literal)
				if ok1 && ok2 {
					idx.Options[kl.Text] = vl.Text
				}
			}
		}
	}
	if idx.IsSAI() {
		var unknown []string
		for k := range idx.Options {
			if !saiOptions[k] {
				unknown = append(unknown, k)
			}
		}
		if len(unknown) > 0 {
			slices.Sort(unknown)
			return nil, &ConfigError{Msg: "Properties specified [" + strings.Join(unknown, ", ") + "] are not understood by StorageAttachedIndex"}
		}
		if err := checkVectorOptions(or(s.Name, defaultIndexName(k, t, c)), c.Type, idx.Options); err != nil {
			return nil, err
		}
	}
	for _, other := range t.Indexes {
		if other.Target() == target && other.Kind == idx.Kind && other.Options["class_name"] == idx.Options["class_name"] {
			if s.IfNotExists {
				return &Noop{}, nil
			}
			return nil, invalidf("Index %s is a duplicate of existing index %s", or(s.Name, defaultIndexName(k, t, c)), other.Name)
		}
	}
	if idx.Name == "" {
		idx.Name = defaultIndexName(k, t, c)
	}
	return &SchemaChange{Statement: s, Change: "UPDATED", Target: "TABLE", Keyspace: ks, Name: t.Name,
		OldTable: t, Index: idx, IndexColumn: c}, nil
}

// saiOptions are the options a storage-attached index takes, besides the
// target and class every index records.
var saiOptions = map[string]bool{"target": true, "class_name": true, "case_sensitive": true, "normalize": true,
	"ascii": true, "similarity_function": true, "index_analyzer": true, "query_analyzer": true,
	"optimize_for": true, "maximum_node_connections": true, "construction_beam_width": true}

// checkVectorOptions applies Cassandra 5.0's checks of a vector index's
// options: only vectors take them, the similarity function and the
// optimization are among those known, and the graph's shape may not be
// set (Cassandra needs a system property for it; cqlpg builds no graph).
func checkVectorOptions(name string, t *pgschema.Type, opts map[string]string) error {
	_, sim := opts["similarity_function"]
	_, opt := opts["optimize_for"]
	_, conns := opts["maximum_node_connections"]
	_, beam := opts["construction_beam_width"]
	if !sim && !opt && !conns && !beam {
		return nil
	}
	if t.Kind != pgschema.Vector {
		return invalidf("CQL type %s cannot have vector options", t)
	}
	switch {
	case conns:
		return invalidf("Maximum node connections cannot be set without enabling SAI_VECTOR_ALLOW_CUSTOM_PARAMETERS")
	case beam:
		return invalidf("Construction beam width cannot be set without enabling SAI_VECTOR_ALLOW_CUSTOM_PARAMETERS")
	}
	if v, ok := opts["similarity_function"]; ok {
		if _, known := cqlfunc.SimilarityOf(v); !known {
			return invalidf("Similarity function %s was not recognized for index %s. Valid values are: EUCLIDEAN, DOT_PRODUCT, COSINE",
				strings.ToUpper(v), name)
		}
	}
	if v, ok := opts["optimize_for"]; ok && !strings.EqualFold(v, "latency") && !strings.EqualFold(v, "recall") {
		return invalidf("optimize_for '%s' was not recognized for index %s. Valid values are: LATENCY, RECALL", strings.ToUpper(v), name)
	}
	return nil
}

// indexClass is the class an index's USING names: Cassandra 5.0's aliases
// of its storage-attached index ('sai', 'StorageAttachedIndex', in any
// case) name its class; any other name is kept as it is.
func indexClass(name string) string {
	switch strings.ToLower(name) {
	case "sai", "storageattachedindex":
		return pgschema.SAIClass
	}
	return name
}

// checkIndexTarget applies Cassandra's rules on what an index may cover.
func checkIndexTarget(t *pgschema.Table, c *pgschema.Column, target IndexTarget) error {
	frozenCollection := c.Type.IsCollection() && c.Type.Frozen
	if err := durationRefusal(c.Type, "Secondary indexes are not supported on %s containing durations",
		"Secondary indexes are not supported on duration columns"); err != nil {
		return err
	}
	switch {
	case c.Kind == pgschema.PartitionKey && len(t.PartitionKey) == 1:
		return invalidf("Cannot create secondary index on the only partition key column %s", c.Name)
	case frozenCollection && target != IndexFull:
		return invalidf("Cannot create %s() index on frozen column %s. Frozen collections are immutable and must be fully indexed by using the 'full(%s)' modifier",
			or(targetNames[target], "values"), c.Name, c.Name)
	case !frozenCollection && target == IndexFull:
		return invalidf("full() indexes can only be created on frozen collections")
	case !c.Type.IsCollection() && target != IndexSimple:
		return invalidf("Cannot create %s() index on %s. Non-collection columns only support simple indexes", targetNames[target], c.Name)
	case (target == IndexKeys || target == IndexEntries) && c.Type.Kind != pgschema.Map:
		return invalidf("Cannot create index on %s of column %s with non-map type", targetNames[target], c.Name)
	case c.Type.Kind == pgschema.UDT && !c.Type.Frozen:
		return invalidf("Cannot create index on non-frozen UDT column %s", c.Name)
	}
	return nil
}

// defaultIndexName is Cassandra's name for an unnamed index: table,
// column and "idx", with a number added when the name is taken.
func defaultIndexName(k *pgschema.Keyspace, t *pgschema.Table, c *pgschema.Column) string {
	base := nonWord.ReplaceAllString(t.Name+"_"+c.Name+"_idx", "")
	name := base
	for i := 1; ; i++ {
		if idx, _ := k.Index(name); idx == nil {
			return name
		}
		name = base + "_" + strconv.Itoa(i)
	}
}

func (p *planner) planDropIndex(s *DropStmt, ks string) (Plan, error) {
	k := p.schema.Keyspace(ks)
	var idx *pgschema.Index
	var t *pgschema.Table
	if k != nil {
		idx, t = k.Index(s.Name)
	}
	if idx == nil {
		if s.IfExists {
			return &Noop{}, nil
		}
		return nil, invalidf("Index '%s.%s' doesn't exist'", ks, s.Name)
	}
	return &SchemaChange{Statement: s, Change: "UPDATED", Target: "TABLE", Keyspace: ks, Name: t.Name, Index: idx}, nil
}
