// Package migrate moves a live CQL cluster (Cassandra 3.11–5.0, ScyllaDB
// or another cqlpg) onto cqlpg: its schema, read from system_schema and
// written again as CQL, and in later steps its data.
package migrate

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlpg/cqlpg/pgschema"
)

// Schema is the part of a cluster's schema that system_schema holds for
// its user keyspaces.
type Schema struct {
	Keyspaces []*Keyspace
	// Datacenters are the cluster's datacenters, sorted.
	Datacenters []string
}

// Keyspace is one keyspace and what it holds.
type Keyspace struct {
	Name          string
	Replication   map[string]string
	DurableWrites bool
	Types         []*UserType
	Tables        []*Table
	Views         []*View
	Functions     []*Function
	Aggregates    []*Aggregate
	// Uncarried lists what the keyspace holds that cqlpg does not create:
	// triggers, and functions in languages other than Java.
	Uncarried []string
}

// Function is a user-defined function as system_schema.functions holds it.
type Function struct {
	Name                    string
	ArgNames, ArgTypes      []string
	Body, Language, Returns string
	CalledOnNullInput       bool
}

// Aggregate is a user-defined aggregate as system_schema.aggregates holds
// it.
type Aggregate struct {
	Name                                  string
	ArgTypes                              []string
	StateFunc, StateType, FinalFunc, Init string
}

// View is a materialized view: its base, WHERE clause, columns (as the
// view's own rows of system_schema.columns) and options.
type View struct {
	Name, Base string
	IncludeAll bool
	Where      string
	Columns    []Column
	Options    map[string]string
}

// UserType is a user-defined type.
type UserType struct {
	Name       string
	Fields     []string
	FieldTypes []string
}

// Table is a table: its columns, options (as CQL literals) and indexes.
type Table struct {
	Name    string
	Columns []Column
	Options map[string]string
	Indexes []Index
}

// Column is one column as system_schema.columns holds it.
type Column struct {
	Name     string
	Type     string
	Kind     string // partition_key, clustering, static or regular
	Position int
	Order    string // asc, desc or none
}

// Index is a secondary index.
type Index struct {
	Name    string
	Kind    string // COMPOSITES, KEYS or CUSTOM
	Options map[string]string
}

// systemKeyspaces are the keyspaces a cluster keeps for itself.
var systemKeyspaces = map[string]bool{
	"system": true, "system_schema": true, "system_auth": true, "system_distributed": true,
	"system_traces": true, "system_views": true, "system_virtual_schema": true,
	"dse_system": true, "dse_auth": true, "dse_security": true, "dse_leases": true, "dse_insights": true,
	"dse_insights_local": true, "dse_perf": true, "dse_system_local": true, "solr_admin": true,
	"system_distributed_everywhere": true, "system_replicated_keys": true,
}

// carriedOptions are the table options written again on the target, as
// Cassandra 4.1 names them; those of older versions (read_repair_chance,
// dclocal_read_repair_chance) are not, as 4.1 refuses them.
var carriedOptions = []string{
	"additional_write_policy", "bloom_filter_fp_chance", "caching", "cdc", "comment", "compaction",
	"compression", "crc_check_chance", "default_time_to_live", "gc_grace_seconds", "max_index_interval",
	"memtable_flush_period_in_ms", "min_index_interval", "read_repair", "speculative_retry",
}

