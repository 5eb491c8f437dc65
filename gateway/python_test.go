package gateway_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net"
	osexec "os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// systemPython is the interpreter Debian's python3-cassandra installs into;
// the python3 on PATH may be another one.
const systemPython = "/usr/bin/python3"

// installPythonDriver installs the DataStax Python driver 3.25 from Debian's
// python3-cassandra unless the system Python can already import it. It runs
// once per test binary.
var installPythonDriver = sync.OnceValue(func() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if osexec.CommandContext(ctx, systemPython, "-c", "import cassandra").Run() == nil {
		return nil
	}
	if err := aptInstall(ctx, "python3-cassandra"); err != nil {
		return err
	}
	if out, err := osexec.CommandContext(ctx, systemPython, "-c", "import cassandra").CombinedOutput(); err != nil {
		return fmt.Errorf("python3-cassandra installed, but %s cannot import it: %v\n%s", systemPython, err, out)
	}
	return nil
})

// downgradeLog matches the driver's warning on each protocol step down.
var downgradeLog = regexp.MustCompile(`Downgrading core protocol version from (\d+) to (\d+)`)

// pythonColumn is a column as the Python driver's metadata describes it.
type pythonColumn struct {
	Name     string `json:"name"`
	Type     string `json:"type"`
	Reversed bool   `json:"reversed"`
}

// pythonRow is a row of the script's table; at is in milliseconds.
type pythonRow struct {
	Sensor string  `json:"sensor"`
	At     int64   `json:"at"`
	Seq    int     `json:"seq"`
	Value  float64 `json:"value"`
	Note   *string `json:"note"`
	Flag   *bool   `json:"flag"`
	ID     string  `json:"id"`
}

// pythonReport is what testdata/python/driver.py prints.
type pythonReport struct {
	ProtocolVersion    int                 `json:"protocol_version"`
	ConnectMS          float64             `json:"connect_ms"`
	Warnings           []string            `json:"warnings"`
	ClusterName        string              `json:"cluster_name"`
	Partitioner        string              `json:"partitioner"`
	Hosts              []string            `json:"hosts"`
	KeyspacesAtConnect []string            `json:"keyspaces_at_connect"`
	VirtualKeyspaces   map[string][]string `json:"virtual_keyspaces"`
	SchemaAgreed       []bool              `json:"schema_agreed"`
	Keyspace           struct {
		DurableWrites     bool   `json:"durable_writes"`
		Strategy          string `json:"strategy"`
		ReplicationFactor int    `json:"replication_factor"`
	} `json:"keyspace"`
	Table struct {
		PartitionKey    []pythonColumn `json:"partition_key"`
		ClusteringKey   []pythonColumn `json:"clustering_key"`
		Columns         []pythonColumn `json:"columns"`
		CreateStatement string         `json:"create_statement"`
	} `json:"table"`
	Written          []pythonRow `json:"written"`
	Read             []pythonRow `json:"read"`
	ReadSinceMinute1 []int       `json:"read_since_minute_1"`
	NamedBind        []int       `json:"named_bind"`

	// Times in milliseconds: each DDL statement until the driver has seen
	// the schema agree, and an explicit wait for agreement.
	DDLMS                    map[string]float64 `json:"ddl_ms"`
	WaitForSchemaAgreementMS float64            `json:"wait_for_schema_agreement_ms"`
	Paging                   struct {
		Iterated     []int   `json:"iterated"`
		ResumedPages [][]int `json:"resumed_pages"`
		FetchedPages [][]int `json:"fetched_pages"`
	} `json:"paging"`
	Batches struct {
		Rows                 map[string][]string `json:"rows"`
		Hits                 map[string]int64    `json:"hits"`
		CounterInLoggedError string              `json:"counter_in_logged_error"`
	} `json:"batches"`
	UDT struct {
		Name        string                    `json:"name"`
		Home        *pythonAddress            `json:"home"`
		Work        *pythonAddress            `json:"work"`
		Others      map[string]*pythonAddress `json:"others"`
		FieldNames  []string                  `json:"field_names"`
		FieldTypes  []string                  `json:"field_types"`
		Columns     map[string]string         `json:"columns"`
		KeyspaceCQL string                    `json:"keyspace_cql"`
	} `json:"udt"`
	TokenMap struct {
		Tokens         int      `json:"tokens"`
		TokenOfP       int64    `json:"token_of_p"`
		ServerTokenOfP int64    `json:"server_token_of_p"`
		ReplicasOfP    []string `json:"replicas_of_p"`
	} `json:"token_map"`
	Reconnect struct {
		ConnectMS float64  `json:"connect_ms"`
		Tables    []string `json:"tables"`
		UserTypes []string `json:"user_types"`
		Columns   []string `json:"columns"`
		Warnings  []string `json:"warnings"`
	} `json:"reconnect"`
}

