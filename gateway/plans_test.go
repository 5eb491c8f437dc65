package gateway_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/cqlpg/cqlpg/pgschema"
)

// TestPagedReadsKeepKeyOrder checks the plans Postgres makes for the
// gateway's page reads of a table loaded and never analyzed, as after a
// bulk load: its statistics say the table is empty, and a plain session
// reads a page of a scan by collecting and sorting every row. The
// gateway's sessions read the key index in order and stop at the page's
// end.
func TestPagedReadsKeepKeyOrder(t *testing.T) {
	sess := session(t, "")
	exec(t, sess,
		"CREATE KEYSPACE plans WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE plans.t (k int, c int, v int, PRIMARY KEY (k, c))")
	table, col := storedTable(t, "plans", "t")
	onEveryShard(t, "ALTER TABLE "+table+" SET (autovacuum_enabled = false)")
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := w; i < 20000; i += 8 {
				if err := sess.Query("INSERT INTO plans.t (k, c, v) VALUES (?, ?, ?)", i%4, i, i).Exec(); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	// A scan's page, as the gateway reads it (translate's range read).
	query := fmt.Sprintf("EXPLAIN SELECT %[2]s, %[3]s FROM %[1]s AS r WHERE r.%[4]s > -9223372036854775808 AND r.%[4]s <= 9223372036854775807 "+
		"ORDER BY r.%[4]s, r.%[2]s, r.%[3]s LIMIT 5001", table, col("k"), col("c"), pgschema.TokenColumn)
	plan := func(url string) string {
		t.Helper()
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		var n int
		if err := conn.QueryRow(ctx, "SELECT count(*) FROM "+table).Scan(&n); err != nil || n == 0 {
			return "" // a shard without rows plans anything cheaply
		}
		rows, err := conn.Query(ctx, query)
		if err != nil {
			t.Fatal(err)
		}
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		return strings.Join(lines, "\n")
	}
	planned := 0
	for _, url := range shardURLs {
		plain := plan(url)
		if plain == "" {
			continue
		}
		planned++
		t.Logf("a plain session's plan:\n%s", plain)
		if p := plan(pgschema.GatewayConnString(url)); strings.Contains(p, "Sort") || strings.Contains(p, "Bitmap") ||
			!strings.Contains(p, "Index") {
			t.Errorf("the gateway's session plans a page of the scan as\n%s\nwant the key index read in order", p)
		}
	}
	if planned == 0 {
		t.Fatal("no shard holds the rows")
	}
}
