package gateway_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gocql/gocql"
)

// injections are strings built to escape SQL: quotes and their escapes,
// dollar quoting, comment markers, statement separators, NUL, characters
// that look like quotes, and lengths past Postgres's identifier limit.
var injections = []string{
	`'`, `''`, `'; DROP TABLE inj.sentinel; --`, `\`, `\'`, `\\'; SELECT 1; --`,
	`$$`, `$$; DROP TABLE inj.sentinel; $$`, `$tag$`, `$tag$ || (SELECT 1) || $tag$`,
	`--`, `/*`, `*/`, `/* */ OR 1=1 --`, `;`, `"; DROP SCHEMA inj CASCADE; --`, `""`,
	"\u02bc", "\uff07", "\uff02", "\u2019; DROP TABLE inj.sentinel; --", // lookalike quotes
	"\u0000", "a\u0000b",
	strings.Repeat("x", 70), strings.Repeat("'", 300), strings.Repeat("é", 100),
}

// TestInjection sends each hostile string as a value, in CQL literals and
// as bound values, and as quoted column names, and checks that what is
// read back is what was written and that nothing else changed: the SQL
// that runs never takes any of it for SQL.
func TestInjection(t *testing.T) {
	sess := sessionAll(t, "")
	exec(t, sess,
		"DROP KEYSPACE IF EXISTS inj",
		"CREATE KEYSPACE inj WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 2}",
		"CREATE TABLE inj.sentinel (k int PRIMARY KEY, v text)",
		"INSERT INTO inj.sentinel (k, v) VALUES (1, 'intact')",
		"CREATE TABLE inj.vals (k text, c text, v text, l list<text>, m map<text, text>, PRIMARY KEY (k, c))")
	ins := "INSERT INTO inj.vals (k, c, v, l, m) VALUES (?, ?, ?, ?, ?)"
	for i, s := range injections {
		key := fmt.Sprintf("bound%d", i)
		// Bound values; U+0000 included, which Postgres text cannot hold
		// and cqlpg stores escaped.
		if err := sess.Query(ins, key, s, s, []string{s}, map[string]string{s: s}).Exec(); err != nil {
			t.Errorf("bound value %q: %v", s, err)
			continue
		}
		// The same through CQL literals.
		lit := "'" + strings.ReplaceAll(s, "'", "''") + "'"
		cql := fmt.Sprintf("INSERT INTO inj.vals (k, c, v, l, m) VALUES ('lit%d', %s, %s, [%s], {%s: %s})", i, lit, lit, lit, lit, lit)
		if err := sess.Query(cql).Exec(); err != nil {
			t.Errorf("literal %q: %v", s, err)
			continue
		}
		for _, k := range []string{key, fmt.Sprintf("lit%d", i)} {
			var c, v string
			var l []string
			var m map[string]string
			// Read by the hostile clustering value too, bound and literal.
			if err := sess.Query("SELECT c, v, l, m FROM inj.vals WHERE k = ? AND c = ?", k, s).Scan(&c, &v, &l, &m); err != nil {
				t.Errorf("%s: reading back %q: %v", k, s, err)
				continue
			}
			if c != s || v != s || len(l) != 1 || l[0] != s || m[s] != s {
				t.Errorf("%s: wrote %q, read c=%q v=%q l=%q m=%q", k, s, c, v, l, m)
			}
		}
		var n int
		if err := sess.Query(fmt.Sprintf("SELECT count(*) FROM inj.vals WHERE k = 'lit%d' AND c = %s", i, lit)).Scan(&n); err != nil || n != 1 {
			t.Errorf("literal %q in WHERE: %d rows, %v", s, n, err)
		}
	}

	// Quoted column names of hostile text, each a column of its own table.
	colTables := 0
	for i, s := range injections {
		if strings.ContainsRune(s, 0) {
			continue // Postgres identifiers cannot hold U+0000
		}
		colTables++
		col := `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
		table := fmt.Sprintf("inj.cols%d", i)
		err := sess.Query(fmt.Sprintf("CREATE TABLE %s (k int PRIMARY KEY, %s text)", table, col)).Exec()
		if err != nil {
			t.Errorf("column named %q: %v", s, err)
			continue
		}
		if err := sess.Query(fmt.Sprintf("INSERT INTO %s (k, %s) VALUES (1, ?)", table, col), s).Exec(); err != nil {
			t.Errorf("insert into column %q: %v", s, err)
			continue
		}
		var v string
		if err := sess.Query(fmt.Sprintf("SELECT %s FROM %s WHERE k = 1", col, table)).Scan(&v); err != nil || v != s {
			t.Errorf("column %q read back %q, %v", s, v, err)
		}
		iter := sess.Query(fmt.Sprintf("SELECT * FROM %s", table)).Iter()
		cols := iter.Columns()
		iter.Close()
		if len(cols) != 2 || cols[1].Name != s {
			t.Errorf("column %q listed as %v", s, cols)
		}
	}

	// Names that Postgres would cut at 63 bytes to the same identifier
	// stay two columns.
	long := strings.Repeat("n", 70)
	exec(t, sess, fmt.Sprintf(`CREATE TABLE inj.longcols (k int PRIMARY KEY, "%sa" int, "%sb" int)`, long, long),
		fmt.Sprintf(`INSERT INTO inj.longcols (k, "%sa", "%sb") VALUES (1, 1, 2)`, long, long))
	wantRows(t, sess.Query(fmt.Sprintf(`SELECT "%sa", "%sb" FROM inj.longcols WHERE k = 1`, long, long)), "", "1 | 2")

	// Nothing else changed: the sentinel row, on every replica, and the
	// keyspace's tables in every shard's catalog and in Postgres.
	var v string
	if err := sess.Query("SELECT v FROM inj.sentinel WHERE k = 1").Consistency(gocql.All).Scan(&v); err != nil || v != "intact" {
		t.Errorf("sentinel: %q, %v", v, err)
	}
	for i, rows := range onEveryShard(t, `SELECT (SELECT count(*) FROM cqlpg.tables WHERE keyspace_name = 'inj'),
		(SELECT count(*) FROM pg_tables WHERE schemaname = 'inj' AND tablename = 'sentinel')`) {
		// The tables of inj in the catalog, and the sentinel's table.
		if want := fmt.Sprintf("%d | 1", 3+colTables); len(rows) != 1 || rows[0] != want {
			t.Errorf("shard %d: tables of inj in the catalog | sentinel tables: %q, want %q", i, rows, want)
		}
	}
}
