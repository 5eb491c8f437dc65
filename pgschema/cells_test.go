package pgschema_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/cqlpg/cqlpg/pgschema"
)

// cellsOp is one write to a set: elements added or removed, the set
// overwritten (deleted at at-1, then elements added), or the row deleted.
type cellsOp struct {
	kind string // "add", "remove", "overwrite", "rowdel"
	keys []string
	at   int64
}

// cellsModel is Cassandra's rule for a set's elements: an element is
// live when its newest addition is newer than its newest removal, the
// newest deletion of the set and the newest deletion of the row.
func cellsModel(ops []cellsOp) []string {
	added, removed := map[string]int64{}, map[string]int64{}
	var cleared, rowdel int64 = -1 << 62, -1 << 62
	for _, op := range ops {
		switch op.kind {
		case "add", "overwrite":
			for _, k := range op.keys {
				added[k] = max(added[k], op.at)
			}
			if op.kind == "overwrite" {
				cleared = max(cleared, op.at-1)
			}
		case "remove":
			for _, k := range op.keys {
				removed[k] = max(removed[k], op.at)
			}
		case "rowdel":
			rowdel = max(rowdel, op.at)
		}
	}
	var live []string
	for k, at := range added {
		if r, ok := removed[k]; (!ok || at > r) && at > cleared && at > rowdel {
			live = append(live, k)
		}
	}
	slices.Sort(live)
	return live
}

// TestCellsMerge: two replicas of a set each apply a random part of a
// random history of writes, in random orders, as the gateway's writes
// merge them (cqlpg.cells_delta into cqlpg.cells_merge, a row deletion
// as the row's deletion time); merged in either direction, they hold
// what Cassandra's rule says, and merging again changes nothing.
func TestCellsMerge(t *testing.T) {
	conn := connect(t)
	ctx := context.Background()
	apply := func(cells *string, del *int64, op cellsOp) {
		t.Helper()
		var d *int64
		if *del != 0 {
			d = del
		}
		var sql string
		args := []any{*cellsArg(cells), d}
		switch op.kind {
		case "rowdel":
			*del = max(*del, op.at)
			sql = "SELECT cqlpg.cells_merge($1::jsonb, NULL, $2::bigint)"
			args[1] = *del
		case "add":
			sql = "SELECT cqlpg.cells_merge($1::jsonb, cqlpg.cells_delta($3::text[], NULL, $4::bigint, NULL), $2::bigint)"
			args = append(args, op.keys, op.at)
		case "remove":
			sql = "SELECT cqlpg.cells_merge($1::jsonb, cqlpg.cells_delta(NULL, $3::text[], $4::bigint, NULL), $2::bigint)"
			args = append(args, op.keys, op.at)
		case "overwrite":
			sql = "SELECT cqlpg.cells_merge($1::jsonb, cqlpg.cells_delta($3::text[], NULL, $4::bigint, $4::bigint - 1), $2::bigint)"
			args = append(args, op.keys, op.at)
		}
		var out *string
		if err := conn.QueryRow(ctx, sql, args...).Scan(&out); err != nil {
			t.Fatalf("%v: %v", op, err)
		}
		*cells = ""
		if out != nil {
			*cells = *out
		}
	}
	live := func(cells string) []string {
		t.Helper()
		var keys []string
		if err := conn.QueryRow(ctx, "SELECT coalesce(array_agg(k ORDER BY k), '{}') FROM jsonb_object_keys($1::jsonb->'l') AS k",
			*cellsArg(&cells)).Scan(&keys); err != nil {
			t.Fatal(err)
		}
		return keys
	}
	merge := func(a, b string, del int64) string {
		t.Helper()
		var out *string
		var d *int64
		if del != 0 {
			d = &del
		}
		if err := conn.QueryRow(ctx, "SELECT cqlpg.cells_merge($1::jsonb, $2::jsonb, $3::bigint)", *cellsArg(&a), *cellsArg(&b), d).Scan(&out); err != nil {
			t.Fatal(err)
		}
		if out == nil {
			return ""
		}
		return *out
	}
	rng := rand.New(rand.NewPCG(1, 2))
	kinds := []string{"add", "add", "add", "remove", "remove", "overwrite", "rowdel"}
	for round := range 300 {
		var ops []cellsOp
		for range 1 + rng.IntN(8) {
			op := cellsOp{kind: kinds[rng.IntN(len(kinds))], at: 1 + rng.Int64N(12)}
			for range rng.IntN(3) + 1 {
				op.keys = append(op.keys, strconv.Itoa(rng.IntN(5)))
			}
			ops = append(ops, op)
		}
		var a, b string
		var delA, delB int64
		for _, i := range rng.Perm(len(ops)) {
			if rng.IntN(3) > 0 {
				apply(&a, &delA, ops[i])
			} else {
				apply(&b, &delB, ops[i])
			}
		}
		for _, i := range rng.Perm(len(ops)) {
			if rng.IntN(2) == 0 {
				apply(&b, &delB, ops[i])
			}
		}
		del := max(delA, delB)
		ab, ba := merge(a, b, del), merge(b, a, del)
		want := cellsModel(ops)
		if ab != ba || !slices.Equal(live(ab), want) || merge(ab, ab, del) != ab || merge(ab, a, del) != ab {
			t.Fatalf("round %d: %v\nreplicas %s (deleted %d) and %s (deleted %d)\nmerged %s and %s, live %v; want %v",
				round, ops, a, delA, b, delB, ab, ba, live(ab), want)
		}
	}
}

