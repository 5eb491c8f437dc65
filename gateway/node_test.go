package gateway_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"os"
	osexec "os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlpg/cqlpg/gateway"
)

// nodeDir holds the Node.js project whose lock file pins the DataStax
// Node.js driver the tests run, and the playwright-core that drives the
// browser tests' Chromium.
const nodeDir = "testdata/node"

// installNodeDriver installs the locked packages of testdata/node with
// npm ci, once per test binary, into a directory of the user's cache named
// by the hash of the package files: later runs, and other checkouts, reuse
// it, and a changed lock file installs afresh. The install goes to a
// temporary directory renamed into place, so a run stopped halfway, or
// two test binaries installing at once, never leave a partial one. It
// returns the node_modules directory.
var installNodeDriver = sync.OnceValues(func() (string, error) {
	for _, tool := range []string{"node", "npm"} {
		if _, err := osexec.LookPath(tool); err != nil {
			return "", fmt.Errorf("the Node.js driver tests need %s on PATH: %w", tool, err)
		}
	}
	h := sha256.New()
	var files [2][]byte
	for i, name := range []string{"package.json", "package-lock.json"} {
		b, err := os.ReadFile(filepath.Join(nodeDir, name))
		if err != nil {
			return "", err
		}
		files[i] = b
		h.Write(b)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	root := filepath.Join(cache, "cqlpg")
	dir := filepath.Join(root, "node-"+hex.EncodeToString(h.Sum(nil))[:16])
	modules := filepath.Join(dir, "node_modules")
	installed := func() bool {
		_, err := os.Stat(filepath.Join(modules, "cassandra-driver", "package.json"))
		return err == nil
	}
	if installed() {
		return modules, nil
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(root, "node-install-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	for i, name := range []string{"package.json", "package-lock.json"} {
		if err := os.WriteFile(filepath.Join(tmp, name), files[i], 0o644); err != nil {
			return "", err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// The driver and its dependencies run no install scripts.
	cmd := osexec.CommandContext(ctx, "npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund")
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(), "npm_config_update_notifier=false")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("npm ci in a copy of %s: %v\n%s", nodeDir, err, out)
	}
	if err := os.Rename(tmp, dir); err != nil && !installed() {
		// Another test binary did not win the race: what is in the way
		// is a directory an earlier run left without the driver in it.
		if err := os.RemoveAll(dir); err != nil {
			return "", err
		}
		if err := os.Rename(tmp, dir); err != nil {
			return "", err
		}
	}
	return modules, nil
})

// nodeError is an error the gateway answered, as the Node.js driver
// shows it to the application.
type nodeError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// nodeColumn is a column name and its CQL type as the driver spells it.
type nodeColumn struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// nodeReading is a row of the script's readings table.
type nodeReading struct {
	Sensor string  `json:"sensor"`
	Seq    int     `json:"seq"`
	Value  float64 `json:"value"`
	Note   *string `json:"note"`
}

// nodeAddress is a value of the script's address type.
type nodeAddress struct {
	Street *string  `json:"street"`
	City   *string  `json:"city"`
	Zip    *int     `json:"zip"`
	Phones []string `json:"phones"`
}

type nodeUser struct {
	Name   string                 `json:"name"`
	Home   *nodeAddress           `json:"home"`
	Work   *nodeAddress           `json:"work"`
	Others map[string]nodeAddress `json:"others"`
}

// nodeHost is a host as the Node.js driver's metadata lists it; the
// reports print what they need of it.
type nodeHost struct {
	Address        string   `json:"address"`
	Datacenter     string   `json:"datacenter"`
	Rack           string   `json:"rack"`
	ReleaseVersion string   `json:"release_version"`
	HostID         string   `json:"host_id"`
	Tokens         []string `json:"tokens"`
	Up             bool     `json:"up"`
}

// nodeReport is what testdata/node/driver.js prints; times are in ms.
type nodeReport struct {
	Logs                   []string           `json:"logs"`
	ConnectMS              float64            `json:"connect_ms"`
	ProtocolVersion        int                `json:"protocol_version"`
	KeyspacesAtConnect     []string           `json:"keyspaces_at_connect"`
	Hosts                  []nodeHost         `json:"hosts"`
	DDLMS                  map[string]float64 `json:"ddl_ms"`
	DDLAgreed              map[string]bool    `json:"ddl_agreed"`
	CheckSchemaAgreement   bool               `json:"check_schema_agreement"`
	CheckSchemaAgreementMS float64            `json:"check_schema_agreement_ms"`
	UnhintedError          *nodeError         `json:"unhinted_error"`
	MissingTableError      *nodeError         `json:"missing_table_error"`
	PartitionB             []nodeReading      `json:"partition_b"`
	PartitionBColumns      []nodeColumn       `json:"partition_b_columns"`
	QueriedHost            string             `json:"queried_host"`
	DefaultTTLRead         int                `json:"default_ttl_read"`
	ServerTokenA           string             `json:"server_token_a"`
	Paging                 struct {
		ManualPages     [][]int `json:"manual_pages"`
		ManualLastState *string `json:"manual_last_state"`
		SimplePages     [][]int `json:"simple_pages"`
		EachRow         []int   `json:"each_row"`
		EachRowNextPage [][]int `json:"each_row_next_page"`
		Stream          []int   `json:"stream"`
		AsyncIterator   []int   `json:"async_iterator"`
		Scan            []struct {
			Token  string `json:"token"`
			Sensor string `json:"sensor"`
			Seq    int    `json:"seq"`
		} `json:"scan"`
	} `json:"paging"`
	Batches struct {
		C, D, E, F           []nodeReading
		User                 []string          `json:"user"`
		Hits                 map[string]string `json:"hits"`
		CounterInLoggedError *nodeError        `json:"counter_in_logged_error"`
	} `json:"batches"`
	UDTRows         map[string]nodeUser `json:"udt_rows"`
	UDTColumns      []nodeColumn        `json:"udt_columns"`
	UDTResultFields []nodeColumn        `json:"udt_result_fields"`
	Keyspace        *struct {
		Strategy      string            `json:"strategy"`
		Options       map[string]string `json:"options"`
		DurableWrites bool              `json:"durable_writes"`
	} `json:"keyspace"`
	Table *struct {
		PartitionKeys   []string     `json:"partition_keys"`
		ClusteringKeys  []string     `json:"clustering_keys"`
		ClusteringOrder []string     `json:"clustering_order"`
		Columns         []nodeColumn `json:"columns"`
		Comment         string       `json:"comment"`
		DefaultTTL      int          `json:"default_ttl"`
		GCGraceSeconds  int          `json:"gc_grace_seconds"`
		Virtual         bool         `json:"virtual"`
	} `json:"table"`
	UsersColumns []nodeColumn `json:"users_columns"`
	UDT          *struct {
		Name   string       `json:"name"`
		Fields []nodeColumn `json:"fields"`
	} `json:"udt"`
	MissingTable             any      `json:"missing_table"`
	SystemLocalPartitionKeys []string `json:"system_local_partition_keys"`
	VirtualTable             *struct {
		Virtual        bool         `json:"virtual"`
		PartitionKeys  []string     `json:"partition_keys"`
		ClusteringKeys []string     `json:"clustering_keys"`
		Columns        []nodeColumn `json:"columns"`
	} `json:"virtual_table"`
	Ring struct {
		DriverTokenA   string   `json:"driver_token_a"`
		Ranges         int      `json:"ranges"`
		ReplicasA      []string `json:"replicas_a"`
		ReplicasTokenA []string `json:"replicas_token_a"`
		RangesOfHost   []int    `json:"ranges_of_host"`
	} `json:"ring"`
}

// runNodeScript runs a script of testdata/node against a gateway and
// decodes the JSON report it prints into out.
func runNodeScript(t *testing.T, script string, addr net.Addr, keyspace string, out any) {
	t.Helper()
	modules, err := installNodeDriver()
	if err != nil {
		t.Fatal(err)
	}
	host, port, _ := net.SplitHostPort(addr.String())
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := osexec.CommandContext(ctx, "node", filepath.Join(nodeDir, script), host, port, keyspace)
	// The script requires the driver from the cached install, not from a
	// node_modules in the checkout.
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\nstderr:\n%s\nstdout:\n%s", script, err, stderr.String(), stdout.String())
	}
	if err := json.Unmarshal(stdout.Bytes(), out); err != nil {
		t.Fatalf("%s printed no report: %v\n%s", script, err, stdout.String())
	}
}

func descending(from, to int) []int {
	var out []int
	for i := from; i >= to; i-- {
		out = append(out, i)
	}
	return out
}

// TestNodeDriver drives the gateway with the unmodified DataStax Node.js
// driver 4.x, as an application configures it: the connection and its
// protocol negotiation, the schema load, DDL with schema agreement, simple
// statements with hints, prepared statements, batches of each kind, every
// way the driver pages, schema and ring metadata, and user type values.
func TestNodeDriver(t *testing.T) {
	waitAlone(t)
	keyspace := fmt.Sprintf("node_%d", time.Now().UnixNano())
	var r nodeReport
	runNodeScript(t, "driver.js", gw.Addr(), keyspace, &r)
	t.Logf("node driver: connected in %.1f ms with protocol v%d; CREATE TABLE with schema agreement %.1f ms, CREATE KEYSPACE %.1f ms, checkSchemaAgreement %.1f ms",
		r.ConnectMS, r.ProtocolVersion, r.DDLMS["table"], r.DDLMS["keyspace"], r.CheckSchemaAgreementMS)

	for _, l := range r.Logs {
		t.Errorf("driver logged: %s", l)
	}
	// The driver starts at DSE v2 and steps down to what the gateway
	// speaks; everything the script does needs v4 at least.
	if r.ProtocolVersion < 4 {
		t.Errorf("negotiated protocol version %d, want 4 or more", r.ProtocolVersion)
	}
	for _, ks := range []string{"system", "system_schema", "system_virtual_schema"} {
		if !slices.Contains(r.KeyspacesAtConnect, ks) {
			t.Errorf("keyspace %s missing from metadata at connect: %q", ks, r.KeyspacesAtConnect)
		}
	}

	sess := session(t, "")
	var hostID gocql.UUID
	var tokens []string
	if err := sess.Query("SELECT host_id, tokens FROM system.local").Scan(&hostID, &tokens); err != nil {
		t.Fatal(err)
	}
	slices.Sort(tokens)
	addr := gw.Addr().String()
	if len(r.Hosts) != 1 {
		t.Fatalf("driver sees hosts %+v, want the one gateway", r.Hosts)
	}
	h := r.Hosts[0]
	if h.Address != addr || h.Datacenter != "datacenter1" || h.Rack != "rack1" || h.ReleaseVersion != "4.1.7" ||
		h.HostID != hostID.String() || !h.Up {
		t.Errorf("host %s dc %s rack %s release %s host id %s up %v; want %s datacenter1 rack1 4.1.7 %s up",
			h.Address, h.Datacenter, h.Rack, h.ReleaseVersion, h.HostID, h.Up, addr, hostID)
	}
	if !slices.Equal(h.Tokens, tokens) {
		t.Errorf("driver's tokens of the host %q, system.local's %q", h.Tokens, tokens)
	}

	for _, name := range []string{"keyspace", "type", "table", "users", "hits"} {
		if !r.DDLAgreed[name] {
			t.Errorf("CREATE %s: isSchemaInAgreement false", name)
		}
	}
	if !r.CheckSchemaAgreement {
		t.Error("checkSchemaAgreement() false")
	}

	// Cassandra's errors, by code and text.
	invalid := 0x2200
	for _, c := range []struct {
		what      string
		got, want *nodeError
	}{
		{"int bound as a double", r.UnhintedError, &nodeError{invalid, "Expected 4 or 0 byte int (8)"}},
		{"missing table", r.MissingTableError, &nodeError{invalid, "table nope does not exist"}},
		{"counter in a logged batch", r.Batches.CounterInLoggedError,
			&nodeError{invalid, "Cannot include a counter statement in a logged batch"}},
	} {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s: error %+v, want %+v", c.what, c.got, c.want)
		}
	}

	wantB := []nodeReading{{"b", 3, -1.25, new("prepared")}, {"b", 1, 0.5, new("hinted")}}
	if !reflect.DeepEqual(r.PartitionB, wantB) {
		t.Errorf("partition b: %s, want %s", asJSON(r.PartitionB), asJSON(wantB))
	}
	wantCols := []nodeColumn{{"sensor", "text"}, {"seq", "int"}, {"value", "double"}, {"note", "text"}}
	if !reflect.DeepEqual(r.PartitionBColumns, wantCols) {
		t.Errorf("result columns %v, want %v", r.PartitionBColumns, wantCols)
	}
	if r.QueriedHost != addr {
		t.Errorf("queried host %s, want %s", r.QueriedHost, addr)
	}
	if r.DefaultTTLRead < 86400-60 || r.DefaultTTLRead > 86400 {
		t.Errorf("TTL of a cell written under default_time_to_live 86400: %d", r.DefaultTTLRead)
	}

	checkNodePaging(t, r)
	checkNodeBatches(t, r)
	checkNodeUDTs(t, r)
	checkNodeMetadata(t, r, addr, len(tokens))
}

