package pgschema

import (
	"context"
	"fmt"
	"strings"
)

// CreateType records a user-defined type inside tx. User types need no
// Postgres object: their values are stored as jsonb objects keyed by field
// name. It reports false, with no error, when the type exists and
// ifNotExists is set.
func CreateType(ctx context.Context, tx Querier, t *Type, ifNotExists bool) (bool, error) {
	found, err := exists(ctx, tx, `SELECT FROM cqlpg.types WHERE keyspace_name = $1 AND type_name = $2`, t.Keyspace, t.Name)
	if err != nil || found {
		if found && !ifNotExists {
			err = &ExistsError{Keyspace: t.Keyspace, Type: t.Name}
		}
		return false, err
	}
	_, err = tx.Exec(ctx, `INSERT INTO cqlpg.types (keyspace_name, type_name, field_names, field_types)
		VALUES ($1, $2, $3, $4)`, t.Keyspace, t.Name, t.Fields, fieldTypes(t))
	return err == nil, err
}

func fieldTypes(t *Type) []string {
	out := make([]string, len(t.Elem))
	for i, e := range t.Elem {
		out[i] = e.String()
	}
	return out
}

// AlterType stores a user type's new fields. renames maps old field names
// to new ones; values stored in columns of the type are rewritten to the
// new names.
func AlterType(ctx context.Context, tx Querier, after *Type, renames map[string]string, users []*Column, tables []*Table) error {
	tag, err := tx.Exec(ctx, `UPDATE cqlpg.types SET field_names = $3, field_types = $4
		WHERE keyspace_name = $1 AND type_name = $2`, after.Keyspace, after.Name, after.Fields, fieldTypes(after))
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return &MissingError{Keyspace: after.Keyspace, Type: after.Name}
	}
	for i, c := range users {
		for old, renamed := range renames {
			col := Quote(c.PGName)
			ident := tables[i].Ident()
			if c.Kind == Static {
				ident = tables[i].StaticIdent()
			}
			if _, err := tx.Exec(ctx, fmt.Sprintf(`UPDATE %s SET %[2]s = (%[2]s - $1::text) || jsonb_build_object($2::text, %[2]s -> $1::text)
				WHERE %[2]s ? $1::text`, ident, col), JSONFieldName(old), JSONFieldName(renamed)); err != nil {
				return err
			}
		}
	}
	return nil
}

// DropType removes a user type inside tx.
func DropType(ctx context.Context, tx Querier, keyspace, name string, ifExists bool) (bool, error) {
	tag, err := tx.Exec(ctx, `DELETE FROM cqlpg.types WHERE keyspace_name = $1 AND type_name = $2`, keyspace, name)
	if err != nil {
		return false, err
	}
	if tag.RowsAffected() == 0 {
		if ifExists {
			return false, nil
		}
		return false, &MissingError{Keyspace: keyspace, Type: name}
	}
	return true, nil
}

// CreateIndex creates a secondary index: the catalog entry and the Postgres
// index, a B-tree on the column's value or, for collections, a GIN index
// that serves CONTAINS and CONTAINS KEY.
func CreateIndex(ctx context.Context, tx Querier, t *Table, idx *Index, c *Column, ifNotExists bool) (bool, error) {
	if err := tableExists(ctx, tx, t); err != nil {
		return false, err
	}
	found, err := exists(ctx, tx, `SELECT FROM cqlpg.indexes WHERE keyspace_name = $1 AND index_name = $2`, t.Keyspace, idx.Name)
	if err != nil || found {
		if found && !ifNotExists {
			err = &ExistsError{Keyspace: t.Keyspace, Index: idx.Name}
		}
		return false, err
	}
	if _, err := tx.Exec(ctx, `INSERT INTO cqlpg.indexes (keyspace_name, table_name, index_name, kind, options)
		VALUES ($1, $2, $3, $4, $5)`, t.Keyspace, t.Name, idx.Name, idx.Kind, idx.Options); err != nil {
		return false, err
	}
	if c.Type.Kind == Vector {
		// A vector index answers ANN queries, which score every row the
		// other restrictions leave: no Postgres index serves them, and a
		// B-tree entry could not hold a vector of 700 floats or more.
		return true, nil
	}
	ident, key := t.Ident(), t.KeyColumns()
	if c.Kind == Static {
		ident, key = t.StaticIdent(), t.PartitionKey
	}
	method, cols := "btree", []string{Quote(c.PGName)}
	if fold := idx.Fold(); fold != "" {
		cols[0] = "(" + fmt.Sprintf(fold, Quote(c.PGName)) + ")"
	}
	if p := PrefixExpr(c.Type, cols[0]); p != "" && !c.IsKey() {
		cols[0] = "(" + p + ")"
	}
	if c.Type.IsCollection() && !strings.HasPrefix(idx.Target(), "full(") {
		method = "gin"
	} else {
		// After the value, the rows' key in the order a query reads them:
		// a query by the value, paged, resumes at its position in the
		// index and reads one page, not every row with the value again.
		cols = append(cols, keyIndexColumns(key)...)
	}
	_, err = tx.Exec(ctx, fmt.Sprintf("CREATE INDEX %s ON %s USING %s (%s)", Quote(idx.PGName()), ident, method,
		strings.Join(cols, ", ")))
	return err == nil, err
}

// DropIndex drops a secondary index inside tx.
func DropIndex(ctx context.Context, tx Querier, keyspace, name string, ifExists bool) (bool, error) {
	var schema string
	err := tx.QueryRow(ctx, `DELETE FROM cqlpg.indexes i USING cqlpg.keyspaces k
		WHERE i.keyspace_name = $1 AND i.index_name = $2 AND k.keyspace_name = i.keyspace_name
		RETURNING k.pg_schema`, keyspace, name).Scan(&schema)
	if err != nil {
		if ifExists && isNoRows(err) {
			return false, nil
		}
		if isNoRows(err) {
			return false, &MissingError{Keyspace: keyspace, Index: name}
		}
		return false, err
	}
	_, err = tx.Exec(ctx, "DROP INDEX IF EXISTS "+Quote(schema)+"."+Quote(name))
	return err == nil, err
}
