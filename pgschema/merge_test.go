package pgschema_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/sharding"
)

// replica is one copy of a table, in a keyspace of its own on the test
// server: two of them stand for two shards holding the same partitions.
type replica struct {
	conn  *pgx.Conn
	table *pgschema.Table
}

// newReplicas creates the same table in n keyspaces named prefix_1 ... .
func newReplicas(t *testing.T, prefix string, n int, cols func() []*pgschema.Column) []*replica {
	t.Helper()
	ctx := context.Background()
	connect(t) // migrates
	conn, err := pgx.Connect(ctx, pgschema.GatewayConnString(shardURL))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(ctx) })
	var out []*replica
	for i := range n {
		name := fmt.Sprintf("%s_%d", prefix, i+1)
		ks := &pgschema.Keyspace{Name: name, DurableWrites: true, PGSchema: name,
			Replication: sharding.Replication{Class: sharding.SimpleStrategyClass, Factor: 1}}
		table := pgschema.NewTable(name, "t", md5.Sum([]byte(name)), cols(), nil)
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
		out = append(out, &replica{conn: conn, table: table})
	}
	// The catalog lists the keyspaces to the package's other tests, which
	// cannot resolve the user type some of these tables use.
	t.Cleanup(func() {
		for _, r := range out {
			inTx(t, conn, func(tx pgx.Tx) error {
				_, err := pgschema.DropKeyspace(ctx, tx, r.table.Keyspace, true)
				return err
			})
		}
	})
	return out
}

