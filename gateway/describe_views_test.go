package gateway_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/jackc/pgx/v5"
)

// describeCreate returns the create_statement DESCRIBE TABLE gives for a
// table.
func describeCreate(t *testing.T, cql string) string {
	t.Helper()
	var ks, typ, name, create string
	if err := session(t, "").Query(cql).Scan(&ks, &typ, &name, &create); err != nil {
		t.Fatalf("%s: %v", cql, err)
	}
	return create
}

// TestTableComment checks that every CQL table's Postgres table carries
// its CQL definition, as DESCRIBE TABLE prints it, as its comment on every
// shard, and that each kind of ALTER TABLE and CREATE INDEX keeps it
// current.
func TestTableComment(t *testing.T) {
	sess := sessionAll(t, "")
	exec(t, sess,
		"DROP KEYSPACE IF EXISTS comment_ks",
		"CREATE KEYSPACE comment_ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}",
		"CREATE TABLE comment_ks.t (k int, c text, s int static, v int, PRIMARY KEY (k, c)) WITH CLUSTERING ORDER BY (c DESC)")
	check := func(when string) {
		t.Helper()
		want := describeCreate(t, "DESCRIBE TABLE comment_ks.t")
		for i, comment := range onEveryShard(t, `SELECT obj_description('comment_ks.t'::regclass, 'pg_class')`) {
			if len(comment) != 1 || comment[0] != want {
				t.Errorf("%s: shard %d's comment:\n%s\nwant:\n%s", when, i, comment, want)
			}
		}
	}
	check("after CREATE TABLE")
	for _, alter := range []string{
		"ALTER TABLE comment_ks.t ADD w text",
		"ALTER TABLE comment_ks.t DROP v",
		"ALTER TABLE comment_ks.t RENAME k TO id",
		"ALTER TABLE comment_ks.t WITH comment = 'renamed' AND gc_grace_seconds = 10",
	} {
		exec(t, sess, alter)
		check("after " + alter)
	}
	comment := pgQuery(t, `SELECT obj_description('comment_ks.t'::regclass, 'pg_class')`)
	if len(comment) != 1 || !strings.Contains(comment[0], "    id int,\n") || !strings.Contains(comment[0], "    w text,\n") ||
		strings.Contains(comment[0], " v int") || !strings.Contains(comment[0], "AND comment = 'renamed'") ||
		!strings.Contains(comment[0], "AND gc_grace_seconds = 10\n") {
		t.Errorf("comment after ALTER:\n%s", comment)
	}

	// Every table the gateway has created so far carries its definition,
	// a materialized view's its own.
	missing := pgQuery(t, `SELECT t.keyspace_name || '.' || t.table_name FROM cqlpg.tables t
		JOIN cqlpg.keyspaces k USING (keyspace_name)
		WHERE coalesce(obj_description(to_regclass(format('%I.%I', k.pg_schema, t.table_name)), 'pg_class'), '')
		      NOT LIKE CASE WHEN EXISTS (SELECT FROM cqlpg.views v WHERE v.keyspace_name = t.keyspace_name AND v.view_name = t.table_name)
		      THEN 'CREATE MATERIALIZED VIEW %' ELSE 'CREATE TABLE %' END`)
	if len(missing) > 0 {
		t.Errorf("tables without their CQL definition as comment: %q", missing)
	}
}

