package pgschema_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cqlpg/cqlpg/migrations"
	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/sharding"
	"github.com/cqlpg/cqlpg/sharding/localpg"
)

var shardURL string

func TestMain(m *testing.M) {
	flag.Parse()
	// A fuzzing worker runs only its fuzz target, which needs no cluster.
	if f := flag.Lookup("test.fuzzworker"); f != nil && f.Value.String() == "true" {
		os.Exit(m.Run())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	clusters, stop, err := localpg.TempClusters(ctx, 1, localpg.Options{})
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "start PostgreSQL:", err)
		os.Exit(1)
	}
	shardURL = clusters[0].URL()
	code := m.Run()
	stop()
	os.Exit(code)
}

func connect(t *testing.T) *pgx.Conn {
	t.Helper()
	ctx := context.Background()
	if err := migrations.Up(ctx, shardURL); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, shardURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(ctx) })
	return conn
}

// inTx runs f in a transaction holding the schema lock, as the gateway does.
func inTx(t *testing.T, conn *pgx.Conn, f func(tx pgx.Tx) error) error {
	t.Helper()
	ctx := context.Background()
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if err := pgschema.Lock(ctx, tx); err != nil {
		t.Fatal(err)
	}
	if err := f(tx); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

func seedTable() *pgschema.Table {
	i := pgschema.Scalar(pgschema.Int)
	cols := []*pgschema.Column{
		{Name: "data", Type: i, Kind: pgschema.Regular},
		{Name: "pk2", Type: pgschema.Scalar(pgschema.Text), Kind: pgschema.PartitionKey, Position: 1},
		{Name: "ck2", Type: i, Kind: pgschema.Clustering, Position: 1},
		{Name: "pk1", Type: i, Kind: pgschema.PartitionKey, Position: 0},
		{Name: "ck1", Type: pgschema.Scalar(pgschema.Text), Kind: pgschema.Clustering, Position: 0, Desc: true},
		{Name: "Odd \"name\"?", Type: pgschema.Scalar(pgschema.Text), Kind: pgschema.Regular},
	}
	return pgschema.NewTable("layout", "test", [16]byte{1}, cols, map[string]string{"comment": "'hi'"})
}

func TestLayout(t *testing.T) {
	conn := connect(t)
	ctx := context.Background()
	ks := &pgschema.Keyspace{Name: "layout", DurableWrites: true, PGSchema: "layout",
		Replication: sharding.Replication{Class: sharding.SimpleStrategyClass, Factor: 1}}
	table := seedTable()
	err := inTx(t, conn, func(tx pgx.Tx) error {
		if _, err := pgschema.CreateKeyspace(ctx, tx, ks, false); err != nil {
			return err
		}
		_, err := pgschema.CreateTable(ctx, tx, table, false)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}

	// The key index leads with the token and follows CLUSTERING ORDER.
	var def string
	if err := conn.QueryRow(ctx, `SELECT pg_get_indexdef(indexrelid) FROM pg_index
		WHERE indrelid = 'layout.test'::regclass AND indisunique AND indisreplident`).Scan(&def); err != nil {
		t.Fatal(err)
	}
	want := `CREATE UNIQUE INDEX "test$key" ON layout.test USING btree (_token, pk1, pk2, ck1 DESC, ck2)`
	if def != want {
		t.Errorf("key index:\n got %s\nwant %s", def, want)
	}

	// One column per CQL column with its natural type, text in byte order.
	rows, err := conn.Query(ctx, `SELECT column_name, data_type, coalesce(collation_name, ''), is_nullable
		FROM information_schema.columns WHERE table_schema = 'layout' AND table_name = 'test' ORDER BY ordinal_position`)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rows.Next() {
		var name, typ, coll, null string
		if err := rows.Scan(&name, &typ, &coll, &null); err != nil {
			t.Fatal(err)
		}
		got = append(got, strings.Join(strings.Fields(fmt.Sprintf("%s %s %s %s", name, typ, coll, null)), " "))
	}
	wantCols := []string{
		"_token bigint NO", "pk1 integer NO", "pk2 text C NO", "pk2$exact bytea YES", "ck1 text C NO", "ck1$exact bytea YES", "ck2 integer NO",
		`Odd "name"? text C YES`, "data integer YES",
		"_row_wt bigint YES", "_row_exp integer YES", "_del_wt bigint YES",
		`Odd "name"?$wt bigint YES`, `Odd "name"?$exp integer YES`, "data$wt bigint YES", "data$exp integer YES", "data$empty boolean YES",
	}
	if strings.Join(got, "\n") != strings.Join(wantCols, "\n") {
		t.Errorf("columns:\n got %q\nwant %q", got, wantCols)
	}

	// The table comment holds the CQL definition.
	var comment string
	if err := conn.QueryRow(ctx, `SELECT obj_description('layout.test'::regclass)`).Scan(&comment); err != nil {
		t.Fatal(err)
	}
	if comment != table.CreateStatement() || !strings.Contains(comment, "CLUSTERING ORDER BY (ck1 DESC, ck2 ASC)") {
		t.Errorf("comment = %q", comment)
	}

	// The catalog reads back what was written.
	schema, err := pgschema.Load(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	back := schema.Table("layout", "test")
	if back == nil || back.CreateStatement() != table.CreateStatement() {
		t.Fatalf("loaded table differs:\n%v", back)
	}
	if back.Column("ck1").Desc != true || back.PartitionKey[1].Name != "pk2" {
		t.Errorf("loaded key columns wrong: %+v", back.KeyColumns())
	}
	if got := schema.Keyspace("layout").Replication.Options()["replication_factor"]; got != "1" {
		t.Errorf("replication factor = %q", got)
	}
}

func TestCreateDropErrors(t *testing.T) {
	conn := connect(t)
	ctx := context.Background()
	ks := &pgschema.Keyspace{Name: "twice", DurableWrites: true, PGSchema: "twice",
		Replication: sharding.Replication{Class: sharding.SimpleStrategyClass, Factor: 1}}
	create := func(ifNotExists bool) (bool, error) {
		var applied bool
		err := inTx(t, conn, func(tx pgx.Tx) (err error) {
			applied, err = pgschema.CreateKeyspace(ctx, tx, ks, ifNotExists)
			return err
		})
		return applied, err
	}
	if applied, err := create(false); err != nil || !applied {
		t.Fatalf("first create: %v %v", applied, err)
	}
	var exists *pgschema.ExistsError
	if _, err := create(false); !errors.As(err, &exists) || exists.Keyspace != "twice" {
		t.Errorf("second create: %v", err)
	}
	if applied, err := create(true); err != nil || applied {
		t.Errorf("create if not exists: %v %v", applied, err)
	}
	var missing *pgschema.MissingError
	err := inTx(t, conn, func(tx pgx.Tx) error {
		_, err := pgschema.DropTable(ctx, tx, "twice", "nope", false)
		return err
	})
	if !errors.As(err, &missing) || missing.Table != "nope" {
		t.Errorf("drop missing table: %v", err)
	}
	err = inTx(t, conn, func(tx pgx.Tx) error {
		_, err := pgschema.DropKeyspace(ctx, tx, "twice", false)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_namespace WHERE nspname = 'twice'`).Scan(&n); err != nil || n != 0 {
		t.Errorf("schema still there: %d %v", n, err)
	}
}
