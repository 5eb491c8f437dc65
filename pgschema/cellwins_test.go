package pgschema_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/cqlpg/cqlpg/pgschema"
)

// TestWinsFunction checks a table's wins function, which writes ask when
// a written cell's write time ties the stored one's: Cassandra's rules
// for a tie (a tombstone wins, then an expiring cell, then the later
// expiry, then the greater value as serialized bytes, the empty value
// least), nothing at or before the row's deletion, a cell it does not
// know refused; and that SyncSQLWrites makes it for a table made before
// it existed.
func TestWinsFunction(t *testing.T) {
	conn := connect(t)
	ctx := context.Background()
	table := createSQLWTable(t, conn, "wins_fn", "t", []*pgschema.Column{
		{Name: "k", Type: testType(t, "int"), Kind: pgschema.PartitionKey},
		{Name: "v", Type: testType(t, "int"), Kind: pgschema.Regular},
		{Name: "w", Type: testType(t, "text"), Kind: pgschema.Regular},
	})
	if _, err := conn.Exec(ctx, "SET "+pgschema.WriterSetting+" = "+pgschema.GatewayWriter); err != nil {
		t.Fatal(err)
	}
	// Each row is one side of a tie: k, v, v$exp, v$empty, w, _row_exp, _del_wt.
	for _, row := range []string{
		"1, 1, NULL, NULL, 'a', NULL, NULL", // stored
		"2, -1, NULL, NULL, 'b', NULL, NULL",
		"3, NULL, NULL, NULL, NULL, NULL, NULL",      // tombstones
		"4, NULL, NULL, true, 'a', 2000000000, NULL", // empty v, expiring marker
		"5, 1, 2000000000, NULL, 'ab', NULL, NULL",   // expiring v
		"6, 2, NULL, NULL, 'z', NULL, 10",            // deleted at the write time
	} {
		if _, err := conn.Exec(ctx, `INSERT INTO wins_fn.t (_token, k, v, "v$wt", "v$exp", "v$empty", w, "w$wt", _row_wt, _row_exp, _del_wt)
			SELECT 0, r.k, r.v::int, 10, r.ve::int, r.vm::bool, r.w::text, 10, 10, r.re::int, r.d::int8 FROM (VALUES (`+row+`)) AS r(k, v, ve, vm, w, re, d)`); err != nil {
			t.Fatal(err)
		}
	}
	fn := table.WinsFunction(false)
	wins := func(stored, written int, key int64) (bool, error) {
		var won bool
		err := conn.QueryRow(ctx, "SELECT "+fn+"(s.*, n.*, $3) FROM wins_fn.t s, wins_fn.t n WHERE s.k = $1 AND n.k = $2",
			stored, written, key).Scan(&won)
		return won, err
	}
	v, w := table.Column("v").WinsKey(), table.Column("w").WinsKey()
	for _, tc := range []struct {
		what            string
		stored, written int
		key             int64
		want            bool
	}{
		{"the greater bytes (ff ff ff ff > 00 00 00 01)", 1, 2, v, true},
		{"the smaller bytes", 2, 1, v, false},
		{"text, 'b' over 'a'", 1, 2, w, true},
		{"text, 'ab' over 'a'", 1, 5, w, true},
		{"a tombstone over a live cell", 1, 3, v, true},
		{"a live cell under a tombstone", 3, 1, v, false},
		{"the empty value under any other", 1, 4, v, false},
		{"any value over the empty value", 4, 1, v, true},
		{"an expiring cell over one that does not expire", 2, 5, v, true},
		{"a cell that does not expire under an expiring one", 5, 2, v, false},
		{"nothing at the row's deletion time", 6, 2, v, false},
	} {
		got, err := wins(tc.stored, tc.written, tc.key)
		if err != nil || got != tc.want {
			t.Errorf("%s: %v, %v; want %v", tc.what, got, err, tc.want)
		}
	}
	// The row marker, whose key is none of the columns'.
	if got, err := wins(1, 4, pgschema.MarkerWinsKey); err != nil || !got {
		t.Errorf("an expiring marker over one that does not expire: %v, %v", got, err)
	}
	if got, err := wins(4, 1, pgschema.MarkerWinsKey); err != nil || got {
		t.Errorf("a marker that does not expire over an expiring one: %v, %v", got, err)
	}
	if _, err := wins(1, 2, 12345); sqlState(err) != "20000" {
		t.Errorf("a cell the function does not know: %v, want CASE_NOT_FOUND (20000)", err)
	}

	// A table made before wins functions gets one from SyncSQLWrites.
	if _, err := conn.Exec(ctx, "DROP FUNCTION "+fn); err != nil {
		t.Fatal(err)
	}
	if err := inTx(t, conn, func(tx pgx.Tx) error { return pgschema.SyncSQLWrites(ctx, tx) }); err != nil {
		t.Fatal(err)
	}
	if got, err := wins(1, 2, v); err != nil || !got {
		t.Errorf("after SyncSQLWrites: %v, %v", got, err)
	}
	// A current function is left alone: every gateway start syncs.
	version := func() (xmin string) {
		if err := conn.QueryRow(ctx, "SELECT xmin::text FROM pg_proc WHERE oid = $1::regprocedure",
			fn+"(record, record, int8)").Scan(&xmin); err != nil {
			t.Fatal(err)
		}
		return xmin
	}
	before := version()
	if err := inTx(t, conn, func(tx pgx.Tx) error { return pgschema.SyncSQLWrites(ctx, tx) }); err != nil {
		t.Fatal(err)
	}
	if after := version(); after != before {
		t.Errorf("SyncSQLWrites replaced a current wins function (xmin %s, then %s)", before, after)
	}
}
