package exec

import (
	"bytes"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/cqlpg/cqlpg/gateway/cqlwire"
	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/translate"
)

// Identity the gateway reports in system.local.
const (
	ReleaseVersion = "4.1.7"
	Partitioner    = "org.apache.cassandra.dht.Murmur3Partitioner"
)

// VirtualRow is one row of a system table, keyed by column name.
type VirtualRow map[string][]byte

// virtualRows answers a SELECT on a system table from the gateway's state
// and the schema snapshot, applying the statement's restrictions here.
func (e *Execution) virtualRows(p *translate.Select, w *rowWriter) error {
	var rows []VirtualRow
	switch p.Table.Keyspace + "." + p.Table.Name {
	case "system.local":
		rows = []VirtualRow{e.localRow()}
	case "system.peers":
		rows = e.peerRows(false)
	case "system.peers_v2":
		rows = e.peerRows(true)
	case "system_schema.keyspaces":
		rows = e.keyspaceRows()
	case "system_schema.tables":
		rows = e.tableRows()
	case "system_schema.columns":
		rows = e.columnRows()
	case "system_schema.views":
		rows = e.viewRows()
	case "system_schema.functions":
		rows = e.functionRows()
	case "system_schema.aggregates":
		rows = e.aggregateRows()
	case "system.built_views":
		rows = e.env.builtViewRows()
	case "system_distributed.view_build_status":
		rows = e.env.viewBuildStatusRows()
	case "system_schema.types":
		rows = e.typeRows()
	case "system_schema.indexes":
		rows = e.indexRows(false)
	case "system.IndexInfo":
		rows = e.indexRows(true)
	case "system_schema.dropped_columns":
		rows = e.droppedRows()
	case "system_virtual_schema.keyspaces":
		rows = e.virtualKeyspaceRows()
	case "system_virtual_schema.tables":
		rows = e.virtualTableRows()
	case "system_virtual_schema.columns":
		rows = columnRowsOf(e.virtualKeyspaces())
	case "system_traces.sessions":
		rows = e.env.Traces.sessionRows()
	case "system_traces.events":
		rows = e.env.Traces.eventRows()
	case "system_auth.roles", "system_auth.role_members", "system_auth.role_permissions":
		var err error
		if rows, err = e.authRows(p.Table.Name); err != nil {
			return err
		}
	case "system_views.clients":
		rows = e.env.ClientRows()
	case "system_views.settings":
		rows = e.env.SettingRows()
	}
	restrictions := append(append([]translate.Restriction(nil), p.Keys...), p.Filters...)
	vals := make([][]byte, len(p.Slots))
	for _, row := range rows {
		ok, err := e.matches(row, restrictions)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		if w.full() && !p.Aggregate {
			break
		}
		for i, sl := range p.Slots {
			vals[i] = row[sl.Column.Name]
		}
		if err := w.accept(vals); err != nil {
			return err
		}
	}
	return nil
}

// matches applies = and IN restrictions, and slices, to a virtual row.
func (e *Execution) matches(row VirtualRow, rs []translate.Restriction) (bool, error) {
	for _, r := range rs {
		if r.Kind != translate.OnColumn || r.Op == translate.OpContains || r.Op == translate.OpContainsKey {
			return false, invalidf("This restriction is not supported on system tables")
		}
		v := row[r.Column.Name]
		switch r.Op {
		case translate.OpEQ, translate.OpIN:
			values, err := e.keyValues(r)
			if err != nil {
				return false, err
			}
			found := false
			for _, want := range values {
				found = found || bytes.Equal(v, want)
			}
			if !found {
				return false, nil
			}
		default:
			want, _ := e.bound.Get(r.Values[0])
			c := pgschema.Compare(r.Column.Type, v, want)
			ok := map[translate.Operator]bool{translate.OpLT: c < 0, translate.OpLTE: c <= 0,
				translate.OpGT: c > 0, translate.OpGTE: c >= 0}[r.Op]
			if v == nil || !ok {
				return false, nil
			}
		}
	}
	return true, nil
}

