package main_test

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cqlpg/cqlpg/gateway/advise"
)

// TestAdviseCommand runs cqlpg advise on a table keyed by a status of
// three values: the table output names the finding, the JSON output
// holds it with its evidence, a good table has none, and a missing table
// is an error.
func TestAdviseCommand(t *testing.T) {
	e := sharedBulkEnv(t)
	bin := buildCqlpg(t)
	e.exec(t, "CREATE KEYSPACE IF NOT EXISTS advcmd WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE IF NOT EXISTS advcmd.orders (status text, id int, PRIMARY KEY (status, id))",
		"CREATE TABLE IF NOT EXISTS advcmd.users (id uuid PRIMARY KEY, name text)")
	var stmts []string
	for i := range 1500 {
		stmts = append(stmts, "INSERT INTO advcmd.orders (status, id) VALUES ('"+[]string{"new", "paid", "shipped"}[i%3]+"', "+strconv.Itoa(i)+")")
	}
	e.exec(t, stmts...)
	e.exec(t, "INSERT INTO advcmd.users (id, name) VALUES (uuid(), 'a')")
	shards := []string{}
	for _, u := range e.urls {
		shards = append(shards, "--shard", u)
	}
	out, errOut, code := runCqlpg(bin, append(append([]string{"advise"}, shards...), "advcmd")...)
	if code != 0 || !strings.Contains(out, "advcmd.orders  few_partition_keys") || !strings.Contains(out, "1500 rows in 3 distinct partitions") ||
		strings.Contains(out, "advcmd.users") {
		t.Errorf("advise: exit %d\n%s\n%s", code, out, errOut)
	}
	out, errOut, code = runCqlpg(bin, append(append([]string{"advise", "--json"}, shards...), "advcmd.orders")...)
	var rep advise.Report
	if err := json.Unmarshal([]byte(out), &rep); code != 0 || err != nil {
		t.Fatalf("advise --json: exit %d, %v\n%s\n%s", code, err, out, errOut)
	}
	if rep.Tables != 1 || !slices.ContainsFunc(rep.Findings, func(f advise.Finding) bool {
		return f.Kind == advise.KindFewKeys && f.Table == "orders" && f.Rule != "" && f.Advice != ""
	}) {
		t.Errorf("advise --json: %+v", rep)
	}
	if _, errOut, code := runCqlpg(bin, append(append([]string{"advise"}, shards...), "advcmd.nope")...); code != 1 ||
		!strings.Contains(errOut, "no table matches advcmd.nope") {
		t.Errorf("a missing table: exit %d, %s", code, errOut)
	}
}