// cellsArg is cells as a query argument: SQL null for "".
func cellsArg(cells *string) *any {
	var v any
	if *cells != "" {
		v = *cells
	}
	return &v
}

// TestCellsColumnAdded: a table made before sets and maps kept cells per
// element lacks their companion columns; SyncSQLWrites, which every
// gateway runs as it starts, adds them, and its values, whose cells are
// null, read as written whole at their write time.
func TestCellsColumnAdded(t *testing.T) {
	conn := connect(t)
	ctx := context.Background()
	set, _ := pgschema.ParseType("set<int>", nil)
	mp, _ := pgschema.ParseType("map<text, int>", nil)
	createSQLWTable(t, conn, "cellsup", "t", []*pgschema.Column{
		{Name: "k", Type: pgschema.Scalar(pgschema.Int), Kind: pgschema.PartitionKey},
		{Name: "s", Type: set, Kind: pgschema.Regular},
		{Name: "m", Type: mp, Kind: pgschema.Regular},
	})
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := conn.Exec(ctx, sql, args...); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	// The layout before: no companions, values as the gateway wrote them.
	for _, col := range []string{"s$cells", "m$cells"} {
		exec(fmt.Sprintf(`BEGIN; SET LOCAL cqlpg.ddl = 'on'; ALTER TABLE cellsup.t DROP COLUMN %s; COMMIT`, pgx.Identifier{col}.Sanitize()))
	}
	if err := inTx(t, conn, func(tx pgx.Tx) error { return pgschema.SyncSQLWrites(ctx, tx) }); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_attribute WHERE attrelid = 'cellsup.t'::regclass
		AND attname IN ('s$cells', 'm$cells') AND NOT attisdropped`).Scan(&n); err != nil || n != 2 {
		t.Fatalf("companions after SyncSQLWrites: %d, %v", n, err)
	}
	var base string
	if err := conn.QueryRow(ctx, `SELECT cqlpg.cells_base(NULL, cqlpg.elem_keys(ARRAY[3, 1]), 7, false)::text`).Scan(&base); err != nil ||
		base != `{"c": 6, "l": {"1": 7, "3": 7}}` {
		t.Errorf("null cells of {1, 3} written at 7 read as %s (%v)", base, err)
	}
}
