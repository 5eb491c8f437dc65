package pgschema

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cqlpg/cqlpg/sharding"
	"github.com/jackc/pgx/v5"
)

// AlterKeyspace changes a keyspace's replication and durable_writes inside
// tx. It reports false, with no error, when the keyspace does not exist and
// ifExists is set.
//
// A change of replication keeps the replication before it in
// replication_from (the first one, if a change is already streaming),
// for reads to use until the replicas it gains hold the data; a change
// back to that one clears it.
func AlterKeyspace(ctx context.Context, tx Querier, k *Keyspace, ifExists bool) (bool, error) {
	tag, err := tx.Exec(ctx, `UPDATE cqlpg.keyspaces SET replication = $2, durable_writes = $3,
		replication_from = CASE WHEN coalesce(replication_from, replication) = $2::jsonb THEN NULL
			ELSE coalesce(replication_from, replication) END
		WHERE keyspace_name = $1`,
		k.Name, k.Replication.Options(), k.DurableWrites)
	if err != nil {
		return false, err
	}
	if tag.RowsAffected() == 0 {
		if ifExists {
			return false, nil
		}
		return false, &MissingError{Keyspace: k.Name}
	}
	return true, nil
}

// tableExists checks, inside the schema lock, that the table a change was
// planned against is still there.
func tableExists(ctx context.Context, tx Querier, t *Table) error {
	found, err := exists(ctx, tx, `SELECT FROM cqlpg.tables WHERE keyspace_name = $1 AND table_name = $2`,
		t.Keyspace, t.Name)
	if err == nil && !found {
		err = &MissingError{Keyspace: t.Keyspace, Table: t.Name}
	}
	return err
}

// AddColumns adds regular or static columns to a table; after is the
// table with them.
func AddColumns(ctx context.Context, tx Querier, after *Table, cols []*Column) error {
	if err := tableExists(ctx, tx, after); err != nil {
		return err
	}
	// Static columns already there mean a companion table to add them to,
	// which may hold cells set aside when they were dropped.
	hadStatic := slices.ContainsFunc(after.Columns, func(c *Column) bool {
		return c.Kind == Static && !containsColumn(cols, c)
	})
	var mainDDL, staticDDL []string
	for _, c := range cols {
		if c.Kind != Static || hadStatic {
			ident := after.Ident()
			if c.Kind == Static {
				ident = after.StaticIdent()
			}
			restored, err := restoreDropped(ctx, tx, after, ident, c)
			if err != nil {
				return err
			}
			if restored {
				continue
			}
		}
		adds := []string{"ADD COLUMN " + columnDDL(c)}
		for _, d := range cellDDL(c) {
			adds = append(adds, "ADD COLUMN "+d)
		}
		if c.Kind == Static {
			staticDDL = append(staticDDL, adds...)
		} else {
			mainDDL = append(mainDDL, adds...)
		}
	}
	var stmts []string
	if len(mainDDL) > 0 {
		stmts = append(stmts, "ALTER TABLE "+after.Ident()+" "+strings.Join(mainDDL, ", "))
	}
	switch {
	case len(staticDDL) > 0 && !hadStatic:
		// A new companion table, with nothing set aside.
		stmts = append(stmts, after.createStaticSQL()...)
	case len(staticDDL) > 0:
		stmts = append(stmts, "ALTER TABLE "+after.StaticIdent()+" "+strings.Join(staticDDL, ", "))
	}
	if err := execAll(ctx, tx, stmts); err != nil {
		return err
	}
	for _, c := range cols {
		if err := insertColumn(ctx, tx, after, c); err != nil {
			return err
		}
	}
	if err := refreshSQLWrites(ctx, tx, after); err != nil { // sqlwrites.go: the trigger names every column
		return err
	}
	return setComment(ctx, tx, after)
}

