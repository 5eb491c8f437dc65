package gateway_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cqlpg/cqlpg/gateway"
	"github.com/cqlpg/cqlpg/gateway/cluster"
	"github.com/cqlpg/cqlpg/sharding/localpg"
)

// TestLeastPrivilege runs the gocql driver suite through a gateway whose
// shards it reaches as a role that is no superuser: it may create schemas
// in the database, and owns what it creates; an administrator installed
// the extensions. A role without CREATE on the database is refused at
// start with an error naming the privilege and the grant.
func TestLeastPrivilege(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	clusters := tempShards(t, 3, localpg.Options{})
	var urls, bareURLs []string
	for _, pg := range clusters {
		conn, err := pgx.Connect(ctx, pg.URL())
		if err != nil {
			t.Fatal(err)
		}
		db := pgx.Identifier{pg.Database()}.Sanitize()
		for _, q := range []string{
			"CREATE ROLE cqlpg_app LOGIN", "GRANT CREATE ON DATABASE " + db + " TO cqlpg_app",
			"CREATE ROLE cqlpg_bare LOGIN",
			"CREATE EXTENSION IF NOT EXISTS unaccent",
		} {
			if _, err := conn.Exec(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		conn.Close(ctx)
		urls = append(urls, strings.Replace(pg.URL(), "user="+localpg.Superuser, "user=cqlpg_app", 1))
		bareURLs = append(bareURLs, strings.Replace(pg.URL(), "user="+localpg.Superuser, "user=cqlpg_bare", 1))
	}

	// Without CREATE on the database, the catalog cannot be made.
	cfg := gateway.Config{Listen: "127.0.0.1:0", Log: testLogger(), Shards: []cluster.ShardConfig{{URL: bareURLs[0]}}}
	if s, err := gateway.New(ctx, cfg); err == nil {
		s.Shutdown(ctx)
		t.Error("a gateway started as a role that may not create schemas")
	} else if want := `shard 0: the shard's role "cqlpg_bare" lacks a privilege the catalog needs: permission denied for database ` +
		clusters[0].Database() + ` (SQLSTATE 42501); it needs CREATE on database "` + clusters[0].Database() +
		`" (GRANT CREATE ON DATABASE "` + clusters[0].Database() + `" TO "cqlpg_bare")`; !strings.Contains(err.Error(), want) {
		t.Errorf("a role without CREATE on the database: %v\nwant it to say %s", err, want)
	}

	s := startGatewayWith(t, func(c *gateway.Config) {
		c.Shards = nil
		for _, u := range urls {
			c.Shards = append(c.Shards, cluster.ShardConfig{URL: u})
		}
	})
	t.Cleanup(func() { s.Shutdown(context.Background()) })
	gocqlSuite(t, s)

	// Everything cqlpg made on the shards is the role's.
	conn, err := pgx.Connect(ctx, clusters[0].URL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var others []string
	rows, err := conn.Query(ctx, `SELECT nspname || ' ' || pg_get_userbyid(nspowner) FROM pg_namespace
		WHERE nspname NOT LIKE 'pg\_%' AND nspname NOT IN ('information_schema', 'public') AND pg_get_userbyid(nspowner) <> 'cqlpg_app'`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var s string
		rows.Scan(&s)
		others = append(others, s)
	}
	if len(others) > 0 {
		t.Errorf("schemas not owned by cqlpg_app: %q", others)
	}
}
