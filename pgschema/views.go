package pgschema

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
)

// A materialized view is a table like any other (reads, repair,
// streaming and the sweeper treat it so) whose rows a trigger on its base
// table derives. Every change of a base row, whoever makes it (a
// gateway's write, a repair's merge, a hint, a plain SQL write), logs the
// row in cqlpg.view_log in the same transaction, once per view, with the
// token of the view partition it belongs to; gateways apply the log to
// the view's replicas (ViewApplySQL) and delete it. A view row is thus a
// copy of its base row's cells, merged by the same rules as any write, so
// that view updates applied in any order, or twice, end the same.
//
// Two kinds of views:
//
//   - A view keyed by the base primary key alone takes the base row whole:
//     its row marker, deletion time and cells.
//   - A view whose key holds a regular base column (its key column, one at
//     most) has one row per value that column takes. Its row lives while
//     the base row's cell of that column lives and holds the row's value:
//     the view row's marker is that cell's write time and expiry. When the
//     column changes, the base row as it was is logged once more with the
//     time of the change (shadow), which the old view row takes as its
//     deletion time (_del_wt): its marker, when no newer, dies, and its
//     cells stay for a later write that brings the old value back (a
//     deletion here shadows the row, not its cells, as Cassandra's
//     shadowable tombstones do). Reads of such a view ask for a live
//     marker (StrictLiveness).

// View is what makes a table a materialized view of another table of its
// keyspace.
type View struct {
	Base string
	// IncludeAll is set for SELECT *: columns added to the base are added
	// to the view too.
	IncludeAll bool
	// Where is the WHERE clause as system_schema.views shows it.
	Where string
	// KeyColumn is the base table's regular column in the view's primary
	// key, or "".
	KeyColumn string
	// Filters are the WHERE clause's restrictions other than IS NOT NULL,
	// which fall on base primary key columns.
	Filters []ViewFilter
}

// ViewFilter is a restriction of a view's WHERE clause on a base key
// column: Column Op Value, Value CQL-serialized.
type ViewFilter struct {
	Column string `json:"column"`
	Op     string `json:"op"`
	Value  []byte `json:"-"`
	Hex    string `json:"value"`
}

// BaseCellsColumn holds, in a view that leaves base columns out, the
// liveness of those columns' cells (migration 0025).
const BaseCellsColumn = "_base_cells"

// HasBaseCells reports whether t is a view keyed by its base's primary
// key alone that may leave base columns out: its rows live while their
// base rows do, whose liveness it keeps in BaseCellsColumn.
func (t *Table) HasBaseCells() bool {
	return t.View != nil && t.View.KeyColumn == "" && !t.View.IncludeAll
}

// baseCellsSQL is the value of BaseCellsColumn for base row b: each base
// regular column t leaves out, with its cell's write time, expiry, and
// whether it holds a value.
func (t *Table) baseCellsSQL(base *Table) string {
	var items []string
	for _, c := range base.Columns {
		if c.Kind != Regular || t.Column(c.Name) != nil {
			continue
		}
		items = append(items, fmt.Sprintf("%s, jsonb_build_array(%s, %s, %s)", quoteLiteral(c.Name),
			qual("b", c.WritetimeColumn()), qual("b", c.ExpiryColumn()), cellHoldsSQL(c, "b")))
	}
	if len(items) == 0 {
		return "'{}'::jsonb"
	}
	return "jsonb_build_object(" + strings.Join(items, ", ") + ")"
}

// IsView reports whether t is a materialized view.
func (t *Table) IsView() bool { return t.View != nil }

// StrictLiveness reports whether a row of t lives only while its row
// marker does: a view with a key column (see the comment at the top).
func (t *Table) StrictLiveness() bool { return t.View != nil && t.View.KeyColumn != "" }

