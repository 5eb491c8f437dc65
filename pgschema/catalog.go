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

// Load reads the CQL schema from a shard's catalog.
func Load(ctx context.Context, q Querier) (*Schema, error) {
	var version [16]byte
	if err := q.QueryRow(ctx, `SELECT version FROM cqlpg.schema_version`).Scan(&version); err != nil {
		return nil, fmt.Errorf("read schema version: %w", err)
	}
	keyspaces, err := loadKeyspaces(ctx, q)
	if err != nil {
		return nil, err
	}
	if err := loadTypes(ctx, q, keyspaces); err != nil {
		return nil, err
	}
	if err := loadTables(ctx, q, keyspaces); err != nil {
		return nil, err
	}
	if err := loadIndexes(ctx, q, keyspaces); err != nil {
		return nil, err
	}
	return NewSchema(version, keyspaces), nil
}

func loadKeyspaces(ctx context.Context, q Querier) (map[string]*Keyspace, error) {
	rows, err := q.Query(ctx, `SELECT keyspace_name, durable_writes, replication, pg_schema FROM cqlpg.keyspaces`)
	if err != nil {
		return nil, fmt.Errorf("read keyspaces: %w", err)
	}
	out := map[string]*Keyspace{}
	for rows.Next() {
		var (
			k    = &Keyspace{Tables: map[string]*Table{}, Types: map[string]*Type{}}
			opts map[string]string
		)
		if err := rows.Scan(&k.Name, &k.DurableWrites, &opts, &k.PGSchema); err != nil {
			return nil, fmt.Errorf("read keyspaces: %w", err)
		}
		if k.Replication, err = sharding.ParseReplication(k.Name, opts); err != nil {
			return nil, fmt.Errorf("keyspace %s: %w", k.Name, err)
		}
		out[k.Name] = k
	}
	return out, rows.Err()
}

func loadTypes(ctx context.Context, q Querier, keyspaces map[string]*Keyspace) error {
	rows, err := q.Query(ctx, `SELECT keyspace_name, type_name, field_names, field_types FROM cqlpg.types`)
	if err != nil {
		return fmt.Errorf("read types: %w", err)
	}
	type raw struct {
		ks, name      string
		fields, types []string
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
	// is left or a pass makes no progress.
	for len(pending) > 0 {
		var next []raw
		for _, r := range pending {
			ks := keyspaces[r.ks]
			if ks == nil {
				continue
			}
			elems := make([]*Type, len(r.types))
			ok := true
			for i, ts := range r.types {
				if elems[i], err = ParseType(ts, ks.resolveType); err != nil {
					ok = false
					break
				}
			}
			if !ok {
				next = append(next, r)
				continue
			}
			ks.Types[r.name] = NewUDT(r.ks, r.name, r.fields, elems, false)
		}
		if len(next) == len(pending) {
			return fmt.Errorf("type %s.%s: %w", next[0].ks, next[0].name, err)
		}
		pending = next
	}
	return nil
}

// resolveType finds one of the keyspace's user types by name.
func (k *Keyspace) resolveType(name string) (*Type, error) {
	if t := k.Types[name]; t != nil {
		return t, nil
	}
	return nil, fmt.Errorf("unknown type %s.%s", k.Name, name)
}

func loadTables(ctx context.Context, q Querier, keyspaces map[string]*Keyspace) error {
	type tableRow struct {
		id      [16]byte
		options map[string]string
		cols    []*Column
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
		clustering_order, pg_column FROM cqlpg.columns`)
	if err != nil {
		return fmt.Errorf("read columns: %w", err)
	}
	for rows.Next() {
		var ks, table, kind, typ, order string
		c := &Column{}
		if err := rows.Scan(&ks, &table, &c.Name, &kind, &c.Position, &typ, &order, &c.PGName); err != nil {
			return fmt.Errorf("read columns: %w", err)
		}
		t, k := tables[[2]string{ks, table}], keyspaces[ks]
		if t == nil || k == nil {
			continue
		}
		var ok bool
		if c.Kind, ok = ParseColumnKind(kind); !ok {
			return fmt.Errorf("column %s.%s.%s: unknown kind %q", ks, table, c.Name, kind)
		}
		if c.Type, err = ParseType(typ, k.resolveType); err != nil {
			return fmt.Errorf("column %s.%s.%s: %w", ks, table, c.Name, err)
		}
		c.Desc = order == "desc"
		t.cols = append(t.cols, c)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for key, t := range tables {
		if k := keyspaces[key[0]]; k != nil {
			tbl := NewTable(key[0], key[1], t.id, t.cols, t.options)
			tbl.PGSchema = k.PGSchema
			k.Tables[key[1]] = tbl
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
