package pgschema_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cqlpg/cqlpg/migrations"
	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/sharding"
)

// benchUpsert is the upsert the gateway sends for INSERT INTO t (k, v):
// token and key, the cell with its write time, the row marker, each kept
// only if it wins by Cassandra's rules.
const benchUpsert = `INSERT INTO sqlw_bench.%s AS t (_token, k, v, "v$wt", "v$exp", _row_wt, _row_exp)
VALUES ($1, $2, $3, $4, NULL, $4, NULL)
ON CONFLICT (_token, k) DO UPDATE SET
    v = CASE WHEN cqlpg.cell_wins(excluded."v$wt", excluded."v$exp", excluded.v IS NULL, textsend(excluded.v), t."v$wt", t."v$exp", t.v IS NULL, textsend(t.v), t._del_wt) THEN excluded.v ELSE t.v END,
    "v$wt" = CASE WHEN cqlpg.cell_wins(excluded."v$wt", excluded."v$exp", excluded.v IS NULL, textsend(excluded.v), t."v$wt", t."v$exp", t.v IS NULL, textsend(t.v), t._del_wt) THEN excluded."v$wt" ELSE t."v$wt" END,
    "v$exp" = CASE WHEN cqlpg.cell_wins(excluded."v$wt", excluded."v$exp", excluded.v IS NULL, textsend(excluded.v), t."v$wt", t."v$exp", t.v IS NULL, textsend(t.v), t._del_wt) THEN excluded."v$exp" ELSE t."v$exp" END,
    _row_wt = CASE WHEN cqlpg.cell_wins(excluded._row_wt, excluded._row_exp, false, NULL, t._row_wt, t._row_exp, false, NULL, t._del_wt) THEN excluded._row_wt ELSE t._row_wt END,
    _row_exp = CASE WHEN cqlpg.cell_wins(excluded._row_wt, excluded._row_exp, false, NULL, t._row_wt, t._row_exp, false, NULL, t._del_wt) THEN excluded._row_exp ELSE t._row_exp END`

// benchUpsertRows is the same upsert of 1000 rows in one statement, which
// leaves out the round trip and shows the cost per row on the server.
// The tokens are made up: no read needs to find these rows.
const benchUpsertRows = `INSERT INTO sqlw_bench.%s AS t (_token, k, v, "v$wt", "v$exp", _row_wt, _row_exp)
SELECT g * 7919, g, 'value', $1::bigint + g, NULL, $1::bigint + g, NULL FROM generate_series(1, 1000) AS g
ON CONFLICT (_token, k) DO UPDATE SET
    v = CASE WHEN cqlpg.cell_wins(excluded."v$wt", excluded."v$exp", excluded.v IS NULL, textsend(excluded.v), t."v$wt", t."v$exp", t.v IS NULL, textsend(t.v), t._del_wt) THEN excluded.v ELSE t.v END,
    "v$wt" = CASE WHEN cqlpg.cell_wins(excluded."v$wt", excluded."v$exp", excluded.v IS NULL, textsend(excluded.v), t."v$wt", t."v$exp", t.v IS NULL, textsend(t.v), t._del_wt) THEN excluded."v$wt" ELSE t."v$wt" END,
    _row_wt = CASE WHEN cqlpg.cell_wins(excluded._row_wt, excluded._row_exp, false, NULL, t._row_wt, t._row_exp, false, NULL, t._del_wt) THEN excluded._row_wt ELSE t._row_wt END`

// BenchmarkSQLWriteTrigger measures what the trigger for plain SQL writes
// costs the gateway's writes, which its WHEN clause skips: each iteration
// writes the same row to a table with the trigger and to one with it
// disabled, in alternating order, and reports the time of each
// (µs/op-trigger, µs/op-none), so that the machine's noise falls on both.
// The writes made with SQL, which the trigger completes, come last.
//
//	go test ./pgschema -run '^$' -bench SQLWriteTrigger
func BenchmarkSQLWriteTrigger(b *testing.B) {
	ctx := context.Background()
	if err := migrations.Up(ctx, shardURL); err != nil {
		b.Fatal(err)
	}
	plain, err := pgx.Connect(ctx, shardURL)
	if err != nil {
		b.Fatal(err)
	}
	defer plain.Close(ctx)
	cfg, err := pgx.ParseConfig(shardURL)
	if err != nil {
		b.Fatal(err)
	}
	cfg.RuntimeParams[pgschema.WriterSetting] = pgschema.GatewayWriter
	gw, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer gw.Close(ctx)
	if _, err := plain.Exec(ctx, `DROP SCHEMA IF EXISTS sqlw_bench CASCADE; DELETE FROM cqlpg.keyspaces WHERE keyspace_name = 'sqlw_bench'`); err != nil {
		b.Fatal(err)
	}
	for _, name := range []string{"t", "n"} {
		createSQLWTable(b, plain, "sqlw_bench", name, []*pgschema.Column{
			{Name: "k", Type: pgschema.Scalar(pgschema.Int), Kind: pgschema.PartitionKey},
			{Name: "v", Type: pgschema.Scalar(pgschema.Text), Kind: pgschema.Regular},
		})
	}
	if _, err := plain.Exec(ctx, `ALTER TABLE sqlw_bench.n DISABLE TRIGGER `+pgschema.SQLWriteTrigger); err != nil {
		b.Fatal(err)
	}
	const keys = 10000
	tokens := make([]int64, keys)
	for k := range tokens {
		tokens[k] = int64(sharding.KeyToken([][]byte{int4(k)}))
	}
	wt := time.Now().UnixMicro()
	// both runs write(table) on t and n, in alternating order, and reports
	// the mean time of each.
	both := func(b *testing.B, per float64, write func(table string) error) {
		var spent [2]time.Duration
		for i := 0; b.Loop(); i++ {
			for j := range 2 {
				which := (i + j) % 2
				start := time.Now()
				if err := write([]string{"t", "n"}[which]); err != nil {
					b.Fatal(err)
				}
				spent[which] += time.Since(start)
			}
		}
		b.ReportMetric(float64(spent[0].Microseconds())/float64(b.N)/per, "µs/op-trigger")
		b.ReportMetric(float64(spent[1].Microseconds())/float64(b.N)/per, "µs/op-none")
	}
	b.Run("gateway upsert", func(b *testing.B) {
		i := 0
		both(b, 1, func(table string) error {
			i++
			wt++
			_, err := gw.Exec(ctx, fmt.Sprintf(benchUpsert, table), tokens[i/2%keys], i/2%keys, "value", wt)
			return err
		})
	})
	b.Run("gateway upsert per row of 1000", func(b *testing.B) {
		both(b, 1000, func(table string) error {
			wt += 1000
			_, err := gw.Exec(ctx, fmt.Sprintf(benchUpsertRows, table), wt)
			return err
		})
	})

	b.Run("sql update", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			if _, err := plain.Exec(ctx, `UPDATE sqlw_bench.t SET v = $1 WHERE _token = $2 AND k = $3`,
				fmt.Sprint(i), tokens[i%keys], i%keys); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("sql insert", func(b *testing.B) {
		if _, err := plain.Exec(ctx, `TRUNCATE sqlw_bench.t`); err != nil {
			b.Fatal(err)
		}
		for i := 0; b.Loop(); i++ {
			if _, err := plain.Exec(ctx, `INSERT INTO sqlw_bench.t (k, v) VALUES ($1, 'value')`, i); err != nil {
				b.Fatal(err)
			}
		}
	})
}
