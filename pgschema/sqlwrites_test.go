package pgschema_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/sharding"
)

// The trigger that completes rows written with plain SQL, on tables made
// by CreateTable and changed by AddColumns and DropColumns.

func sqlwColumns(t testing.TB, extra ...*pgschema.Column) []*pgschema.Column {
	cols := []*pgschema.Column{
		{Name: "k", Type: testType(t, "int"), Kind: pgschema.PartitionKey, Position: 0},
		{Name: "k2", Type: testType(t, "text"), Kind: pgschema.PartitionKey, Position: 1},
		{Name: "c", Type: testType(t, "timeuuid"), Kind: pgschema.Clustering, Position: 0},
		{Name: "c2", Type: testType(t, "double"), Kind: pgschema.Clustering, Position: 1, Desc: true},
		{Name: "v", Type: testType(t, "int"), Kind: pgschema.Regular},
		{Name: "ti", Type: testType(t, "tinyint"), Kind: pgschema.Regular},
		{Name: "s", Type: testType(t, "set<uuid>"), Kind: pgschema.Regular},
		{Name: "l", Type: testType(t, "list<int>"), Kind: pgschema.Regular},
		{Name: "ts", Type: testType(t, "timestamp"), Kind: pgschema.Regular},
		{Name: "st", Type: testType(t, "text"), Kind: pgschema.Static},
	}
	return append(cols, extra...)
}

func createSQLWTable(t testing.TB, conn *pgx.Conn, ks, name string, cols []*pgschema.Column) *pgschema.Table {
	t.Helper()
	ctx := context.Background()
	k := &pgschema.Keyspace{Name: ks, DurableWrites: true, PGSchema: ks,
		Replication: sharding.Replication{Class: sharding.SimpleStrategyClass, Factor: 1}}
	id := sha256.Sum256([]byte(ks + "." + name))
	table := pgschema.NewTable(ks, name, [16]byte(id[:16]), cols, map[string]string{})
	err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if err := pgschema.Lock(ctx, tx); err != nil {
			return err
		}
		if _, err := pgschema.CreateKeyspace(ctx, tx, k, true); err != nil {
			return err
		}
		_, err := pgschema.CreateTable(ctx, tx, table, false)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return table
}

func nowMicros() int64 { return time.Now().UnixMicro() }

func sqlState(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code
	}
	return ""
}