// restoreDropped takes back the cells DropColumns set aside for a column
// of c's name, keeping those written after the drop time, as Cassandra
// does when a dropped column is added again (the planner has checked that
// its type is compatible); it reports whether there were any to take back.
func restoreDropped(ctx context.Context, tx Querier, t *Table, ident string, c *Column) (bool, error) {
	names := c.storedColumns()
	var kept int
	err := tx.QueryRow(ctx, `SELECT count(*) FROM pg_attribute
		WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped AND attname = ANY($2)`,
		ident, droppedNames(names)).Scan(&kept)
	if err != nil || kept != len(names) {
		return false, err
	}
	var dropped time.Time
	err = tx.QueryRow(ctx, `SELECT dropped_time FROM cqlpg.dropped_columns
		WHERE keyspace_name = $1 AND table_name = $2 AND column_name = $3`, t.Keyspace, t.Name, c.Name).Scan(&dropped)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	var stmts []string
	sets := make([]string, len(names))
	for i, name := range names {
		stmts = append(stmts, "ALTER TABLE "+ident+" RENAME COLUMN "+Quote(droppedName(name))+" TO "+Quote(name))
		sets[i] = Quote(name) + " = NULL"
	}
	stmts = append(stmts, fmt.Sprintf("UPDATE %s SET %s WHERE %s <= %d", ident, strings.Join(sets, ", "),
		Quote(c.WritetimeColumn()), dropped.UnixMicro()))
	return true, execAll(ctx, tx, stmts)
}

func droppedNames(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = droppedName(n)
	}
	return out
}

func containsColumn(cols []*Column, c *Column) bool {
	for _, x := range cols {
		if x.Name == c.Name {
			return true
		}
	}
	return false
}

// DropColumns drops columns from a table and records them as dropped;
// after is the table without them.
func DropColumns(ctx context.Context, tx Querier, after *Table, cols []*Column, when time.Time) error {
	if err := tableExists(ctx, tx, after); err != nil {
		return err
	}
	// A dropped column's cells are set aside, not dropped: Cassandra
	// shows again, when a column of the same name is added back, the
	// cells written after the drop time (DROP ... USING TIMESTAMP in the
	// past, or client timestamps ahead of it). AddColumns takes them back.
	var stmts []string
	staticGone := !after.HasStatic()
	for _, c := range cols {
		ident := after.Ident()
		if c.Kind == Static {
			if staticGone {
				continue
			}
			ident = after.StaticIdent()
		}
		for _, name := range c.storedColumns() {
			stmts = append(stmts, "ALTER TABLE "+ident+" DROP COLUMN IF EXISTS "+Quote(droppedName(name)),
				"ALTER TABLE "+ident+" RENAME COLUMN "+Quote(name)+" TO "+Quote(droppedName(name)))
		}
	}
	if staticGone && hasStatic(cols) {
		// The last static columns go, and with them the companion table,
		// as CREATE TABLE makes one only for a table with static columns:
		// a static column added later starts from a new one.
		stmts = append(stmts, "DROP TABLE "+after.StaticIdent(), "DROP FUNCTION IF EXISTS "+after.WinsFunction(true))
	}
	if err := execAll(ctx, tx, stmts); err != nil {
		return err
	}
	for _, c := range cols {
		if _, err := tx.Exec(ctx, `DELETE FROM cqlpg.columns WHERE keyspace_name = $1 AND table_name = $2 AND column_name = $3`,
			after.Keyspace, after.Name, c.Name); err != nil {
			return err
		}
		if err := recordDropped(ctx, tx, after, c, when); err != nil {
			return err
		}
	}
	if err := refreshSQLWrites(ctx, tx, after); err != nil { // sqlwrites.go: the trigger names every column
		return err
	}
	return setComment(ctx, tx, after)
}

