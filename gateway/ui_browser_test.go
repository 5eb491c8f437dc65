package gateway_test

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cqlpg/cqlpg/sharding"
)

// TestUIBrowser loads every page of the web view in headless Chromium,
// with JavaScript off as the pages must work without it, against a
// gateway on the three shared shards. It checks the token and replicas
// shown for a known key against SELECT token(...) and the ring page's
// own arcs, follows a range's link, and saves a screenshot of each page.
func TestUIBrowser(t *testing.T) {
	s := uiGateway(t, nil)
	sess := sessionOn(t, s, "")
	exec(t, sess, "CREATE KEYSPACE IF NOT EXISTS ui_browser WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 2}",
		"DROP TABLE IF EXISTS ui_browser.sensor_data",
		"CREATE TABLE ui_browser.sensor_data (sensor_id text, ts timestamp, temperature double, PRIMARY KEY ((sensor_id), ts)) WITH CLUSTERING ORDER BY (ts DESC)",
		"INSERT INTO ui_browser.sensor_data (sensor_id, ts, temperature) VALUES ('sensor_123', '2023-10-27 10:05:00+0000', 24.5)",
		"INSERT INTO ui_browser.sensor_data (sensor_id, ts, temperature) VALUES ('sensor_123', '2023-10-27 10:00:00+0000', 24.1)",
		"INSERT INTO ui_browser.sensor_data (sensor_id, ts, temperature) VALUES ('sensor_123', '2023-10-27 09:55:00+0000', 23.8)")
	var token int64
	if err := sess.Query("SELECT token(sensor_id) FROM ui_browser.sensor_data WHERE sensor_id = 'sensor_123'").Scan(&token); err != nil {
		t.Fatal(err)
	}
	base := "http://" + s.HTTPAddr().String()
	shots := t.ArtifactDir()
	page := func(name, path string) browserPage {
		return browserPage{URL: base + path, Width: 1400, Height: 900, Screenshot: filepath.Join(shots, name+".png")}
	}
	ring := page("ring", "/ui?ks=ui_browser")
	ring.Hover = "#arc-3"
	ring.Extract = map[string]string{"arcs": "#ring a > path > title", "shards": "#shards tr[data-shard]", "replication": "#replication"}
	key := page("key", "/ui/key?ks=ui_browser&table=sensor_data&k=sensor_123")
	key.Extract = map[string]string{"token": "#token", "agreement": "#agreement",
		"ts": "table.rows td:nth-child(2)", "temperature": "table.rows td:nth-child(3)"}
	key.Attrs = map[string]browserAttr{"replicas": {Selector: "#replicas tr[data-replica]", Attribute: "data-replica"}}
	table := page("table", "/ui/table?ks=ui_browser&table=sensor_data")
	table.Extract = map[string]string{"cql": "#cql", "indexes": ".indexes td", "psql": "pre.psql"}
	whatIf := page("whatif", "/ui/whatif?strategy=SimpleStrategy&rf=3&down=shard1&add=1")
	whatIf.Extract = map[string]string{"available": "#levels tr[data-level] td:nth-child(2)", "lost": "#lost", "growth": "#growth-table tr"}
	whatIf.Attrs = map[string]browserAttr{"levels": {Selector: "#levels tr[data-level]", Attribute: "data-level"}}
	design := page("design", "/ui/design?"+url.Values{"rf": {"2"},
		"ddl":  {"CREATE TABLE ui_browser.sensor_design (sensor_id text, ts timestamp, temperature double, PRIMARY KEY ((sensor_id), ts)) WITH CLUSTERING ORDER BY (ts DESC)"},
		"rows": {"sensor_id,ts,temperature\nsensor_123,2023-10-27 10:00:00+0000,24.1\nsensor_123,2023-10-27 10:05:00+0000,24.5\nsensor_9,2023-10-27 10:00:00+0000,19.0"}}.Encode())
	design.Extract = map[string]string{"tokens": ".partition .token", "replicas": ".partition .replica", "checks": "#checks tr[data-allowed]"}
	// Ranges are links: clicking one shows its details, no script needed.
	click := page("range", "/ui?ks=ui_browser")
	click.Click = "#arc-5"
	click.Extract = map[string]string{"bounds": "#range-bounds", "replicas": "#range-replicas tr"}
	// With JavaScript on, the pages load as well and break no rule of
	// their Content-Security-Policy (a violation is a console error).
	withJS := page("key-js", key.URL[len(base):])
	withJS.JavaScriptEnabled = true
	pages := []browserPage{ring, key, table, whatIf, click, withJS, design}
	got := browse(t, pages)
	for i, g := range got {
		if g.Error != "" || g.Status != 200 {
			t.Fatalf("%s: status %d, error %q", pages[i].URL, g.Status, g.Error)
		}
		if len(g.ConsoleErrors) > 0 {
			t.Errorf("%s: console errors %q", pages[i].URL, g.ConsoleErrors)
		}
		if info, err := os.Stat(g.Screenshot); err != nil || info.Size() < 1000 {
			t.Errorf("%s: screenshot %q missing or empty (%v)", pages[i].URL, g.Screenshot, err)
		} else {
			t.Logf("screenshot of %s: %s (%d bytes)", pages[i].URL, g.Screenshot, info.Size())
		}
	}

	// The key's token is SELECT token(...)'s, and its replicas are those
	// the ring page gives the range holding that token.
	k := got[1]
	if tok := k.Extract["token"]; len(tok) != 1 || tok[0] != strconv.FormatInt(token, 10) {
		t.Errorf("token shown %q, want %d", tok, token)
	}
	replicas := k.Attrs["replicas"]
	if len(replicas) != 2 {
		t.Fatalf("replicas shown %q, want 2", replicas)
	}
	arcs := got[0].Extract["arcs"]
	if n := len(tokenOwners(t)); len(arcs) != n {
		t.Fatalf("%d arcs, want %d", len(arcs), n)
	}
	holding := -1
	bounds := regexp.MustCompile(`^range (\d+): \((-?\d+), (-?\d+)\]`)
	for _, title := range arcs {
		m := bounds.FindStringSubmatch(title)
		if m == nil {
			t.Fatalf("arc title %q", title)
		}
		lo, _ := strconv.ParseInt(m[2], 10, 64)
		hi, _ := strconv.ParseInt(m[3], 10, 64)
		if (sharding.Range{Start: sharding.Token(lo), End: sharding.Token(hi)}).Contains(sharding.Token(token)) {
			holding, _ = strconv.Atoi(m[1])
			if !strings.Contains(title, "replicas: "+strings.Join(replicas, " ")) {
				t.Errorf("the ring gives range %s %q; the key page gives replicas %q", m[1], title, replicas)
			}
		}
	}
	if holding < 0 {
		t.Errorf("no arc holds token %d", token)
	}
	if a := k.Extract["agreement"]; len(a) != 1 || a[0] != "2 of 2 replicas answered and agree" {
		t.Errorf("agreement %q", a)
	}
	// The table builder places the same key where the key page does.
	d := got[6].Extract
	if i := slices.Index(d["tokens"], strconv.FormatInt(token, 10)); i < 0 {
		t.Errorf("the table builder's tokens %q lack sensor_123's %d", d["tokens"], token)
	} else if len(d["replicas"]) < 2*(i+1) || !slices.Equal(d["replicas"][2*i:2*i+2], replicas) {
		t.Errorf("the table builder's replicas %q, the key page's %q", d["replicas"], replicas)
	}
	if len(d["checks"]) < 4 {
		t.Errorf("the table builder checked %d queries", len(d["checks"]))
	}
	var rows []string
	for i, ts := range k.Extract["ts"] {
		rows = append(rows, ts+" "+k.Extract["temperature"][i])
	}
	want := []string{"2023-10-27 10:05:00.000000+0000 24.5", "2023-10-27 10:00:00.000000+0000 24.1", "2023-10-27 09:55:00.000000+0000 23.8"}
	if len(rows) != 6 || !slices.Equal(rows[:3], want) || !slices.Equal(rows[3:], want) {
		t.Errorf("rows on the replicas %q, want each replica's three rows newest first", rows)
	}
	if n := len(got[0].Extract["shards"]); n != 3 {
		t.Errorf("%d shards in the legend, want 3", n)
	}

	tb := got[2]
	if cql := tb.Extract["cql"]; len(cql) != 1 || !strings.Contains(cql[0], "CLUSTERING ORDER BY (ts DESC)") {
		t.Errorf("CQL definition %q", cql)
	}
	if idx := strings.Join(tb.Extract["indexes"], "\n"); !strings.Contains(idx, "UNIQUE btree (_token, sensor_id, ts DESC)") {
		t.Errorf("indexes %q lack the clustering index in DESC order", idx)
	}
	if psql := tb.Extract["psql"]; len(psql) != 3 || !strings.HasPrefix(psql[0], "psql -h ") {
		t.Errorf("psql commands %q", psql)
	}

	levels := map[string]string{}
	for i, l := range got[3].Attrs["levels"] {
		levels[l] = got[3].Extract["available"][i]
	}
	if levels["QUORUM"] != "yes" || levels["ALL"] != "no" || levels["ONE"] != "yes" {
		t.Errorf("what-if with shard1 down at RF 3: levels %v", levels)
	}
	if g := got[3].Extract["growth"]; len(g) != 5 {
		t.Errorf("growth table %q, want a header and four shards", g)
	}

	c := got[4]
	owners := tokenOwners(t)
	var tokens []int64
	for tok := range owners {
		tokens = append(tokens, tok)
	}
	slices.Sort(tokens)
	if b := c.Extract["bounds"]; len(b) != 1 || b[0] != fmt.Sprintf("(%d, %d]", tokens[4], tokens[5]) {
		t.Errorf("after clicking range 5: bounds %q, want (%d, %d]", b, tokens[4], tokens[5])
	}
	if r := c.Extract["replicas"]; len(r) != 3 {
		t.Errorf("after clicking range 5: replica rows %q, want a header and two", r)
	}
}