func TestSQLWriteTrigger(t *testing.T) {
	conn := connect(t)
	ctx := context.Background()
	createSQLWTable(t, conn, "sqlw", "t", sqlwColumns(t))
	mustExec := func(sql string, args ...any) {
		t.Helper()
		if _, err := conn.Exec(ctx, sql, args...); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}

	// INSERT: token, order keys, write times, the row marker.
	const c = "1ed5b6a0-0000-1000-8000-0000000000ff"
	before := nowMicros()
	mustExec(`INSERT INTO sqlw.t (k, k2, c, c2, v, s, ts) VALUES (1, 'a', $1, '-0', 5,
		'{c0000000-0000-4000-8000-000000000000, a0000000-0000-1000-8000-000000000000, a0000000-0000-1000-8000-000000000000}',
		'2024-01-01 12:00:00.123456+00')`, c)
	after := nowMicros()
	var (
		token          int64
		ord, ord2      []byte
		vwt, rowWT     int64
		ts             time.Time
		set            []string
		swt, lwt, tiwt *int64
		vexp           *int32
	)
	row := `SELECT _token, "c$ord", "c2$ord", "v$wt", _row_wt, ts, s::text[], "s$wt", "l$wt", "ti$wt", "v$exp" FROM sqlw.t`
	if err := conn.QueryRow(ctx, row).Scan(&token, &ord, &ord2, &vwt, &rowWT, &ts, &set, &swt, &lwt, &tiwt, &vexp); err != nil {
		t.Fatal(err)
	}
	if want := sharding.KeyToken([][]byte{int4(1), []byte("a")}); sharding.Token(token) != want {
		t.Errorf("_token = %d, want %d", token, want)
	}
	cBytes := unhexT(t, strings.ReplaceAll(c, "-", ""))
	if want := orderKey(t, testType(t, "timeuuid"), cBytes); !bytes.Equal(ord, want) {
		t.Errorf("c$ord = %x, want %x", ord, want)
	}
	negZero := binary.BigEndian.AppendUint64(nil, math.Float64bits(math.Copysign(0, -1)))
	if want := orderKey(t, testType(t, "double"), negZero); !bytes.Equal(ord2, want) {
		t.Errorf("c2$ord = %x, want %x (-0.0)", ord2, want)
	}
	if vwt < before || vwt > after || rowWT != vwt {
		t.Errorf("v$wt = %d, _row_wt = %d, want both in [%d, %d]", vwt, rowWT, before, after)
	}
	if swt == nil || *swt != vwt || lwt != nil || tiwt != nil || vexp != nil {
		t.Errorf("s$wt %v, l$wt %v, ti$wt %v, v$exp %v: want the INSERT's time for s only", swt, lwt, tiwt, vexp)
	}
	if ts.UnixMicro()%1000 != 0 {
		t.Errorf("timestamp %v keeps microseconds", ts)
	}
	// Sets are sorted by Cassandra's comparator (version first), without repeats.
	if strings.Join(set, ",") != "a0000000-0000-1000-8000-000000000000,c0000000-0000-4000-8000-000000000000" {
		t.Errorf("set = %v", set)
	}

	// UPDATE: a changed cell gets a new write time and loses its expiry;
	// unchanged cells keep theirs.
	mustExec(`UPDATE sqlw.t SET "v$exp" = 2000000000, "s$exp" = 2000000000`)
	mustExec(`UPDATE sqlw.t SET v = 6`)
	var vwt2, swt2 int64
	var sexp *int32
	if err := conn.QueryRow(ctx, `SELECT "v$wt", "v$exp", "s$wt", "s$exp" FROM sqlw.t`).Scan(&vwt2, &vexp, &swt2, &sexp); err != nil {
		t.Fatal(err)
	}
	if vwt2 <= vwt || vexp != nil || swt2 != *swt || sexp == nil {
		t.Errorf("after UPDATE v: v$wt %d (was %d), v$exp %v, s$wt %d (was %d), s$exp %v", vwt2, vwt, vexp, swt2, *swt, sexp)
	}
	// A write time the statement sets is kept.
	mustExec(`UPDATE sqlw.t SET v = 7, "v$wt" = 42`)
	if err := conn.QueryRow(ctx, `SELECT "v$wt" FROM sqlw.t`).Scan(&vwt2); err != nil || vwt2 != 42 {
		t.Errorf("v$wt = %d, %v; want the 42 the statement set", vwt2, err)
	}

	// The gateway's connections are left alone.
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `SET LOCAL `+pgschema.WriterSetting+` = `+pgschema.GatewayWriter); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `UPDATE sqlw.t SET v = 8`); err != nil {
		t.Fatal(err)
	}
	if err := tx.QueryRow(ctx, `SELECT "v$wt" FROM sqlw.t`).Scan(&vwt2); err != nil || vwt2 != 42 {
		t.Errorf("gateway write: v$wt = %d, %v; want it untouched (42)", vwt2, err)
	}
	tx.Rollback(ctx)

	// Values CQL could not read back are refused.
	for _, bad := range []string{
		`UPDATE sqlw.t SET ti = 200`,
		`UPDATE sqlw.t SET l = '{1,NULL}'`,
		`UPDATE sqlw.t SET l = '{{1},{2}}'`,
		`UPDATE sqlw.t SET ts = 'infinity'`,
		`INSERT INTO sqlw.t (k, k2, c, c2) VALUES (1, 'a', 'c0000000-0000-4000-8000-000000000000', 0)`,
		`INSERT INTO sqlw.t (k, k2, c, c2) VALUES (1, NULL, '1ed5b6a0-0000-1000-8000-000000000000', 0)`,
	} {
		_, err := conn.Exec(ctx, bad)
		if code := sqlState(err); code != "22023" && code != "23502" {
			t.Errorf("%s: %v, want it refused", bad, err)
		}
	}

	// A deletion written as SET _del_wt drops what it shadows; an INSERT
	// then takes the dead row's place and keeps the deletion.
	mustExec(`UPDATE sqlw.t SET _del_wt = cqlpg.now_micros()`)
	var live bool
	if err := conn.QueryRow(ctx, `SELECT _row_wt IS NOT NULL OR v IS NOT NULL OR s IS NOT NULL FROM sqlw.t`).Scan(&live); err != nil || live {
		t.Errorf("after SET _del_wt the row still holds data (%v)", err)
	}
	mustExec(`INSERT INTO sqlw.t (k, k2, c, c2, v) VALUES (1, 'a', $1, '-0', 9)`, c)
	var n int
	var del, swt3 *int64
	if err := conn.QueryRow(ctx, `SELECT count(*) OVER (), _del_wt, "s$wt" FROM sqlw.t`).Scan(&n, &del, &swt3); err != nil {
		t.Fatal(err)
	}
	if n != 1 || del == nil || swt3 != nil {
		t.Errorf("INSERT over a dead row: %d rows, _del_wt %v, s$wt %v", n, del, swt3)
	}
	// A live row still conflicts.
	if _, err := conn.Exec(ctx, `INSERT INTO sqlw.t (k, k2, c, c2, v) VALUES (1, 'a', $1, '-0', 10)`, c); sqlState(err) != "23505" {
		t.Errorf("INSERT over a live row: %v, want a unique violation", err)
	}
	// 0.0 is another clustering value than -0.0.
	mustExec(`INSERT INTO sqlw.t (k, k2, c, c2, v) VALUES (1, 'a', $1, 0, 10)`, c)

	// Changing the key moves the row: new token.
	mustExec(`UPDATE sqlw.t SET k = 2 WHERE c2::text = '0'`)
	if err := conn.QueryRow(ctx, `SELECT _token FROM sqlw.t WHERE k = 2`).Scan(&token); err != nil {
		t.Fatal(err)
	}
	if want := sharding.KeyToken([][]byte{int4(2), []byte("a")}); sharding.Token(token) != want {
		t.Errorf("_token after the key changed = %d, want %d", token, want)
	}

	// Static rows.
	mustExec(`INSERT INTO sqlw."t$static" (k, k2, st) VALUES (3, 'b', 'x')`)
	var stwt *int64
	if err := conn.QueryRow(ctx, `SELECT _token, "st$wt" FROM sqlw."t$static"`).Scan(&token, &stwt); err != nil {
		t.Fatal(err)
	}
	if want := sharding.KeyToken([][]byte{int4(3), []byte("b")}); sharding.Token(token) != want || stwt == nil {
		t.Errorf("static row: _token %d (want %d), st$wt %v", token, want, stwt)
	}
}

