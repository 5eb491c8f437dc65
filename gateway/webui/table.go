package webui

import (
	"context"
	"errors"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/sharding"
	"github.com/cqlpg/cqlpg/sharding/shellquote"
)

// tablePage is the table layout page's view: the CQL definition beside
// what Postgres holds on each shard.
type tablePage struct {
	Tables  []uiTableRef
	Chosen  string
	Table   *pgschema.Table
	CQL     string
	Columns []layoutColumn
	Shards  []shardLayout
	// CountsHidden is set when the role may not SELECT the table, whose
	// row counts are then not shown.
	CountsHidden bool
	// ExactHref asks for the page with every table counted exactly.
	ExactHref string
}

// layoutColumn maps a CQL column to its Postgres column.
type layoutColumn struct {
	Name, Type, Role string
	PGName           string
	// PGType is the Postgres type on the first shard that answered.
	PGType string
}

// shardLayout is what one shard holds of the table: the table itself,
// then its companion tables (statics, deletions) where it has them.
type shardLayout struct {
	*uiShard
	Schema string
	Tables []pgTable
	Psql   string
	Err    string
}

// pgTable is one Postgres table of a CQL table on one shard.
type pgTable struct {
	Name    string
	Columns []pgColumn
	Indexes []pgIndex
	// Rows counts the table's stored rows, deleted and expired rows not
	// yet swept included. When it is Postgres's estimate, Estimated says
	// why: the table is large, or counting took too long.
	Rows      int64
	Estimated string
}

// pgColumn is a Postgres column as the catalog shows it.
type pgColumn struct {
	Name, Type string
	NotNull    bool
}

// pgIndex is a Postgres index and its definition.
type pgIndex struct {
	Name, Def string
	// Key marks the index that orders the partition's rows.
	Key bool
}

// countLimits says how the layout page counts a table's rows on a shard:
// exactly, for at most timeout, unless Postgres estimates the table holds
// more than rows, where the estimate is shown unless the page asks for
// exact counts (?exact=1): a dashboard's reload should not scan a large
// table on every shard.
type countLimits struct {
	timeout time.Duration
	rows    int64
	exact   bool
}

// defaultCountLimits are the layout page's count limits.
var defaultCountLimits = countLimits{timeout: 2 * time.Second, rows: 1_000_000}

// tableView builds the table layout page.
func (q *uiRequest) tableView() (any, error) {
	page := &tablePage{Tables: uiTables(q.schema)}
	t, err := q.chosenTable()
	if err != nil || t == nil {
		return page, err
	}
	page.Table, page.CQL = t, t.Describe(false)
	page.Chosen = tableValue(t.Keyspace, t.Name)
	page.CountsHidden = !q.maySelect(t)
	for _, c := range t.Columns {
		page.Columns = append(page.Columns, layoutColumn{Name: c.Name, Type: c.Type.String(), Role: columnRole(c), PGName: c.PGName})
	}
	topo, control := q.b.Cluster().Snapshot()
	d := ringDrawing{ring: topo.Ring, up: func(i int) bool { return topo.Shards[i].Pool.Alive() }, noArcs: true}
	shards := d.draw().Shards
	page.Shards = make([]shardLayout, len(shards))
	ctx, cancel := context.WithTimeout(q.r.Context(), q.b.RequestTimeout())
	defer cancel()
	var counting *countLimits
	if !page.CountsHidden {
		limits := defaultCountLimits
		if l := q.v.countLimits.Load(); l != nil {
			limits = *l
		}
		limits.exact = q.r.URL.Query().Get("exact") != ""
		counting = &limits
		page.ExactHref = "/ui/table?" + url.Values{"ks": {t.Keyspace}, "table": {t.Name}, "exact": {"1"}}.Encode()
	}
	var wg sync.WaitGroup
	for i, sh := range shards {
		l := &page.Shards[i]
		l.uiShard, l.Schema = sh, t.PGSchema
		l.Psql = psqlCommand(topo.Shards[i].URL, t)
		if !sh.Up || i >= len(control) {
			l.Err = "down: not asked"
			continue
		}
		wg.Go(func() {
			if err := l.load(ctx, control[i], t, counting); err != nil {
				l.Err = redactError(err)
			}
		})
	}
	wg.Wait()
	for _, l := range page.Shards {
		if l.Err != "" {
			continue
		}
		for j, c := range t.Columns {
			// A static column lives in the statics table, the others in
			// the table itself.
			in := l.Tables[0]
			if c.Kind == pgschema.Static && len(l.Tables) > 1 {
				in = l.Tables[1]
			}
			for _, pc := range in.Columns {
				if pc.Name == c.PGName {
					page.Columns[j].PGType = pc.Type
				}
			}
		}
		break
	}
	return page, nil
}

// maySelect reports whether the page's role may read t's rows.
func (q *uiRequest) maySelect(t *pgschema.Table) bool { return q.b.MaySelect(q.role, t) }

// columnRole says what a column is in the primary key, with a clustering
// column's order.
func columnRole(c *pgschema.Column) string {
	switch c.Kind {
	case pgschema.PartitionKey:
		return "partition key"
	case pgschema.Clustering:
		if c.Desc {
			return "clustering DESC"
		}
		return "clustering ASC"
	case pgschema.Static:
		return "static"
	}
	return "regular"
}

