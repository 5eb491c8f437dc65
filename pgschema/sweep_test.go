package pgschema_test

import (
	"strings"
	"testing"

	"github.com/cqlpg/cqlpg/pgschema"
)

// TestSweepSQL checks which Postgres tables of a CQL table are swept and
// which cells each statement looks at; gateway's sweeper tests run them.
func TestSweepSQL(t *testing.T) {
	col := func(name string, kind pgschema.ColumnKind, kt pgschema.Kind) *pgschema.Column {
		return &pgschema.Column{Name: name, Type: pgschema.Scalar(kt), Kind: kind}
	}
	kv := pgschema.NewTable("ks", "kv", [16]byte{1}, []*pgschema.Column{
		col("k", pgschema.PartitionKey, pgschema.Int), col("v", pgschema.Regular, pgschema.Int)}, nil)
	wide := pgschema.NewTable("ks", "wide", [16]byte{2}, []*pgschema.Column{
		col("k", pgschema.PartitionKey, pgschema.Int), col("c", pgschema.Clustering, pgschema.Int),
		col("s", pgschema.Static, pgschema.Text), col("v", pgschema.Regular, pgschema.Int)}, nil)
	for _, tc := range []struct {
		table     *pgschema.Table
		part      pgschema.SweepPart
		has, lack []string
	}{
		{kv, pgschema.SweepRows, []string{`"ks"."kv"`, `x."v$exp" <= $1`, `"v$empty" = CASE`, `"_row_wt" = CASE`}, nil},
		{wide, pgschema.SweepRows, []string{`"ks"."wide"`, `x."v$exp" <= $1`, `x."_row_wt"`}, []string{`"s$exp"`}},
		{wide, pgschema.SweepStatic, []string{`"ks"."wide$static"`, `x."s$exp" <= $1`, `GREATEST(x."_del_wt", x."s$wt")`},
			[]string{`"v$exp"`, `_row_wt`}},
		{wide, pgschema.SweepDeletions, []string{`"ks"."wide$deletions"`, `(x."_del_wt" < $2) AS purge`}, []string{" u AS "}},
	} {
		sql := tc.table.SweepSQL(tc.part)
		for _, s := range tc.has {
			if !strings.Contains(sql, s) {
				t.Errorf("%s %s: no %s in\n%s", tc.table.Name, tc.part, s, sql)
			}
		}
		for _, s := range tc.lack {
			if strings.Contains(sql, s) {
				t.Errorf("%s %s: %s in\n%s", tc.table.Name, tc.part, s, sql)
			}
		}
	}

	// Parts a table does not have are not swept.
	for _, part := range []pgschema.SweepPart{pgschema.SweepStatic, pgschema.SweepDeletions} {
		if sql := kv.SweepSQL(part); sql != "" {
			t.Errorf("kv %s: %s", part, sql)
		}
	}
}