func TestSQLWriteTriggerRefusesComposite(t *testing.T) {
	conn := connect(t)
	ctx := context.Background()
	createSQLWTable(t, conn, "sqlw_frozen", "pk", []*pgschema.Column{
		{Name: "k", Type: testType(t, "frozen<list<int>>"), Kind: pgschema.PartitionKey},
		{Name: "v", Type: testType(t, "int"), Kind: pgschema.Regular},
	})
	createSQLWTable(t, conn, "sqlw_frozen", "ck", []*pgschema.Column{
		{Name: "k", Type: testType(t, "int"), Kind: pgschema.PartitionKey},
		{Name: "c", Type: testType(t, "tuple<int, text>"), Kind: pgschema.Clustering},
		{Name: "v", Type: testType(t, "int"), Kind: pgschema.Regular},
	})
	for _, sql := range []string{
		`INSERT INTO sqlw_frozen.pk (k, v) VALUES ('{1,2}', 1)`,
		`INSERT INTO sqlw_frozen.ck (k, c, v) VALUES (1, '[1, "a"]', 1)`,
	} {
		_, err := conn.Exec(ctx, sql)
		if sqlState(err) != "0A000" || !strings.Contains(err.Error(), "cannot compute the key") {
			t.Errorf("%s: %v, want it refused", sql, err)
		}
	}
}

