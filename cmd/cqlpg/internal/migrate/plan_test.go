package migrate

import (
	"strings"
	"testing"
)

// TestPlanSchemaQuotes checks that names and strings from the origin,
// whatever they hold, reach the target's CQL quoted.
func TestPlanSchemaQuotes(t *testing.T) {
	origin := &Schema{Datacenters: []string{"dc1"}, Keyspaces: []*Keyspace{{
		Name:          `Odd"ks`,
		Replication:   map[string]string{"class": "org.apache.cassandra.locator.SimpleStrategy", "replication_factor": "1"},
		DurableWrites: true,
		Tables: []*Table{{
			Name: "t; DROP KEYSPACE x",
			Columns: []Column{
				{Name: "k", Type: "int", Kind: "partition_key", Position: 0, Order: "none"},
				{Name: `c"); --`, Type: "text", Kind: "clustering", Position: 0, Order: "desc"},
				{Name: "select", Type: "text", Kind: "regular", Position: -1, Order: "none"},
			},
			Options: map[string]string{"comment": "'it''s'"},
		}},
	}}}
	p, err := PlanSchema(origin, &Schema{}, []string{"dc1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := p.Statements[1].CQL
	want := `CREATE TABLE "Odd""ks"."t; DROP KEYSPACE x" (k int, "c""); --" text, "select" text, ` +
		`PRIMARY KEY ((k), "c""); --")) WITH CLUSTERING ORDER BY ("c""); --" DESC) AND comment = 'it''s'`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if got, want := p.Statements[0].CQL, `CREATE KEYSPACE "Odd""ks" WITH replication = `+
		`{'class': 'org.apache.cassandra.locator.SimpleStrategy', 'replication_factor': '1'} AND durable_writes = true`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// TestPlanSchemaDatacenters checks the refusals of a replication the
// target cannot hold.
func TestPlanSchemaDatacenters(t *testing.T) {
	origin := &Schema{Datacenters: []string{"a", "b"}, Keyspaces: []*Keyspace{{
		Name:        "ks",
		Replication: map[string]string{"class": "NetworkTopologyStrategy", "a": "3", "b": "2"},
	}}}
	_, err := PlanSchema(origin, &Schema{}, []string{"x"}, map[string]string{"a": "x", "b": "x"})
	if err == nil || !strings.Contains(err.Error(), "keyspace ks: datacenters a and b both map to x on the target") {
		t.Errorf("two datacenters onto one: %v", err)
	}
	p, err := PlanSchema(origin, &Schema{}, []string{"x", "y"}, map[string]string{"a": "x", "b": "y"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := p.Statements[0].CQL, "CREATE KEYSPACE ks WITH replication = "+
		"{'class': 'NetworkTopologyStrategy', 'x': '3', 'y': '2'} AND durable_writes = false"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// TestRangeBounds checks that the cuts of the ring cover it once.
func TestRangeBounds(t *testing.T) {
	for _, n := range []int{1, 3, 256} {
		prev := int64(0)
		for i := range n {
			start, end := rangeBounds(i, n)
			if i == 0 && start != -1<<63 || i > 0 && start != prev || end <= start {
				t.Fatalf("n=%d range %d: (%d, %d] after %d", n, i, start, end, prev)
			}
			prev = end
		}
		if prev != 1<<63-1 {
			t.Errorf("n=%d: the last range ends at %d", n, prev)
		}
	}
}