// pythonAddress is a value of the script's user type address, read back
// as the class the script registered for it.
type pythonAddress struct {
	Class  string   `json:"class"`
	Street *string  `json:"street"`
	City   *string  `json:"city"`
	Zip    *int     `json:"zip"`
	Phones []string `json:"phones"`
}

// TestPythonDriver drives the gateway with the unmodified DataStax Python
// driver 3.25, as cqlsh embeds it: protocol negotiation from DSE_V2 down to
// v5, the full schema load at connect (again once the keyspace has tables
// and a user type), DDL with schema agreement, keyspace, table and user
// type metadata, prepared writes and reads bound by position and by name,
// paging by fetch_size resumed from a paging_state, batches of each kind,
// user type values mapped to a registered class, and the token map.
func TestPythonDriver(t *testing.T) {
	if err := installPythonDriver(); err != nil {
		t.Fatal(err)
	}
	// The driver must see the one gateway, and route every key to it.
	waitAlone(t)
	host, port, _ := net.SplitHostPort(gw.Addr().String())
	keyspace := fmt.Sprintf("python_%d", time.Now().UnixNano())

	var r pythonReport
	runPython(t, &r, "testdata/python/driver.py", host, port, keyspace)
	t.Logf("python driver: connected in %.1f ms with protocol v%d (%.1f ms with the keyspace's schema); "+
		"CREATE TABLE with schema agreement %.1f ms, CREATE KEYSPACE %.1f ms, wait_for_schema_agreement %.1f ms",
		r.ConnectMS, r.ProtocolVersion, r.Reconnect.ConnectMS, r.DDLMS["table"], r.DDLMS["keyspace"],
		r.WaitForSchemaAgreementMS)

	// v5 is the highest version the gateway speaks, framed in segments,
	// and the driver's own: it stays there.
	if r.ProtocolVersion != 5 {
		t.Errorf("negotiated protocol version %d, want 5", r.ProtocolVersion)
	}
	checkPythonWarnings(t, "in the run", r.Warnings)
	checkPythonWarnings(t, "on connecting again", r.Reconnect.Warnings)
	if r.Partitioner != "org.apache.cassandra.dht.Murmur3Partitioner" {
		t.Errorf("partitioner %q", r.Partitioner)
	}
	if len(r.Hosts) != 1 {
		t.Errorf("driver sees hosts %q, want one", r.Hosts)
	}
	for _, ks := range []string{"system", "system_schema"} {
		if !slices.Contains(r.KeyspacesAtConnect, ks) {
			t.Errorf("keyspace %s missing from metadata at connect: %q", ks, r.KeyspacesAtConnect)
		}
	}
	if want := map[string][]string{"system_views": {"clients", "settings"},
		"system_virtual_schema": {"columns", "keyspaces", "tables"}}; !reflect.DeepEqual(r.VirtualKeyspaces, want) {
		t.Errorf("virtual keyspaces and their tables at connect: %v, want %v", r.VirtualKeyspaces, want)
	}
	if !reflect.DeepEqual(r.SchemaAgreed, []bool{true, true, true}) {
		t.Errorf("schema agreement after CREATE KEYSPACE, CREATE TABLE and on request: %v, want all true", r.SchemaAgreed)
	}

	if k := r.Keyspace; !k.DurableWrites || k.Strategy != "SimpleStrategy" || k.ReplicationFactor != 1 {
		t.Errorf("keyspace metadata: durable_writes %v, %s RF %d; want true, SimpleStrategy RF 1",
			k.DurableWrites, k.Strategy, k.ReplicationFactor)
	}
	wantPK := []pythonColumn{{"sensor", "text", false}, {"day", "date", false}}
	wantCK := []pythonColumn{{"at", "timestamp", true}, {"seq", "int", false}}
	wantCols := append(append(slices.Clone(wantPK), wantCK...),
		pythonColumn{"flag", "boolean", false}, pythonColumn{"id", "uuid", false},
		pythonColumn{"note", "text", false}, pythonColumn{"value", "double", false})
	if !reflect.DeepEqual(r.Table.PartitionKey, wantPK) {
		t.Errorf("partition key %v, want %v", r.Table.PartitionKey, wantPK)
	}
	if !reflect.DeepEqual(r.Table.ClusteringKey, wantCK) {
		t.Errorf("clustering key %v, want %v", r.Table.ClusteringKey, wantCK)
	}
	if !reflect.DeepEqual(r.Table.Columns, wantCols) {
		t.Errorf("columns %v, want %v", r.Table.Columns, wantCols)
	}
	if !strings.Contains(r.Table.CreateStatement, "CLUSTERING ORDER BY (at DESC, seq ASC)") {
		t.Errorf("driver's CREATE TABLE lacks the clustering order:\n%s", r.Table.CreateStatement)
	}

	// Partition ("a", day) in clustering order: at DESC, then seq ASC.
	var want []pythonRow
	for _, w := range r.Written {
		if w.Sensor == "a" {
			want = append(want, w)
		}
	}
	slices.SortFunc(want, func(a, b pythonRow) int {
		return cmp.Or(cmp.Compare(b.At, a.At), cmp.Compare(a.Seq, b.Seq))
	})
	if len(want) < 5 {
		t.Fatalf("script wrote only %d rows to partition a", len(want))
	}
	if !reflect.DeepEqual(r.Read, want) {
		t.Errorf("rows read:\n%s\nwant:\n%s", pythonRows(r.Read), pythonRows(want))
	}
	if wantSeqs := []int{1, 7, 1, 2}; !reflect.DeepEqual(r.ReadSinceMinute1, wantSeqs) {
		t.Errorf("seq of rows at >= minute 1: %v, want %v", r.ReadSinceMinute1, wantSeqs)
	}
	if wantSeqs := []int{1, 7, 1, 2, 1}; !reflect.DeepEqual(r.NamedBind, wantSeqs) {
		t.Errorf("seq of rows read with values bound by name: %v, want %v", r.NamedBind, wantSeqs)
	}

	checkPythonPaging(t, r)
	checkPythonBatches(t, r)
	checkPythonUDT(t, r, keyspace)

	tm := r.TokenMap
	var tokens []string
	if err := session(t, "").Query("SELECT tokens FROM system.local").Scan(&tokens); err != nil {
		t.Fatal(err)
	}
	if tm.Tokens != len(tokens) {
		t.Errorf("driver's token map has %d tokens, system.local %d", tm.Tokens, len(tokens))
	}
	if tm.TokenOfP != tm.ServerTokenOfP {
		t.Errorf("driver's Murmur3 token of 'p' %d, the gateway's token() %d", tm.TokenOfP, tm.ServerTokenOfP)
	}
	if addr := gw.Addr().String(); !slices.Equal(tm.ReplicasOfP, []string{addr}) {
		t.Errorf("replicas of 'p' %q, want [%s]", tm.ReplicasOfP, addr)
	}

	rc := r.Reconnect
	if want := []string{"hits", "paged", "readings", "users"}; !slices.Equal(rc.Tables, want) {
		t.Errorf("tables loaded at connect %q, want %q", rc.Tables, want)
	}
	if !slices.Equal(rc.UserTypes, []string{"address"}) {
		t.Errorf("user types loaded at connect %q, want [address]", rc.UserTypes)
	}
	var names []string
	for _, c := range r.Table.Columns {
		names = append(names, c.Name)
	}
	if !slices.Equal(rc.Columns, names) {
		t.Errorf("columns of readings loaded at connect %q, want %q", rc.Columns, names)
	}
}

