package gateway_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cqlpg/cqlpg/gateway"
	"github.com/cqlpg/cqlpg/gateway/cluster"
	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/sharding/localpg"
)

// TestCopyCatalog gives a new shard the cluster's catalog, as a shard
// joining the cluster takes it: user types nesting types, tables with
// static and DESC clustering columns, collections, a column dropped (its
// cells set aside) and one dropped and added back, secondary indexes of
// every kind, materialized views (one sorting before its base), a user
// function and aggregate, roles and permissions. The new shard then describes the
// same schema, holds the same relations with the same columns and index
// definitions, and the same roles; a second copy is refused.
func TestCopyCatalog(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sess := session(t, "")
	exec(t, sess,
		"CREATE KEYSPACE copyks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 2}",
		"CREATE TYPE copyks.point (x int, y int)",
		"CREATE TYPE copyks.shape (name text, points frozen<list<frozen<point>>>)",
		`CREATE TABLE copyks.t (k int, "C" int, s text STATIC, v text, gone int, back text, m map<text, int>,
			f frozen<set<int>>, sh frozen<shape>, PRIMARY KEY (k, "C")) WITH CLUSTERING ORDER BY ("C" DESC)
			AND comment = 'copied'`,
		"CREATE INDEX t_v ON copyks.t (v)",
		"CREATE INDEX t_keys ON copyks.t (keys(m))",
		"CREATE INDEX t_full ON copyks.t (full(f))",
		`CREATE INDEX t_c ON copyks.t ("C")`,
		"ALTER TABLE copyks.t DROP gone",
		"ALTER TABLE copyks.t DROP back",
		"ALTER TABLE copyks.t ADD back text",
		"CREATE TABLE copyks.plain (k text PRIMARY KEY, v blob)",
		`CREATE MATERIALIZED VIEW copyks.a_view AS SELECT k, "C", v FROM copyks.t
			WHERE v IS NOT NULL AND k IS NOT NULL AND "C" IS NOT NULL PRIMARY KEY (v, k, "C")`,
		`CREATE MATERIALIZED VIEW copyks.b_view AS SELECT k, "C" FROM copyks.t
			WHERE k IS NOT NULL AND "C" IS NOT NULL PRIMARY KEY ("C", k)`,
		"CREATE FUNCTION copyks.plus(s int, v int) CALLED ON NULL INPUT RETURNS int LANGUAGE java AS 'return s + v;'",
		"CREATE AGGREGATE copyks.total(int) SFUNC plus STYPE int INITCOND 0",
	)
	// This gateway runs without authentication: the role is written as
	// CREATE ROLE and GRANT would write it, on every shard.
	for _, u := range shardURLs {
		shardSQL(t, u, `INSERT INTO cqlpg.roles (role, can_login, salted_hash) VALUES ('copier', true, '$2a$10$abcdefghijklmnopqrstuu5UrDXJc1Nq0K6e0e9oW4MOwTlpxNfVW')`,
			`INSERT INTO cqlpg.role_permissions (role, resource, permissions) VALUES ('copier', 'data/copyks', '{SELECT}')`)
	}
	t.Cleanup(func() {
		exec(t, sess, "DROP KEYSPACE IF EXISTS copyks")
		for _, u := range shardURLs {
			shardSQL(t, u, `DELETE FROM cqlpg.role_permissions WHERE role = 'copier'`, `DELETE FROM cqlpg.roles WHERE role = 'copier'`)
		}
	})

	// The views' builds end (in the background) before the copy, which
	// records them built.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		var n int
		if err := sess.Query("SELECT count(*) FROM system.built_views WHERE keyspace_name = 'copyks'").Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("views not built after 20 s")
		}
	}
	clusters, stop, err := localpg.TempClusters(ctx, 1, localpg.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	cfg := gateway.Config{Log: testLogger()}
	for _, u := range shardURLs {
		cfg.Shards = append(cfg.Shards, cluster.ShardConfig{URL: u})
	}
	c, err := gateway.OpenCluster(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.CopyCatalog(ctx, clusters[0].URL()); err != nil {
		t.Fatal(err)
	}

	from, to := catalogOf(t, ctx, shardURLs[0]), catalogOf(t, ctx, clusters[0].URL())
	for _, part := range []string{"schema", "layout", "roles", "version", "views"} {
		if from[part] != to[part] {
			t.Errorf("the copy's %s differs:\n--- cluster\n%s\n--- copy\n%s", part, from[part], to[part])
		}
	}
	for _, want := range []string{`"C" int`, "points frozen<list<frozen<point>>>", "t_full", "keys(m)", "gone$", "copier",
		"CREATE MATERIALIZED VIEW copyks.a_view", "cqlpg_views", "_base_cells", "b_view SUCCESS",
		"CREATE FUNCTION copyks.plus(s int, v int)", "CREATE AGGREGATE copyks.total(int)"} {
		if !strings.Contains(from["schema"]+from["layout"]+from["roles"]+from["views"], want) {
			t.Errorf("the catalog compared lacks %q: the test proves less than it says", want)
		}
	}
	if err := c.CopyCatalog(ctx, clusters[0].URL()); err == nil || !strings.Contains(err.Error(), "already holds") {
		t.Errorf("a second copy: %v, want a refusal", err)
	}
}

// catalogOf returns a shard's user schema as DESCRIBE shows it, the
// relations of its keyspace schemas as cqlpg.layout records them, its
// roles and permissions, and its schema version.
func catalogOf(t *testing.T, ctx context.Context, url string) map[string]string {
	t.Helper()
	conn, err := pgx.Connect(ctx, pgschema.GatewayConnString(url))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	s, err := pgschema.Load(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	var b strings.Builder
	for _, ks := range s.Keyspaces() {
		if ks.Virtual || pgschema.IsSystemKeyspace(ks.Name) {
			continue
		}
		for _, e := range pgschema.KeyspaceElements(ks, false, true) {
			fmt.Fprintf(&b, "%+v\n", e)
		}
	}
	out["schema"] = b.String()
	query := func(name, sql string) {
		rows, err := conn.Query(ctx, sql)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for rows.Next() {
			vals, err := rows.Values()
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintln(&b, vals...)
		}
		if rows.Err() != nil {
			t.Fatal(rows.Err())
		}
		out[name] = b.String()
	}
	query("layout", `SELECT l.pg_schema, l.relname, l.relkind, l.columns::text, l.indexdef FROM cqlpg.layout l
		JOIN cqlpg.keyspaces k ON k.pg_schema = l.pg_schema ORDER BY 1, 2`)
	query("roles", `SELECT r.role, r.is_superuser, r.can_login, r.salted_hash, r.member_of, p.resource, p.permissions
		FROM cqlpg.roles r LEFT JOIN cqlpg.role_permissions p USING (role) ORDER BY 1, 6`)
	query("version", `SELECT version FROM cqlpg.schema_version`)
	query("views", `SELECT v.view_name, b.status, v.base_table_name, v.where_clause, v.key_column, g.tgname, g.tgfoid::regprocedure
		FROM cqlpg.views v JOIN cqlpg.view_builds b USING (keyspace_name, view_name)
		JOIN pg_trigger g ON g.tgrelid = (quote_ident(v.keyspace_name) || '.' || quote_ident(v.base_table_name))::regclass
		WHERE NOT g.tgisinternal AND g.tgname = 'cqlpg_views' ORDER BY 1`)
	return out
}