// ReadSchema reads the schema of the user keyspaces of the cluster s is
// connected to, or of those named in only when it is not empty.
func ReadSchema(s *gocql.Session, only []string) (*Schema, error) {
	sc := &Schema{}
	byName := map[string]*Keyspace{}
	rows, err := readAll(s, "SELECT * FROM system_schema.keyspaces")
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		name := str(r["keyspace_name"])
		if systemKeyspaces[name] || len(only) > 0 && !slices.Contains(only, name) {
			continue
		}
		ks := &Keyspace{Name: name, Replication: strMap(r["replication"]), DurableWrites: r["durable_writes"] != false}
		sc.Keyspaces = append(sc.Keyspaces, ks)
		byName[name] = ks
	}
	for _, name := range only {
		if byName[name] == nil {
			return nil, fmt.Errorf("keyspace %s does not exist", name)
		}
	}
	slices.SortFunc(sc.Keyspaces, func(a, b *Keyspace) int { return strings.Compare(a.Name, b.Name) })

	if rows, err = readAll(s, "SELECT * FROM system_schema.types"); err != nil {
		return nil, err
	}
	for _, r := range rows {
		if ks := byName[str(r["keyspace_name"])]; ks != nil {
			ks.Types = append(ks.Types, &UserType{Name: str(r["type_name"]), Fields: strList(r["field_names"]),
				FieldTypes: strList(r["field_types"])})
		}
	}
	tables := map[[2]string]*Table{}
	if rows, err = readAll(s, "SELECT * FROM system_schema.tables"); err != nil {
		return nil, err
	}
	for _, r := range rows {
		ks := byName[str(r["keyspace_name"])]
		if ks == nil {
			continue
		}
		t := &Table{Name: str(r["table_name"]), Options: map[string]string{}}
		for _, o := range carriedOptions {
			if v, ok := r[o]; ok {
				if lit, ok := literal(v); ok {
					t.Options[o] = lit
				}
			}
		}
		ks.Tables = append(ks.Tables, t)
		tables[[2]string{ks.Name, t.Name}] = t
	}
	views, err := readViews(s, byName)
	if err != nil {
		return nil, err
	}
	if rows, err = readAll(s, "SELECT * FROM system_schema.columns"); err != nil {
		return nil, err
	}
	for _, r := range rows {
		key := [2]string{str(r["keyspace_name"]), str(r["table_name"])}
		pos, _ := r["position"].(int)
		c := Column{Name: str(r["column_name"]), Type: str(r["type"]), Kind: str(r["kind"]), Position: pos, Order: str(r["clustering_order"])}
		if t := tables[key]; t != nil {
			t.Columns = append(t.Columns, c)
		} else if v := views[key]; v != nil {
			v.Columns = append(v.Columns, c)
		}
	}
	if rows, err = readAll(s, "SELECT * FROM system_schema.indexes"); err != nil {
		return nil, err
	}
	for _, r := range rows {
		if t := tables[[2]string{str(r["keyspace_name"]), str(r["table_name"])}]; t != nil {
			t.Indexes = append(t.Indexes, Index{Name: str(r["index_name"]), Kind: str(r["kind"]), Options: strMap(r["options"])})
		}
	}
	for _, ks := range sc.Keyspaces {
		for _, t := range ks.Tables {
			slices.SortFunc(t.Columns, compareColumns)
			slices.SortFunc(t.Indexes, func(a, b Index) int { return strings.Compare(a.Name, b.Name) })
		}
		for _, v := range ks.Views {
			slices.SortFunc(v.Columns, compareColumns)
		}
		slices.SortFunc(ks.Views, func(a, b *View) int { return strings.Compare(a.Name, b.Name) })
		slices.SortFunc(ks.Tables, func(a, b *Table) int { return strings.Compare(a.Name, b.Name) })
		slices.SortFunc(ks.Types, func(a, b *UserType) int { return strings.Compare(a.Name, b.Name) })
	}
	if err := readUncarried(s, byName); err != nil {
		return nil, err
	}
	if sc.Datacenters, err = datacenters(s); err != nil {
		return nil, err
	}
	return sc, nil
}