// localRow describes this gateway as the node a driver is connected to.
// The addresses are those the client reached, so drivers connect back to
// them. Its tokens are its share of the ring among the alive gateways
// (cluster.Registry).
func (e *Execution) localRow() VirtualRow {
	ip, port := net.IPv4(127, 0, 0, 1), 9042
	if addr, ok := e.c.LocalAddr().(*net.TCPAddr); ok {
		ip, port = addr.IP, addr.Port
	}
	set := e.env.Gateways().Current()
	tokens := set.Tokens(e.topo.Ring.Tokens(), set.Self)
	return VirtualRow{
		"key":                     TextValue("local"),
		"bootstrapped":            TextValue("COMPLETED"),
		"broadcast_address":       InetValue(ip),
		"broadcast_port":          IntValue(7000),
		"cluster_name":            TextValue(e.env.Config.ClusterName),
		"cql_version":             TextValue(CqlVersion),
		"data_center":             TextValue(e.env.Config.Datacenter),
		"gossip_generation":       IntValue(int32(e.env.Started.Unix())),
		"host_id":                 uuidValue(e.env.HostID()),
		"listen_address":          InetValue(ip),
		"listen_port":             IntValue(7000),
		"native_protocol_version": TextValue(strconv.Itoa(cqlwire.MaxVersion)),
		"partitioner":             TextValue(Partitioner),
		"rack":                    TextValue(e.env.Config.Rack),
		"release_version":         TextValue(ReleaseVersion),
		"rpc_address":             InetValue(ip),
		"rpc_port":                IntValue(int32(port)),
		"schema_version":          uuidValue(e.schema.Version),
		"tokens":                  textSetValue(tokens),
	}
}

// peerRows describes the other alive gateways, as system.peers_v2 with v2
// and as the legacy system.peers without, each with its share of the
// ring. The legacy table has no port: drivers reading it connect to every
// peer on the port they were given.
func (e *Execution) peerRows(v2 bool) []VirtualRow {
	set := e.env.Gateways().Current()
	ring := e.topo.Ring.Tokens()
	// The legacy table is keyed by address alone, and drivers reading it
	// take a row at the address they are connected to for this node: it
	// lists only gateways at addresses of their own.
	var local netip.Addr
	if a, ok := e.c.LocalAddr().(*net.TCPAddr); ok {
		local, _ = netip.AddrFromSlice(a.IP)
		local = local.Unmap()
	}
	seen := map[netip.Addr]bool{local: true, set.All[set.Self].Addr.Unmap(): true}
	var rows []VirtualRow
	for i, g := range set.All {
		if i == set.Self {
			continue
		}
		if !v2 {
			if seen[g.Addr.Unmap()] {
				continue
			}
			seen[g.Addr.Unmap()] = true
		}
		addr := g.Addr.AsSlice()
		row := VirtualRow{
			"peer":            addr,
			"data_center":     TextValue(g.Datacenter),
			"host_id":         uuidValue(g.HostID),
			"preferred_ip":    addr,
			"rack":            TextValue(g.Rack),
			"release_version": TextValue(g.Release),
			"schema_version":  uuidValue(g.SchemaVersion),
			"tokens":          textSetValue(set.Tokens(ring, i)),
		}
		if v2 {
			row["peer_port"], row["preferred_port"] = IntValue(7000), IntValue(7000)
			row["native_address"], row["native_port"] = addr, IntValue(int32(g.Port))
		} else {
			row["rpc_address"] = addr
		}
		rows = append(rows, row)
	}
	return rows
}

// schemaKeyspaces lists the keyspaces system_schema shows: the user's and
// the system keyspaces whose tables cqlpg defines, but not the virtual
// schema, which system_virtual_schema describes.
func (e *Execution) schemaKeyspaces() []*pgschema.Keyspace {
	var out []*pgschema.Keyspace
	for _, k := range e.schema.Keyspaces() {
		if !pgschema.IsVirtualKeyspace(k.Name) {
			out = append(out, k)
		}
	}
	return out
}

func (e *Execution) keyspaceRows() []VirtualRow {
	var rows []VirtualRow
	for _, k := range e.schemaKeyspaces() {
		rows = append(rows, VirtualRow{
			"keyspace_name":  TextValue(k.Name),
			"durable_writes": BoolValue(k.DurableWrites),
			"replication":    TextMapValue(k.Replication.Options()),
		})
	}
	return rows
}

func (e *Execution) tableRows() []VirtualRow {
	var rows []VirtualRow
	for _, k := range e.schemaKeyspaces() {
		for _, name := range k.TableNames() {
			t := k.Tables[name]
			if t.IsView() {
				continue
			}
			row := optionsRow(t.Params())
			row["keyspace_name"], row["table_name"], row["id"] = TextValue(k.Name), TextValue(name), uuidValue(t.ID)
			rows = append(rows, row)
		}
	}
	return rows
}