// ViewsOf returns the views of the keyspace's table base, by name.
func (k *Keyspace) ViewsOf(base string) []*Table {
	var out []*Table
	for _, name := range k.TableNames() {
		if t := k.Tables[name]; t.View != nil && t.View.Base == base {
			out = append(out, t)
		}
	}
	return out
}

// HasViews reports whether the keyspace's table base has views.
func (k *Keyspace) HasViews(base string) bool {
	for _, t := range k.Tables {
		if t.View != nil && t.View.Base == base {
			return true
		}
	}
	return false
}

// ViewNames returns the names of the keyspace's views, sorted.
func (k *Keyspace) ViewNames() []string {
	var out []string
	for _, name := range k.TableNames() {
		if k.Tables[name].View != nil {
			out = append(out, name)
		}
	}
	return out
}

// ViewTriggerName names the trigger that logs a base table's view
// updates.
const ViewTriggerName = "cqlpg_views"

const viewsSuffix = "$views"

// viewFunction names a base table's view trigger function.
func viewFunction(schema, base string) string {
	return pgx.Identifier{schema, base + viewsSuffix}.Sanitize()
}

// CreateView creates the view's table and catalog entries, records its
// build as started, and gives its base table the trigger that logs the
// updates of views (all of views, the new one included).
func CreateView(ctx context.Context, tx Querier, v, base *Table, views []*Table, ifNotExists bool) (bool, error) {
	ok, err := CreateTable(ctx, tx, v, ifNotExists)
	if err != nil || !ok {
		return ok, err
	}
	if err := insertView(ctx, tx, v, "STARTED"); err != nil {
		return false, err
	}
	return true, execAll(ctx, tx, base.viewTriggerSQL(views))
}

// copyView makes a view on a shard joining the cluster, whose base was
// copied: built already, since its base holds no row yet and the rows
// streamed to it will log their own view updates.
func copyView(ctx context.Context, tx Querier, k *Keyspace, v *Table) error {
	if _, err := CreateTable(ctx, tx, v, false); err != nil {
		return err
	}
	if err := insertView(ctx, tx, v, "SUCCESS"); err != nil {
		return err
	}
	base := k.Tables[v.View.Base]
	return execAll(ctx, tx, base.viewTriggerSQL(k.ViewsOf(base.Name)))
}

// insertView records a view's catalog entries, its build at status.
func insertView(ctx context.Context, tx Querier, v *Table, status string) error {
	filters, err := filtersJSON(v.View.Filters)
	if err != nil {
		return err
	}
	var key any
	if v.View.KeyColumn != "" {
		key = v.View.KeyColumn
	}
	if _, err := tx.Exec(ctx, `INSERT INTO cqlpg.views (keyspace_name, view_name, base_table_name,
		include_all_columns, where_clause, key_column, filters) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		v.Keyspace, v.Name, v.View.Base, v.View.IncludeAll, v.View.Where, key, filters); err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `INSERT INTO cqlpg.view_builds (keyspace_name, view_name, status, finished_at)
		VALUES ($1, $2, $3, CASE WHEN $3 = 'SUCCESS' THEN now() END)`, v.Keyspace, v.Name, status)
	return err
}

// DropView drops a view, its pending updates, and its base table's
// trigger for it (views are the base's views that remain).
func DropView(ctx context.Context, tx Querier, keyspace, name string, base *Table, views []*Table, ifExists bool) (bool, error) {
	ok, err := DropTable(ctx, tx, keyspace, name, ifExists)
	if err != nil || !ok {
		return ok, err
	}
	if _, err := tx.Exec(ctx, `DELETE FROM cqlpg.view_log WHERE keyspace_name = $1 AND view_name = $2`, keyspace, name); err != nil {
		return false, err
	}
	return true, execAll(ctx, tx, base.viewTriggerSQL(views))
}

// RenameInViews renames, in the views of base (views, as they become),
// the columns ALTER TABLE RENAME renamed in base (renames, old name to
// base's new column), records their new WHERE clauses and filters, and
// gives base its view trigger again, which names the columns.
func RenameInViews(ctx context.Context, tx Querier, base *Table, views []*Table, renames map[string]*Column) error {
	for _, v := range views {
		own := map[string]*Column{}
		for old, c := range renames {
			if vc := v.Column(c.Name); vc != nil {
				own[old] = vc
			}
		}
		if len(own) == 0 {
			continue
		}
		if err := RenameColumns(ctx, tx, v, own); err != nil {
			return err
		}
		filters, err := filtersJSON(v.View.Filters)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE cqlpg.views SET where_clause = $3, filters = $4 WHERE keyspace_name = $1 AND view_name = $2`,
			v.Keyspace, v.Name, v.View.Where, filters); err != nil {
			return err
		}
	}
	if len(views) == 0 {
		return nil
	}
	return execAll(ctx, tx, base.viewTriggerSQL(views))
}

