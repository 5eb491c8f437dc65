package pgschema

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// ExistsError reports a keyspace, table, type or index that a CREATE found
// already there. Table, Type and Index name the object when it is not the
// keyspace itself.
type ExistsError struct{ Keyspace, Table, Type, Index string }

func (e *ExistsError) Error() string {
	switch {
	case e.Table != "":
		return fmt.Sprintf("table %s.%s already exists", e.Keyspace, e.Table)
	case e.Type != "":
		return fmt.Sprintf("type %s.%s already exists", e.Keyspace, e.Type)
	case e.Index != "":
		return fmt.Sprintf("index %s.%s already exists", e.Keyspace, e.Index)
	}
	return fmt.Sprintf("keyspace %s already exists", e.Keyspace)
}

// MissingError reports a keyspace, table, type or index that a schema
// change needs and the catalog does not hold.
type MissingError struct{ Keyspace, Table, Type, Index string }

func (e *MissingError) Error() string {
	switch {
	case e.Table != "":
		return fmt.Sprintf("table %s.%s does not exist", e.Keyspace, e.Table)
	case e.Type != "":
		return fmt.Sprintf("type %s.%s does not exist", e.Keyspace, e.Type)
	case e.Index != "":
		return fmt.Sprintf("index %s.%s does not exist", e.Keyspace, e.Index)
	}
	return fmt.Sprintf("keyspace %s does not exist", e.Keyspace)
}

func isNoRows(err error) bool { return errors.Is(err, pgx.ErrNoRows) }

// schemaLockKey identifies the advisory lock that serialises schema changes
// on a shard, whichever gateway makes them.
const schemaLockKey = 0x637170670001 // "cqpg" 1

// Lock takes the schema-change lock for the rest of the transaction tx.
func Lock(ctx context.Context, tx Querier) error {
	_, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(schemaLockKey))
	return err
}

// SetVersion records a new schema version.
func SetVersion(ctx context.Context, tx Querier, version [16]byte) error {
	_, err := tx.Exec(ctx, `UPDATE cqlpg.schema_version SET version = $1, changed_at = now()`, version)
	return err
}

func exists(ctx context.Context, tx Querier, sql string, args ...any) (bool, error) {
	var found bool
	err := tx.QueryRow(ctx, `SELECT EXISTS (`+sql+`)`, args...).Scan(&found)
	return found, err
}

// CreateKeyspace creates the keyspace's schema and catalog entry inside tx.
// It reports false, with no error, when the keyspace exists and ifNotExists
// is set.
func CreateKeyspace(ctx context.Context, tx Querier, k *Keyspace, ifNotExists bool) (bool, error) {
	found, err := exists(ctx, tx, `SELECT FROM cqlpg.keyspaces WHERE keyspace_name = $1`, k.Name)
	if err != nil || found {
		if found && !ifNotExists {
			err = &ExistsError{Keyspace: k.Name}
		}
		return false, err
	}
	if _, err := tx.Exec(ctx, `CREATE SCHEMA `+pgx.Identifier{k.PGSchema}.Sanitize()); err != nil {
		return false, fmt.Errorf("create schema: %w", err)
	}
	var from map[string]string
	if k.ReplicationFrom != nil {
		from = k.ReplicationFrom.Options() // a keyspace copied to a joining shard
	}
	_, err = tx.Exec(ctx, `INSERT INTO cqlpg.keyspaces (keyspace_name, durable_writes, replication, pg_schema, replication_from)
		VALUES ($1, $2, $3, $4, $5)`, k.Name, k.DurableWrites, k.Replication.Options(), k.PGSchema, from)
	return err == nil, err
}

// DropKeyspace drops a keyspace, its tables and its schema inside tx.
func DropKeyspace(ctx context.Context, tx Querier, name string, ifExists bool) (bool, error) {
	var schema string
	err := tx.QueryRow(ctx, `DELETE FROM cqlpg.keyspaces WHERE keyspace_name = $1 RETURNING pg_schema`, name).Scan(&schema)
	if errors.Is(err, pgx.ErrNoRows) {
		if ifExists {
			return false, nil
		}
		return false, &MissingError{Keyspace: name}
	}
	if err != nil {
		return false, err
	}
	_, err = tx.Exec(ctx, `DROP SCHEMA IF EXISTS `+pgx.Identifier{schema}.Sanitize()+` CASCADE`)
	return err == nil, err
}

