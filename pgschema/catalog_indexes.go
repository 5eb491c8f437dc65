package pgschema

import (
	"context"
	"fmt"
	"time"
)

// DroppedColumn records a column dropped from a table.
type DroppedColumn struct {
	Name    string
	Type    string
	Kind    string
	Dropped time.Time
}

// loadIndexes reads secondary indexes and dropped columns into the loaded
// tables; it runs after loadTables.
func loadIndexes(ctx context.Context, q Querier, keyspaces map[string]*Keyspace) error {
	rows, err := q.Query(ctx, `SELECT keyspace_name, table_name, index_name, kind, options FROM cqlpg.indexes
		ORDER BY keyspace_name, table_name, index_name`)
	if err != nil {
		return fmt.Errorf("read indexes: %w", err)
	}
	for rows.Next() {
		var ks, table string
		idx := &Index{}
		if err := rows.Scan(&ks, &table, &idx.Name, &idx.Kind, &idx.Options); err != nil {
			return fmt.Errorf("read indexes: %w", err)
		}
		if t := tableOf(keyspaces, ks, table); t != nil {
			t.Indexes = append(t.Indexes, idx)
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	rows, err = q.Query(ctx, `SELECT keyspace_name, table_name, column_name, type, kind, dropped_time
		FROM cqlpg.dropped_columns ORDER BY keyspace_name, table_name, column_name`)
	if err != nil {
		return fmt.Errorf("read dropped columns: %w", err)
	}
	for rows.Next() {
		var ks, table string
		var d DroppedColumn
		if err := rows.Scan(&ks, &table, &d.Name, &d.Type, &d.Kind, &d.Dropped); err != nil {
			return fmt.Errorf("read dropped columns: %w", err)
		}
		if t := tableOf(keyspaces, ks, table); t != nil {
			t.Dropped = append(t.Dropped, d)
		}
	}
	return rows.Err()
}

func tableOf(keyspaces map[string]*Keyspace, ks, table string) *Table {
	if k := keyspaces[ks]; k != nil {
		return k.Tables[table]
	}
	return nil
}

// Index returns the keyspace's index with the given name, and its table.
func (k *Keyspace) Index(name string) (*Index, *Table) {
	for _, t := range k.Tables {
		for _, idx := range t.Indexes {
			if idx.Name == name {
				return idx, t
			}
		}
	}
	return nil, nil
}