// functionRows lists the user-defined functions, as
// system_schema.functions does.
func (e *Execution) functionRows() []VirtualRow {
	var rows []VirtualRow
	for _, k := range e.schemaKeyspaces() {
		for _, f := range k.Functions {
			rows = append(rows, VirtualRow{"keyspace_name": TextValue(k.Name), "function_name": TextValue(f.Name),
				"argument_types": textListValue(f.ArgTypeNames()), "argument_names": textListValue(f.ArgNames),
				"body": TextValue(f.Body), "called_on_null_input": BoolValue(f.CalledOnNullInput),
				"language": TextValue(f.Language), "return_type": TextValue(f.Returns.String())})
		}
	}
	return rows
}

// aggregateRows lists the user-defined aggregates, as
// system_schema.aggregates does.
func (e *Execution) aggregateRows() []VirtualRow {
	var rows []VirtualRow
	for _, k := range e.schemaKeyspaces() {
		for _, a := range k.Aggregates {
			row := VirtualRow{"keyspace_name": TextValue(k.Name), "aggregate_name": TextValue(a.Name),
				"argument_types": textListValue(a.ArgTypeNames()), "return_type": TextValue(a.Returns.String()),
				"state_func": TextValue(a.StateFunc), "state_type": TextValue(a.StateType.String())}
			if a.FinalFunc != "" {
				row["final_func"] = TextValue(a.FinalFunc)
			}
			if a.InitCond != "" {
				row["initcond"] = TextValue(a.InitCond)
			}
			rows = append(rows, row)
		}
	}
	return rows
}

// viewRows lists the materialized views, as system_schema.views does:
// their base, WHERE clause and options.
func (e *Execution) viewRows() []VirtualRow {
	var rows []VirtualRow
	for _, k := range e.schemaKeyspaces() {
		for _, name := range k.ViewNames() {
			v := k.Tables[name]
			row := optionsRow(v.Params())
			delete(row, "flags")
			row["keyspace_name"], row["view_name"], row["id"] = TextValue(k.Name), TextValue(name), uuidValue(v.ID)
			row["base_table_name"], row["where_clause"] = TextValue(v.View.Base), TextValue(v.View.Where)
			row["include_all_columns"] = BoolValue(v.View.IncludeAll)
			if base := k.Tables[v.View.Base]; base != nil {
				row["base_table_id"] = uuidValue(base.ID)
			}
			rows = append(rows, row)
		}
	}
	return rows
}

// optionsRow gives a table's options as system_schema.tables types them,
// with the legacy read_repair_chance columns that Cassandra 4.1 keeps at
// 0.0 for drivers and the compound flag of every CQL table.
func optionsRow(p *pgschema.TableParams) VirtualRow {
	return VirtualRow{
		"additional_write_policy":     TextValue(p.AdditionalWritePolicy),
		"bloom_filter_fp_chance":      doubleValue(p.BloomFilterFPChance),
		"caching":                     TextMapValue(p.Caching),
		"cdc":                         BoolValue(p.CDC),
		"comment":                     TextValue(p.Comment),
		"compaction":                  TextMapValue(p.Compaction),
		"compression":                 TextMapValue(p.Compression),
		"crc_check_chance":            doubleValue(p.CRCCheckChance),
		"dclocal_read_repair_chance":  doubleValue(0),
		"default_time_to_live":        IntValue(int32(p.DefaultTimeToLive)),
		"extensions":                  TextMapValue(nil),
		"flags":                       textSetValue([]string{"compound"}),
		"gc_grace_seconds":            IntValue(int32(p.GCGraceSeconds)),
		"max_index_interval":          IntValue(int32(p.MaxIndexInterval)),
		"memtable":                    TextValue(p.Memtable),
		"memtable_flush_period_in_ms": IntValue(int32(p.MemtableFlushPeriodMs)),
		"min_index_interval":          IntValue(int32(p.MinIndexInterval)),
		"read_repair":                 TextValue(p.ReadRepair),
		"read_repair_chance":          doubleValue(0),
		"speculative_retry":           TextValue(p.SpeculativeRetry),
	}
}

func (e *Execution) columnRows() []VirtualRow { return columnRowsOf(e.schemaKeyspaces()) }

// columnRowsOf lists the columns of the keyspaces' tables, as
// system_schema.columns and system_virtual_schema.columns do.
func columnRowsOf(keyspaces []*pgschema.Keyspace) []VirtualRow {
	var rows []VirtualRow
	for _, k := range keyspaces {
		for _, name := range k.TableNames() {
			cols := append([]*pgschema.Column(nil), k.Tables[name].Columns...)
			slices.SortFunc(cols, func(a, b *pgschema.Column) int { return strings.Compare(a.Name, b.Name) })
			for _, c := range cols {
				rows = append(rows, VirtualRow{
					"keyspace_name":     TextValue(k.Name),
					"table_name":        TextValue(name),
					"column_name":       TextValue(c.Name),
					"clustering_order":  TextValue(c.ClusteringOrder()),
					"column_name_bytes": []byte(c.Name),
					"kind":              TextValue(c.Kind.String()),
					"position":          IntValue(int32(c.Position)),
					"type":              TextValue(c.Type.String()),
				})
			}
		}
	}
	return rows
}