// CreateTable creates the table's Postgres table, its key index and its
// catalog entries inside tx.
func CreateTable(ctx context.Context, tx Querier, t *Table, ifNotExists bool) (bool, error) {
	var schema string
	err := tx.QueryRow(ctx, `SELECT pg_schema FROM cqlpg.keyspaces WHERE keyspace_name = $1`, t.Keyspace).Scan(&schema)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, &MissingError{Keyspace: t.Keyspace}
	}
	if err != nil {
		return false, err
	}
	found, err := exists(ctx, tx, `SELECT FROM cqlpg.tables WHERE keyspace_name = $1 AND table_name = $2`,
		t.Keyspace, t.Name)
	if err != nil || found {
		if found && !ifNotExists {
			err = &ExistsError{Keyspace: t.Keyspace, Table: t.Name}
		}
		return false, err
	}
	if schema != t.PGSchema {
		return false, fmt.Errorf("keyspace %s is stored in schema %s, not %s", t.Keyspace, schema, t.PGSchema)
	}
	for _, stmt := range t.createSQL() {
		if _, err := tx.Exec(ctx, stmt); err != nil {
			return false, fmt.Errorf("create table: %w", err)
		}
	}
	if _, err := tx.Exec(ctx, `INSERT INTO cqlpg.tables (keyspace_name, table_name, id, options) VALUES ($1, $2, $3, $4)`,
		t.Keyspace, t.Name, t.ID, optionsJSON(t.Options)); err != nil {
		return false, err
	}
	for _, c := range t.Columns {
		if err := insertColumn(ctx, tx, t, c); err != nil {
			return false, err
		}
	}
	return true, nil
}

// DropTable drops a table and its catalog entries inside tx.
func DropTable(ctx context.Context, tx Querier, keyspace, name string, ifExists bool) (bool, error) {
	var schema string
	err := tx.QueryRow(ctx, `DELETE FROM cqlpg.tables t USING cqlpg.keyspaces k
		WHERE t.keyspace_name = $1 AND t.table_name = $2 AND k.keyspace_name = t.keyspace_name
		RETURNING k.pg_schema`, keyspace, name).Scan(&schema)
	if errors.Is(err, pgx.ErrNoRows) {
		if ifExists {
			return false, nil
		}
		return false, &MissingError{Keyspace: keyspace, Table: name}
	}
	if err != nil {
		return false, err
	}
	_, err = tx.Exec(ctx, `DROP TABLE IF EXISTS `+pgx.Identifier{schema, name}.Sanitize()+", "+
		pgx.Identifier{schema, name + "$static"}.Sanitize()+", "+pgx.Identifier{schema, name + deletionsSuffix}.Sanitize())
	if err == nil {
		err = dropSQLWrites(ctx, tx, schema, name)
	}
	return err == nil, err
}

// Ident returns the table's quoted Postgres name.
func (t *Table) Ident() string { return pgx.Identifier{t.PGSchema, t.PGName}.Sanitize() }

// KeyIndexName names the unique index on (token, key columns).
func (t *Table) KeyIndexName() string { return t.PGName + "$key" }

// Quote returns a quoted Postgres identifier.
func Quote(name string) string { return pgx.Identifier{name}.Sanitize() }

// CreateSQL returns the DDL that creates t on a shard (createSQL), which
// the web view's table builder shows before anything is made.
func (t *Table) CreateSQL() []string { return t.createSQL() }

