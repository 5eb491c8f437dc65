package gateway

import (
	"bytes"
	"net"
	"slices"
	"strconv"
	"strings"

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
	case "system_schema.keyspaces":
		rows = e.keyspaceRows()
	case "system_schema.tables":
		rows = e.tableRows()
	case "system_schema.columns":
		rows = e.columnRows()
	case "system_schema.types":
		rows = e.typeRows()
	}
	restrictions := append(append([]translate.Restriction(nil), p.Keys...), p.Filters...)
	for _, row := range rows {
		ok, err := e.matches(row, restrictions)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		if w.limit >= 0 && w.rows >= w.limit {
			break
		}
		w.vals = w.vals[:0]
		for _, sl := range p.Slots {
			w.vals = append(w.vals, row[sl.Column.Name])
		}
		w.emit()
	}
	return nil
}

// matches applies = and IN restrictions, and slices, to a virtual row.
func (e *execution) matches(row virtualRow, rs []translate.Restriction) (bool, error) {
	for _, r := range rs {
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
// them.
func (e *execution) localRow() virtualRow {
	s := e.c.srv
	ip, port := net.IPv4(127, 0, 0, 1), 9042
	if addr, ok := e.c.nc.LocalAddr().(*net.TCPAddr); ok {
		ip, port = addr.IP, addr.Port
	}
	var tokens []string
	for _, t := range e.topo.Ring.Tokens() {
		tokens = append(tokens, t.String())
	}
	return virtualRow{
		"key":                     textValue("local"),
		"bootstrapped":            textValue("COMPLETED"),
		"broadcast_address":       inetValue(ip),
		"broadcast_port":          intValue(7000),
		"cluster_name":            textValue(s.cfg.ClusterName),
		"cql_version":             textValue(cqlVersion),
		"data_center":             textValue(s.cfg.Datacenter),
		"gossip_generation":       intValue(int32(s.started.Unix())),
		"host_id":                 uuidValue(s.hostID),
		"listen_address":          inetValue(ip),
		"listen_port":             intValue(7000),
		"native_protocol_version": textValue(strconv.Itoa(maxVersion)),
		"partitioner":             textValue(partitioner),
		"rack":                    textValue(s.cfg.Rack),
		"release_version":         textValue(releaseVersion),
		"rpc_address":             inetValue(ip),
		"rpc_port":                intValue(int32(port)),
		"schema_version":          uuidValue(e.schema.Version),
		"tokens":                  textSetValue(tokens),
	}
}

// schemaKeyspaces lists the keyspaces system_schema shows: the user's and
// the system keyspaces whose tables cqlpg defines, but not the virtual
// schema, which system_virtual_schema describes.
func (e *execution) schemaKeyspaces() []*pgschema.Keyspace {
	var out []*pgschema.Keyspace
	for _, k := range e.schema.Keyspaces() {
		if k.Name != "system_virtual_schema" {
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

// tableDefaults are the options Cassandra 4.1 gives a table created
// without them, as system_schema.tables shows them.
var tableDefaults = virtualRow{
	"additional_write_policy":     textValue("99p"),
	"bloom_filter_fp_chance":      doubleValue(0.01),
	"caching":                     textMapValue(map[string]string{"keys": "ALL", "rows_per_partition": "NONE"}),
	"cdc":                         boolValue(false),
	"comment":                     textValue(""),
	"compaction":                  textMapValue(map[string]string{"class": "org.apache.cassandra.db.compaction.SizeTieredCompactionStrategy", "max_threshold": "32", "min_threshold": "4"}),
	"compression":                 textMapValue(map[string]string{"chunk_length_in_kb": "16", "class": "org.apache.cassandra.io.compress.LZ4Compressor"}),
	"crc_check_chance":            doubleValue(1),
	"dclocal_read_repair_chance":  doubleValue(0),
	"default_time_to_live":        intValue(0),
	"extensions":                  textMapValue(nil),
	"flags":                       textSetValue([]string{"compound"}),
	"gc_grace_seconds":            intValue(864000),
	"max_index_interval":          intValue(2048),
	"memtable":                    textValue("default"),
	"memtable_flush_period_in_ms": intValue(0),
	"min_index_interval":          intValue(128),
	"read_repair":                 textValue("BLOCKING"),
	"read_repair_chance":          doubleValue(0),
	"speculative_retry":           textValue("99p"),
}

func (e *execution) tableRows() []virtualRow {
	var rows []virtualRow
	for _, k := range e.schemaKeyspaces() {
		for _, name := range k.TableNames() {
			t := k.Tables[name]
			row := virtualRow{"keyspace_name": textValue(k.Name), "table_name": textValue(name), "id": uuidValue(t.ID)}
			for col, v := range tableDefaults {
				row[col] = v
			}
			for opt, text := range t.Options {
				if v, ok := optionValue(text, tableDefaults[opt]); ok {
					row[opt] = v
				}
			}
			rows = append(rows, row)
		}
	}
	return rows
}

// optionValue serializes a table option's CQL literal like its default:
// quoted text as text, numbers as int or double. Map options keep their
// defaults for now.
func optionValue(literal string, def []byte) ([]byte, bool) {
	if strings.HasPrefix(literal, "'") {
		return textValue(strings.ReplaceAll(literal[1:len(literal)-1], "''", "'")), true
	}
	switch len(def) {
	case 4:
		n, err := strconv.ParseInt(literal, 10, 32)
		return intValue(int32(n)), err == nil
	case 8:
		f, err := strconv.ParseFloat(literal, 64)
		return doubleValue(f), err == nil
	}
	return nil, false
}

func (e *execution) columnRows() []virtualRow {
	var rows []virtualRow
	for _, k := range e.schemaKeyspaces() {
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

func (e *execution) typeRows() []virtualRow {
	var rows []virtualRow
	for _, k := range e.schemaKeyspaces() {
		for name, t := range k.Types {
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
