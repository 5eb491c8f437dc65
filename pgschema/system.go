package pgschema

import (
	"crypto/md5"
	"fmt"

	"github.com/cqlpg/cqlpg/sharding"
)

// The system keyspaces are virtual: their tables have Cassandra's column
// sets (Cassandra 4.1) so that drivers can read them, and the gateway fills
// their rows from its own state and the catalog.

// virtualTable declares a system table: columns as "name type" pairs in
// declaration order, then the partition key and clustering column names.
type virtualTable struct {
	keyspace, name string
	columns        [][2]string
	partition      []string
	clustering     []string
}

var tableOptions = [][2]string{
	{"additional_write_policy", "text"}, {"bloom_filter_fp_chance", "double"},
	{"caching", "frozen<map<text, text>>"}, {"cdc", "boolean"}, {"comment", "text"},
	{"compaction", "frozen<map<text, text>>"}, {"compression", "frozen<map<text, text>>"},
	{"crc_check_chance", "double"}, {"dclocal_read_repair_chance", "double"},
	{"default_time_to_live", "int"}, {"extensions", "frozen<map<text, blob>>"},
	{"gc_grace_seconds", "int"}, {"id", "uuid"}, {"max_index_interval", "int"},
	{"memtable", "text"}, {"memtable_flush_period_in_ms", "int"}, {"min_index_interval", "int"},
	{"read_repair", "text"}, {"read_repair_chance", "double"}, {"speculative_retry", "text"},
}

func with(cols [][2]string, more ...[2]string) [][2]string {
	return append(append([][2]string(nil), cols...), more...)
}