// filtersJSON returns filters as cqlpg.views.filters holds them.
func filtersJSON(filters []ViewFilter) (string, error) {
	out := make([]ViewFilter, len(filters))
	for i, f := range filters {
		out[i] = f
		out[i].Hex = hex.EncodeToString(f.Value)
	}
	b, err := json.Marshal(out)
	return string(b), err
}

// viewTriggerSQL returns the DDL giving base the trigger that logs the
// updates of views, or dropping it when views is empty.
func (t *Table) viewTriggerSQL(views []*Table) []string {
	fn := viewFunction(t.PGSchema, t.PGName)
	if len(views) == 0 {
		return []string{fmt.Sprintf("DROP TRIGGER IF EXISTS %s ON %s", Quote(ViewTriggerName), t.Ident()),
			fmt.Sprintf("DROP FUNCTION IF EXISTS %s()", fn)}
	}
	stmts := functionSQL(fn, "", "trigger", t.viewTriggerBody(views),
		"Logs the updates of the materialized views of "+t.QualifiedName()+" in cqlpg.view_log.")
	return append(stmts, fmt.Sprintf("CREATE OR REPLACE TRIGGER %s AFTER INSERT OR UPDATE ON %s FOR EACH ROW EXECUTE FUNCTION %s()",
		Quote(ViewTriggerName), t.Ident(), fn))
}

// viewTriggerBody generates the trigger function: for each view, the row
// as it now is, to the view partition of its key; for a view with a key
// column whose value the change replaced or removed, the row as it was,
// to the old view partition, shadowed at the change's time.
func (t *Table) viewTriggerBody(views []*Table) string {
	var b body
	b.line(0, "DECLARE")
	b.line(1, "nj json := row_to_json(NEW);")
	b.line(1, "oj json;")
	b.line(1, "pkey bytea;")
	b.line(0, "BEGIN")
	b.line(1, "IF TG_OP = 'UPDATE' THEN")
	b.line(2, "oj := row_to_json(OLD);")
	b.line(2, "IF nj::text = oj::text THEN")
	b.line(3, "RETURN NULL;")
	b.line(2, "END IF;")
	b.line(1, "END IF;")
	for _, v := range views {
		ks, name := bodyLiteral(v.Keyspace), bodyLiteral(v.Name)
		insert := func(indent int, rec, row, shadow string) {
			token := v.viewTokenSQL(t, rec)
			if token == "" {
				b.line(indent, "pkey := cqlpg.partition_key(%s);", v.viewKeyBytesSQL(rec))
				b.line(indent, "IF length(pkey) > 0 THEN")
				b.line(indent+1, "INSERT INTO cqlpg.view_log (keyspace_name, view_name, token, base_row, shadow) VALUES (%s, %s, cqlpg.token(pkey), %s, %s);",
					ks, name, row, shadow)
				b.line(indent, "END IF;")
				return
			}
			b.line(indent, "INSERT INTO cqlpg.view_log (keyspace_name, view_name, token, base_row, shadow) VALUES (%s, %s, %s, %s, %s);",
				ks, name, token, row, shadow)
		}
		key := v.View.KeyColumn
		if key == "" {
			insert(1, "NEW", "nj", "NULL")
			continue
		}
		c := t.Column(key)
		b.line(1, "IF %s IS NOT NULL THEN", newField(c.PGName))
		insert(2, "NEW", "nj", "NULL")
		b.line(1, "END IF;")
		b.line(1, "IF TG_OP = 'UPDATE' AND %s IS NOT NULL AND (%s IS NULL OR %s) THEN", oldField(c.PGName), newField(c.PGName),
			distinctSQL(c.Type, c.PGName))
		insert(2, "OLD", "oj", fmt.Sprintf("GREATEST(%s, %s)", newField(c.WritetimeColumn()), newField(DeletedColumn)))
		b.line(1, "END IF;")
	}
	b.line(1, "RETURN NULL;")
	b.line(0, "END;")
	return b.String()
}