// createSQL returns the DDL of the table's Postgres side: one column per CQL
// column with its natural type, the bookkeeping columns after them, the
// unique key index in clustering order, and comments for psql users. A
// table with static columns keeps them in a companion table, one row per
// partition.
func (t *Table) createSQL() []string {
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE TABLE %s (\n    %s bigint NOT NULL", t.Ident(), Quote(TokenColumn))
	for _, c := range t.Columns {
		if c.Kind != Static {
			b.WriteString(",\n    " + columnDDL(c))
		}
		if o := c.OrderColumn(); o != "" {
			b.WriteString(",\n    " + Quote(o) + " bytea NOT NULL")
		}
		if x := c.ExactColumn(); x != "" && c.IsKey() {
			b.WriteString(",\n    " + Quote(x) + " bytea")
		}
	}
	fmt.Fprintf(&b, ",\n    %s bigint,\n    %s integer,\n    %s bigint",
		Quote(RowWritetimeColumn), Quote(RowExpiryColumn), Quote(DeletedColumn))
	for _, c := range t.Columns {
		if c.Kind == Regular {
			b.WriteString(",\n    " + strings.Join(cellDDL(c), ",\n    "))
		}
	}
	if t.HasBaseCells() {
		b.WriteString(",\n    " + Quote(BaseCellsColumn) + " jsonb")
	}
	b.WriteString("\n)")

	key := keyIndexColumns(t.KeyColumns())
	var orderComments []string
	for _, c := range t.KeyColumns() {
		if o := c.OrderColumn(); o != "" {
			orderComments = append(orderComments, fmt.Sprintf("COMMENT ON COLUMN %s.%s IS %s", t.Ident(), Quote(o),
				quoteLiteral("order key of "+c.Name+": its bytes sort as Cassandra sorts "+c.Type.String()+" values")))
		}
	}
	index := Quote(t.KeyIndexName())
	stmts := []string{
		b.String(),
		fmt.Sprintf("CREATE UNIQUE INDEX %s ON %s (%s)", index, t.Ident(), strings.Join(key, ", ")),
		fmt.Sprintf("ALTER TABLE %s REPLICA IDENTITY USING INDEX %s", t.Ident(), index),
		fmt.Sprintf("COMMENT ON TABLE %s IS %s", t.Ident(), quoteLiteral(t.CreateStatement())),
		fmt.Sprintf("COMMENT ON COLUMN %s.%s IS 'Murmur3 token of the partition key'", t.Ident(), Quote(TokenColumn)),
		fmt.Sprintf("COMMENT ON COLUMN %s.%s IS 'write time (µs) of the row marker INSERT writes'", t.Ident(), Quote(RowWritetimeColumn)),
		fmt.Sprintf("COMMENT ON COLUMN %s.%s IS 'expiry (epoch seconds) of the row marker'", t.Ident(), Quote(RowExpiryColumn)),
		fmt.Sprintf("COMMENT ON COLUMN %s.%s IS 'write time (µs) of the latest row deletion'", t.Ident(), Quote(DeletedColumn)),
	}
	stmts = append(stmts, orderComments...)
	stmts = append(stmts, t.createDeletionsSQL()...)
	if t.HasStatic() {
		stmts = append(stmts, t.createStaticSQL()...)
	}
	stmts = append(stmts, t.sqlWritesSQL()...) // sqlwrites.go: triggers completing plain SQL writes
	return stmts
}

// keyIndexColumns lists a key index's columns, in Cassandra's order: the
// token, then cols, each by its sort column. cols are the partition key
// and clustering columns, or the partition key alone for the static
// table, which is keyed by partition.
func keyIndexColumns(cols []*Column) []string {
	key := []string{Quote(TokenColumn)}
	for _, c := range cols {
		col := Quote(c.SortColumn())
		if c.Desc {
			col += " DESC"
		}
		key = append(key, col)
	}
	return key
}

// columnDDL declares a column's value in CREATE or ALTER TABLE.
func columnDDL(c *Column) string {
	st, _ := StorageOf(c.Type) // the planner has checked every type
	d := Quote(c.PGName) + " " + st.SQL
	if c.IsKey() {
		d += " NOT NULL"
	}
	return d
}

// cellDDL declares a regular or static column's write time and expiry,
// and its empty-value flag and exact companion if it has them.
func cellDDL(c *Column) []string {
	ddl := []string{Quote(c.WritetimeColumn()) + " bigint", Quote(c.ExpiryColumn()) + " integer"}
	if e := c.EmptyColumn(); e != "" {
		ddl = append(ddl, Quote(e)+" boolean")
	}
	if x := c.ExactColumn(); x != "" {
		ddl = append(ddl, Quote(x)+" bytea")
	}
	if cells := c.CellsColumn(); cells != "" {
		ddl = append(ddl, Quote(cells)+" jsonb")
	}
	return ddl
}

// StaticPGName names the companion table of static columns.
func (t *Table) StaticPGName() string { return t.PGName + "$static" }

// StaticIdent returns the quoted name of the companion table of static
// columns.
func (t *Table) StaticIdent() string { return pgx.Identifier{t.PGSchema, t.StaticPGName()}.Sanitize() }

// createStaticSQL creates the companion table that holds the static
// columns: one row per partition, keyed like the partition, with the
// partition's deletion time.
func (t *Table) createStaticSQL() []string {
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE TABLE %s (\n    %s bigint NOT NULL", t.StaticIdent(), Quote(TokenColumn))
	for _, c := range t.PartitionKey {
		b.WriteString(",\n    " + columnDDL(c))
		if x := c.ExactColumn(); x != "" {
			b.WriteString(",\n    " + Quote(x) + " bytea")
		}
	}
	for _, c := range t.Columns {
		if c.Kind == Static {
			b.WriteString(",\n    " + columnDDL(c))
		}
	}
	fmt.Fprintf(&b, ",\n    %s bigint", Quote(DeletedColumn))
	for _, c := range t.Columns {
		if c.Kind == Static {
			b.WriteString(",\n    " + strings.Join(cellDDL(c), ",\n    "))
		}
	}
	b.WriteString("\n)")
	key := keyIndexColumns(t.PartitionKey)
	index := Quote(t.StaticPGName() + "$key")
	return []string{
		b.String(),
		fmt.Sprintf("CREATE UNIQUE INDEX %s ON %s (%s)", index, t.StaticIdent(), strings.Join(key, ", ")),
		fmt.Sprintf("ALTER TABLE %s REPLICA IDENTITY USING INDEX %s", t.StaticIdent(), index),
		fmt.Sprintf("COMMENT ON TABLE %s IS %s", t.StaticIdent(),
			quoteLiteral("Static columns of "+t.QualifiedName()+", one row per partition; "+
				DeletedColumn+" is the partition's latest deletion.")),
	}
}

// quoteLiteral quotes s as an escape string literal (E'...'), whose meaning
// does not depend on the server's standard_conforming_strings setting.
// Postgres text cannot hold NUL, so NULs are dropped.
func quoteLiteral(s string) string {
	r := strings.NewReplacer("\x00", "", `\`, `\\`, "'", "''")
	return "E'" + r.Replace(s) + "'"
}
