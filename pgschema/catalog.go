package pgschema

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/cqlpg/cqlpg/sharding"
)

// Querier is the part of pgx's connections, pools and transactions that the
// catalog needs.
type Querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// Load reads the CQL schema from a shard's catalog. It fails only when the
// catalog cannot be read; an object that cannot be loaded (a catalog row
// that names an unknown type or an unknown strategy, say) is left out of
// the snapshot and listed in its Unloadable, with the objects that depend
// on it, so that everything else keeps serving.
func Load(ctx context.Context, q Querier) (*Schema, error) {
	var version [16]byte
	if err := q.QueryRow(ctx, `SELECT version FROM cqlpg.schema_version`).Scan(&version); err != nil {
		return nil, fmt.Errorf("read schema version: %w", err)
	}
	var bad unloadable
	keyspaces, err := loadKeyspaces(ctx, q, &bad)
	if err != nil {
		return nil, err
	}
	if err := loadTypes(ctx, q, keyspaces, &bad); err != nil {
		return nil, err
	}
	if err := loadTables(ctx, q, keyspaces, &bad); err != nil {
		return nil, err
	}
	if err := loadViews(ctx, q, keyspaces, &bad); err != nil {
		return nil, err
	}
	if err := loadFunctions(ctx, q, keyspaces, &bad); err != nil {
		return nil, err
	}
	if err := loadIndexes(ctx, q, keyspaces); err != nil {
		return nil, err
	}
	s := NewSchema(version, keyspaces)
	s.unloadable = bad
	return s, nil
}

func loadKeyspaces(ctx context.Context, q Querier, bad *unloadable) (map[string]*Keyspace, error) {
	rows, err := q.Query(ctx, `SELECT keyspace_name, durable_writes, replication, pg_schema, replication_from FROM cqlpg.keyspaces`)
	if err != nil {
		return nil, fmt.Errorf("read keyspaces: %w", err)
	}
	out := map[string]*Keyspace{}
	for rows.Next() {
		var (
			k          = &Keyspace{Tables: map[string]*Table{}, Types: map[string]*Type{}}
			opts, from map[string]string
		)
		if err := rows.Scan(&k.Name, &k.DurableWrites, &opts, &k.PGSchema, &from); err != nil {
			return nil, fmt.Errorf("read keyspaces: %w", err)
		}
		if k.Replication, err = sharding.ParseReplication(k.Name, opts); err != nil {
			bad.add("keyspace", k.Name, "", err)
			continue
		}
		if from != nil {
			rep, err := sharding.ParseReplication(k.Name, from)
			if err != nil {
				bad.add("keyspace", k.Name, "", err)
				continue
			}
			k.ReplicationFrom = &rep
		}
		out[k.Name] = k
	}
	return out, rows.Err()
}