// The catalog queries of the layout page. Names are bound as values.
const (
	layoutColumnsSQL = `SELECT a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull
FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = $1 AND c.relname = $2 AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`
	// The index definitions are put together from pg_index rather than
	// by pg_get_indexdef, which waits for any lock on the table (an
	// ALTER, a TRUNCATE) where the catalog rows do not.
	layoutIndexesSQL = `SELECT ic.relname, x.indisreplident,
  CASE WHEN x.indisunique THEN 'UNIQUE ' ELSE '' END || am.amname || ' (' || array_to_string(array(
    SELECT coalesce(quote_ident(a.attname), '(expression)') || CASE WHEN x.indoption[k.i] & 1 = 1 THEN ' DESC' ELSE '' END
    FROM generate_subscripts(x.indkey, 1) AS k(i)
    LEFT JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = x.indkey[k.i]
    ORDER BY k.i), ', ') || ')'
FROM pg_index x JOIN pg_class ic ON ic.oid = x.indexrelid JOIN pg_am am ON am.oid = ic.relam
JOIN pg_class c ON c.oid = x.indrelid JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = $1 AND c.relname = $2 ORDER BY x.indisreplident DESC, ic.relname`
	// reltuples is -1 for a table never vacuumed or analyzed.
	layoutEstimateSQL = `SELECT c.reltuples::bigint FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = $1 AND c.relname = $2`
)

// load reads the shard's catalog for t and its companion tables and,
// unless counting is nil, counts their rows within its limits.
func (l *shardLayout) load(ctx context.Context, db interface {
	Begin(context.Context) (pgx.Tx, error)
}, t *pgschema.Table, counting *countLimits) error {
	tx, err := db.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	// The catalog reads take no locks; the bound is a safety net.
	if _, err := tx.Exec(ctx, "SET LOCAL statement_timeout = 5000"); err != nil {
		return err
	}
	names := []string{t.PGName}
	if t.HasStatic() {
		names = append(names, t.StaticPGName())
	}
	names = append(names, t.PGName+"$deletions")
	for i, name := range names {
		pt := pgTable{Name: name}
		rows, _ := tx.Query(ctx, layoutColumnsSQL, l.Schema, name)
		pt.Columns, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (c pgColumn, err error) {
			return c, r.Scan(&c.Name, &c.Type, &c.NotNull)
		})
		if err != nil {
			return err
		}
		if len(pt.Columns) == 0 {
			if i == 0 {
				return errors.New("the table is missing on this shard")
			}
			continue // companions are created only when needed
		}
		rows, _ = tx.Query(ctx, layoutIndexesSQL, l.Schema, name)
		pt.Indexes, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (x pgIndex, err error) {
			return x, r.Scan(&x.Name, &x.Key, &x.Def)
		})
		if err != nil {
			return err
		}
		if counting != nil {
			if err := pt.count(ctx, tx, l.Schema, *counting); err != nil {
				return err
			}
		}
		l.Tables = append(l.Tables, pt)
	}
	return nil
}

// count counts the table's rows within limits, giving Postgres's
// estimate instead for a large table or a count past the timeout.
func (pt *pgTable) count(ctx context.Context, tx pgx.Tx, schema string, limits countLimits) error {
	var estimate int64
	if err := tx.QueryRow(ctx, layoutEstimateSQL, schema, pt.Name).Scan(&estimate); err != nil {
		return err
	}
	if estimate > limits.rows && !limits.exact {
		pt.Rows, pt.Estimated = estimate, "a large table"
		return nil
	}
	if _, err := tx.Exec(ctx, "SAVEPOINT count; SET LOCAL statement_timeout = "+strconv.FormatInt(max(limits.timeout.Milliseconds(), 1), 10)); err != nil {
		return err
	}
	// The names come from the catalog and are quoted as identifiers.
	err := tx.QueryRow(ctx, "SELECT count(*) FROM "+pgx.Identifier{schema, pt.Name}.Sanitize()).Scan(&pt.Rows)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "57014" { // query_canceled: the timeout
		pt.Rows, pt.Estimated, err = max(estimate, 0), "counting took too long", nil
	}
	if err != nil {
		return err
	}
	// Rolling back to the savepoint ends the count's timeout, and the
	// failed statement's transaction state.
	_, err = tx.Exec(ctx, "ROLLBACK TO SAVEPOINT count")
	return err
}

// psqlCommand is a shell command that opens the shard's database in psql
// and describes t, without the shard's password.
func psqlCommand(shardURL string, t *pgschema.Table) string {
	describe := `\d+ ` + pgx.Identifier{t.PGSchema, t.PGName}.Sanitize()
	cfg, err := pgconn.ParseConfig(shardURL)
	if err != nil {
		return "psql -c " + shellquote.Quote(describe)
	}
	args := []string{"psql", "-h", shellquote.Quote(cfg.Host), "-p", strconv.Itoa(int(cfg.Port))}
	if cfg.User != "" {
		args = append(args, "-U", shellquote.Quote(cfg.User))
	}
	if cfg.Database != "" {
		args = append(args, "-d", shellquote.Quote(cfg.Database))
	}
	return strings.Join(append(args, "-c", shellquote.Quote(describe)), " ")
}

// redactError is an error's text without connection strings or
// passwords, for the page.
func redactError(err error) string {
	return sharding.Redact(err.Error())
}