var virtualTables = []virtualTable{
	{"system", "local", [][2]string{
		{"key", "text"}, {"bootstrapped", "text"}, {"broadcast_address", "inet"},
		{"broadcast_port", "int"}, {"cluster_name", "text"}, {"cql_version", "text"},
		{"data_center", "text"}, {"gossip_generation", "int"}, {"host_id", "uuid"},
		{"listen_address", "inet"}, {"listen_port", "int"}, {"native_protocol_version", "text"},
		{"partitioner", "text"}, {"rack", "text"}, {"release_version", "text"},
		{"rpc_address", "inet"}, {"rpc_port", "int"}, {"schema_version", "uuid"},
		{"tokens", "set<text>"}, {"truncated_at", "map<uuid, blob>"},
	}, []string{"key"}, nil},
	{"system", "peers_v2", [][2]string{
		{"peer", "inet"}, {"peer_port", "int"}, {"data_center", "text"}, {"host_id", "uuid"},
		{"native_address", "inet"}, {"native_port", "int"}, {"preferred_ip", "inet"},
		{"preferred_port", "int"}, {"rack", "text"}, {"release_version", "text"},
		{"schema_version", "uuid"}, {"tokens", "set<text>"},
	}, []string{"peer"}, []string{"peer_port"}},
	{"system", "built_views", [][2]string{
		{"keyspace_name", "text"}, {"view_name", "text"}, {"status_replicated", "boolean"},
	}, []string{"keyspace_name"}, []string{"view_name"}},
	{"system_distributed", "view_build_status", [][2]string{
		{"keyspace_name", "text"}, {"view_name", "text"}, {"host_id", "uuid"}, {"status", "text"},
	}, []string{"keyspace_name", "view_name"}, []string{"host_id"}},
	{"system", "IndexInfo", [][2]string{
		{"table_name", "text"}, {"index_name", "text"}, {"value", "blob"},
	}, []string{"table_name"}, []string{"index_name"}},
	{"system", "peers", [][2]string{
		{"peer", "inet"}, {"data_center", "text"}, {"host_id", "uuid"}, {"preferred_ip", "inet"},
		{"rack", "text"}, {"release_version", "text"}, {"rpc_address", "inet"},
		{"schema_version", "uuid"}, {"tokens", "set<text>"},
	}, []string{"peer"}, nil},
	{"system_traces", "sessions", [][2]string{
		{"session_id", "uuid"}, {"client", "inet"}, {"command", "text"}, {"coordinator", "inet"},
		{"coordinator_port", "int"}, {"duration", "int"}, {"parameters", "map<text, text>"},
		{"request", "text"}, {"started_at", "timestamp"},
	}, []string{"session_id"}, nil},
	{"system_traces", "events", [][2]string{
		{"session_id", "uuid"}, {"event_id", "timeuuid"}, {"activity", "text"}, {"source", "inet"},
		{"source_elapsed", "int"}, {"source_port", "int"}, {"thread", "text"},
	}, []string{"session_id"}, []string{"event_id"}},
	{"system_schema", "keyspaces", [][2]string{
		{"keyspace_name", "text"}, {"durable_writes", "boolean"},
		{"replication", "frozen<map<text, text>>"},
	}, []string{"keyspace_name"}, nil},
	{"system_schema", "tables", with([][2]string{{"keyspace_name", "text"}, {"table_name", "text"}},
		append(tableOptions, [2]string{"flags", "frozen<set<text>>"})...),
		[]string{"keyspace_name"}, []string{"table_name"}},
	{"system_schema", "columns", [][2]string{
		{"keyspace_name", "text"}, {"table_name", "text"}, {"column_name", "text"},
		{"clustering_order", "text"}, {"column_name_bytes", "blob"}, {"kind", "text"},
		{"position", "int"}, {"type", "text"},
	}, []string{"keyspace_name"}, []string{"table_name", "column_name"}},
	{"system_schema", "dropped_columns", [][2]string{
		{"keyspace_name", "text"}, {"table_name", "text"}, {"column_name", "text"},
		{"dropped_time", "timestamp"}, {"kind", "text"}, {"type", "text"},
	}, []string{"keyspace_name"}, []string{"table_name", "column_name"}},
	{"system_schema", "types", [][2]string{
		{"keyspace_name", "text"}, {"type_name", "text"},
		{"field_names", "frozen<list<text>>"}, {"field_types", "frozen<list<text>>"},
	}, []string{"keyspace_name"}, []string{"type_name"}},
	{"system_schema", "functions", [][2]string{
		{"keyspace_name", "text"}, {"function_name", "text"},
		{"argument_types", "frozen<list<text>>"}, {"argument_names", "frozen<list<text>>"},
		{"body", "text"}, {"called_on_null_input", "boolean"}, {"language", "text"},
		{"return_type", "text"},
	}, []string{"keyspace_name"}, []string{"function_name", "argument_types"}},
	{"system_schema", "aggregates", [][2]string{
		{"keyspace_name", "text"}, {"aggregate_name", "text"},
		{"argument_types", "frozen<list<text>>"}, {"final_func", "text"}, {"initcond", "text"},
		{"return_type", "text"}, {"state_func", "text"}, {"state_type", "text"},
	}, []string{"keyspace_name"}, []string{"aggregate_name", "argument_types"}},
	{"system_schema", "views", with([][2]string{
		{"keyspace_name", "text"}, {"view_name", "text"}, {"base_table_id", "uuid"},
		{"base_table_name", "text"}, {"include_all_columns", "boolean"}, {"where_clause", "text"},
	}, tableOptions...), []string{"keyspace_name"}, []string{"view_name"}},
	{"system_schema", "indexes", [][2]string{
		{"keyspace_name", "text"}, {"table_name", "text"}, {"index_name", "text"},
		{"kind", "text"}, {"options", "frozen<map<text, text>>"},
	}, []string{"keyspace_name"}, []string{"table_name", "index_name"}},
	{"system_schema", "triggers", [][2]string{
		{"keyspace_name", "text"}, {"table_name", "text"}, {"trigger_name", "text"},
		{"options", "frozen<map<text, text>>"},
	}, []string{"keyspace_name"}, []string{"table_name", "trigger_name"}},
	{"system_auth", "roles", [][2]string{
		{"role", "text"}, {"can_login", "boolean"}, {"is_superuser", "boolean"}, {"member_of", "set<text>"},
		{"salted_hash", "text"},
	}, []string{"role"}, nil},
	{"system_auth", "role_members", [][2]string{{"role", "text"}, {"member", "text"}},
		[]string{"role"}, []string{"member"}},
	{"system_auth", "role_permissions", [][2]string{
		{"role", "text"}, {"resource", "text"}, {"permissions", "set<text>"},
	}, []string{"role"}, []string{"resource"}},
	{"system_views", "clients", [][2]string{
		{"address", "inet"}, {"port", "int"}, {"hostname", "text"}, {"username", "text"},
		{"connection_stage", "text"}, {"protocol_version", "int"}, {"client_options", "map<text, text>"},
		{"driver_name", "text"}, {"driver_version", "text"}, {"request_count", "bigint"},
		{"ssl_enabled", "boolean"}, {"ssl_protocol", "text"}, {"ssl_cipher_suite", "text"},
	}, []string{"address"}, []string{"port"}},
	{"system_views", "settings", [][2]string{{"name", "text"}, {"value", "text"}}, []string{"name"}, nil},
	{"system_virtual_schema", "keyspaces", [][2]string{{"keyspace_name", "text"}},
		[]string{"keyspace_name"}, nil},
	{"system_virtual_schema", "tables", [][2]string{
		{"keyspace_name", "text"}, {"table_name", "text"}, {"comment", "text"},
	}, []string{"keyspace_name"}, []string{"table_name"}},
	{"system_virtual_schema", "columns", [][2]string{
		{"keyspace_name", "text"}, {"table_name", "text"}, {"column_name", "text"},
		{"clustering_order", "text"}, {"column_name_bytes", "blob"}, {"kind", "text"},
		{"position", "int"}, {"type", "text"},
	}, []string{"keyspace_name"}, []string{"table_name", "column_name"}},
}