func loadTypes(ctx context.Context, q Querier, keyspaces map[string]*Keyspace, bad *unloadable) error {
	rows, err := q.Query(ctx, `SELECT keyspace_name, type_name, field_names, field_types FROM cqlpg.types`)
	if err != nil {
		return fmt.Errorf("read types: %w", err)
	}
	type raw struct {
		ks, name      string
		fields, types []string
		err           error // why the last pass could not resolve the type
	}
	var pending []raw
	for rows.Next() {
		var r raw
		if err := rows.Scan(&r.ks, &r.name, &r.fields, &r.types); err != nil {
			return fmt.Errorf("read types: %w", err)
		}
		pending = append(pending, r)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	// A type may use types defined after it; resolve in passes until none
	// is left or a pass makes no progress. What is left then names an
	// unknown type or takes part in a cycle: each is unloadable.
	for len(pending) > 0 {
		var next []raw
		for _, r := range pending {
			ks := keyspaces[r.ks]
			if ks == nil {
				continue
			}
			elems, err := ks.fieldTypes(r.fields, r.types)
			if err != nil {
				r.err = err
				next = append(next, r)
				continue
			}
			ks.Types[r.name] = NewUDT(r.ks, r.name, r.fields, elems, false)
		}
		if len(next) == len(pending) {
			for _, r := range next {
				bad.add("type", r.ks, r.name, r.err)
			}
			return nil
		}
		pending = next
	}
	return nil
}

// fieldTypes parses the field types of a user type, as far as the
// keyspace's types resolved so far allow.
func (k *Keyspace) fieldTypes(names, types []string) ([]*Type, error) {
	if len(names) != len(types) {
		return nil, fmt.Errorf("%d field names for %d field types", len(names), len(types))
	}
	elems := make([]*Type, len(types))
	for i, ts := range types {
		var err error
		if elems[i], err = ParseType(ts, k.resolveType); err != nil {
			return nil, fmt.Errorf("field %s: %w", names[i], err)
		}
	}
	return elems, nil
}

// resolveType finds one of the keyspace's user types by name.
func (k *Keyspace) resolveType(name string) (*Type, error) {
	if t := k.Types[name]; t != nil {
		return t, nil
	}
	return nil, fmt.Errorf("unknown type %s.%s", k.Name, name)
}

func loadTables(ctx context.Context, q Querier, keyspaces map[string]*Keyspace, bad *unloadable) error {
	type tableRow struct {
		id      [16]byte
		options map[string]string
		cols    []*Column
		err     error
	}
	tables := map[[2]string]*tableRow{}
	rows, err := q.Query(ctx, `SELECT keyspace_name, table_name, id, options FROM cqlpg.tables`)
	if err != nil {
		return fmt.Errorf("read tables: %w", err)
	}
	for rows.Next() {
		var ks, name string
		t := &tableRow{}
		if err := rows.Scan(&ks, &name, &t.id, &t.options); err != nil {
			return fmt.Errorf("read tables: %w", err)
		}
		tables[[2]string{ks, name}] = t
	}
	if err := rows.Err(); err != nil {
		return err
	}
	rows, err = q.Query(ctx, `SELECT keyspace_name, table_name, column_name, kind, position, type,
		clustering_order, pg_column, exact FROM cqlpg.columns`)
	if err != nil {
		return fmt.Errorf("read columns: %w", err)
	}
	for rows.Next() {
		var ks, table, kind, typ, order string
		var exact bool
		c := &Column{}
		if err := rows.Scan(&ks, &table, &c.Name, &kind, &c.Position, &typ, &order, &c.PGName, &exact); err != nil {
			return fmt.Errorf("read columns: %w", err)
		}
		t, k := tables[[2]string{ks, table}], keyspaces[ks]
		if t == nil || k == nil || t.err != nil {
			continue
		}
		var ok bool
		if c.Kind, ok = ParseColumnKind(kind); !ok {
			t.err = fmt.Errorf("column %s: unknown kind %q", c.Name, kind)
			continue
		}
		if c.Type, err = ParseType(typ, k.resolveType); err != nil {
			t.err = fmt.Errorf("column %s: %w", c.Name, err)
			continue
		}
		c.Desc = order == "desc"
		if c.Legacy = !exact; c.Legacy && c.Type.Kind >= List && len(c.Type.Elem) == 1 && exactKind(c.Type.Elem[0].Kind) {
			c.Type.Legacy = true // its own instance, just parsed
		}
		t.cols = append(t.cols, c)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for key, t := range tables {
		k := keyspaces[key[0]]
		if k == nil {
			continue
		}
		if t.err == nil {
			t.err = checkColumns(t.cols)
		}
		if t.err != nil {
			bad.add("table", key[0], key[1], t.err)
			continue
		}
		tbl := NewTable(key[0], key[1], t.id, t.cols, t.options)
		tbl.PGSchema = k.PGSchema
		k.Tables[key[1]] = tbl
	}
	return nil
}

// checkColumns checks what NewTable relies on: at least one partition key
// column, and key positions that run from 0 without gaps.
func checkColumns(cols []*Column) error {
	count := map[ColumnKind]int{}
	for _, c := range cols {
		count[c.Kind]++
	}
	if count[PartitionKey] == 0 {
		return fmt.Errorf("no partition key column")
	}
	for _, kind := range []ColumnKind{PartitionKey, Clustering} {
		seen := make([]bool, count[kind])
		for _, c := range cols {
			if c.Kind != kind {
				continue
			}
			if c.Position < 0 || c.Position >= len(seen) || seen[c.Position] {
				return fmt.Errorf("column %s: position %d out of order", c.Name, c.Position)
			}
			seen[c.Position] = true
		}
	}
	return nil
}

// optionsJSON encodes table options for the catalog.
func optionsJSON(opts map[string]string) []byte {
	if opts == nil {
		opts = map[string]string{}
	}
	b, _ := json.Marshal(opts) // a map of strings always encodes
	return b
}