// exec runs SQL statements with %[1]s standing for the replica's schema.
func (r *replica) exec(t *testing.T, stmts ...string) {
	t.Helper()
	for _, s := range stmts {
		s = fmt.Sprintf(s, r.table.PGSchema)
		if _, err := r.conn.Exec(context.Background(), s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// read reads every part of the whole ring, as the gateway reads a range.
func (r *replica) read(t *testing.T) [3]*string {
	t.Helper()
	var parts [3]*string
	r.inRepairTx(t, func(tx pgx.Tx) error {
		return tx.QueryRow(context.Background(), r.table.ReadRepairSQL(), int64(math.MinInt64), int64(math.MaxInt64),
			int64(1<<20)).Scan(&parts[0], &parts[1], &parts[2])
	})
	return parts
}

// merge merges parts read from another replica.
func (r *replica) merge(t *testing.T, parts [3]*string) [4]int64 {
	t.Helper()
	var n [4]int64
	r.inRepairTx(t, func(tx pgx.Tx) error {
		return tx.QueryRow(context.Background(), r.table.MergeSQL(), parts[0], parts[1], parts[2]).Scan(&n[0], &n[1], &n[2], &n[3])
	})
	return n
}

// digest digests the whole ring in buckets starting at starts.
func (r *replica) digest(t *testing.T, starts []int64) []string {
	t.Helper()
	var out []string
	r.inRepairTx(t, func(tx pgx.Tx) error {
		rows, err := tx.Query(context.Background(), r.table.DigestSQL(), starts[0], int64(math.MaxInt64), starts)
		if err != nil {
			return err
		}
		for rows.Next() {
			var part int16
			var bucket int32
			var count, h1, h2, first, last int64
			if err := rows.Scan(&part, &bucket, &count, &h1, &h2, &first, &last); err != nil {
				return err
			}
			out = append(out, fmt.Sprintf("%d/%d: %d %x %x %d..%d", part, bucket, count, h1, h2, first, last))
		}
		return rows.Err()
	})
	slices.Sort(out)
	return out
}

// pages reads a part of the whole ring in pages of n rows.
func (r *replica) pages(t *testing.T, p pgschema.RepairPart, n int64) []json.RawMessage {
	t.Helper()
	var out []json.RawMessage
	lo, after := int64(math.MinInt64), (*string)(nil)
	for range 1000 {
		var page *string
		var end *int64
		r.inRepairTx(t, func(tx pgx.Tx) error {
			args := []any{lo, int64(math.MaxInt64), n}
			if p == pgschema.RepairRows {
				args = append(args, after)
			}
			return tx.QueryRow(context.Background(), r.table.PageRepairSQL(p), args...).Scan(&page, &end)
		})
		if page == nil {
			return out
		}
		var rows []json.RawMessage
		if err := json.Unmarshal([]byte(*page), &rows); err != nil {
			t.Fatal(err)
		}
		out = append(out, rows...)
		if p == pgschema.RepairRows {
			last := string(rows[len(rows)-1])
			after = &last
			continue
		}
		if *end == math.MaxInt64 {
			return out
		}
		lo = *end + 1
	}
	t.Fatal("pages never end")
	return nil
}

func (r *replica) inRepairTx(t *testing.T, f func(tx pgx.Tx) error) {
	t.Helper()
	ctx := context.Background()
	err := pgx.BeginFunc(ctx, r.conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, pgschema.RepairSettingsSQL); err != nil {
			return err
		}
		return f(tx)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// dump returns every row of every part in binary, in key order, with the
// columns' type OIDs.
func (r *replica) dump(t *testing.T) (rows [][][]byte, oids [][]uint32) {
	t.Helper()
	for _, ident := range []string{r.table.DeletionsIdent(), r.table.StaticIdent(), r.table.Ident()} {
		if ident == "" || (ident == r.table.StaticIdent() && !r.table.HasStatic()) {
			continue
		}
		part := pgschema.RepairRows
		switch ident {
		case r.table.DeletionsIdent():
			part = pgschema.RepairDeletions
		case r.table.StaticIdent():
			part = pgschema.RepairStatic
		}
		var key []string
		for _, k := range r.table.RepairKey(part) {
			key = append(key, pgschema.Quote(k))
		}
		res := r.conn.PgConn().ExecParams(context.Background(), "SELECT * FROM "+ident+" ORDER BY "+strings.Join(key, ", "),
			nil, nil, nil, []int16{1}).Read()
		if res.Err != nil {
			t.Fatal(res.Err)
		}
		var types []uint32
		for _, f := range res.FieldDescriptions {
			types = append(types, f.DataTypeOID)
		}
		for _, row := range res.Rows {
			rows = append(rows, append([][]byte{[]byte(ident[strings.IndexByte(ident, '.'):])}, row...))
			oids = append(oids, append([]uint32{0}, types...))
		}
	}
	return rows, oids
}

// sameData compares two replicas' data.
func sameData(t *testing.T, a, b *replica) {
	t.Helper()
	ra, oids := a.dump(t)
	rb, _ := b.dump(t)
	for _, d := range diffRows(ra, rb, oids) {
		t.Errorf("%s and %s differ: %s", a.table.PGSchema, b.table.PGSchema, d)
	}
}

// diffRows compares two dumps of one table. NaNs of real and double
// precision columns compare equal whatever their payload, which JSON does
// not carry.
func diffRows(ra, rb [][][]byte, oids [][]uint32) []string {
	if len(ra) != len(rb) {
		return []string{fmt.Sprintf("%d rows against %d", len(ra), len(rb))}
	}
	nan := func(oid uint32, v []byte) bool {
		switch {
		case oid == 700 && len(v) == 4:
			return math.IsNaN(float64(math.Float32frombits(binary.BigEndian.Uint32(v))))
		case oid == 701 && len(v) == 8:
			return math.IsNaN(math.Float64frombits(binary.BigEndian.Uint64(v)))
		}
		return false
	}
	var out []string
	for i := range ra {
		for j := range ra[i] {
			x, y := ra[i][j], rb[i][j]
			if bytes.Equal(x, y) && (x == nil) == (y == nil) || nan(oids[i][j], x) && nan(oids[i][j], y) {
				continue
			}
			out = append(out, fmt.Sprintf("row %d column %d (type %d): %x against %x", i, j, oids[i][j], x, y))
		}
	}
	return out
}

// TestMergeRoundTrip copies rows holding every stored value of every type
// from one replica to another through the repair statements and checks
// that they arrive bit for bit (NaN payloads aside), in regular, static
// and order-keyed clustering columns, and that both replicas' digests
// then agree.
func TestMergeRoundTrip(t *testing.T) {
	cases := storageCases(t)
	var types []string
	column := map[string]string{}
	for _, c := range cases {
		if _, ok := column[c.typ]; !ok {
			column[c.typ] = fmt.Sprintf("v%d", len(types))
			types = append(types, c.typ)
		}
	}
	cols := func() []*pgschema.Column {
		out := []*pgschema.Column{
			{Name: "k", Type: pgschema.Scalar(pgschema.Int), Kind: pgschema.PartitionKey},
			{Name: "c1", Type: pgschema.Scalar(pgschema.UUID), Kind: pgschema.Clustering, Desc: true},
			{Name: "c2", Type: pgschema.Scalar(pgschema.Double), Kind: pgschema.Clustering, Position: 1},
			{Name: "s", Type: pgschema.Scalar(pgschema.Double), Kind: pgschema.Static},
		}
		for _, typ := range types {
			out = append(out, &pgschema.Column{Name: column[typ], Type: testType(t, typ), Kind: pgschema.Regular})
		}
		return out
	}
	reps := newReplicas(t, "merge_rt", 2, cols)
	a, b := reps[0], reps[1]
	ctx := context.Background()
	uuidT, doubleT := pgschema.Scalar(pgschema.UUID), pgschema.Scalar(pgschema.Double)
	for id, c := range cases {
		st := storageOf(t, testType(t, c.typ))
		pg := pgForm(t, st, c.in)
		k := int32(id % 4)
		u := make([]byte, 16)
		binary.BigEndian.PutUint64(u[8:], uint64(id))
		u[6], u[8] = 0x40, 0x80|u[8]&0x3f
		// 0.0 and -0.0 are distinct clustering values in Cassandra.
		d := be64(math.Float64bits(float64(id % 2)))
		if id%3 == 0 {
			d = be64(math.Float64bits(math.Copysign(0, -1)))
		}
		uk, dk := orderKey(t, uuidT, u), orderKey(t, doubleT, d)
		col := pgschema.Quote(column[c.typ])
		sql := fmt.Sprintf(`INSERT INTO %s ("_token", k, c1, "c1$ord", c2, "c2$ord", %s, %s, "_row_wt") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)`,
			a.table.Ident(), col, pgschema.Quote(column[c.typ]+"$wt"))
		res := a.conn.PgConn().ExecParams(ctx, sql, [][]byte{s64(int64(k)*1000 - 1500), be32(uint32(k)), u, uk, d, dk, pg, s64(int64(1000 + id))},
			[]uint32{pgschema.OIDInt8, pgschema.OIDInt4, pgschema.OIDUUID, pgschema.OIDBytea, pgschema.OIDFloat8, pgschema.OIDBytea, st.OID, pgschema.OIDInt8}, []int16{1, 1, 1, 1, 1, 1, 1, 1}, nil).Read()
		if res.Err != nil {
			t.Fatalf("%s %x: %v", c.typ, c.in, res.Err)
		}
	}
	// Deletion records holding order keys, older than every row.
	uk, dk := orderKey(t, uuidT, make([]byte, 16)), orderKey(t, doubleT, be64(math.Float64bits(math.Copysign(0, -1))))
	res := a.conn.PgConn().ExecParams(ctx, fmt.Sprintf(`INSERT INTO %s ("_token", k, "_prefix", "ck$1", "ck$2$lo", "ck$2$hi", "_lo_incl", "_hi_incl", "_del_wt")
		VALUES (-1500, 0, 1, $1, $2, NULL, true, false, 1), (-500, 1, 0, NULL, NULL, NULL, false, false, 2)`, a.table.DeletionsIdent()),
		[][]byte{uk, dk}, []uint32{pgschema.OIDBytea, pgschema.OIDBytea}, []int16{1, 1}, nil).Read()
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	// Static cells, the empty value, an expiring cell, a tombstone.
	a.exec(t, `UPDATE %[1]s.t SET "_del_wt" = 2 WHERE k = 1`, // as the partition deletion marked them
		`INSERT INTO %[1]s."t$static" ("_token", k, s, "s$wt") VALUES (-1500, 0, '-0', 5), (-500, 1, 'NaN', 5),
		(500, 2, '-Infinity', 5), (1500, 3, NULL, 5)`,
		strings.ReplaceAll(`UPDATE %[1]s.t SET vI = NULL, "vI$empty" = true, "vI$exp" = 2000000000, "vI$wt" = 7 WHERE c2 = 1 AND k = 1`,
			"vI", column["int"]))
	if d := a.digest(t, []int64{math.MinInt64}); slices.Equal(d, b.digest(t, []int64{math.MinInt64})) {
		t.Fatalf("digests agree before the merge: %v", d)
	}
	n := b.merge(t, a.read(t))
	if n[0] != 2 || n[1] != 4 || n[2] != int64(len(cases)) || n[3] != 0 {
		t.Errorf("merged %v, want 2 deletions, 4 static rows, %d rows", n, len(cases))
	}
	sameData(t, a, b)
	starts := []int64{math.MinInt64, -1000, 0, 1000}
	if da, db := a.digest(t, starts), b.digest(t, starts); !slices.Equal(da, db) || len(da) != 10 {
		t.Errorf("digests after the merge:\n%v\n%v", da, db)
	}

	// Pages, in key order, DESC clustering columns included, hold every
	// row once.
	full := a.read(t)
	for p := range pgschema.RepairPart(pgschema.NumRepairParts) {
		var want []json.RawMessage
		if full[p] != nil {
			if err := json.Unmarshal([]byte(*full[p]), &want); err != nil {
				t.Fatal(err)
			}
		}
		if got := a.pages(t, p, 7); !slices.EqualFunc(got, want, func(x, y json.RawMessage) bool { return bytes.Equal(x, y) }) {
			t.Errorf("%s in pages of 7: %d rows, want %d", p, len(got), len(want))
		}
	}

	// Merging again changes nothing, in either direction.
	before, oids := a.dump(t)
	a.merge(t, b.read(t))
	b.merge(t, a.read(t))
	after, _ := a.dump(t)
	for _, d := range diffRows(before, after, oids) {
		t.Errorf("merging the same data again changed it: %s", d)
	}
	sameData(t, a, b)
}

// TestMergeReconcile makes two replicas of a table diverge in every way
// writes can (cells of different write times and tied ones, a tombstone
// against a live cell, an expired cell against its swept tombstone, row
// markers, a row deletion, a range deletion and a partition deletion on
// one side only, static cells, a collection), merges them in both
// orders, and checks that all four end identical and hold what
// Cassandra's reconciliation gives.
func TestMergeReconcile(t *testing.T) {
	cols := func() []*pgschema.Column {
		i := pgschema.Scalar(pgschema.Int)
		return []*pgschema.Column{
			{Name: "k", Type: i, Kind: pgschema.PartitionKey},
			{Name: "c", Type: i, Kind: pgschema.Clustering},
			{Name: "s", Type: i, Kind: pgschema.Static},
			{Name: "v", Type: i, Kind: pgschema.Regular},
			{Name: "w", Type: pgschema.Scalar(pgschema.Text), Kind: pgschema.Regular},
			{Name: "l", Type: pgschema.NewList(i, false), Kind: pgschema.Regular},
		}
	}
	reps := newReplicas(t, "merge_rc", 4, cols)
	stateA := []string{
		`INSERT INTO %[1]s.t (_token, k, c, v, "v$wt", w, "w$wt", _row_wt) VALUES (100, 1, 1, 1, 10, 'a', 10, 10)`,
		`INSERT INTO %[1]s.t (_token, k, c, v, "v$wt") VALUES (100, 1, 2, 1, 10)`,
		`INSERT INTO %[1]s.t (_token, k, c, v, "v$wt", w, "w$wt") VALUES (100, 1, 3, NULL, 20, 'x', 5)`,
		`INSERT INTO %[1]s.t (_token, k, c, _del_wt) VALUES (100, 1, 4, 30)`,
		`INSERT INTO %[1]s.t (_token, k, c, v, "v$wt", "v$exp") VALUES (100, 1, 5, 9, 10, 1000)`,
		`INSERT INTO %[1]s.t (_token, k, c, _row_wt) VALUES (100, 1, 6, 5)`,
		`INSERT INTO %[1]s."t$deletions" (_token, k, _prefix, "ck$1$lo", _lo_incl, _hi_incl, _del_wt) VALUES (200, 2, 0, 5, false, false, 50)`,
		`INSERT INTO %[1]s.t (_token, k, c, _del_wt) VALUES (200, 2, 6, 50)`,
		`INSERT INTO %[1]s.t (_token, k, c, v, "v$wt") VALUES (200, 2, 3, 40, 40)`,
		`INSERT INTO %[1]s."t$static" (_token, k, s, "s$wt") VALUES (300, 3, 7, 65)`,
		`INSERT INTO %[1]s.t (_token, k, c, v, "v$wt") VALUES (300, 3, 1, 60, 60), (300, 3, 2, 80, 80)`,
		`INSERT INTO %[1]s.t (_token, k, c, l, "l$wt") VALUES (400, 4, 1, '{1,2}', 10)`,
	}
	stateB := []string{
		`INSERT INTO %[1]s.t (_token, k, c, v, "v$wt") VALUES (100, 1, 1, 2, 20), (100, 1, 2, 2, 10), (100, 1, 3, 5, 20)`,
		`UPDATE %[1]s.t SET w = 'y', "w$wt" = 6 WHERE k = 1 AND c = 3`,
		`INSERT INTO %[1]s.t (_token, k, c, v, "v$wt", w, "w$wt") VALUES (100, 1, 4, 4, 20, 'z', 40)`,
		`INSERT INTO %[1]s.t (_token, k, c, v, "v$wt") VALUES (100, 1, 5, NULL, 10)`,
		`INSERT INTO %[1]s.t (_token, k, c, _row_wt, _row_exp) VALUES (100, 1, 6, 7, 2000000000)`,
		`INSERT INTO %[1]s.t (_token, k, c, v, "v$wt") VALUES (200, 2, 6, 6, 40), (200, 2, 7, 7, 60), (200, 2, 8, 8, 45), (200, 2, 3, 3, 45)`,
		`INSERT INTO %[1]s."t$deletions" (_token, k, _prefix, _lo_incl, _hi_incl, _del_wt) VALUES (300, 3, 0, false, false, 70)`,
		`INSERT INTO %[1]s."t$static" (_token, k, _del_wt) VALUES (300, 3, 70)`,
		`INSERT INTO %[1]s.t (_token, k, c, l, "l$wt") VALUES (400, 4, 1, '{1,3}', 20)`,
	}
	a1, b1, a2, b2 := reps[0], reps[1], reps[2], reps[3]
	for _, r := range []*replica{a1, a2} {
		r.exec(t, stateA...)
	}
	for _, r := range []*replica{b1, b2} {
		r.exec(t, stateB...)
	}

	// A into B, then B into A.
	if n := b1.merge(t, a1.read(t)); n != [4]int64{1, 1, 11, 2} {
		t.Errorf("A into B merged %v, want 1 deletion, 1 static row, 11 rows, 2 rows shadowed", n)
	}
	a1.merge(t, b1.read(t))
	// B into A, then A into B.
	if n := a2.merge(t, b2.read(t)); n[3] != 2 {
		t.Errorf("B into A shadowed %d rows, want 2", n[3])
	}
	b2.merge(t, a2.read(t))
	for _, r := range reps[1:] {
		sameData(t, a1, r)
	}
	all := []int64{math.MinInt64, 150, 250, 350}
	for _, r := range reps[1:] {
		if got, want := r.digest(t, all), a1.digest(t, all); !slices.Equal(got, want) {
			t.Errorf("digests of %s and %s differ:\n%v\n%v", r.table.PGSchema, a1.table.PGSchema, got, want)
		}
	}

	query := func(sql string) []string {
		rows, err := a1.conn.Query(context.Background(), fmt.Sprintf(sql, a1.table.PGSchema))
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			vals, _ := rows.Values()
			out = append(out, strings.TrimSuffix(strings.TrimPrefix(fmt.Sprint(vals), "["), "]"))
		}
		return out
	}
	wantRows := []string{
		"1 1 2 20 a 10 <nil> 10 <nil> <nil>",
		"1 2 2 10 <nil> <nil> <nil> <nil> <nil> <nil>",
		"1 3 <nil> 20 y 6 <nil> <nil> <nil> <nil>",         // the tombstone wins the tie
		"1 4 <nil> <nil> z 40 30 <nil> <nil> <nil>",        // deleted on A at 30
		"1 5 <nil> 10 <nil> <nil> <nil> <nil> <nil> <nil>", // swept on B
		"1 6 <nil> <nil> <nil> <nil> <nil> 7 2000000000 <nil>",
		"2 3 3 45 <nil> <nil> <nil> <nil> <nil> <nil>",
		"2 6 <nil> <nil> <nil> <nil> 50 <nil> <nil> <nil>", // range deleted on A at 50
		"2 7 7 60 <nil> <nil> 50 <nil> <nil> <nil>",
		"2 8 <nil> <nil> <nil> <nil> 50 <nil> <nil> <nil>",
		"3 1 <nil> <nil> <nil> <nil> 70 <nil> <nil> <nil>", // partition deleted on B at 70
		"3 2 80 80 <nil> <nil> 70 <nil> <nil> <nil>",
		"4 1 <nil> <nil> <nil> <nil> <nil> <nil> <nil> [1 3]",
	}
	got := query(`SELECT k, c, v, "v$wt", w, "w$wt", _del_wt, _row_wt, _row_exp, l FROM %s.t ORDER BY k, c`)
	if !slices.Equal(got, wantRows) {
		t.Errorf("rows:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(wantRows, "\n"))
	}
	if got := query(`SELECT k, s, "s$wt", _del_wt FROM %s."t$static"`); !slices.Equal(got, []string{"3 <nil> <nil> 70"}) {
		t.Errorf("static rows: %q", got)
	}
	if got := query(`SELECT k, _prefix, "ck$1$lo", _del_wt FROM %s."t$deletions" ORDER BY k`); !slices.Equal(got,
		[]string{"2 0 5 50", "3 0 <nil> 70"}) {
		t.Errorf("deletions: %q", got)
	}
}

// TestRepairSQLParts checks which of a table's Postgres tables the
// repair statements read and write, and the key a row is known by.
func TestRepairSQLParts(t *testing.T) {
	col := func(name string, kind pgschema.ColumnKind, kt pgschema.Kind, desc bool) *pgschema.Column {
		return &pgschema.Column{Name: name, Type: pgschema.Scalar(kt), Kind: kind, Desc: desc}
	}
	kv := pgschema.NewTable("ks", "kv", [16]byte{1}, []*pgschema.Column{
		col("k", pgschema.PartitionKey, pgschema.Int, false), col("v", pgschema.Regular, pgschema.Int, false)}, nil)
	wide := pgschema.NewTable("ks", "wide", [16]byte{2}, []*pgschema.Column{
		col("k", pgschema.PartitionKey, pgschema.Int, false), col("c", pgschema.Clustering, pgschema.Timeuuid, true),
		col("s", pgschema.Static, pgschema.Text, false), col("v", pgschema.Regular, pgschema.Int, false)}, nil)
	for _, tc := range []struct {
		table     *pgschema.Table
		sql       string
		has, lack []string
	}{
		{kv, kv.MergeSQL(), []string{`INSERT INTO "ks"."kv" AS t`, `ON CONFLICT ("_token", "k")`, `cqlpg.cell_wins(excluded."v$wt"`},
			[]string{`$static`, `$deletions`, ` dr `, "ur AS"}},
		{kv, kv.DigestSQL(), []string{`FROM "ks"."kv" AS x`}, []string{`$static`, `$deletions`}},
		{kv, kv.ReadRepairSQL(), []string{"NULL::json,\n    NULL::json,\n    (SELECT json_agg"}, nil},
		{wide, wide.MergeSQL(), []string{`INSERT INTO "ks"."wide$deletions" AS t`, `INSERT INTO "ks"."wide$static" AS t`,
			`ON CONFLICT ("_token", "k", "c$ord")`, `UPDATE "ks"."wide" AS t`, `x."ck$1" = s."c$ord"`, `OFFSET 0`}, nil},
		{wide, wide.PageRepairSQL(pgschema.RepairRows), []string{`x."c$ord" < (SELECT a."c$ord" FROM a)`,
			`ORDER BY x."_token", x."k", x."c$ord" DESC LIMIT`}, nil},
		{wide, wide.PageRepairSQL(pgschema.RepairStatic), []string{`FROM "ks"."wide$static" AS x`, `OFFSET $3::bigint - 1`}, nil},
	} {
		for _, s := range tc.has {
			if !strings.Contains(tc.sql, s) {
				t.Errorf("%s: no %s in\n%s", tc.table.Name, s, tc.sql)
			}
		}
		for _, s := range tc.lack {
			if strings.Contains(tc.sql, s) {
				t.Errorf("%s: %s in\n%s", tc.table.Name, s, tc.sql)
			}
		}
	}
	if got := wide.RepairKey(pgschema.RepairRows); !slices.Equal(got, []string{"_token", "k", "c$ord"}) {
		t.Errorf("key of a row: %q", got)
	}
	if got := wide.RepairKey(pgschema.RepairDeletions); len(got) != 8 {
		t.Errorf("key of a deletion: %q", got)
	}
	if kv.HasPart(pgschema.RepairDeletions) || kv.HasPart(pgschema.RepairStatic) || !wide.HasPart(pgschema.RepairStatic) {
		t.Error("HasPart")
	}
}
