package gateway_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	osexec "os/exec"
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
	aptGet := func(args ...string) ([]byte, error) {
		cmd := osexec.CommandContext(ctx, "apt-get", args...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		return cmd.CombinedOutput()
	}
	install := []string{"install", "-y", "python3-cassandra"}
	if _, err := aptGet(install...); err != nil {
		// A fresh machine may have no package lists yet.
		if out, err := aptGet("update"); err != nil {
			return fmt.Errorf("apt-get update: %v\n%s", err, out)
		}
		if out, err := aptGet(install...); err != nil {
			return fmt.Errorf("apt-get install python3-cassandra: %v\n%s", err, out)
		}
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
	ProtocolVersion    int      `json:"protocol_version"`
	ConnectMS          float64  `json:"connect_ms"`
	Warnings           []string `json:"warnings"`
	ClusterName        string   `json:"cluster_name"`
	Partitioner        string   `json:"partitioner"`
	Hosts              []string `json:"hosts"`
	KeyspacesAtConnect []string `json:"keyspaces_at_connect"`
	SchemaAgreed       []bool   `json:"schema_agreed"`
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
}

// TestPythonDriver drives the gateway with the unmodified DataStax Python
// driver 3.25, as cqlsh embeds it: protocol negotiation from DSE_V2 down to
// v4, the full schema load at connect, DDL with schema agreement, table
// metadata, and prepared writes and reads.
func TestPythonDriver(t *testing.T) {
	if err := installPythonDriver(); err != nil {
		t.Fatal(err)
	}
	host, port, _ := net.SplitHostPort(gw.Addr().String())
	keyspace := fmt.Sprintf("python_%d", time.Now().UnixNano())

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := osexec.CommandContext(ctx, systemPython, "testdata/python/driver.py", host, port, keyspace)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("driver.py: %v\nstderr:\n%s\nstdout:\n%s", err, stderr.String(), stdout.String())
	}
	var r pythonReport
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("driver.py printed no report: %v\n%s", err, stdout.String())
	}
	t.Logf("python driver connected in %.1f ms with protocol v%d", r.ConnectMS, r.ProtocolVersion)

	if r.ProtocolVersion != 4 {
		t.Errorf("negotiated protocol version %d, want 4", r.ProtocolVersion)
	}
	// The driver starts at DSE_V2 (66) and steps down on each ProtocolError
	// the gateway answers. Any other warning is a failure the driver
	// swallowed, such as a schema table it could not parse.
	var downgrades []string
	for _, w := range r.Warnings {
		switch m := downgradeLog.FindStringSubmatch(w); {
		case m != nil:
			downgrades = append(downgrades, m[1]+"->"+m[2])
		case strings.Contains(w, "no load_balancing_policy"):
			// The driver's defaults draw this warning.
		default:
			t.Errorf("driver logged: %s", w)
		}
	}
	if want := []string{"66->65", "65->5", "5->4"}; !slices.Equal(downgrades, want) {
		t.Errorf("protocol downgrades %q, want %q", downgrades, want)
	}
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
