package gateway

import (
	"slices"
	"strconv"
	"testing"

	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/sharding"
)

// TestSchemaEvents checks the events a gateway derives from another
// gateway's schema changes, by comparing its snapshots before and after.
func TestSchemaEvents(t *testing.T) {
	col := func(name, typ string, kind pgschema.ColumnKind) *pgschema.Column {
		ty, err := pgschema.ParseType(typ, nil)
		if err != nil {
			t.Fatal(err)
		}
		return &pgschema.Column{Name: name, Type: ty, Kind: kind}
	}
	table := func(ks, name string, extra ...*pgschema.Column) *pgschema.Table {
		cols := append([]*pgschema.Column{col("k", "int", pgschema.PartitionKey), col("v", "text", pgschema.Regular)}, extra...)
		return pgschema.NewTable(ks, name, [16]byte{byte(len(name))}, cols, nil)
	}
	keyspace := func(name string, rf int, tables ...*pgschema.Table) *pgschema.Keyspace {
		rep, err := sharding.ParseReplication(name, map[string]string{"class": "SimpleStrategy",
			"replication_factor": strconv.Itoa(rf)})
		if err != nil {
			t.Fatal(err)
		}
		k := &pgschema.Keyspace{Name: name, Replication: rep, DurableWrites: true,
			Tables: map[string]*pgschema.Table{}, Types: map[string]*pgschema.Type{}}
		for _, tb := range tables {
			k.Tables[tb.Name] = tb
		}
		return k
	}
	schema := func(ks ...*pgschema.Keyspace) *pgschema.Schema {
		m := map[string]*pgschema.Keyspace{}
		for _, k := range ks {
			m[k.Name] = k
		}
		return pgschema.NewSchema([16]byte{1}, m)
	}
	for _, tc := range []struct {
		name     string
		old, cur *pgschema.Schema
		want     []schemaEvent
	}{
		{"nothing", schema(keyspace("a", 1, table("a", "t"))), schema(keyspace("a", 1, table("a", "t"))), nil},
		{"keyspace with a table", schema(), schema(keyspace("a", 1, table("a", "t"))),
			[]schemaEvent{{"CREATED", "KEYSPACE", "a", ""}, {"CREATED", "TABLE", "a", "t"}}},
		{"table", schema(keyspace("a", 1)), schema(keyspace("a", 1, table("a", "t"))),
			[]schemaEvent{{"CREATED", "TABLE", "a", "t"}}},
		{"column", schema(keyspace("a", 1, table("a", "t"), table("a", "u"))),
			schema(keyspace("a", 1, table("a", "t", col("w", "int", pgschema.Regular)), table("a", "u"))),
			[]schemaEvent{{"UPDATED", "TABLE", "a", "t"}}},
		{"replication", schema(keyspace("a", 1, table("a", "t"))), schema(keyspace("a", 2, table("a", "t"))),
			[]schemaEvent{{"UPDATED", "KEYSPACE", "a", ""}}},
		{"dropped table", schema(keyspace("a", 1, table("a", "t"), table("a", "u"))), schema(keyspace("a", 1, table("a", "u"))),
			[]schemaEvent{{"DROPPED", "TABLE", "a", "t"}}},
		{"dropped keyspace", schema(keyspace("a", 1, table("a", "t")), keyspace("b", 1)), schema(keyspace("b", 1)),
			[]schemaEvent{{"DROPPED", "KEYSPACE", "a", ""}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := schemaEvents(tc.old, tc.cur); !slices.Equal(got, tc.want) {
				t.Errorf("events %v, want %v", got, tc.want)
			}
		})
	}
}