func checkNodePaging(t *testing.T, r nodeReport) {
	t.Helper()
	p := r.Paging
	all := descending(24, 0)
	for _, c := range []struct {
		how       string
		got, want any
	}{
		{"pages of 7 resumed by pageState", p.ManualPages, [][]int{descending(24, 18), descending(17, 11), descending(10, 4), descending(3, 0)}},
		{"pages of 10 of a simple statement", p.SimplePages, [][]int{descending(24, 15), descending(14, 5), descending(4, 0)}},
		{"eachRow with autoPage", p.EachRow, all},
		{"eachRow with nextPage", p.EachRowNextPage, [][]int{descending(24, 16), descending(15, 7), descending(6, 0)}},
		{"stream", p.Stream, all},
		{"async iteration", p.AsyncIterator, all},
	} {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s: %v, want %v", c.how, c.got, c.want)
		}
	}
	if p.ManualLastState != nil {
		t.Errorf("the last page has a page state %q", *p.ManualLastState)
	}
	// The scan runs in token order, each partition in clustering order.
	var got []string
	last := int64(-1 << 63)
	for _, row := range p.Scan {
		tok, err := strconv.ParseInt(row.Token, 10, 64)
		if err != nil || tok < last {
			t.Errorf("scan out of token order at %+v", row)
		}
		last = tok
		got = append(got, fmt.Sprintf("%s%d", row.Sensor, row.Seq))
	}
	var want []string
	for _, seq := range all {
		want = append(want, fmt.Sprintf("a%d", seq))
	}
	want = append(want, "b3", "b1")
	if !slices.Equal(got, want) {
		t.Errorf("scan in pages of 5: %q, want %q", got, want)
	}
}