// sameKey reports whether the view's partition key is the base's, column
// for column, so that a view partition has its base partition's token.
func (t *Table) samePartitionKey(base *Table) bool {
	return slices.EqualFunc(t.PartitionKey, base.PartitionKey, func(a, b *Column) bool { return a.Name == b.Name })
}

// viewTokenSQL returns the token of the view partition of base row rec
// (NEW, OLD, or a table alias) when it is the base row's own, else "".
func (t *Table) viewTokenSQL(base *Table, rec string) string {
	if t.samePartitionKey(base) {
		return rec + "." + Quote(TokenColumn)
	}
	return ""
}

// viewKeyBytesSQL returns the arguments of cqlpg.partition_key giving the
// serialized view partition key of base row rec.
func (t *Table) viewKeyBytesSQL(rec string) string {
	var parts []string
	for _, c := range t.PartitionKey {
		kb, _ := KeyBytesSQL(c.Type, rec+"."+Quote(c.PGName)) // CheckViewKey refused the others
		parts = append(parts, kb)
	}
	return strings.Join(parts, ", ")
}

// CheckViewKey reports a view partition key whose token cannot be
// computed in SQL, from which the trigger could not place view rows: a
// partition key other than the base's with a column that is not a scalar.
func (t *Table) CheckViewKey(base *Table) error {
	if t.samePartitionKey(base) {
		return nil
	}
	for _, c := range t.PartitionKey {
		if _, ok := KeyBytesSQL(c.Type, "x"); !ok {
			return fmt.Errorf("cqlpg cannot place the rows of materialized view %s by partition key column %s of type %s; "+
				"use a scalar column or the base table's partition key", t.Name, c.Name, c.Type)
		}
	}
	return nil
}

// ViewApplySQL returns the statement applying one view_log entry to the
// view t of base: $1 (json) is the base row, $2 (bigint) the shadow time
// or null, and $3 on the values of the view's filters, as ViewFilterArgs
// gives them. A base row the filters leave out changes nothing. The
// statement returns nothing.
func (t *Table) ViewApplySQL(base *Table) string {
	cols := t.partColumns(RepairRows)
	strict := t.StrictLiveness()
	var sel []string
	for _, col := range cols {
		sel = append(sel, t.viewColumnSQL(base, col, strict))
	}
	var where []string
	for i, f := range t.View.Filters {
		c := base.Column(f.Column)
		op := f.Op
		if op == "!=" {
			op = "<>"
		}
		where = append(where, fmt.Sprintf("%s %s $%d", qual("b", c.SortColumn()), op, i+3))
	}
	if len(where) == 0 {
		where = []string{"true"}
	}
	merged := fmt.Sprintf("GREATEST(%s, excluded.%s)", qual("t", DeletedColumn), Quote(DeletedColumn))
	cellDel := merged
	if strict {
		cellDel = "NULL"
	}
	set := append([]string{Quote(DeletedColumn) + " = " + merged}, t.mergeItemsWith(Regular, merged, cellDel)...)
	return fmt.Sprintf("INSERT INTO %s AS t (%s)\n    SELECT %s FROM json_populate_record(NULL::%s, $1::json) AS b WHERE %s\n"+
		"    ON CONFLICT (%s) DO UPDATE SET %s",
		t.Ident(), quoteAll(cols), strings.Join(sel, ", "), base.Ident(), strings.Join(where, " AND "),
		quoteAll(t.RepairKey(RepairRows)), strings.Join(set, ",\n        "))
}