func checkPythonPaging(t *testing.T, r pythonReport) {
	t.Helper()
	ascending := func(from, to int) []int {
		var out []int
		for i := from; i <= to; i++ {
			out = append(out, i)
		}
		return out
	}
	p := r.Paging
	if want := ascending(0, 24); !slices.Equal(p.Iterated, want) {
		t.Errorf("rows iterated in pages of 6: %v, want %v", p.Iterated, want)
	}
	if want := [][]int{ascending(0, 6), ascending(7, 13), ascending(14, 20), ascending(21, 24)}; !reflect.DeepEqual(p.ResumedPages, want) {
		t.Errorf("pages of 7 resumed by paging_state: %v, want %v", p.ResumedPages, want)
	}
	if want := [][]int{ascending(0, 9), ascending(10, 19), ascending(20, 24)}; !reflect.DeepEqual(p.FetchedPages, want) {
		t.Errorf("pages of 10 by fetch_next_page: %v, want %v", p.FetchedPages, want)
	}
}

func checkPythonBatches(t *testing.T, r pythonReport) {
	t.Helper()
	b := r.Batches
	want := map[string][]string{"b1": {"1:logged"}, "b2": {"1:logged"}, "b3": {}, "b4": {"1:unlogged", "2:unlogged"}}
	if !reflect.DeepEqual(b.Rows, want) {
		t.Errorf("rows after the batches %q, want %q", b.Rows, want)
	}
	if want := map[string]int64{"home": 7, "about": -2}; !reflect.DeepEqual(b.Hits, want) {
		t.Errorf("counters after the counter batch %v, want %v", b.Hits, want)
	}
	if want := `Error from server: code=2200 [Invalid query] message="Cannot include a counter statement in a logged batch"`; b.CounterInLoggedError != want {
		t.Errorf("counter in a logged batch: %q, want %q", b.CounterInLoggedError, want)
	}
}