func checkNodeBatches(t *testing.T, r nodeReport) {
	t.Helper()
	b := r.Batches
	for _, c := range []struct {
		partition string
		got, want []nodeReading
	}{
		{"c", b.C, []nodeReading{{"c", 1, 1.5, new("logged")}}},
		{"d", b.D, []nodeReading{}},
		{"e", b.E, []nodeReading{{"e", 2, 4.5, new("unlogged")}, {"e", 1, 3.5, new("updated")}}},
		{"f", b.F, []nodeReading{{"f", 1, 5.5, new("simple")}}},
	} {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("partition %s after the batches: %s, want %s", c.partition, asJSON(c.got), asJSON(c.want))
		}
	}
	if !slices.Equal(b.User, []string{"batched"}) {
		t.Errorf("user written by the logged batch: %q", b.User)
	}
	if want := map[string]string{"home": "7", "about": "-2"}; !reflect.DeepEqual(b.Hits, want) {
		t.Errorf("counters after the counter batch: %v, want %v", b.Hits, want)
	}
}

func checkNodeUDTs(t *testing.T, r nodeReport) {
	t.Helper()
	want := map[string]nodeUser{
		"1": {
			Name:   "homer",
			Home:   &nodeAddress{new("1 Main St"), new("Springfield"), new(12345), []string{"555-0100", "555-0101"}},
			Work:   &nodeAddress{new("9 Office Rd"), new("Shelbyville"), new(54321), []string{"555-0199"}},
			Others: map[string]nodeAddress{"cabin": {new("Lake Rd"), nil, new(7), nil}},
		},
		// Written by a simple statement with a user type hint, then two
		// fields updated.
		"2": {
			Name: "marge",
			Home: &nodeAddress{new("2 Main St"), new("Capital City"), new(99999), nil},
		},
	}
	if !reflect.DeepEqual(r.UDTRows, want) {
		t.Errorf("users read back:\n%s\nwant:\n%s", asJSON(r.UDTRows), asJSON(want))
	}
	// Result metadata carries no frozen flag.
	wantCols := []nodeColumn{{"id", "int"}, {"name", "text"}, {"home", "address"}, {"work", "address"},
		{"others", "map<text, address>"}}
	if !reflect.DeepEqual(r.UDTColumns, wantCols) {
		t.Errorf("result columns %v, want %v", r.UDTColumns, wantCols)
	}
	wantFields := []nodeColumn{{"street", "text"}, {"city", "text"}, {"zip", "int"}, {"phones", "list<text>"}}
	if !reflect.DeepEqual(r.UDTResultFields, wantFields) {
		t.Errorf("user type fields in the result metadata %v, want %v", r.UDTResultFields, wantFields)
	}
}