// viewColumnSQL is the value of the view's Postgres column col for the
// base row b: the base's column of that name, or what the view computes
// (its token, an order key, a strict view's marker and shadow).
func (t *Table) viewColumnSQL(base *Table, col string, strict bool) string {
	shadow := "$2::bigint"
	live := func(expr string) string {
		if !strict {
			return expr
		}
		return fmt.Sprintf("CASE WHEN %s IS NULL THEN %s END", shadow, expr)
	}
	switch col {
	case TokenColumn:
		if tok := t.viewTokenSQL(base, "b"); tok != "" {
			return tok
		}
		return fmt.Sprintf("cqlpg.token(cqlpg.partition_key(%s))", t.viewKeyBytesSQL("b"))
	case RowWritetimeColumn, RowExpiryColumn:
		if !strict {
			return qual("b", col)
		}
		k := base.Column(t.View.KeyColumn)
		if col == RowWritetimeColumn {
			return live(qual("b", k.WritetimeColumn()))
		}
		return live(qual("b", k.ExpiryColumn()))
	case DeletedColumn:
		if !strict {
			return qual("b", col)
		}
		return shadow
	case BaseCellsColumn:
		return t.baseCellsSQL(base)
	}
	for _, c := range t.Columns {
		if c.IsKey() {
			if o := c.OrderColumn(); o == col {
				if bc := base.Column(c.Name); bc.OrderColumn() == o {
					return qual("b", o)
				}
				key, _ := OrderKeySQL(c.Type, qual("b", c.PGName))
				return key
			}
			if x := c.ExactColumn(); x == col && base.Column(c.Name).ExactColumn() != x {
				return "NULL::bytea"
			}
			continue
		}
		if strict && col == c.WritetimeColumn() {
			// A cell the base row's deletion cleared is a tombstone of
			// the deletion's time here, where deletions clear nothing.
			return live(fmt.Sprintf("coalesce(%s, %s)", qual("b", col), qual("b", DeletedColumn)))
		}
	}
	if strict && !t.isKeyColumnName(col) {
		return live(qual("b", col))
	}
	return qual("b", col)
}

// isKeyColumnName reports whether col is a Postgres column of t's
// primary key (a value, order key or exact companion).
func (t *Table) isKeyColumnName(col string) bool {
	for _, c := range t.KeyColumns() {
		if col == c.PGName || col == c.OrderColumn() || col == c.ExactColumn() {
			return true
		}
	}
	return false
}

// ViewFilterArgs returns the values ViewApplySQL compares the filters
// with, as Postgres binary parameters, with their types.
func (t *Table) ViewFilterArgs(base *Table) (args [][]byte, oids []uint32, err error) {
	for _, f := range t.View.Filters {
		c := base.Column(f.Column)
		if c.OrderColumn() != "" {
			k, err := OrderKey(c.Type, f.Value)
			if err != nil {
				return nil, nil, err
			}
			args, oids = append(args, k), append(oids, OIDBytea)
			continue
		}
		st, err := StorageOf(c.Type)
		if err != nil {
			return nil, nil, err
		}
		v := f.Value
		if st.ToPG != nil {
			if v, err = st.ToPG(nil, f.Value); err != nil {
				return nil, nil, err
			}
		}
		args, oids = append(args, v), append(oids, st.OID)
	}
	return args, oids, nil
}

