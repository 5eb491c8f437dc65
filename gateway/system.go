package gateway

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
	releaseVersion = "4.1.7"
	partitioner    = "org.apache.cassandra.dht.Murmur3Partitioner"
)

// virtualRow is one row of a system table, keyed by column name.
type virtualRow map[string][]byte

// virtualRows answers a SELECT on a system table from the gateway's state
// and the schema snapshot, applying the statement's restrictions here.
func (e *execution) virtualRows(p *translate.Select, w *rowWriter) error {
	var rows []virtualRow
	switch p.Table.Keyspace + "." + p.Table.Name {
	case "system.local":
		rows = []virtualRow{e.localRow()}
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
		rows = e.env.traces.sessionRows()
	case "system_traces.events":
		rows = e.env.traces.eventRows()
	case "system_auth.roles", "system_auth.role_members", "system_auth.role_permissions":
		var err error
		if rows, err = e.authRows(p.Table.Name); err != nil {
			return err
		}
	case "system_views.clients":
		rows = e.env.clientRows()
	case "system_views.settings":
		rows = e.env.settingRows()
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
func (e *execution) matches(row virtualRow, rs []translate.Restriction) (bool, error) {
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
func (e *execution) localRow() virtualRow {
	ip, port := net.IPv4(127, 0, 0, 1), 9042
	if addr, ok := e.c.LocalAddr().(*net.TCPAddr); ok {
		ip, port = addr.IP, addr.Port
	}
	set := e.env.gateways().Current()
	tokens := set.Tokens(e.topo.Ring.Tokens(), set.Self)
	return virtualRow{
		"key":                     textValue("local"),
		"bootstrapped":            textValue("COMPLETED"),
		"broadcast_address":       inetValue(ip),
		"broadcast_port":          intValue(7000),
		"cluster_name":            textValue(e.env.cfg.ClusterName),
		"cql_version":             textValue(cqlVersion),
		"data_center":             textValue(e.env.cfg.Datacenter),
		"gossip_generation":       intValue(int32(e.env.started.Unix())),
		"host_id":                 uuidValue(e.env.hostID()),
		"listen_address":          inetValue(ip),
		"listen_port":             intValue(7000),
		"native_protocol_version": textValue(strconv.Itoa(cqlwire.MaxVersion)),
		"partitioner":             textValue(partitioner),
		"rack":                    textValue(e.env.cfg.Rack),
		"release_version":         textValue(releaseVersion),
		"rpc_address":             inetValue(ip),
		"rpc_port":                intValue(int32(port)),
		"schema_version":          uuidValue(e.schema.Version),
		"tokens":                  textSetValue(tokens),
	}
}

// peerRows describes the other alive gateways, as system.peers_v2 with v2
// and as the legacy system.peers without, each with its share of the
// ring. The legacy table has no port: drivers reading it connect to every
// peer on the port they were given.
func (e *execution) peerRows(v2 bool) []virtualRow {
	set := e.env.gateways().Current()
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
	var rows []virtualRow
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
		row := virtualRow{
			"peer":            addr,
			"data_center":     textValue(g.Datacenter),
			"host_id":         uuidValue(g.HostID),
			"preferred_ip":    addr,
			"rack":            textValue(g.Rack),
			"release_version": textValue(g.Release),
			"schema_version":  uuidValue(g.SchemaVersion),
			"tokens":          textSetValue(set.Tokens(ring, i)),
		}
		if v2 {
			row["peer_port"], row["preferred_port"] = intValue(7000), intValue(7000)
			row["native_address"], row["native_port"] = addr, intValue(int32(g.Port))
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
func (e *execution) schemaKeyspaces() []*pgschema.Keyspace {
	var out []*pgschema.Keyspace
	for _, k := range e.schema.Keyspaces() {
		if !pgschema.IsVirtualKeyspace(k.Name) {
			out = append(out, k)
		}
	}
	return out
}

func (e *execution) keyspaceRows() []virtualRow {
	var rows []virtualRow
	for _, k := range e.schemaKeyspaces() {
		rows = append(rows, virtualRow{
			"keyspace_name":  textValue(k.Name),
			"durable_writes": boolValue(k.DurableWrites),
			"replication":    textMapValue(k.Replication.Options()),
		})
	}
	return rows
}

func (e *execution) tableRows() []virtualRow {
	var rows []virtualRow
	for _, k := range e.schemaKeyspaces() {
		for _, name := range k.TableNames() {
			t := k.Tables[name]
			row := optionsRow(t.Params())
			row["keyspace_name"], row["table_name"], row["id"] = textValue(k.Name), textValue(name), uuidValue(t.ID)
			rows = append(rows, row)
		}
	}
	return rows
}

// optionsRow gives a table's options as system_schema.tables types them,
// with the legacy read_repair_chance columns that Cassandra 4.1 keeps at
// 0.0 for drivers and the compound flag of every CQL table.
func optionsRow(p *pgschema.TableParams) virtualRow {
	return virtualRow{
		"additional_write_policy":     textValue(p.AdditionalWritePolicy),
		"bloom_filter_fp_chance":      doubleValue(p.BloomFilterFPChance),
		"caching":                     textMapValue(p.Caching),
		"cdc":                         boolValue(p.CDC),
		"comment":                     textValue(p.Comment),
		"compaction":                  textMapValue(p.Compaction),
		"compression":                 textMapValue(p.Compression),
		"crc_check_chance":            doubleValue(p.CRCCheckChance),
		"dclocal_read_repair_chance":  doubleValue(0),
		"default_time_to_live":        intValue(int32(p.DefaultTimeToLive)),
		"extensions":                  textMapValue(nil),
		"flags":                       textSetValue([]string{"compound"}),
		"gc_grace_seconds":            intValue(int32(p.GCGraceSeconds)),
		"max_index_interval":          intValue(int32(p.MaxIndexInterval)),
		"memtable":                    textValue(p.Memtable),
		"memtable_flush_period_in_ms": intValue(int32(p.MemtableFlushPeriodMs)),
		"min_index_interval":          intValue(int32(p.MinIndexInterval)),
		"read_repair":                 textValue(p.ReadRepair),
		"read_repair_chance":          doubleValue(0),
		"speculative_retry":           textValue(p.SpeculativeRetry),
	}
}

func (e *execution) columnRows() []virtualRow { return columnRowsOf(e.schemaKeyspaces()) }

// columnRowsOf lists the columns of the keyspaces' tables, as
// system_schema.columns and system_virtual_schema.columns do.
func columnRowsOf(keyspaces []*pgschema.Keyspace) []virtualRow {
	var rows []virtualRow
	for _, k := range keyspaces {
		for _, name := range k.TableNames() {
			cols := append([]*pgschema.Column(nil), k.Tables[name].Columns...)
			slices.SortFunc(cols, func(a, b *pgschema.Column) int { return strings.Compare(a.Name, b.Name) })
			for _, c := range cols {
				rows = append(rows, virtualRow{
					"keyspace_name":     textValue(k.Name),
					"table_name":        textValue(name),
					"column_name":       textValue(c.Name),
					"clustering_order":  textValue(c.ClusteringOrder()),
					"column_name_bytes": []byte(c.Name),
					"kind":              textValue(c.Kind.String()),
					"position":          intValue(int32(c.Position)),
					"type":              textValue(c.Type.String()),
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
func (e *execution) indexRows(built bool) []virtualRow {
	var rows []virtualRow
	for _, k := range e.schemaKeyspaces() {
		var byName []virtualRow
		for _, name := range k.TableNames() {
			t := k.Tables[name]
			for _, idx := range t.SortedIndexes() {
				if built {
					byName = append(byName, virtualRow{"table_name": textValue(k.Name), "index_name": textValue(idx.Name)})
					continue
				}
				rows = append(rows, virtualRow{
					"keyspace_name": textValue(k.Name),
					"table_name":    textValue(name),
					"index_name":    textValue(idx.Name),
					"kind":          textValue(idx.Kind),
					"options":       textMapValue(idx.Options),
				})
			}
		}
		slices.SortFunc(byName, func(a, b virtualRow) int { return bytes.Compare(a["index_name"], b["index_name"]) })
		rows = append(rows, byName...)
	}
	return rows
}

func (e *execution) droppedRows() []virtualRow {
	var rows []virtualRow
	for _, k := range e.schemaKeyspaces() {
		for _, name := range k.TableNames() {
			dropped := slices.Clone(k.Tables[name].Dropped)
			slices.SortFunc(dropped, func(a, b pgschema.DroppedColumn) int { return strings.Compare(a.Name, b.Name) })
			for _, d := range dropped {
				rows = append(rows, virtualRow{
					"keyspace_name": textValue(k.Name),
					"table_name":    textValue(name),
					"column_name":   textValue(d.Name),
					"dropped_time":  timestampValue(d.Dropped),
					"kind":          textValue(d.Kind),
					"type":          textValue(d.Type),
				})
			}
		}
	}
	return rows
}

func (e *execution) typeRows() []virtualRow {
	var rows []virtualRow
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
			rows = append(rows, virtualRow{
				"keyspace_name": textValue(k.Name),
				"type_name":     textValue(name),
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
func (e *execution) virtualKeyspaces() []*pgschema.Keyspace {
	var out []*pgschema.Keyspace
	for _, k := range e.schema.Keyspaces() {
		if pgschema.IsVirtualKeyspace(k.Name) {
			out = append(out, k)
		}
	}
	return out
}

func (e *execution) virtualKeyspaceRows() []virtualRow {
	var rows []virtualRow
	for _, k := range e.virtualKeyspaces() {
		rows = append(rows, virtualRow{"keyspace_name": textValue(k.Name)})
	}
	return rows
}

func (e *execution) virtualTableRows() []virtualRow {
	var rows []virtualRow
	for _, k := range e.virtualKeyspaces() {
		for _, name := range k.TableNames() {
			rows = append(rows, virtualRow{
				"keyspace_name": textValue(k.Name),
				"table_name":    textValue(name),
				"comment":       textValue(k.Tables[name].VirtualComment()),
			})
		}
	}
	return rows
}

// cqlVersion is the CQL version cqlpg speaks: Cassandra 4.1's.
const cqlVersion = "3.4.6"