func checkNodeMetadata(t *testing.T, r nodeReport, addr string, tokens int) {
	t.Helper()
	if k := r.Keyspace; k == nil || k.Strategy != "org.apache.cassandra.locator.SimpleStrategy" ||
		!reflect.DeepEqual(k.Options, map[string]string{"replication_factor": "3"}) || !k.DurableWrites {
		t.Errorf("keyspace metadata %s, want SimpleStrategy RF 3, durable writes", asJSON(k))
	}
	tb := r.Table
	if tb == nil {
		t.Fatal("no metadata of table readings")
	}
	if !slices.Equal(tb.PartitionKeys, []string{"sensor"}) || !slices.Equal(tb.ClusteringKeys, []string{"seq"}) ||
		!slices.Equal(tb.ClusteringOrder, []string{"DESC"}) {
		t.Errorf("table keys: partition %q clustering %q order %q; want [sensor] [seq] [DESC]",
			tb.PartitionKeys, tb.ClusteringKeys, tb.ClusteringOrder)
	}
	wantCols := []nodeColumn{{"note", "text"}, {"sensor", "text"}, {"seq", "int"}, {"value", "double"}}
	if !reflect.DeepEqual(tb.Columns, wantCols) {
		t.Errorf("table columns %v, want %v", tb.Columns, wantCols)
	}
	if tb.Comment != "node driver" || tb.DefaultTTL != 86400 || tb.GCGraceSeconds != 864000 || tb.Virtual {
		t.Errorf("table options: comment %q, default TTL %d, gc_grace_seconds %d, virtual %v",
			tb.Comment, tb.DefaultTTL, tb.GCGraceSeconds, tb.Virtual)
	}
	wantUsers := []nodeColumn{{"home", "address"}, {"id", "int"}, {"name", "text"},
		{"others", "map<text, frozen<address>>"}, {"work", "frozen<address>"}}
	if !reflect.DeepEqual(r.UsersColumns, wantUsers) {
		t.Errorf("users columns %v, want %v", r.UsersColumns, wantUsers)
	}
	wantUDT := []nodeColumn{{"street", "text"}, {"city", "text"}, {"zip", "int"}, {"phones", "frozen<list<text>>"}}
	if r.UDT == nil || r.UDT.Name != "address" || !reflect.DeepEqual(r.UDT.Fields, wantUDT) {
		t.Errorf("user type metadata %s, want address %v", asJSON(r.UDT), wantUDT)
	}
	if r.MissingTable != nil {
		t.Errorf("metadata of a missing table: %v", r.MissingTable)
	}
	if !slices.Equal(r.SystemLocalPartitionKeys, []string{"key"}) {
		t.Errorf("system.local partition key %q", r.SystemLocalPartitionKeys)
	}
	if v := r.VirtualTable; v == nil || !v.Virtual || !slices.Equal(v.PartitionKeys, []string{"keyspace_name"}) ||
		!slices.Equal(v.ClusteringKeys, []string{"table_name"}) ||
		!reflect.DeepEqual(v.Columns, []nodeColumn{{"comment", "text"}, {"keyspace_name", "text"}, {"table_name", "text"}}) {
		t.Errorf("metadata of the virtual table system_virtual_schema.tables: %s", asJSON(v))
	}

	g := r.Ring
	if g.DriverTokenA != r.ServerTokenA {
		t.Errorf("driver's Murmur3 token of 'a' %s, the gateway's token() %s", g.DriverTokenA, r.ServerTokenA)
	}
	if g.Ranges != tokens || !slices.Equal(g.RangesOfHost, []int{tokens}) {
		t.Errorf("driver's ring has %d ranges, %v on the host; want %d, all on the one gateway", g.Ranges, g.RangesOfHost, tokens)
	}
	if !slices.Equal(g.ReplicasA, []string{addr}) || !slices.Equal(g.ReplicasTokenA, []string{addr}) {
		t.Errorf("replicas of 'a' %q by key, %q by token; want [%s]", g.ReplicasA, g.ReplicasTokenA, addr)
	}
}

func asJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// startPeerGateway starts a second gateway on the shared shards, at
// 127.0.0.2 and the shared gateway's port: drivers that read the legacy
// system.peers, which has no port, reach a peer at its address and the
// port they were given. It returns once the shared gateway lists the new
// one; when the test ends, it shuts the new one down and waits until the
// shared gateway is alone again.
func startPeerGateway(t *testing.T) *gateway.Server {
	t.Helper()
	port := strconv.Itoa(gw.Addr().(*net.TCPAddr).Port)
	b := startGatewayWith(t, func(c *gateway.Config) { c.Listen = net.JoinHostPort("127.0.0.2", port) })
	t.Cleanup(func() {
		b.Shutdown(context.Background())
		waitAlone(t)
	})
	sess := session(t, "")
	eventually(t, "the second gateway in the shared one's peers", func() bool {
		var n int
		return sess.Query("SELECT count(*) FROM system.peers").Scan(&n) == nil && n == 1
	})
	return b
}

// nodeGatewaysReport is what testdata/node/gateways.js prints.
type nodeGatewaysReport struct {
	Logs                 []string           `json:"logs"`
	ConnectMS            float64            `json:"connect_ms"`
	Hosts                []nodeHost         `json:"hosts"`
	DDLMS                map[string]float64 `json:"ddl_ms"`
	DDLAgreed            map[string]bool    `json:"ddl_agreed"`
	CheckSchemaAgreement bool               `json:"check_schema_agreement"`
	Routes               []struct {
		Key      string   `json:"key"`
		Token    string   `json:"token"`
		V        int      `json:"v"`
		Replicas []string `json:"replicas"`
		Queried  string   `json:"queried"`
	} `json:"routes"`
}