// loadViews marks the tables that are views, from cqlpg.views. A view
// whose base is missing is left out and reported.
func loadViews(ctx context.Context, q Querier, keyspaces map[string]*Keyspace, bad *unloadable) error {
	rows, err := q.Query(ctx, `SELECT keyspace_name, view_name, base_table_name, include_all_columns, where_clause,
		coalesce(key_column, ''), filters::text FROM cqlpg.views`)
	if err != nil {
		return fmt.Errorf("read views: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var ks, name, filters string
		v := &View{}
		if err := rows.Scan(&ks, &name, &v.Base, &v.IncludeAll, &v.Where, &v.KeyColumn, &filters); err != nil {
			return fmt.Errorf("read views: %w", err)
		}
		k := keyspaces[ks]
		if k == nil || k.Tables[name] == nil {
			continue
		}
		err := json.Unmarshal([]byte(filters), &v.Filters)
		for i := range v.Filters {
			if err == nil {
				v.Filters[i].Value, err = hex.DecodeString(v.Filters[i].Hex)
			}
		}
		base := k.Tables[v.Base]
		if err == nil && base == nil {
			err = errors.New("its base table " + v.Base + " is missing")
		}
		if err != nil {
			delete(k.Tables, name)
			bad.add("table", ks, name, fmt.Errorf("materialized view: %w", err))
			continue
		}
		k.Tables[name].View = v
	}
	return rows.Err()
}

// View log statements. A gateway reads the entries its write made in the
// write's own transaction (ViewLogOwnSQL), applies them and deletes them
// (ViewLogDeleteSQL); entries older than the log's timeout, which a
// gateway that died or a write of another kind left, are replayed
// (ViewLogReplaySQL), a few at a time, under row locks that keep two
// gateways from replaying one entry together.
const (
	ViewLogOwnSQL = `SELECT id, keyspace_name, view_name, token, base_row::text, shadow
FROM cqlpg.view_log WHERE xid = pg_current_xact_id()`
	ViewLogDeleteSQL = `DELETE FROM cqlpg.view_log WHERE id = ANY($1::bigint[])`
	ViewLogReplaySQL = `SELECT id, keyspace_name, view_name, token, base_row::text, shadow
FROM cqlpg.view_log WHERE written_at < now() - make_interval(secs => $1::bigint / 1000.0)
ORDER BY id LIMIT $2::bigint FOR UPDATE SKIP LOCKED`
)

// ViewBuildSQL returns the statement moving a shard's build of the view t
// of base one step on: it logs the view updates of the base rows of at
// most $2 (bigint) partitions after token $1 (bigint), for the view named
// $3.$4 (text), and records how far the build went, marking it done when
// it ran out of partitions. It returns the last token read (null when
// none was) and the count of rows logged.
func (t *Table) ViewBuildSQL(base *Table) string {
	return t.viewLogCTEs(base) + `,
u AS (UPDATE cqlpg.view_builds SET next_token = coalesce((SELECT last FROM n), next_token),
        rows_done = rows_done + (SELECT count(*) FROM ins),
        status = CASE WHEN (SELECT parts FROM n) < $2::bigint THEN 'SUCCESS' ELSE 'STARTED' END,
        finished_at = CASE WHEN (SELECT parts FROM n) < $2::bigint THEN now() END
    WHERE keyspace_name = $3::text AND view_name = $4::text RETURNING 1)
SELECT (SELECT last FROM n), (SELECT count(*) FROM ins), (SELECT count(*) FROM u)`
}

// ViewRelogSQL is ViewBuildSQL without the build's record: what a repair
// of the view runs to log its base's rows again. It returns the last
// token read (null when none was) and the count of rows logged.
func (t *Table) ViewRelogSQL(base *Table) string {
	return t.viewLogCTEs(base) + `
SELECT (SELECT last FROM n), (SELECT count(*) FROM ins)`
}

// viewLogCTEs are the common part of ViewBuildSQL and ViewRelogSQL.
func (t *Table) viewLogCTEs(base *Table) string {
	token := t.viewTokenSQL(base, "b")
	cond := []string{`b."_token" IN (SELECT "_token" FROM p)`}
	if token == "" {
		token = fmt.Sprintf("cqlpg.token(cqlpg.partition_key(%s))", t.viewKeyBytesSQL("b"))
		cond = append(cond, fmt.Sprintf("length(cqlpg.partition_key(%s)) > 0", t.viewKeyBytesSQL("b")))
	}
	if t.View.KeyColumn != "" {
		cond = append(cond, qual("b", base.Column(t.View.KeyColumn).PGName)+" IS NOT NULL")
	}
	return fmt.Sprintf(`WITH p AS (SELECT DISTINCT b."_token" FROM %[1]s AS b WHERE b."_token" > $1::bigint ORDER BY 1 LIMIT $2::bigint),
ins AS (INSERT INTO cqlpg.view_log (keyspace_name, view_name, token, base_row)
    SELECT $3::text, $4::text, %[2]s, row_to_json(b.*) FROM %[1]s AS b WHERE %[3]s RETURNING 1),
n AS (SELECT max("_token") AS last, count(*) AS parts FROM p)`,
		base.Ident(), token, strings.Join(cond, " AND "))
}

// ViewRowsSQL reads a page of the live rows of view t on a shard, for a
// repair's search for rows their base does not define: the rows after
// ctid $1 (tid), at most $2 (bigint), each with its ctid, as json, its
// token, the token of its base partition and its newest write time.
// Expiries compare with $3 (integer, the time in epoch seconds).
func (t *Table) ViewRowsSQL(base *Table) string {
	newest := []string{qual("v", RowWritetimeColumn), qual("v", DeletedColumn)}
	for _, c := range t.Columns {
		if c.Kind == Regular {
			newest = append(newest, qual("v", c.WritetimeColumn()))
		}
	}
	if t.HasBaseCells() {
		newest = append(newest, fmt.Sprintf("(SELECT max((e.value->>0)::bigint) FROM jsonb_each(%s) AS e)", qual("v", BaseCellsColumn)))
	}
	return fmt.Sprintf(`SELECT v.ctid::text, row_to_json(v.*)::text, v."_token", %s, GREATEST(%s)
FROM %s AS v WHERE v.ctid > $1::tid AND (%s) ORDER BY v.ctid LIMIT $2::bigint`,
		t.baseTokenSQL(base, "v"), strings.Join(newest, ", "), t.Ident(), t.viewRowLiveSQL("v", "$3::integer"))
}

// baseTokenSQL is the token of the base partition of the row alias of
// view t.
func (t *Table) baseTokenSQL(base *Table, alias string) string {
	if t.samePartitionKey(base) {
		return qual(alias, TokenColumn)
	}
	var parts []string
	for _, c := range base.PartitionKey {
		kb, _ := KeyBytesSQL(c.Type, qual(alias, c.PGName))
		parts = append(parts, kb)
	}
	return fmt.Sprintf("cqlpg.token(cqlpg.partition_key(%s))", strings.Join(parts, ", "))
}

// CheckViewRepair reports why a repair cannot look for view rows that
// their base does not define: a base partition key whose token SQL
// cannot compute, where the view's partition key is another.
func (t *Table) CheckViewRepair(base *Table) error {
	if t.samePartitionKey(base) {
		return nil
	}
	for _, c := range base.PartitionKey {
		if _, ok := KeyBytesSQL(c.Type, "x"); !ok {
			return fmt.Errorf("base partition key column %s of type %s is not a scalar", c.Name, c.Type)
		}
	}
	return nil
}

// viewRowLiveSQL is the condition for row alias of view t to be live
// at now, as reads see it.
func (t *Table) viewRowLiveSQL(alias, now string) string {
	or := []string{fmt.Sprintf("(%s IS NOT NULL AND (%[2]s IS NULL OR %[2]s > %s))",
		qual(alias, RowWritetimeColumn), qual(alias, RowExpiryColumn), now)}
	if !t.StrictLiveness() {
		for _, c := range t.Columns {
			if c.Kind == Regular {
				or = append(or, fmt.Sprintf("(%s AND (%s IS NULL OR %[2]s > %s))", cellHoldsSQL(c, alias), qual(alias, c.ExpiryColumn()), now))
			}
		}
	}
	if t.HasBaseCells() {
		or = append(or, fmt.Sprintf("cqlpg.view_cells_live(%s, %s)", qual(alias, BaseCellsColumn), now))
	}
	return strings.Join(or, " OR ")
}

// ViewUndefinedSQL returns, run on a replica of the base partitions of
// view rows ($1, a json array of rows as ViewRowsSQL gives them), the
// positions (from 1) of the rows that no live base row there defines;
// $2 is the time in epoch seconds, $3 on the values of the view's filters.
func (t *Table) ViewUndefinedSQL(base *Table) string {
	match := []string{fmt.Sprintf(`b."_token" = %s`, t.baseTokenSQL(base, "v"))}
	for _, c := range base.KeyColumns() {
		match = append(match, fmt.Sprintf("%s = %s", qual("b", c.PGName), qual("v", c.PGName)))
	}
	live := fmt.Sprintf(`(b."_row_wt" IS NOT NULL AND (b."_row_exp" IS NULL OR b."_row_exp" > $2::integer))`)
	var cells []string
	for _, c := range base.Columns {
		if c.Kind == Regular {
			cells = append(cells, fmt.Sprintf("(%s AND (%s IS NULL OR %[2]s > $2::integer))", cellHoldsSQL(c, "b"), qual("b", c.ExpiryColumn())))
		}
	}
	if len(cells) > 0 {
		live = "(" + live + " OR " + strings.Join(cells, " OR ") + ")"
	}
	if k := t.View.KeyColumn; k != "" {
		c := base.Column(k)
		live = fmt.Sprintf("%s = %s AND (%s IS NULL OR %[3]s > $2::integer)", qual("b", c.PGName), qual("v", c.PGName), qual("b", c.ExpiryColumn()))
	}
	for i, f := range t.View.Filters {
		op := f.Op
		if op == "!=" {
			op = "<>"
		}
		live += fmt.Sprintf(" AND %s %s $%d", qual("b", base.Column(f.Column).SortColumn()), op, i+3)
	}
	return fmt.Sprintf(`SELECT e.o FROM json_array_elements($1::json) WITH ORDINALITY AS e(j, o),
    LATERAL json_populate_record(NULL::%s, e.j) AS v
WHERE NOT EXISTS (SELECT FROM %s AS b WHERE %s AND %s)`,
		t.Ident(), base.Ident(), strings.Join(match, " AND "), live)
}

// ViewBuildsSQL lists a shard's view builds: keyspace, view, status, the
// whether every base row is logged, the next token and the rows logged
// so far. A build counts as done (SUCCESS) once its updates have left the
// log too.
const ViewBuildsSQL = `SELECT b.keyspace_name, b.view_name,
    CASE WHEN b.status = 'SUCCESS' AND NOT EXISTS (SELECT FROM cqlpg.view_log AS l
        WHERE l.keyspace_name = b.keyspace_name AND l.view_name = b.view_name) THEN 'SUCCESS' ELSE 'STARTED' END,
    b.status = 'SUCCESS', coalesce(b.next_token, -9223372036854775808), b.rows_done
FROM cqlpg.view_builds AS b`

// ViewBuildLockSQL locks a view build of the shard for the one gateway
// moving it on, returning where it stands; another gateway gets no row.
const ViewBuildLockSQL = `SELECT coalesce(next_token, -9223372036854775808) FROM cqlpg.view_builds
WHERE keyspace_name = $1 AND view_name = $2 AND status = 'STARTED' FOR UPDATE SKIP LOCKED`