// readViews reads the materialized views of the keyspaces, by keyspace
// and name. A cluster without system_schema.views has none.
func readViews(s *gocql.Session, byName map[string]*Keyspace) (map[[2]string]*View, error) {
	rows, err := readAll(s, "SELECT * FROM system_schema.views")
	var reqErr gocql.RequestError
	if errors.As(err, &reqErr) && reqErr.Code() == gocql.ErrCodeInvalid {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	views := map[[2]string]*View{}
	for _, r := range rows {
		ks := byName[str(r["keyspace_name"])]
		if ks == nil {
			continue
		}
		v := &View{Name: str(r["view_name"]), Base: str(r["base_table_name"]), IncludeAll: r["include_all_columns"] == true,
			Where: str(r["where_clause"]), Options: map[string]string{}}
		for _, o := range carriedOptions {
			if v2, ok := r[o]; ok && o != "default_time_to_live" {
				if lit, ok := literal(v2); ok {
					v.Options[o] = lit
				}
			}
		}
		ks.Views = append(ks.Views, v)
		views[[2]string{ks.Name, v.Name}] = v
	}
	return views, nil
}

// readFunctions reads the keyspaces' functions and aggregates. A cluster
// without those tables has none; a function in another language than
// Java is noted as not carried, with the aggregates that use it.
func readFunctions(s *gocql.Session, byName map[string]*Keyspace) error {
	rows, err := readAll(s, "SELECT * FROM system_schema.functions")
	var reqErr gocql.RequestError
	if errors.As(err, &reqErr) && reqErr.Code() == gocql.ErrCodeInvalid {
		return nil
	}
	if err != nil {
		return err
	}
	skipped := map[[2]string]bool{}
	for _, r := range rows {
		ks := byName[str(r["keyspace_name"])]
		if ks == nil {
			continue
		}
		f := &Function{Name: str(r["function_name"]), ArgNames: strList(r["argument_names"]), ArgTypes: strList(r["argument_types"]),
			Body: str(r["body"]), Language: str(r["language"]), Returns: str(r["return_type"]), CalledOnNullInput: r["called_on_null_input"] == true}
		if !strings.EqualFold(f.Language, "java") {
			ks.Uncarried = append(ks.Uncarried, fmt.Sprintf("function %s.%s(%s) in %s", pgschema.QuoteIdentifier(ks.Name),
				pgschema.QuoteIdentifier(f.Name), strings.Join(f.ArgTypes, ", "), f.Language))
			skipped[[2]string{ks.Name, f.Name}] = true
			continue
		}
		ks.Functions = append(ks.Functions, f)
	}
	if rows, err = readAll(s, "SELECT * FROM system_schema.aggregates"); err != nil {
		return err
	}
	for _, r := range rows {
		ks := byName[str(r["keyspace_name"])]
		if ks == nil {
			continue
		}
		a := &Aggregate{Name: str(r["aggregate_name"]), ArgTypes: strList(r["argument_types"]), StateFunc: str(r["state_func"]),
			StateType: str(r["state_type"]), FinalFunc: str(r["final_func"]), Init: str(r["initcond"])}
		if skipped[[2]string{ks.Name, a.StateFunc}] || skipped[[2]string{ks.Name, a.FinalFunc}] {
			ks.Uncarried = append(ks.Uncarried, fmt.Sprintf("aggregate %s.%s, whose functions are not carried",
				pgschema.QuoteIdentifier(ks.Name), pgschema.QuoteIdentifier(a.Name)))
			continue
		}
		ks.Aggregates = append(ks.Aggregates, a)
	}
	return nil
}

// readUncarried notes the triggers of the keyspaces, and reads their
// functions and aggregates. A cluster without one of those tables has
// none.
func readUncarried(s *gocql.Session, byName map[string]*Keyspace) error {
	if err := readFunctions(s, byName); err != nil {
		return err
	}
	for _, q := range []struct{ table, name, what string }{
		{"triggers", "trigger_name", "trigger"},
	} {
		rows, err := readAll(s, "SELECT * FROM system_schema."+q.table)
		var reqErr gocql.RequestError
		if errors.As(err, &reqErr) && reqErr.Code() == gocql.ErrCodeInvalid {
			continue
		}
		if err != nil {
			return err
		}
		for _, r := range rows {
			if ks := byName[str(r["keyspace_name"])]; ks != nil {
				what := fmt.Sprintf("%s %s.%s", q.what, pgschema.QuoteIdentifier(ks.Name), pgschema.QuoteIdentifier(str(r[q.name])))
				if t := str(r["table_name"]); t != "" {
					what += " on table " + t
				}
				ks.Uncarried = append(ks.Uncarried, what)
			}
		}
	}
	for _, ks := range byName {
		slices.Sort(ks.Uncarried)
	}
	return nil
}

// datacenters lists the datacenters of the nodes s's cluster shows.
func datacenters(s *gocql.Session) ([]string, error) {
	var dcs []string
	for _, q := range []string{"SELECT data_center FROM system.local", "SELECT data_center FROM system.peers"} {
		rows, err := readAll(s, q)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			if dc := str(r["data_center"]); dc != "" && !slices.Contains(dcs, dc) {
				dcs = append(dcs, dc)
			}
		}
	}
	slices.Sort(dcs)
	return dcs, nil
}