// TestViews reads the operators' views of migration 0011 on a shard, as
// psql would.
func TestViews(t *testing.T) {
	sess := sessionAll(t, "")
	exec(t, sess,
		"DROP KEYSPACE IF EXISTS views_ks",
		"CREATE KEYSPACE views_ks WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 3} AND durable_writes = false",
		"CREATE TABLE views_ks.readings (sensor text, at timestamp, region text static, value double, tags set<text>, PRIMARY KEY (sensor, at))")
	for i := range 20 {
		exec(t, sess, fmt.Sprintf("INSERT INTO views_ks.readings (sensor, at, value) VALUES ('s%d', %d, %d.5)", i%4, i, i))
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, shardURLs[0])
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	row := func(sql string, args ...any) string {
		t.Helper()
		rows, err := conn.Query(ctx, sql, args...)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		var out []string
		for rows.Next() {
			vals, err := rows.Values()
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, strings.TrimSuffix(fmt.Sprintln(vals...), "\n"))
		}
		if err := rows.Err(); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		return strings.Join(out, "\n")
	}

	// Each view says what it shows.
	for _, v := range []string{"keyspace_list", "table_list", "column_list", "ring", "hints_pending", "role_list"} {
		if c := row(`SELECT coalesce(obj_description(('cqlpg.' || $1)::regclass, 'pg_class'), '')`, v); c == "" {
			t.Errorf("view cqlpg.%s has no comment", v)
		}
	}

	if got, want := row(`SELECT replication_class, replication_options::text, durable_writes, pg_schema, tables
		FROM cqlpg.keyspace_list WHERE keyspace_name = 'views_ks'`), `NetworkTopologyStrategy {"datacenter1": "3"} false views_ks 1`; got != want {
		t.Errorf("keyspace_list: %q, want %q", got, want)
	}

	if _, err := conn.Exec(ctx, "ANALYZE views_ks.readings"); err != nil {
		t.Fatal(err)
	}
	create := describeCreate(t, "DESCRIBE TABLE views_ks.readings")
	var pgTable, definition string
	var estimate, bytes int64
	if err := conn.QueryRow(ctx, `SELECT pg_table, row_estimate, total_bytes, cql_definition FROM cqlpg.table_list
		WHERE keyspace_name = 'views_ks' AND table_name = 'readings'`).Scan(&pgTable, &estimate, &bytes, &definition); err != nil {
		t.Fatal(err)
	}
	if pgTable != "views_ks.readings" || estimate != 20 || bytes <= 0 || definition != create {
		t.Errorf("table_list: %s, %d rows, %d bytes, definition:\n%s\nwant:\n%s", pgTable, estimate, bytes, definition, create)
	}
	// The estimate counts the rows a plain SELECT finds.
	if n := row(`SELECT count(*) FROM views_ks.readings`); n != "20" {
		t.Errorf("views_ks.readings has %s rows", n)
	}

	if got, want := row(`SELECT column_name, kind, position, cql_type, clustering_order, pg_table, pg_column, pg_type
		FROM cqlpg.column_list WHERE keyspace_name = 'views_ks' AND table_name = 'readings' ORDER BY column_name`),
		strings.Join([]string{
			"at clustering 0 timestamp asc views_ks.readings at timestamp with time zone",
			"region static -1 text none views_ks.\"readings$static\" region text",
			"sensor partition_key 0 text none views_ks.readings sensor text",
			"tags regular -1 set<text> none views_ks.readings tags text[]",
			"value regular -1 double none views_ks.readings value double precision",
		}, "\n"); got != want {
		t.Errorf("column_list:\n%s\nwant:\n%s", got, want)
	}

	// The ring: every member's tokens, each range starting at the token
	// before it on the ring, the first at the last.
	owner := map[int64]string{}
	members, _, err := pgschema.LoadMembers(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range members {
		for _, tok := range m.Tokens {
			owner[tok] = m.Name
		}
	}
	rows, err := conn.Query(ctx, "SELECT shard, start_token, end_token FROM cqlpg.ring ORDER BY end_token")
	if err != nil {
		t.Fatal(err)
	}
	var ends []int64
	var prev *int64
	n := 0
	for rows.Next() {
		var shard string
		var start, end int64
		if err := rows.Scan(&shard, &start, &end); err != nil {
			t.Fatal(err)
		}
		if owner[end] != shard || prev != nil && start != *prev || start == end && len(owner) > 1 {
			t.Errorf("ring row %d: %s (%d, %d]", n, shard, start, end)
		}
		if n == 0 && len(owner) > 1 && start < end {
			t.Errorf("first range (%d, %d] does not wrap round", start, end)
		}
		ends = append(ends, end)
		prev = &end
		n++
	}
	if rows.Err() != nil || len(ends) != len(owner) || len(members) != len(shardURLs) {
		t.Errorf("ring has %d ranges for %d tokens of %d members (%v)", len(ends), len(owner), len(members), rows.Err())
	}

	// Hints and roles, written and read back in a transaction that is
	// then rolled back, so that no gateway replays or loads them.
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `INSERT INTO cqlpg.hints (target, written_at, replay_until, mutation) VALUES
		('11111111-1111-1111-1111-111111111111', '2026-01-01T00:00:00Z', '2026-01-02T00:00:00Z', '\x0102'),
		('11111111-1111-1111-1111-111111111111', '2026-01-03T00:00:00Z', now() + interval '1 day', '\x010203'),
		('22222222-2222-2222-2222-222222222222', '2026-01-02T00:00:00Z', now() + interval '1 day', '\x01')`); err != nil {
		t.Fatal(err)
	}
	var hints []string
	hr, err := tx.Query(ctx, `SELECT target_host_id::text, hints, to_char(oldest AT TIME ZONE 'UTC', 'YYYY-MM-DD'),
		to_char(newest AT TIME ZONE 'UTC', 'YYYY-MM-DD'), expired, bytes FROM cqlpg.hints_pending ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	for hr.Next() {
		var target, oldest, newest string
		var count, expired, size int64
		if err := hr.Scan(&target, &count, &oldest, &newest, &expired, &size); err != nil {
			t.Fatal(err)
		}
		hints = append(hints, strings.TrimSpace(fmt.Sprintln(target, count, oldest, newest, expired, size)))
	}
	if got, want := strings.Join(hints, "\n"), "11111111-1111-1111-1111-111111111111 2 2026-01-01 2026-01-03 1 5\n"+
		"22222222-2222-2222-2222-222222222222 1 2026-01-02 2026-01-02 0 1"; got != want {
		t.Errorf("hints_pending:\n%s\nwant:\n%s", got, want)
	}

	if _, err := tx.Exec(ctx, `INSERT INTO cqlpg.roles (role, is_superuser, can_login, salted_hash, member_of) VALUES
		('views_admin', true, true, cqlpg.password_hash('secret'), '{}'), ('views_reader', false, false, null, '{views_admin}')`); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO cqlpg.role_permissions (role, resource, permissions) VALUES
		('views_reader', 'data/views_ks', '{SELECT}'), ('views_reader', 'data', '{DESCRIBE}')`); err != nil {
		t.Fatal(err)
	}
	var roles []string
	rr, err := tx.Query(ctx, `SELECT role, is_superuser, can_login, has_password, member_of::text, permissions::text
		FROM cqlpg.role_list WHERE role LIKE 'views_%' ORDER BY role`)
	if err != nil {
		t.Fatal(err)
	}
	for rr.Next() {
		var role, member, perms string
		var super, login, pw bool
		if err := rr.Scan(&role, &super, &login, &pw, &member, &perms); err != nil {
			t.Fatal(err)
		}
		roles = append(roles, strings.TrimSpace(fmt.Sprintln(role, super, login, pw, member, perms)))
	}
	if got, want := strings.Join(roles, "\n"), "views_admin true true true {} {}\n"+
		`views_reader false false false {views_admin} {"data": ["DESCRIBE"], "data/views_ks": ["SELECT"]}`; got != want {
		t.Errorf("role_list:\n%s\nwant:\n%s", got, want)
	}
	for _, c := range pgQuery(t, `SELECT attname FROM pg_attribute WHERE attrelid = 'cqlpg.role_list'::regclass AND attnum > 0`) {
		if strings.Contains(c, "hash") || strings.Contains(c, "salt") {
			t.Errorf("role_list shows %s", c)
		}
	}
}