// indexRows lists the secondary indexes, as system_schema.indexes or, for
// built, as system."IndexInfo" lists the built ones (all of them: a
// Postgres index is usable once CREATE INDEX returns), keyed there by
// keyspace in the column Cassandra still calls table_name.
func (e *Execution) indexRows(built bool) []VirtualRow {
	var rows []VirtualRow
	for _, k := range e.schemaKeyspaces() {
		var byName []VirtualRow
		for _, name := range k.TableNames() {
			t := k.Tables[name]
			for _, idx := range t.SortedIndexes() {
				if built {
					byName = append(byName, VirtualRow{"table_name": TextValue(k.Name), "index_name": TextValue(idx.Name)})
					continue
				}
				rows = append(rows, VirtualRow{
					"keyspace_name": TextValue(k.Name),
					"table_name":    TextValue(name),
					"index_name":    TextValue(idx.Name),
					"kind":          TextValue(idx.Kind),
					"options":       TextMapValue(idx.Options),
				})
			}
		}
		slices.SortFunc(byName, func(a, b VirtualRow) int { return bytes.Compare(a["index_name"], b["index_name"]) })
		rows = append(rows, byName...)
	}
	return rows
}

func (e *Execution) droppedRows() []VirtualRow {
	var rows []VirtualRow
	for _, k := range e.schemaKeyspaces() {
		for _, name := range k.TableNames() {
			dropped := slices.Clone(k.Tables[name].Dropped)
			slices.SortFunc(dropped, func(a, b pgschema.DroppedColumn) int { return strings.Compare(a.Name, b.Name) })
			for _, d := range dropped {
				rows = append(rows, VirtualRow{
					"keyspace_name": TextValue(k.Name),
					"table_name":    TextValue(name),
					"column_name":   TextValue(d.Name),
					"dropped_time":  timestampValue(d.Dropped),
					"kind":          TextValue(d.Kind),
					"type":          TextValue(d.Type),
				})
			}
		}
	}
	return rows
}

func (e *Execution) typeRows() []VirtualRow {
	var rows []VirtualRow
	for _, k := range e.schemaKeyspaces() {
		names := make([]string, 0, len(k.Types))
		for name := range k.Types {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			t := k.Types[name]
			types := make([]string, len(t.Elem))
			for i, el := range t.Elem {
				types[i] = el.String()
			}
			rows = append(rows, VirtualRow{
				"keyspace_name": TextValue(k.Name),
				"type_name":     TextValue(name),
				"field_names":   textListValue(t.Fields),
				"field_types":   textListValue(types),
			})
		}
	}
	return rows
}

// virtualKeyspaces lists the keyspaces that Cassandra serves as virtual
// ones, which system_virtual_schema describes in place of system_schema;
// of these, cqlpg has system_virtual_schema itself. Drivers read them at
// connect (the Python driver into its metadata) and when asked for a
// table that system_schema does not know (the Node.js driver).
func (e *Execution) virtualKeyspaces() []*pgschema.Keyspace {
	var out []*pgschema.Keyspace
	for _, k := range e.schema.Keyspaces() {
		if pgschema.IsVirtualKeyspace(k.Name) {
			out = append(out, k)
		}
	}
	return out
}

func (e *Execution) virtualKeyspaceRows() []VirtualRow {
	var rows []VirtualRow
	for _, k := range e.virtualKeyspaces() {
		rows = append(rows, VirtualRow{"keyspace_name": TextValue(k.Name)})
	}
	return rows
}

func (e *Execution) virtualTableRows() []VirtualRow {
	var rows []VirtualRow
	for _, k := range e.virtualKeyspaces() {
		for _, name := range k.TableNames() {
			rows = append(rows, VirtualRow{
				"keyspace_name": TextValue(k.Name),
				"table_name":    TextValue(name),
				"comment":       TextValue(k.Tables[name].VirtualComment()),
			})
		}
	}
	return rows
}

// CqlVersion is the CQL version cqlpg speaks: Cassandra 4.1's.
const CqlVersion = "3.4.6"