// localStrategy is the replication Cassandra shows for its node-local
// system keyspaces.
var localStrategy = sharding.Replication{Class: "org.apache.cassandra.locator.LocalStrategy"}

// systemKeyspaces builds the virtual keyspaces; it is called once.
func systemKeyspaces() map[string]*Keyspace {
	out := map[string]*Keyspace{}
	for _, vt := range virtualTables {
		ks := out[vt.keyspace]
		if ks == nil {
			ks = &Keyspace{Name: vt.keyspace, Replication: localStrategy, DurableWrites: true,
				Tables: map[string]*Table{}, Types: map[string]*Type{}, Virtual: true}
			out[vt.keyspace] = ks
		}
		cols := make([]*Column, 0, len(vt.columns))
		for _, c := range vt.columns {
			typ, err := ParseType(c[1], nil)
			if err != nil {
				panic(fmt.Sprintf("system table %s.%s: %v", vt.keyspace, vt.name, err))
			}
			col := &Column{Name: c[0], Type: typ, Kind: Regular, Position: -1}
			for i, n := range vt.partition {
				if n == c[0] {
					col.Kind, col.Position = PartitionKey, i
				}
			}
			for i, n := range vt.clustering {
				if n == c[0] {
					col.Kind, col.Position = Clustering, i
				}
			}
			cols = append(cols, col)
		}
		t := NewTable(vt.keyspace, vt.name, nameUUID(vt.keyspace+"."+vt.name), cols, nil)
		t.Virtual, t.PGSchema, t.PGName = true, "", ""
		ks.Tables[vt.name] = t
	}
	return out
}

// nameUUID derives a stable version-3 UUID from a name, as Cassandra does
// for its system tables' ids.
func nameUUID(name string) [16]byte {
	sum := md5.Sum([]byte(name))
	sum[6] = sum[6]&0x0f | 0x30
	sum[8] = sum[8]&0x3f | 0x80
	return sum
}

// IsVirtualKeyspace reports whether Cassandra serves the keyspace as a
// virtual one, which system_virtual_schema describes rather than
// system_schema.
func IsVirtualKeyspace(name string) bool { return isVirtualKeyspace(name) }

// VirtualComment returns a virtual table's comment, as
// system_virtual_schema.tables shows it.
func (t *Table) VirtualComment() string {
	if c := t.Params().Comment; c != "" {
		return c
	}
	return virtualComments[t.Keyspace+"."+t.Name]
}