// compareColumns orders columns as a table declares them: partition key,
// clustering columns, then the others by name.
func compareColumns(a, b Column) int {
	rank := func(c Column) int {
		switch c.Kind {
		case "partition_key":
			return 0
		case "clustering":
			return 1
		}
		return 2
	}
	if d := rank(a) - rank(b); d != 0 {
		return d
	}
	if rank(a) < 2 && a.Position != b.Position {
		return a.Position - b.Position
	}
	return strings.Compare(a.Name, b.Name)
}

func readAll(s *gocql.Session, q string) ([]map[string]any, error) {
	iter := s.Query(q).Iter()
	rows, err := iter.SliceMap()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", q, err)
	}
	return rows, nil
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func strMap(v any) map[string]string {
	m, _ := v.(map[string]string)
	if m == nil {
		m = map[string]string{}
	}
	return m
}

func strList(v any) []string {
	l, _ := v.([]string)
	return l
}

// literal writes an option's value as a CQL literal, or reports false
// for one of a type no option has.
func literal(v any) (string, bool) {
	switch v := v.(type) {
	case string:
		return pgschema.QuoteString(v), true
	case int:
		return strconv.Itoa(v), true
	case int64:
		return strconv.FormatInt(v, 10), true
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64), true
	case bool:
		return strconv.FormatBool(v), true
	case map[string]string:
		return pgschema.MapLiteral(v), true
	}
	return "", false
}

// sameTable reports how a table's definition on the target differs from
// the origin's, or "" when it has the same columns, kinds and key order.
func sameTable(origin, target *Table) string {
	describe := func(t *Table) []string {
		var out []string
		for _, c := range t.Columns {
			d := pgschema.QuoteIdentifier(c.Name) + " " + c.Type
			switch c.Kind {
			case "partition_key":
				d += fmt.Sprintf(" (partition key %d)", c.Position)
			case "clustering":
				d += fmt.Sprintf(" (clustering %d %s)", c.Position, c.Order)
			case "static":
				d += " static"
			}
			out = append(out, d)
		}
		return out
	}
	o, t := describe(origin), describe(target)
	if slices.Equal(o, t) {
		return ""
	}
	var diffs []string
	for _, c := range o {
		if !slices.Contains(t, c) {
			diffs = append(diffs, "origin has "+c)
		}
	}
	for _, c := range t {
		if !slices.Contains(o, c) {
			diffs = append(diffs, "target has "+c)
		}
	}
	return strings.Join(diffs, "; ")
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

// Connect opens a session on the cluster at addr (HOST:PORT), logging in
// with auth (USER:PASSWORD) when it is not empty. Every error names addr.
func Connect(addr, auth string, timeout time.Duration) (*gocql.Session, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("%s is not HOST:PORT: %w", addr, err)
	}
	cc := gocql.NewCluster(host)
	if cc.Port, err = strconv.Atoi(port); err != nil {
		return nil, fmt.Errorf("%s is not HOST:PORT: bad port %q", addr, port)
	}
	cc.Timeout, cc.ConnectTimeout = timeout, timeout
	// The node named is the one asked: the schema and the datacenters
	// are the same on every node, and nodes of one address told apart by
	// port (gateways side by side) would be taken for one another.
	cc.DisableInitialHostLookup = true
	cc.Events.DisableTopologyEvents, cc.Events.DisableNodeStatusEvents = true, true
	cc.Logger = quietLogger{}
	if auth != "" {
		user, pass, ok := strings.Cut(auth, ":")
		if !ok {
			return nil, fmt.Errorf("credentials for %s are not USER:PASSWORD", addr)
		}
		cc.Authenticator = gocql.PasswordAuthenticator{Username: user, Password: pass}
	}
	s, err := cc.CreateSession()
	if err != nil {
		return nil, fmt.Errorf("cannot connect to %s: %w", addr, err)
	}
	return s, nil
}

// quietLogger keeps the driver's own logging off the command's output.
type quietLogger struct{}

func (quietLogger) Print(...any)          {}
func (quietLogger) Printf(string, ...any) {}
func (quietLogger) Println(...any)        {}