// TestNodeDriverGateways runs the Node.js driver on two gateways. The
// driver reads only the legacy system.peers: it must find the second
// gateway there with its own host id and share of the ring, wait after
// DDL until both report the new schema version, and route each key of a
// keyspace with one replica to the gateway whose tokens own it.
func TestNodeDriverGateways(t *testing.T) {
	waitAlone(t)
	b := startPeerGateway(t)
	var r nodeGatewaysReport
	runNodeScript(t, "gateways.js", gw.Addr(), fmt.Sprintf("node_gw_%d", time.Now().UnixNano()), &r)
	t.Logf("node driver on two gateways: connected in %.1f ms; CREATE TABLE with schema agreement %.1f ms, CREATE KEYSPACE %.1f ms",
		r.ConnectMS, r.DDLMS["table"], r.DDLMS["keyspace"])
	for _, l := range r.Logs {
		t.Errorf("driver logged: %s", l)
	}

	// Each gateway as it describes itself in system.local.
	want := map[string]struct {
		hostID string
		tokens []string
	}{}
	for _, s := range []*gateway.Server{gw, b} {
		var hostID gocql.UUID
		var tokens []string
		if err := sessionOn(t, s, "").Query("SELECT host_id, tokens FROM system.local").Scan(&hostID, &tokens); err != nil {
			t.Fatal(err)
		}
		slices.Sort(tokens)
		want[s.Addr().String()] = struct {
			hostID string
			tokens []string
		}{hostID.String(), tokens}
	}
	if len(r.Hosts) != 2 {
		t.Fatalf("driver sees hosts %+v, want both gateways", r.Hosts)
	}
	owner := map[int64]string{}
	for _, h := range r.Hosts {
		w, ok := want[h.Address]
		if !ok || h.HostID != w.hostID || !slices.Equal(h.Tokens, w.tokens) || !h.Up {
			t.Errorf("driver's host %s: host id %s, %d tokens, up %v; want a gateway's own host id and tokens",
				h.Address, h.HostID, len(h.Tokens), h.Up)
		}
		for _, tok := range h.Tokens {
			v, _ := strconv.ParseInt(tok, 10, 64)
			if prev, dup := owner[v]; dup {
				t.Errorf("token %d held by %s and %s", v, prev, h.Address)
			}
			owner[v] = h.Address
		}
	}
	ring := slices.Sorted(maps.Keys(owner))

	for _, name := range []string{"keyspace", "table"} {
		if !r.DDLAgreed[name] {
			t.Errorf("CREATE %s: isSchemaInAgreement false with two gateways", name)
		}
	}
	if !r.CheckSchemaAgreement {
		t.Error("checkSchemaAgreement() false with two gateways")
	}

	// With one replica, a key's replica is the owner of the first token
	// at or after the key's; the driver sends the statement there.
	served := map[string]int{}
	for i, rt := range r.Routes {
		tok, err := strconv.ParseInt(rt.Token, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		j, _ := slices.BinarySearch(ring, tok)
		wantReplica := owner[ring[j%len(ring)]]
		if !slices.Equal(rt.Replicas, []string{wantReplica}) || rt.Queried != wantReplica || rt.V != i {
			t.Errorf("%s (token %d, v %d): replicas %q, served by %s; want %s", rt.Key, tok, rt.V, rt.Replicas, rt.Queried, wantReplica)
		}
		served[rt.Queried]++
	}
	if len(served) != 2 {
		t.Errorf("keys served %v: want both gateways to own some of %d keys", served, len(r.Routes))
	}
}
