package gateway_test

import (
	"context"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"github.com/jackc/pgx/v5"

	"github.com/cqlpg/cqlpg/gateway"
	"github.com/cqlpg/cqlpg/sharding"
)

// uiGateway starts a gateway of its own with the web view on, on the
// shared shards, and shuts it down when the test ends.
func uiGateway(t *testing.T, change func(*gateway.Config)) *gateway.Server {
	t.Helper()
	s := startGatewayWith(t, func(c *gateway.Config) {
		c.HTTP = "127.0.0.1:0"
		if change != nil {
			change(c)
		}
	})
	t.Cleanup(func() { s.Shutdown(context.Background()) })
	return s
}

// uiGet fetches a page of the web view and returns its status and body.
func uiGet(t *testing.T, s *gateway.Server, path string, user, password string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("GET", "http://"+s.HTTPAddr().String()+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if user != "" {
		req.SetBasicAuth(user, password)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

// uiPage fetches a page that must be served.
func uiPage(t *testing.T, s *gateway.Server, path string) string {
	t.Helper()
	code, body := uiGet(t, s, path, "", "")
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d\n%s", path, code, body)
	}
	return body
}

// textOf returns the text of the element with the given id, tags removed
// and entities decoded.
// The element ends at the first closing tag of its name: the pages never
// nest an element in one of the same name.
func textOf(t *testing.T, page, id string) string {
	t.Helper()
	open := regexp.MustCompile(`<(\w+)[^>]*\bid="` + regexp.QuoteMeta(id) + `"[^>]*>`).FindStringSubmatchIndex(page)
	if open == nil {
		t.Fatalf("no element %q on the page", id)
	}
	rest := page[open[1]:]
	end := strings.Index(rest, "</"+page[open[2]:open[3]]+">")
	if end < 0 {
		t.Fatalf("element %q is not closed", id)
	}
	return html.UnescapeString(tags.ReplaceAllString(rest[:end], ""))
}

// tags matches an HTML tag.
var tags = regexp.MustCompile(`<[^>]*>`)

// replicaNames lists the shard names of a key page's replica table.
func replicaNames(page string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`<tr data-replica="([^"]*)">`).FindAllStringSubmatch(page, -1) {
		out = append(out, html.UnescapeString(m[1]))
	}
	return out
}

// arcTitles returns each ring arc's hover text, by range index.
func arcTitles(page string) map[int]string {
	out := map[int]string{}
	re := regexp.MustCompile(`(?s)data-range="(\d+)"[^>]*><title>(.*?)</title>`)
	for _, m := range re.FindAllStringSubmatch(page, -1) {
		i, _ := strconv.Atoi(m[1])
		out[i] = html.UnescapeString(m[2])
	}
	return out
}

func keyPath(ks, table string, key ...string) string {
	v := url.Values{"ks": {ks}, "table": {table}}
	for _, k := range key {
		v.Add("k", k)
	}
	return "/ui/key?" + v.Encode()
}

// TestUIKeyPlacement checks the key page against CQL: the token of
// SELECT token(...), the replicas the ring page gives the key's range,
// the rows of each replica in clustering order, and their agreement.
func TestUIKeyPlacement(t *testing.T) {
	s := uiGateway(t, nil)
	sess := sessionOn(t, s, "")
	exec(t, sess, "CREATE KEYSPACE IF NOT EXISTS ui_place WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 2}",
		"DROP TABLE IF EXISTS ui_place.sensor_data",
		"CREATE TABLE ui_place.sensor_data (sensor_id text, day int, ts timestamp, temperature double, PRIMARY KEY ((sensor_id, day), ts)) WITH CLUSTERING ORDER BY (ts DESC)",
		"INSERT INTO ui_place.sensor_data (sensor_id, day, ts, temperature) VALUES ('sensor_123', 20231027, '2023-10-27 09:55:00+0000', 23.8)",
		"INSERT INTO ui_place.sensor_data (sensor_id, day, ts, temperature) VALUES ('sensor_123', 20231027, '2023-10-27 10:05:00+0000', 24.5)",
		"INSERT INTO ui_place.sensor_data (sensor_id, day, ts, temperature) VALUES ('sensor_123', 20231027, '2023-10-27 10:00:00+0000', 24.1)")
	var want int64
	if err := sess.Query("SELECT token(sensor_id, day) FROM ui_place.sensor_data WHERE sensor_id = 'sensor_123' AND day = 20231027").Scan(&want); err != nil {
		t.Fatal(err)
	}
	page := uiPage(t, s, keyPath("ui_place", "sensor_data", "sensor_123", "20231027"))
	if got := textOf(t, page, "token"); got != strconv.FormatInt(want, 10) {
		t.Errorf("token %s, want %d from SELECT token(...)", got, want)
	}
	// The statement the page shows gives the same token.
	var viaPage int64
	if err := sess.Query(textOf(t, page, "token-cql")).Scan(&viaPage); err != nil || viaPage != want {
		t.Errorf("the page's statement gave %d (%v), want %d", viaPage, err, want)
	}
	replicas := replicaNames(page)
	if len(replicas) != 2 {
		t.Fatalf("replicas %q, want 2", replicas)
	}
	// The ring page gives the range holding the token the same replicas.
	ring := uiPage(t, s, "/ui?ks=ui_place")
	found := false
	for i, title := range arcTitles(ring) {
		var lo, hi int64
		if _, err := fmt.Sscanf(title, "range "+strconv.Itoa(i)+": (%d, %d]", &lo, &hi); err != nil {
			t.Fatalf("arc %d title %q: %v", i, title, err)
		}
		if (sharding.Range{Start: sharding.Token(lo), End: sharding.Token(hi)}).Contains(sharding.Token(want)) {
			found = true
			if !strings.Contains(title, "replicas: "+strings.Join(replicas, " ")) {
				t.Errorf("range %d holding token %d: %q, want replicas %q", i, want, title, replicas)
			}
		}
	}
	if !found {
		t.Errorf("no range of the ring page holds token %d", want)
	}
	rows := regexp.MustCompile(`<td>2023-10-27 ([0-9:]+)\.000000\+0000</td>`).FindAllStringSubmatch(html.UnescapeString(page), -1)
	var times []string
	for _, m := range rows {
		times = append(times, m[1])
	}
	if got := strings.Join(times, " "); got != "10:05:00 10:00:00 09:55:00 10:05:00 10:00:00 09:55:00" {
		t.Errorf("rows on the replicas in order %q, want each replica's three rows newest first", got)
	}
	if got := textOf(t, page, "agreement"); got != "2 of 2 replicas answered and agree" {
		t.Errorf("agreement %q", got)
	}

	// A write through psql to one replica's Postgres lands there alone:
	// the replicas now disagree, and the page says which.
	conn := shardConn(t, replicas[1])
	if _, err := conn.Exec(context.Background(),
		`UPDATE ui_place.sensor_data SET temperature = 99.5 WHERE sensor_id = 'sensor_123' AND day = 20231027 AND ts = '2023-10-27 10:00:00+00'`); err != nil {
		t.Fatal(err)
	}
	page = uiPage(t, s, keyPath("ui_place", "sensor_data", "sensor_123", "20231027"))
	if !strings.Contains(page, "the replicas disagree") || !strings.Contains(page, "99.5") {
		t.Errorf("after a write to %s alone the page does not show the replicas disagreeing", replicas[1])
	}
	// Choosing another table in the form drops the key typed for the
	// one before, instead of placing it in the new table.
	exec(t, sess, "CREATE TABLE IF NOT EXISTS ui_place.other (id uuid PRIMARY KEY)")
	page = uiPage(t, s, "/ui/key?t=ui_place/other&prev=ui_place/sensor_data&k=sensor_123&k=20231027")
	if strings.Contains(page, `id="error"`) || strings.Contains(page, `id="token"`) || !strings.Contains(page, `data-column="id"`) {
		t.Error("choosing another table did not show its empty key form")
	}
	// A bad value is reported, not a server error.
	page = uiPage(t, s, keyPath("ui_place", "sensor_data", "sensor_123", "not a number"))
	if got := textOf(t, page, "error"); !strings.HasPrefix(got, "day: ") {
		t.Errorf("error %q, want one naming the column day", got)
	}
}

// shardConn connects to the Postgres of the shard named name.
func shardConn(t *testing.T, name string) *pgx.Conn {
	t.Helper()
	ctx := context.Background()
	for _, u := range shardURLs {
		c, err := pgx.Connect(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		var n string
		if err := c.QueryRow(ctx, "SELECT name FROM cqlpg.node").Scan(&n); err == nil && n == name {
			t.Cleanup(func() { c.Close(ctx) })
			return c
		}
		c.Close(ctx)
	}
	t.Fatalf("no shard named %q", name)
	return nil
}

// tokenOwners reads every shard's tokens from its catalog: token → shard.
func tokenOwners(t *testing.T) map[int64]string {
	t.Helper()
	ctx := context.Background()
	out := map[int64]string{}
	for _, u := range shardURLs {
		c, err := pgx.Connect(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		var name string
		var tokens []int64
		err = c.QueryRow(ctx, "SELECT name, tokens FROM cqlpg.node").Scan(&name, &tokens)
		c.Close(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, tok := range tokens {
			out[tok] = name
		}
	}
	return out
}

// TestUIRing checks the ring page against the shards' own catalogs: one
// arc per token, each range (previous token, token] with the token's
// shard as its primary, and a range's details.
func TestUIRing(t *testing.T) {
	s := uiGateway(t, nil)
	owners := tokenOwners(t)
	var tokens []int64
	for tok := range owners {
		tokens = append(tokens, tok)
	}
	slices.Sort(tokens)
	page := uiPage(t, s, "/ui")
	titles := arcTitles(page)
	if len(titles) != len(tokens) {
		t.Fatalf("%d arcs, want one per token: %d", len(titles), len(tokens))
	}
	for i, tok := range tokens {
		prev := tokens[(i+len(tokens)-1)%len(tokens)]
		want := fmt.Sprintf("range %d: (%d, %d]\nprimary %s (", i, prev, tok, owners[tok])
		if !strings.HasPrefix(titles[i], want) {
			t.Errorf("arc %d: %q, want it to start %q", i, titles[i], want)
		}
	}
	for _, name := range []string{"shard0", "shard1", "shard2"} {
		if !strings.Contains(page, `<tr data-shard="`+name+`">`) {
			t.Errorf("shard %s is not in the legend", name)
		}
	}
	resp, err := http.Get("http://" + s.HTTPAddr().String() + "/ui")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !resp.Uncompressed || !strings.Contains(string(body), "</html>") {
		t.Errorf("the ring page was not sent compressed to a client that accepts gzip, or not whole")
	}
	h := resp.Header
	if !regexp.MustCompile(`^build;dur=\d+\.\d{3}$`).MatchString(h.Get("Server-Timing")) ||
		!strings.Contains(h.Get("Content-Security-Policy"), "default-src 'none'") || h.Get("Content-Type") != "text/html; charset=utf-8" {
		t.Errorf("response headers %v", h)
	}
	page = uiPage(t, s, "/ui?range=3")
	if got, want := textOf(t, page, "range-bounds"), fmt.Sprintf("(%d, %d]", tokens[2], tokens[3]); got != want {
		t.Errorf("range 3 is %s, want %s", got, want)
	}
	for _, bad := range []string{"/ui?range=-1", "/ui?range=" + strconv.Itoa(len(tokens)), "/ui?range=x", "/ui?ks=nosuch"} {
		if code, _ := uiGet(t, s, bad, "", ""); code != http.StatusBadRequest {
			t.Errorf("GET %s: %d, want 400", bad, code)
		}
	}
}

// TestUITableLayout checks the layout page against each shard's Postgres:
// the table and its columns' types, the clustering index with its DESC
// order, and the row counts.
func TestUITableLayout(t *testing.T) {
	s := uiGateway(t, nil)
	sess := sessionOn(t, s, "")
	exec(t, sess, "CREATE KEYSPACE IF NOT EXISTS ui_layout WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 2}",
		"DROP TABLE IF EXISTS ui_layout.readings",
		"CREATE TABLE ui_layout.readings (sensor_id uuid, ts timestamp, seq int, site text static, value double, tags set<text>, PRIMARY KEY (sensor_id, ts, seq)) WITH CLUSTERING ORDER BY (ts DESC, seq ASC)")
	for i := range 40 {
		exec(t, sess, fmt.Sprintf("INSERT INTO ui_layout.readings (sensor_id, ts, seq, value) VALUES (%s, %d, 1, 1.5)", gocql.TimeUUID(), i))
	}
	page := uiPage(t, s, "/ui/table?ks=ui_layout&table=readings")
	if cql := textOf(t, page, "cql"); !strings.HasPrefix(cql, "CREATE TABLE ui_layout.readings (") || !strings.Contains(cql, "CLUSTERING ORDER BY (ts DESC, seq ASC)") {
		t.Errorf("CQL definition %q", cql)
	}
	columns := html.UnescapeString(textOfTable(t, page, "columns"))
	for _, want := range []string{"ts|timestamp|clustering DESC|ts|timestamp with time zone", "seq|int|clustering ASC|seq|integer",
		"site|text|static|site|text", "sensor_id|uuid|partition key|sensor_id|uuid", "tags|set<text>|regular|tags|text[]"} {
		if !strings.Contains(columns, want) {
			t.Errorf("columns table lacks %q:\n%s", want, columns)
		}
	}
	ctx := context.Background()
	total := 0
	for _, u := range shardURLs {
		c, err := pgx.Connect(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		var name string
		var n int
		var def string
		err = c.QueryRow(ctx, "SELECT name FROM cqlpg.node").Scan(&name)
		if err == nil {
			err = c.QueryRow(ctx, "SELECT count(*) FROM ui_layout.readings").Scan(&n)
		}
		if err == nil {
			err = c.QueryRow(ctx, "SELECT indexdef FROM pg_indexes WHERE schemaname = 'ui_layout' AND indexname = 'readings$key'").Scan(&def)
		}
		c.Close(ctx)
		if err != nil {
			t.Fatal(err)
		}
		total += n
		card := regexp.MustCompile(`(?s)<div class="card shard"[^>]*data-shard="` + name + `">(.*?)</div>`).FindStringSubmatch(page)
		if card == nil {
			t.Fatalf("no card for shard %s", name)
		}
		body := html.UnescapeString(card[1])
		if !strings.Contains(body, fmt.Sprintf(`<code>ui_layout.readings</code> · <span class="rows">%d</span> rows stored`, n)) {
			t.Errorf("shard %s: page does not show its %d rows:\n%s", name, n, body)
		}
		if !strings.Contains(def, "(_token, sensor_id, ts DESC, seq)") || !strings.Contains(body, "UNIQUE btree (_token, sensor_id, ts DESC, seq)") {
			t.Errorf("shard %s: key index %q not shown as UNIQUE btree (_token, sensor_id, ts DESC, seq)", name, def)
		}
		if !strings.Contains(body, "psql -h ") || !strings.Contains(body, `-c '\d+ "ui_layout"."readings"'`) {
			t.Errorf("shard %s: psql command missing:\n%s", name, body)
		}
	}
	if total != 80 {
		t.Errorf("%d rows on the shards, want 40 rows x 2 replicas", total)
	}

	// A count that takes too long, here waiting on a lock held on
	// shard0, gives way to Postgres's estimate.
	s.SetUICountLimits(200*time.Millisecond, 1<<62)
	conn := shardConn(t, "shard0")
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "LOCK TABLE ui_layout.readings IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	page = uiPage(t, s, "/ui/table?ks=ui_layout&table=readings")
	card := regexp.MustCompile(`(?s)data-shard="shard0">(.*?)</div>`).FindStringSubmatch(page)
	if card == nil || !strings.Contains(card[1], `<code>ui_layout.readings</code> · <span class="rows">≈`) || !strings.Contains(card[1], "(Postgres's estimate") {
		t.Errorf("a count waiting on a lock did not give way to the estimate:\n%v", card)
	}
	if strings.Contains(regexp.MustCompile(`(?s)data-shard="shard1">(.*?)</div>`).FindString(page), "≈") {
		t.Error("shard1's count, which nothing blocks, was estimated")
	}
	tx.Rollback(ctx)

	// A table Postgres estimates past the limit is not scanned, unless
	// the page asks for exact counts.
	for _, u := range shardURLs {
		c, err := pgx.Connect(ctx, u)
		if err == nil {
			_, err = c.Exec(ctx, "ANALYZE ui_layout.readings")
			c.Close(ctx)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	s.SetUICountLimits(2*time.Second, 10)
	page = uiPage(t, s, "/ui/table?ks=ui_layout&table=readings")
	if n := strings.Count(page, "(Postgres's estimate: a large table; <a href=\"/ui/table?exact=1&amp;ks=ui_layout&amp;table=readings\">count exactly</a>)"); n != 3 {
		t.Errorf("%d shards estimate the table as large, want 3", n)
	}
	page = uiPage(t, s, "/ui/table?exact=1&ks=ui_layout&table=readings")
	if strings.Contains(page, "≈") || strings.Count(page, "<code>ui_layout.readings</code> · <span class=\"rows\">") != 3 {
		t.Error("asked for exact counts, the page still estimates")
	}
}

// textOfTable returns a table's rows, cells joined by |, rows by newlines.
func textOfTable(t *testing.T, page, id string) string {
	t.Helper()
	m := regexp.MustCompile(`(?s)<table id="` + id + `"[^>]*>(.*?)</table>`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no table %q", id)
	}
	var rows []string
	for _, tr := range regexp.MustCompile(`(?s)<tr[^>]*>(.*?)</tr>`).FindAllStringSubmatch(m[1], -1) {
		var cells []string
		for _, td := range regexp.MustCompile(`(?s)<t[dh][^>]*>(.*?)</t[dh]>`).FindAllStringSubmatch(tr[1], -1) {
			cells = append(cells, strings.TrimSpace(tags.ReplaceAllString(td[1], "")))
		}
		rows = append(rows, strings.Join(cells, "|"))
	}
	return strings.Join(rows, "\n")
}

// TestUIWhatIf checks the simulator on the live three-shard ring.
func TestUIWhatIf(t *testing.T) {
	s := uiGateway(t, nil)
	ranges := len(tokenOwners(t))
	levels := func(page string) map[string]string {
		out := map[string]string{}
		for _, row := range strings.Split(textOfTable(t, page, "levels"), "\n")[1:] {
			cells := strings.Split(row, "|")
			out[cells[0]] = cells[1] + " " + cells[2]
		}
		return out
	}
	check := func(query string, want map[string]string, lost string) {
		t.Helper()
		page := uiPage(t, s, "/ui/whatif?"+query)
		got := levels(page)
		for l, w := range want {
			if got[l] != w {
				t.Errorf("%s: %s is %q, want %q", query, l, got[l], w)
			}
		}
		if got := textOf(t, page, "lost"); !strings.Contains(got, lost) {
			t.Errorf("%s: quorum %q, want %q", query, got, lost)
		}
	}
	all := strconv.Itoa(ranges)
	check("strategy=SimpleStrategy&rf=3", map[string]string{"ONE": "yes 0", "QUORUM": "yes 0", "ALL": "yes 0"}, "every range keeps its quorum")
	// With three replicas on three shards, one shard down costs ALL
	// everywhere and QUORUM nowhere; two cost QUORUM everywhere.
	check("strategy=SimpleStrategy&rf=3&down=shard1", map[string]string{"ONE": "yes 0", "TWO": "yes 0", "QUORUM": "yes 0", "ALL": "no " + all, "THREE": "no " + all}, "every range keeps its quorum")
	check("strategy=SimpleStrategy&rf=3&down=shard1&down=shard2", map[string]string{"ANY": "yes 0", "ONE": "yes 0", "QUORUM": "no " + all, "SERIAL": "no " + all}, all+" ranges (100.0% of the ring) have lost their quorum")
	// With one replica, a shard down loses exactly the ranges it owns.
	owned := 0
	for _, name := range tokenOwners(t) {
		if name == "shard0" {
			owned++
		}
	}
	check("strategy=SimpleStrategy&rf=1&down=shard0", map[string]string{"ONE": "no " + strconv.Itoa(owned), "ANY": "yes 0"}, strconv.Itoa(owned)+" ranges")

	page := uiPage(t, s, "/ui/whatif?strategy=SimpleStrategy&rf=2&add=1")
	growth := html.UnescapeString(textOfTable(t, page, "growth-table"))
	if !strings.Contains(growth, "shard3 (new)|0.0%|") || strings.Count(growth, "\n") != 4 {
		t.Errorf("growth table:\n%s", growth)
	}
	page = uiPage(t, s, "/ui/whatif?strategy=SimpleStrategy&rf=abc")
	if got := textOf(t, page, "error"); !strings.Contains(got, "not a replication factor") {
		t.Errorf("error %q", got)
	}
	if code, _ := uiGet(t, s, "/ui/whatif?down=nosuch", "", ""); code != http.StatusBadRequest {
		t.Errorf("an unknown shard: %d, want 400", code)
	}
	page = uiPage(t, s, "/ui/whatif?strategy=NetworkTopologyStrategy&rf.datacenter1=2")
	if got := textOf(t, page, "replication"); !strings.Contains(got, "'datacenter1': '2'") {
		t.Errorf("replication %q", got)
	}
}

// TestUIHostileNames checks that names and values that are HTML, SVG or
// shell syntax are shown as text on every page, never interpreted.
func TestUIHostileNames(t *testing.T) {
	s := uiGateway(t, nil)
	sess := sessionOn(t, s, "")
	const col = `<script>alert('col')</script>`
	const key = `'"><svg onload=alert(1)>`
	const val = `</td></tr></table><script>alert("v")</script>`
	exec(t, sess, "CREATE KEYSPACE IF NOT EXISTS ui_hostile WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}",
		"DROP TABLE IF EXISTS ui_hostile.t",
		`CREATE TABLE ui_hostile.t (k text, "`+col+`" text, PRIMARY KEY (k, "`+col+`"))`)
	if err := sess.Query(`INSERT INTO ui_hostile.t (k, "`+col+`") VALUES (?, ?)`, key, val).Exec(); err != nil {
		t.Fatal(err)
	}
	pages := []string{keyPath("ui_hostile", "t", key), "/ui/table?ks=ui_hostile&table=t", "/ui?ks=ui_hostile", "/ui/whatif?ks=ui_hostile"}
	for _, p := range pages {
		page := uiPage(t, s, p)
		for _, raw := range []string{"<script>alert", "<svg onload", "</table><script>"} {
			if strings.Contains(page, raw) {
				t.Errorf("%s: the page holds %q unescaped", p, raw)
			}
		}
	}
	page := uiPage(t, s, pages[0])
	text := html.UnescapeString(page)
	for _, want := range []string{col, key, val} {
		if !strings.Contains(text, want) {
			t.Errorf("key page does not show %q as text", want)
		}
	}
	if !strings.Contains(page, "3 of 3 replicas answered and agree") {
		t.Error("the hostile key was not read from its three replicas")
	}
	// The page's token statement quotes the key as a CQL literal.
	var viaPage, want int64
	if err := sess.Query(textOf(t, page, "token-cql")).Scan(&viaPage); err != nil {
		t.Fatalf("the page's statement %q: %v", textOf(t, page, "token-cql"), err)
	}
	if err := sess.Query("SELECT token(k) FROM ui_hostile.t WHERE k = ?", key).Scan(&want); err != nil || viaPage != want {
		t.Errorf("token %d via the page's statement, %d via a bound value (%v)", viaPage, want, err)
	}
	if text := html.UnescapeString(uiPage(t, s, pages[1])); !strings.Contains(text, "<td>"+col+"</td>") {
		t.Errorf("layout page does not show the column %q", col)
	}
}

// TestUIAuth checks that with authentication on the view asks for a CQL
// login, counts failed ones as CQL does, and shows rows only to roles
// that may SELECT them.
func TestUIAuth(t *testing.T) {
	s := uiGateway(t, func(c *gateway.Config) {
		c.Auth = gateway.AuthConfig{Enabled: true, SuperuserPassword: authSuperuserPassword}
	})
	admin := loginSession(t, s, "cassandra", authSuperuserPassword)
	exec(t, admin, "CREATE KEYSPACE IF NOT EXISTS ui_auth WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"DROP TABLE IF EXISTS ui_auth.t",
		"CREATE TABLE ui_auth.t (k int PRIMARY KEY, secret text)",
		"INSERT INTO ui_auth.t (k, secret) VALUES (1, 'hidden value')",
		"DROP ROLE IF EXISTS ui_reader",
		"CREATE ROLE ui_reader WITH PASSWORD = 'reader pw' AND LOGIN = true")
	for _, p := range []string{"/ui", "/ui/key", "/ui/table", "/ui/whatif"} {
		if code, _ := uiGet(t, s, p, "", ""); code != http.StatusUnauthorized {
			t.Errorf("GET %s without a login: %d, want 401", p, code)
		}
		if code, _ := uiGet(t, s, p, "ui_reader", "wrong"); code != http.StatusUnauthorized {
			t.Errorf("GET %s with a wrong password: %d, want 401", p, code)
		}
		if code, _ := uiGet(t, s, p, "ui_reader", "reader pw"); code != http.StatusOK {
			t.Errorf("GET %s logged in: %d, want 200", p, code)
		}
	}
	key := keyPath("ui_auth", "t", "1")
	_, page := uiGet(t, s, key, "ui_reader", "reader pw")
	if strings.Contains(page, "hidden value") || !strings.Contains(html.UnescapeString(page), "User ui_reader has no SELECT permission on <table ui_auth.t> or any of its parents") {
		t.Errorf("a role without SELECT: the key page shows the rows or no refusal")
	}
	_, page = uiGet(t, s, "/ui/table?ks=ui_auth&table=t", "ui_reader", "reader pw")
	if strings.Contains(page, `class="rows"`) || !strings.Contains(page, "Row counts are shown to roles that may SELECT the table") {
		t.Errorf("a role without SELECT sees the row counts")
	}
	exec(t, admin, "GRANT SELECT ON ui_auth.t TO ui_reader")
	_, page = uiGet(t, s, key, "ui_reader", "reader pw")
	if !strings.Contains(page, "hidden value") {
		t.Errorf("a role with SELECT does not see the rows")
	}
	_, page = uiGet(t, s, "/ui/table?ks=ui_auth&table=t", "ui_reader", "reader pw")
	if !strings.Contains(page, `class="rows"`) {
		t.Errorf("a role with SELECT does not see the row counts")
	}
	if !strings.Contains(page, "logged in as ui_reader") {
		t.Errorf("the page does not say who is logged in")
	}
}

// TestUIShardDown kills one of three shards: the pages show it down, the
// key page reads the replicas still up and says which it did not ask,
// and the simulator starts from the live outage.
func TestUIShardDown(t *testing.T) {
	fc := startFailureClusterWith(t, func(c *gateway.Config) { c.HTTP = "127.0.0.1:0" })
	s := fc.gw
	sess := sessionOn(t, s, "")
	exec(t, sess, "CREATE KEYSPACE ui_down WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}",
		"CREATE TABLE ui_down.t (k int, c int, v text, PRIMARY KEY (k, c))",
		"INSERT INTO ui_down.t (k, c, v) VALUES (1, 1, 'one')", "INSERT INTO ui_down.t (k, c, v) VALUES (1, 2, 'two')")
	if err := fc.clusters[2].Kill(); err != nil {
		t.Fatal(err)
	}
	// The gateway learns of it from the next write that reaches it.
	deadline := time.Now().Add(20 * time.Second)
	for {
		sess.Query("INSERT INTO ui_down.t (k, c, v) VALUES (2, 1, 'x')").Consistency(gocql.One).Exec()
		if strings.Contains(uiPage(t, s, "/ui"), `<span class="down">down</span>`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the ring page never showed a shard down")
		}
		time.Sleep(100 * time.Millisecond)
	}
	page := uiPage(t, s, keyPath("ui_down", "t", "1"))
	if n := strings.Count(page, `<span class="down">down</span>`); n != 1 {
		t.Errorf("key page shows %d replicas down, want 1", n)
	}
	if !strings.Contains(page, "down: not asked") || !strings.Contains(page, "2 of 3 replicas answered and agree") {
		t.Errorf("key page does not read the two replicas up and leave out the one down")
	}
	if n := strings.Count(html.UnescapeString(page), "<td>one</td>"); n != 2 {
		t.Errorf("the row is shown for %d replicas, want 2", n)
	}
	page = uiPage(t, s, "/ui/table?ks=ui_down&table=t")
	if n := strings.Count(page, "down: not asked"); n != 1 {
		t.Errorf("layout page leaves out %d shards, want 1", n)
	}
	// The simulator's first view is the live outage: at RF 3 one shard
	// down costs ALL, not QUORUM.
	page = uiPage(t, s, "/ui/whatif?ks=ui_down")
	if !regexp.MustCompile(`value="shard2" checked`).MatchString(page) {
		t.Error("the simulator does not start with the shard that is down marked")
	}
	levels := textOfTable(t, page, "levels")
	if !strings.Contains(levels, "QUORUM|yes|0") || !strings.Contains(levels, "ALL|no|") {
		t.Errorf("levels with the live outage:\n%s", levels)
	}
}