func checkPythonUDT(t *testing.T, r pythonReport, keyspace string) {
	t.Helper()
	u := r.UDT
	str := func(s string) *string { return &s }
	zip := func(z int) *int { return &z }
	wantHome := &pythonAddress{"Address", str("1 Main St"), str("Springfield"), zip(12345), []string{"555-0100", "555-0101"}}
	// The non-frozen work had its city set by field.
	wantWork := &pythonAddress{"Address", str("9 Office Rd"), str("Capital City"), zip(54321), nil}
	wantOthers := map[string]*pythonAddress{"cabin": {"Address", str("Lake Rd"), nil, zip(7), nil}}
	if u.Name != "homer" || !reflect.DeepEqual(u.Home, wantHome) || !reflect.DeepEqual(u.Work, wantWork) ||
		!reflect.DeepEqual(u.Others, wantOthers) {
		t.Errorf("user read back: %s home %+v work %+v others %+v; want homer home %+v work %+v others %+v",
			u.Name, u.Home, u.Work, u.Others, wantHome, wantWork, wantOthers)
	}
	if !slices.Equal(u.FieldNames, []string{"street", "city", "zip", "phones"}) ||
		!slices.Equal(u.FieldTypes, []string{"text", "text", "int", "frozen<list<text>>"}) {
		t.Errorf("user type metadata: fields %q of types %q", u.FieldNames, u.FieldTypes)
	}
	wantCols := map[string]string{"id": "int", "name": "text", "home": "frozen<address>", "work": "address",
		"others": "map<text, frozen<address>>"}
	if !reflect.DeepEqual(u.Columns, wantCols) {
		t.Errorf("users columns %v, want %v", u.Columns, wantCols)
	}
	wantType := "CREATE TYPE " + keyspace + ".address (\n    street text,\n    city text,\n    zip int,\n    phones frozen<list<text>>\n);"
	if !strings.Contains(u.KeyspaceCQL, wantType) {
		t.Errorf("the driver's CQL of the keyspace lacks\n%s\nin:\n%s", wantType, u.KeyspaceCQL)
	}
}

// checkPythonWarnings fails the test on what the driver logged but the
// protocol downgrades, which must be those from DSE_V2 to v5.
func checkPythonWarnings(t *testing.T, when string, warnings []string) {
	t.Helper()
	// The driver starts at DSE_V2 (66) and steps down on each ProtocolError
	// the gateway answers. Any other warning is a failure the driver
	// swallowed, such as a schema table it could not parse.
	var downgrades []string
	for _, w := range warnings {
		switch m := downgradeLog.FindStringSubmatch(w); {
		case m != nil:
			downgrades = append(downgrades, m[1]+"->"+m[2])
		case strings.Contains(w, "no load_balancing_policy"):
			// The driver's defaults draw this warning.
		default:
			t.Errorf("driver logged %s: %s", when, w)
		}
	}
	if want := []string{"66->65", "65->5"}; !slices.Equal(downgrades, want) {
		t.Errorf("protocol downgrades %s %q, want %q", when, downgrades, want)
	}
}

func pythonRows(rows []pythonRow) string {
	var b strings.Builder
	for _, r := range rows {
		note, flag := "null", "null"
		if r.Note != nil {
			note = *r.Note
		}
		if r.Flag != nil {
			flag = fmt.Sprint(*r.Flag)
		}
		fmt.Fprintf(&b, "  %s at=%d seq=%d value=%g note=%s flag=%s id=%s\n",
			r.Sensor, r.At, r.Seq, r.Value, note, flag, r.ID)
	}
	return b.String()
}

// runPython runs a script of testdata with the system's Python and its
// Cassandra driver, and decodes the JSON report the script prints into
// report.
func runPython(t *testing.T, report any, script string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// -B: a script importing a sibling (cqlsh.py imports driver.py) must
	// not leave compiled bytecode in testdata.
	cmd := osexec.CommandContext(ctx, systemPython, append([]string{"-B", script}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	name := filepath.Base(script)
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\nstderr:\n%s\nstdout:\n%s", name, err, stderr.String(), stdout.String())
	}
	if err := json.Unmarshal(stdout.Bytes(), report); err != nil {
		t.Fatalf("%s printed no report: %v\n%s", name, err, stdout.String())
	}
}