// RenameColumns renames primary key columns; after is the renamed table,
// and renames maps old CQL names to the new columns.
func RenameColumns(ctx context.Context, tx Querier, after *Table, renames map[string]*Column) error {
	if err := tableExists(ctx, tx, after); err != nil {
		return err
	}
	for old, c := range renames {
		var pgOld string
		err := tx.QueryRow(ctx, `UPDATE cqlpg.columns c SET column_name = $4, pg_column = $5
			FROM cqlpg.columns o WHERE c.keyspace_name = $1 AND c.table_name = $2 AND c.column_name = $3
			AND o.keyspace_name = c.keyspace_name AND o.table_name = c.table_name AND o.column_name = c.column_name
			RETURNING o.pg_column`, after.Keyspace, after.Name, old, c.Name, c.PGName).Scan(&pgOld)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("column %s of %s is not in the catalog", old, after.QualifiedName())
		}
		if err != nil {
			return err
		}
		if pgOld == c.PGName {
			continue
		}
		stmts := []string{fmt.Sprintf("ALTER TABLE %s RENAME COLUMN %s TO %s", after.Ident(), Quote(pgOld), Quote(c.PGName))}
		if c.Kind == PartitionKey && after.HasStatic() {
			stmts = append(stmts, fmt.Sprintf("ALTER TABLE %s RENAME COLUMN %s TO %s", after.StaticIdent(), Quote(pgOld), Quote(c.PGName)))
		}
		if d := after.DeletionsIdent(); c.Kind == PartitionKey && d != "" {
			// The deletions table keys its records by the partition key.
			stmts = append(stmts, fmt.Sprintf("ALTER TABLE %s RENAME COLUMN %s TO %s", d, Quote(pgOld), Quote(c.PGName)))
		}
		if o := c.OrderColumn(); o != "" {
			stmts = append(stmts, fmt.Sprintf("ALTER TABLE %s RENAME COLUMN %s TO %s", after.Ident(), Quote(pgOld+suffixOrder), Quote(o)))
		}
		if x := c.ExactColumn(); x != "" {
			stmts = append(stmts, fmt.Sprintf("ALTER TABLE %s RENAME COLUMN %s TO %s", after.Ident(), Quote(pgOld+suffixExact), Quote(x)))
			if c.Kind == PartitionKey && after.HasStatic() {
				stmts = append(stmts, fmt.Sprintf("ALTER TABLE %s RENAME COLUMN %s TO %s", after.StaticIdent(), Quote(pgOld+suffixExact), Quote(x)))
			}
		}
		if err := execAll(ctx, tx, stmts); err != nil {
			return err
		}
	}
	if err := refreshSQLWrites(ctx, tx, after); err != nil { // sqlwrites.go: the trigger names every column
		return err
	}
	return setComment(ctx, tx, after)
}

// SetOptions stores a table's options.
func SetOptions(ctx context.Context, tx Querier, after *Table) error {
	if err := tableExists(ctx, tx, after); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `UPDATE cqlpg.tables SET options = $3 WHERE keyspace_name = $1 AND table_name = $2`,
		after.Keyspace, after.Name, optionsJSON(after.Options)); err != nil {
		return err
	}
	return setComment(ctx, tx, after)
}

// Truncate removes every row of a table, static rows included.
func Truncate(ctx context.Context, tx Querier, t *Table) error {
	if err := tableExists(ctx, tx, t); err != nil {
		return err
	}
	tables := t.Ident()
	if t.HasStatic() {
		tables += ", " + t.StaticIdent()
	}
	if d := t.DeletionsIdent(); d != "" {
		tables += ", " + d
	}
	_, err := tx.Exec(ctx, "TRUNCATE "+tables)
	return err
}

func insertColumn(ctx context.Context, tx Querier, t *Table, c *Column) error {
	_, err := tx.Exec(ctx, `INSERT INTO cqlpg.columns (keyspace_name, table_name, column_name, kind,
		position, type, clustering_order, pg_column, exact) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		t.Keyspace, t.Name, c.Name, c.Kind.String(), c.Position, c.Type.String(), c.ClusteringOrder(), c.PGName, !c.Legacy)
	return err
}

// setComment refreshes the table comment that holds the CQL definition.
func setComment(ctx context.Context, tx Querier, t *Table) error {
	_, err := tx.Exec(ctx, fmt.Sprintf("COMMENT ON TABLE %s IS %s", t.Ident(), quoteLiteral(t.CreateStatement())))
	return err
}

func execAll(ctx context.Context, tx Querier, stmts []string) error {
	for _, s := range stmts {
		if _, err := tx.Exec(ctx, s); err != nil {
			return err
		}
	}
	return nil
}

// recordDropped records column c of table t as dropped at when.
func recordDropped(ctx context.Context, tx Querier, t *Table, c *Column, when time.Time) error {
	_, err := tx.Exec(ctx, `INSERT INTO cqlpg.dropped_columns (keyspace_name, table_name, column_name, dropped_time, kind, type)
		VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (keyspace_name, table_name, column_name)
		DO UPDATE SET dropped_time = excluded.dropped_time, kind = excluded.kind, type = excluded.type`,
		t.Keyspace, t.Name, c.Name, when, c.Kind.String(), c.Type.String())
	return err
}

// ReplicationStreamed clears the keyspace's replication_from once the
// replicas of replication hold the data, unless its replication has
// changed since; it reports whether it did.
func ReplicationStreamed(ctx context.Context, tx Querier, keyspace string, replication sharding.Replication) (bool, error) {
	tag, err := tx.Exec(ctx, `UPDATE cqlpg.keyspaces SET replication_from = NULL
		WHERE keyspace_name = $1 AND replication = $2::jsonb AND replication_from IS NOT NULL`, keyspace, replication.Options())
	return tag.RowsAffected() > 0, err
}
