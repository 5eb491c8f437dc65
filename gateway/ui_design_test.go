package gateway_test

import (
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// uiPost sends the table builder's form and returns the page.
func uiPost(t *testing.T, addr, path string, form url.Values) string {
	t.Helper()
	resp, err := http.PostForm("http://"+addr+path, form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: %d %v\n%s", path, resp.StatusCode, err, body)
	}
	return string(body)
}

// designPartitions returns the partitions of a table builder page: each
// one's token, replicas and rows, in page order.
func designPartitions(page string) []struct {
	token    int64
	replicas []string
	rows     string
} {
	var out []struct {
		token    int64
		replicas []string
		rows     string
	}
	cards := regexp.MustCompile(`(?s)<div class="card partition" data-token="(-?\d+)">(.*?)</table>`).FindAllStringSubmatch(page, -1)
	for _, c := range cards {
		tok, _ := strconv.ParseInt(c[1], 10, 64)
		var replicas []string
		for _, m := range regexp.MustCompile(`<span class="replica">([^<]*)</span>`).FindAllStringSubmatch(c[2], -1) {
			replicas = append(replicas, html.UnescapeString(m[1]))
		}
		rows := tags.ReplaceAllString(strings.ReplaceAll(c[2][strings.Index(c[2], "<table"):], "</tr>", "\n"), " ")
		out = append(out, struct {
			token    int64
			replicas []string
			rows     string
		}{tok, replicas, strings.Join(strings.Fields(rows), " ")})
	}
	return out
}

// TestUIDesign shows the seeds' table in the table builder without
// creating it: its Postgres DDL with the DESC key index, each sample
// partition's token and replicas, which agree with SELECT token(...) and
// the key page of the same table made for real, its rows in read order,
// the spread over the shards, and which queries the key allows, with
// Cassandra's texts for the others.
func TestUIDesign(t *testing.T) {
	s := uiGateway(t, nil)
	sess := sessionOn(t, s, "") // the page answers once the gateway is ready
	addr := s.HTTPAddr().String()
	ddl := `CREATE TABLE ui_design.cyclist_by_team (team text, year int, name text, points int,
		PRIMARY KEY ((team, year), points, name)) WITH CLUSTERING ORDER BY (points DESC, name ASC)`
	rows := "team,year,name,points\nJayco,2023,Matthews,120\nJayco,2023,Groves,300\nJayco,2024,Durbridge,40\nUAE,2023,Pogacar,900\n"
	page := uiPost(t, addr, "/ui/design", url.Values{"ddl": {ddl}, "rf": {"2"}, "rows": {rows},
		"queries": {"SELECT * FROM ui_design.cyclist_by_team WHERE team = 'Jayco' AND year = 2023 AND points >= 100\n" +
			"SELECT * FROM ui_design.cyclist_by_team WHERE name = 'Groves'"}})
	var n int
	if err := sess.Query("SELECT count(*) FROM system_schema.keyspaces WHERE keyspace_name = 'ui_design'").Scan(&n); err != nil || n != 0 {
		t.Fatalf("the table builder created keyspace ui_design (%d, %v)", n, err)
	}
	pg := textOf(t, page, "postgres-ddl")
	for _, want := range []string{`CREATE TABLE "ui_design"."cyclist_by_team"`, `"_token" bigint NOT NULL`,
		`CREATE UNIQUE INDEX "cyclist_by_team$key" ON "ui_design"."cyclist_by_team" ("_token", "team", "year", "points" DESC, "name")`} {
		if !strings.Contains(pg, want) {
			t.Errorf("Postgres DDL lacks %q:\n%s", want, pg)
		}
	}
	checks := html.UnescapeString(textOfTable(t, page, "checks"))
	for _, want := range []string{
		"WHERE team = ? AND year = ? (example)|allowed reads the partitions it names",
		"WHERE team = ? AND year = ? ORDER BY points ASC (example)|allowed",
		"WHERE team = 'Jayco' AND year = 2023 AND points >= 100|allowed",
		`WHERE name = 'Groves'|PRIMARY KEY column "name" cannot be restricted as preceding column "points" is not restricted`,
		"WHERE team = ? (example)|Cannot execute this query as it might involve data filtering and thus may have unpredictable performance. " +
			"If you want to execute this query despite the performance unpredictability, use ALLOW FILTERING",
	} {
		if !strings.Contains(checks, want) {
			t.Errorf("query checks lack %q:\n%s", want, checks)
		}
	}

	// The same table for real: its tokens and the key page's replicas.
	exec(t, sess, "CREATE KEYSPACE IF NOT EXISTS ui_real WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 2}",
		"CREATE TABLE IF NOT EXISTS ui_real.cyclist_by_team (team text, year int, name text, points int, PRIMARY KEY ((team, year), points, name))")
	parts := designPartitions(page)
	if len(parts) != 3 {
		t.Fatalf("%d partitions, want 3", len(parts))
	}
	for _, key := range [][2]string{{"Jayco", "2023"}, {"Jayco", "2024"}, {"UAE", "2023"}} {
		year, _ := strconv.Atoi(key[1])
		var token int64
		exec(t, sess, "INSERT INTO ui_real.cyclist_by_team (team, year, name, points) VALUES ('"+key[0]+"', "+key[1]+", 'x', 1)")
		if err := sess.Query("SELECT token(team, year) FROM ui_real.cyclist_by_team WHERE team = ? AND year = ?", key[0], year).Scan(&token); err != nil {
			t.Fatal(err)
		}
		found := false
		for _, p := range parts {
			if p.token != token {
				continue
			}
			found = true
			keyPage := uiPage(t, s, keyPath("ui_real", "cyclist_by_team", key[0], key[1]))
			if got, want := strings.Join(p.replicas, " "), strings.Join(replicaNames(keyPage), " "); got != want {
				t.Errorf("(%s, %s): replicas %s, the key page %s", key[0], key[1], got, want)
			}
		}
		if !found {
			t.Errorf("(%s, %s): no partition with token %d on the page", key[0], key[1], token)
		}
	}
	for _, p := range parts {
		if strings.Contains(p.rows, "Groves") && !strings.Contains(p.rows, "Jayco 2023 300 Groves Jayco 2023 120 Matthews") {
			t.Errorf("rows of (Jayco, 2023) not by points DESC: %s", p.rows)
		}
	}

	// The same rows as INSERT statements place the same partitions, rows
	// in the same order.
	inserts := `INSERT INTO ui_design.cyclist_by_team (team, year, name, points) VALUES ('Jayco', 2023, 'Matthews', 120);
		INSERT INTO ui_design.cyclist_by_team (team, year, name, points) VALUES ('Jayco', 2023, 'Groves', 300);
		INSERT INTO ui_design.cyclist_by_team JSON '{"team": "Jayco", "year": 2024, "name": "Durbridge", "points": 40}';
		insert into ui_design.cyclist_by_team (team, year, name, points) values ('UAE', 2023, 'Pogacar', 900)`
	fromInserts := designPartitions(uiPost(t, addr, "/ui/design", url.Values{"ddl": {ddl}, "rf": {"2"}, "rows": {inserts}}))
	if fmt.Sprint(fromInserts) != fmt.Sprint(parts) {
		t.Errorf("INSERTs place\n%v\nCSV places\n%v", fromInserts, parts)
	}
	for rows, want := range map[string]string{
		"INSERT INTO ui_design.cyclist_by_team (team, year, name, points) VALUES ('Jayco', ?, 'x', 1)": "sample rows, INSERT 1: the value of year is not a constant",
		"INSERT INTO ui_design.cyclist_by_team (team, year, name, points) VALUES ('Jayco', 2023, 'x', 1); " +
			"INSERT INTO ui_design.cyclist_by_team (team, year, name, points) VALUES ('Jayco', 'x', 'x', 1)": `sample rows, INSERT 2: Invalid STRING constant (x) for "year" of type int`,
		"INSERT INTO ui_design.cyclist_by_team (team, name, points) VALUES ('Jayco', 'x', 1)":                   "sample rows, INSERT 1: Some partition key parts are missing: year",
		"INSERT INTO ui_design.other (k) VALUES (1)":                                                            "sample rows, INSERT 1: table other does not exist",
		`INSERT INTO ui_design.cyclist_by_team JSON '{"team": "x", "year": 1, "name": "x", "points": 1}'; oops`: "sample rows, INSERT 2: line 1:97 no viable alternative at input 'oops'",
	} {
		page := uiPost(t, addr, "/ui/design", url.Values{"ddl": {ddl}, "rows": {rows}})
		if got := html.UnescapeString(textOf(t, page, "error")); got != want {
			t.Errorf("sample INSERTs %q: %q, want %q", rows, got, want)
		}
	}

	// Generated rows: a skewed key spreads unevenly, and every row is
	// counted once per replica.
	page = uiPost(t, addr, "/ui/design", url.Values{"ddl": {ddl}, "rf": {"1"}, "generate": {"1000\nteam 3 skewed\nyear 1"}})
	total := 0
	for _, m := range regexp.MustCompile(`<tr data-shard="[^"]*"><td>.*?</td><td class="num">(\d+)</td><td class="num">(\d+)</td>`).FindAllStringSubmatch(page, -1) {
		n, _ := strconv.Atoi(m[2])
		total += n
	}
	if total != 1000 {
		t.Errorf("the spread counts %d rows, want 1000", total)
	}
	if parts := designPartitions(page); len(parts) != 3 {
		t.Errorf("a key of 3 distinct values makes %d partitions", len(parts))
	}
	// Columns picked rather than a statement typed.
	page = uiPost(t, addr, "/ui/design", url.Values{"name": {"ui_design.readings"},
		"col": {"sensor", "day", "ts", "temp", "", "", "", ""}, "type": {"text", "int", "timestamp", "double", "", "", "", ""},
		"role": {"partition", "partition", "clustering desc", "regular", "regular", "regular", "regular", "regular"}})
	if got := textOf(t, page, "ddl"); got != "CREATE TABLE ui_design.readings (sensor text, day int, ts timestamp, temp double, "+
		"PRIMARY KEY ((sensor, day), ts)) WITH CLUSTERING ORDER BY (ts DESC)" {
		t.Errorf("the picked columns' table: %q", got)
	}
	if pg := textOf(t, page, "postgres-ddl"); !strings.Contains(pg, `("_token", "sensor", "day", "ts" DESC)`) {
		t.Errorf("the picked table's key index:\n%s", pg)
	}
	// A statement that is no CREATE TABLE, and bad rows, are said so.
	page = uiPost(t, addr, "/ui/design", url.Values{"ddl": {"SELECT * FROM x"}})
	if got := textOf(t, page, "error"); got != "the design takes a CREATE TABLE statement" {
		t.Errorf("a SELECT as the design: %q", got)
	}
	page = uiPost(t, addr, "/ui/design", url.Values{"ddl": {ddl}, "rows": {"team,year\nJayco,not a year\n"}})
	if got := textOf(t, page, "error"); !strings.HasPrefix(got, "sample rows, line 2, year: ") {
		t.Errorf("a bad sample value: %q", got)
	}
}