// TestSQLWriteTriggerFollowsDDL checks that the trigger names the columns
// ALTER TABLE adds and forgets those it drops, that SyncSQLWrites restores
// missing or stale triggers, and that DropTable drops the functions.
func TestSQLWriteTriggerFollowsDDL(t *testing.T) {
	conn := connect(t)
	ctx := context.Background()
	base := []*pgschema.Column{
		{Name: "k", Type: testType(t, "int"), Kind: pgschema.PartitionKey},
		{Name: "v", Type: testType(t, "int"), Kind: pgschema.Regular},
		// A CQL name that would end the function body's quoting if
		// spliced into it as it is.
		{Name: "odd$cqlpg$ name", Type: testType(t, "tinyint"), Kind: pgschema.Regular},
	}
	table := createSQLWTable(t, conn, "sqlw_ddl", "t", base)

	w := &pgschema.Column{Name: "w", Type: testType(t, "text"), Kind: pgschema.Regular}
	added := pgschema.NewTable("sqlw_ddl", "t", table.ID, append(append([]*pgschema.Column(nil), base...), w), map[string]string{})
	if err := inTx(t, conn, func(tx pgx.Tx) error { return pgschema.AddColumns(ctx, tx, added, []*pgschema.Column{w}) }); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `INSERT INTO sqlw_ddl.t (k, w) VALUES (1, 'x')`); err != nil {
		t.Fatal(err)
	}
	var wwt *int64
	if err := conn.QueryRow(ctx, `SELECT "w$wt" FROM sqlw_ddl.t`).Scan(&wwt); err != nil || wwt == nil {
		t.Errorf("added column: w$wt %v, %v", wwt, err)
	}

	odd := table.Column("odd$cqlpg$ name").PGName
	if _, err := conn.Exec(ctx, `INSERT INTO sqlw_ddl.t (k, `+pgx.Identifier{odd}.Sanitize()+`) VALUES (9, 300)`); sqlState(err) != "22023" ||
		!strings.Contains(err.Error(), "odd$cqlpg$ name") {
		t.Errorf("tinyint 300 in the column named odd$cqlpg$ name: %v", err)
	}

	dropped := pgschema.NewTable("sqlw_ddl", "t", table.ID, []*pgschema.Column{base[0], base[2], w}, map[string]string{})
	if err := inTx(t, conn, func(tx pgx.Tx) error {
		return pgschema.DropColumns(ctx, tx, dropped, []*pgschema.Column{base[1]}, time.Now())
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `INSERT INTO sqlw_ddl.t (k, w) VALUES (2, 'y')`); err != nil {
		t.Errorf("insert after DROP COLUMN: %v", err)
	}

	// A missing trigger and a stale function are put back.
	if _, err := conn.Exec(ctx, `DROP TRIGGER `+pgschema.SQLWriteTrigger+` ON sqlw_ddl.t;
		CREATE OR REPLACE FUNCTION sqlw_ddl."t$write"() RETURNS trigger LANGUAGE plpgsql AS 'BEGIN RETURN NEW; END'`); err != nil {
		t.Fatal(err)
	}
	if err := inTx(t, conn, func(tx pgx.Tx) error { return pgschema.SyncSQLWrites(ctx, tx) }); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `INSERT INTO sqlw_ddl.t (k, w) VALUES (3, 'z')`); err != nil {
		t.Fatalf("insert after sync: %v", err)
	}
	if err := conn.QueryRow(ctx, `SELECT "w$wt" FROM sqlw_ddl.t WHERE k = 3`).Scan(&wwt); err != nil || wwt == nil {
		t.Errorf("after sync: w$wt %v, %v", wwt, err)
	}

	if err := inTx(t, conn, func(tx pgx.Tx) error {
		_, err := pgschema.DropTable(ctx, tx, "sqlw_ddl", "t", false)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_proc WHERE pronamespace = 'sqlw_ddl'::regnamespace`).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d functions left after DROP TABLE (%v)", n, err)
	}
}

func TestGatewayConnString(t *testing.T) {
	for _, s := range []string{
		"host=localhost port=5432 user=postgres dbname=cqlpg sslmode=disable",
		"postgres://u:p@localhost:5432/db",
		"postgresql://u@localhost/db?sslmode=disable&application_name=x",
	} {
		cfg, err := pgconn.ParseConfig(pgschema.GatewayConnString(s))
		if err != nil {
			t.Errorf("%s: %v", s, err)
			continue
		}
		if cfg.RuntimeParams["jit"] != "off" {
			t.Errorf("%s: jit = %q, want off", s, cfg.RuntimeParams["jit"])
		}
		if got := cfg.RuntimeParams[pgschema.WriterSetting]; got != pgschema.GatewayWriter {
			t.Errorf("%s: %s = %q, want %q", s, pgschema.WriterSetting, got, pgschema.GatewayWriter)
		}
		if cfg.RuntimeParams["TimeZone"] != "UTC" || cfg.RuntimeParams["DateStyle"] != "ISO" {
			t.Errorf("%s: TimeZone %q, DateStyle %q; want UTC and ISO, which the keys of set elements are spelled in",
				s, cfg.RuntimeParams["TimeZone"], cfg.RuntimeParams["DateStyle"])
		}
		if strings.Contains(s, "application_name") && cfg.RuntimeParams["application_name"] != "x" {
			t.Errorf("%s: lost application_name", s)
		}
	}
}

// TestSQLWriteExact: rows written in SQL to date and decimal columns get
// the order keys the gateway computes, and a value written in SQL
// replaces one only the exact companion held.
func TestSQLWriteExact(t *testing.T) {
	conn := connect(t)
	ctx := context.Background()
	createSQLWTable(t, conn, "sqlwx", "t", []*pgschema.Column{
		{Name: "k", Type: testType(t, "int"), Kind: pgschema.PartitionKey, Position: 0},
		{Name: "c", Type: testType(t, "date"), Kind: pgschema.Clustering, Position: 0},
		{Name: "d", Type: testType(t, "decimal"), Kind: pgschema.Clustering, Position: 1, Desc: true},
		{Name: "v", Type: testType(t, "decimal"), Kind: pgschema.Regular},
	})
	dates := map[string]int64{"1970-01-01": 0, "1969-12-31": -1, "2024-02-29": 19782, "4714-11-24 BC": -2440588}
	decimals := map[string][]byte{
		"0":          {0, 0, 0, 0, 0},
		"0.000":      {0, 0, 0, 3, 0},
		"1.50":       {0, 0, 0, 2, 0x00, 0x96},
		"1.5":        {0, 0, 0, 1, 0x0f},
		"-1.5":       {0, 0, 0, 1, 0xf1},
		"-0.0012":    {0, 0, 0, 4, 0xf4},
		"1000":       {0, 0, 0, 0, 0x03, 0xe8},
		"-123456789": {0, 0, 0, 0, 0xf8, 0xa4, 0x32, 0xeb},
	}
	i := 0
	for date, days := range dates {
		for dec, cql := range decimals {
			i++
			var cOrd, dOrd []byte
			err := conn.QueryRow(ctx, `INSERT INTO sqlwx.t (k, c, d, v) VALUES ($1, $2::date, $3::numeric, 1)
				RETURNING "c$ord", "d$ord"`, i, date, dec).Scan(&cOrd, &dOrd)
			if err != nil {
				t.Fatalf("%s, %s: %v", date, dec, err)
			}
			if want := orderKey(t, testType(t, "date"), binary.BigEndian.AppendUint32(nil, uint32(days+1<<31))); !bytes.Equal(cOrd, want) {
				t.Errorf("date %s: c$ord %x, want %x", date, cOrd, want)
			}
			if want := orderKey(t, testType(t, "decimal"), cql); !bytes.Equal(dOrd, want) {
				t.Errorf("decimal %s: d$ord %x, want %x", dec, dOrd, want)
			}
		}
	}
	// The gateway keeps 1E+1000000 in v$exact, with Infinity in v.
	if _, err := conn.Exec(ctx, `UPDATE sqlwx.t SET v = 'Infinity', "v$exact" = '\x fff0bdc0 01'::bytea WHERE k = 1`); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `UPDATE sqlwx.t SET v = 'Infinity' WHERE k = 2`); sqlState(err) != "22023" {
		t.Errorf("Infinity with no exact value: %v, want SQLSTATE 22023", err)
	}
	if _, err := conn.Exec(ctx, `UPDATE sqlwx.t SET v = 2.5 WHERE k = 1`); err != nil {
		t.Fatal(err)
	}
	var exact []byte
	if err := conn.QueryRow(ctx, `SELECT "v$exact" FROM sqlwx.t WHERE k = 1`).Scan(&exact); err != nil || exact != nil {
		t.Errorf("v$exact after an UPDATE of v in SQL: %x, %v; want null", exact, err)
	}
}

// TestLegacyColumns: date and decimal columns created before exact
// companions (their catalog rows say exact = false, as migration 0015
// leaves them) load as Legacy and keep their layout: no companion, no
// order key, arrays for lists of them; columns created since have both.
func TestLegacyColumns(t *testing.T) {
	conn := connect(t)
	ctx := context.Background()
	legacy := func(c *pgschema.Column) *pgschema.Column { c.Legacy = true; return c }
	createSQLWTable(t, conn, "legacyx", "old", []*pgschema.Column{
		{Name: "k", Type: testType(t, "int"), Kind: pgschema.PartitionKey, Position: 0},
		legacy(&pgschema.Column{Name: "c", Type: testType(t, "date"), Kind: pgschema.Clustering, Position: 0}),
		legacy(&pgschema.Column{Name: "d", Type: testType(t, "decimal"), Kind: pgschema.Regular, Position: -1}),
		legacy(&pgschema.Column{Name: "l", Type: func() *pgschema.Type { l := testType(t, "list<date>"); l.Legacy = true; return l }(),
			Kind: pgschema.Regular, Position: -1}),
	})
	createSQLWTable(t, conn, "legacyx", "new", []*pgschema.Column{
		{Name: "k", Type: testType(t, "int"), Kind: pgschema.PartitionKey, Position: 0},
		{Name: "c", Type: testType(t, "date"), Kind: pgschema.Clustering, Position: 0},
		{Name: "d", Type: testType(t, "decimal"), Kind: pgschema.Regular, Position: -1},
		{Name: "l", Type: testType(t, "list<date>"), Kind: pgschema.Regular, Position: -1},
	})
	schema, err := pgschema.Load(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"old": "c date order= exact= legacy=true; d numeric exact= legacy=true; l date[] exact= legacy=true",
		"new": "c date order=c$ord exact=c$exact legacy=false; d numeric exact=d$exact legacy=false; l jsonb exact= legacy=false",
	} {
		tb := schema.Table("legacyx", name)
		var got []string
		for _, c := range tb.Columns[1:] {
			st, _ := pgschema.StorageOf(c.Type)
			s := c.Name + " " + st.SQL
			if c.Kind == pgschema.Clustering {
				s += " order=" + c.OrderColumn()
			}
			got = append(got, fmt.Sprintf("%s exact=%s legacy=%v", s, c.ExactColumn(), c.Legacy))
		}
		if strings.Join(got, "; ") != want {
			t.Errorf("table %s: %s\nwant %s", name, strings.Join(got, "; "), want)
		}
		var cols []string
		if err := conn.QueryRow(ctx, `SELECT array_agg(attname::text || ' ' || format_type(atttypid, atttypmod) ORDER BY attnum)
			FROM pg_attribute WHERE attrelid = $1::regclass AND attnum > 0 AND attname IN ('c$ord', 'c$exact', 'd$exact', 'l')`,
			tb.Ident()).Scan(&cols); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %v", name, cols)
		if wantCols := map[string]int{"old": 1, "new": 4}[name]; len(cols) != wantCols {
			t.Errorf("table %s has %v", name, cols)
		}
	}
}
