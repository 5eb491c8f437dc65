package gateway_test

import (
	"encoding/binary"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/frame"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
)

// rawConn talks to the gateway frame by frame, with the protocol library as
// the independent decoder of what comes back.
type rawConn struct {
	t     *testing.T
	nc    net.Conn
	codec frame.Codec
}

func dialRaw(t *testing.T) *rawConn {
	t.Helper()
	nc, err := net.Dial("tcp", gw.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	return &rawConn{t: t, nc: nc, codec: frame.NewCodec()}
}

// send writes a frame: version byte, flags, stream, opcode and body.
func (c *rawConn) send(version, flags byte, stream int16, opcode byte, body []byte) {
	c.t.Helper()
	hdr := []byte{version, flags, byte(uint16(stream) >> 8), byte(stream), opcode, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(hdr[5:], uint32(len(body)))
	if _, err := c.nc.Write(append(hdr, body...)); err != nil {
		c.t.Fatal(err)
	}
}

// sendMessage encodes a request with the library.
func (c *rawConn) sendMessage(version primitive.ProtocolVersion, stream int16, msg message.Message) {
	c.t.Helper()
	if err := c.codec.EncodeFrame(frame.NewFrame(version, stream, msg), c.nc); err != nil {
		c.t.Fatal(err)
	}
}

func (c *rawConn) receive() *frame.Frame {
	c.t.Helper()
	f, err := c.codec.DecodeFrame(c.nc)
	if err != nil {
		c.t.Fatalf("decode response: %v", err)
	}
	return f
}

// startup performs OPTIONS and STARTUP on version v.
func (c *rawConn) startup(v primitive.ProtocolVersion) {
	c.t.Helper()
	c.sendMessage(v, 1, &message.Options{})
	if _, ok := c.receive().Body.Message.(*message.Supported); !ok {
		c.t.Fatal("OPTIONS not answered by SUPPORTED")
	}
	c.sendMessage(v, 2, &message.Startup{Options: map[string]string{"CQL_VERSION": "3.0.0"}})
	if _, ok := c.receive().Body.Message.(*message.Ready); !ok {
		c.t.Fatal("STARTUP not answered by READY")
	}
}

func TestUnsupportedVersions(t *testing.T) {
	// v5 is the highest version since cqlpg frames it in segments: drivers
	// that ask for more are answered in v5 and step down to it.
	for _, tc := range []struct {
		version byte
		answer  primitive.ProtocolVersion
	}{
		{6, 5},
		{65, 5},
		{66, 5},
		{2, 3},
	} {
		c := dialRaw(t)
		c.send(tc.version, 0, 7, 0x05, nil) // OPTIONS
		f := c.receive()
		perr, ok := f.Body.Message.(*message.ProtocolError)
		if !ok {
			t.Fatalf("v%d: got %v, want a protocol error", tc.version, f.Body.Message)
		}
		want := "Invalid or unsupported protocol version (" + strconv.Itoa(int(tc.version)) + "); supported versions are (3/v3, 4/v4, 5/v5)"
		if perr.ErrorMessage != want || f.Header.Version != tc.answer || f.Header.StreamId != 7 {
			t.Errorf("v%d: got %q in v%d on stream %d, want %q in v%d", tc.version, perr.ErrorMessage,
				f.Header.Version, f.Header.StreamId, want, tc.answer)
		}
	}
}

func TestSupported(t *testing.T) {
	for _, v := range []primitive.ProtocolVersion{3, 4, 5} {
		c := dialRaw(t)
		c.sendMessage(v, 1, &message.Options{})
		sup, ok := c.receive().Body.Message.(*message.Supported)
		if !ok {
			t.Fatalf("v%d: no SUPPORTED", v)
		}
		if got := sup.Options["CQL_VERSION"]; len(got) != 1 || got[0] != "3.4.6" {
			t.Errorf("v%d: CQL_VERSION = %v", v, got)
		}
		if got := strings.Join(sup.Options["PROTOCOL_VERSIONS"], ","); got != "3/v3,4/v4,5/v5" {
			t.Errorf("v%d: PROTOCOL_VERSIONS = %v", v, got)
		}
		if got := strings.Join(sup.Options["COMPRESSION"], ","); got != "snappy,lz4" {
			t.Errorf("v%d: COMPRESSION = %v", v, got)
		}
	}
}

func TestStartupRules(t *testing.T) {
	c := dialRaw(t)
	c.sendMessage(4, 1, &message.Query{Query: "SELECT * FROM system.local"})
	if perr, ok := c.receive().Body.Message.(*message.ProtocolError); !ok ||
		perr.ErrorMessage != "Unexpected message QUERY, expecting STARTUP or OPTIONS" {
		t.Errorf("query before STARTUP: %v", perr)
	}
	c.sendMessage(4, 2, &message.Startup{Options: map[string]string{}})
	if perr, ok := c.receive().Body.Message.(*message.ProtocolError); !ok ||
		perr.ErrorMessage != "Missing value CQL_VERSION in STARTUP message" {
		t.Errorf("STARTUP without CQL_VERSION: %v", perr)
	}
}

func TestMalformedFrames(t *testing.T) {
	t.Run("truncated body", func(t *testing.T) {
		c := dialRaw(t)
		c.startup(4)
		// A QUERY whose long string claims more bytes than the body holds.
		c.send(4, 0, 3, 0x07, []byte{0, 0, 1, 0, 'S'})
		if _, ok := c.receive().Body.Message.(*message.ProtocolError); !ok {
			t.Fatal("truncated QUERY not answered by a protocol error")
		}
		// The framing is intact, so the connection keeps working.
		c.sendMessage(4, 4, &message.Options{})
		if _, ok := c.receive().Body.Message.(*message.Supported); !ok {
			t.Fatal("connection unusable after a bad body")
		}
	})
	t.Run("oversized frame", func(t *testing.T) {
		c := dialRaw(t)
		c.startup(4)
		hdr := []byte{4, 0, 0, 5, 0x07, 0x7f, 0xff, 0xff, 0xff}
		if _, err := c.nc.Write(hdr); err != nil {
			t.Fatal(err)
		}
		perr, ok := c.receive().Body.Message.(*message.ProtocolError)
		if !ok || !strings.Contains(perr.ErrorMessage, "Request is too big") {
			t.Fatalf("oversized frame: %v", perr)
		}
		// The gateway closes the connection: its framing cannot be trusted.
		if _, err := c.nc.Read(make([]byte, 1)); err == nil {
			t.Error("connection still open after an oversized frame")
		}
	})
	t.Run("other connections unaffected", func(t *testing.T) {
		sess := session(t, "")
		if err := sess.Query("SELECT key FROM system.local").Exec(); err != nil {
			t.Fatal(err)
		}
	})
}

// TestManyInFlight sends many requests on one connection before reading
// any answer: each is answered once, by its stream id.
func TestManyInFlight(t *testing.T) {
	c := dialRaw(t)
	c.startup(4)
	const n = 200
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range n {
			c.sendMessage(4, int16(100+i), &message.Query{Query: "SELECT release_version FROM system.local WHERE key = 'local'",
				Options: &message.QueryOptions{Consistency: primitive.ConsistencyLevelOne}})
		}
	})
	seen := map[int16]bool{}
	for range n {
		f := c.receive()
		if _, ok := f.Body.Message.(*message.RowsResult); !ok {
			t.Fatalf("stream %d: %v", f.Header.StreamId, f.Body.Message)
		}
		if seen[f.Header.StreamId] {
			t.Fatalf("stream %d answered twice", f.Header.StreamId)
		}
		seen[f.Header.StreamId] = true
	}
	wg.Wait()
	for i := range n {
		if !seen[int16(100+i)] {
			t.Errorf("stream %d not answered", 100+i)
		}
	}
}

// TestHandwrittenCodecs checks the gateway's hand-written RESULT encoding
// against the protocol library's decoder, on both versions.
func TestHandwrittenCodecs(t *testing.T) {
	for _, v := range []primitive.ProtocolVersion{3, 4} {
		c := dialRaw(t)
		c.startup(v)
		c.sendMessage(v, 1, &message.Prepare{Query: "SELECT keyspace_name, durable_writes, replication FROM system_schema.keyspaces WHERE keyspace_name = ?"})
		prep, ok := c.receive().Body.Message.(*message.PreparedResult)
		if !ok {
			t.Fatalf("v%d: PREPARE not answered by PREPARED", v)
		}
		if len(prep.VariablesMetadata.Columns) != 1 || prep.VariablesMetadata.Columns[0].Name != "keyspace_name" {
			t.Fatalf("v%d: variables %+v", v, prep.VariablesMetadata.Columns)
		}
		if v >= 4 && (len(prep.VariablesMetadata.PkIndices) != 1 || prep.VariablesMetadata.PkIndices[0] != 0) {
			t.Errorf("v%d: pk indexes %v", v, prep.VariablesMetadata.PkIndices)
		}
		if len(prep.ResultMetadata.Columns) != 3 || prep.ResultMetadata.Columns[2].Type.AsCql() != "map<varchar,varchar>" {
			t.Errorf("v%d: result metadata %+v", v, prep.ResultMetadata.Columns)
		}
		c.sendMessage(v, 2, &message.Execute{QueryId: prep.PreparedQueryId, Options: &message.QueryOptions{
			Consistency: primitive.ConsistencyLevelOne, PositionalValues: []*primitive.Value{primitive.NewValue([]byte("system"))}}})
		rows, ok := c.receive().Body.Message.(*message.RowsResult)
		if !ok || len(rows.Data) != 1 || string(rows.Data[0][0]) != "system" {
			t.Fatalf("v%d: EXECUTE answered %v", v, rows)
		}
		c.sendMessage(v, 3, &message.Execute{QueryId: []byte("0123456789abcdef"), Options: &message.QueryOptions{}})
		if un, ok := c.receive().Body.Message.(*message.Unprepared); !ok || string(un.Id) != "0123456789abcdef" {
			t.Errorf("v%d: unknown id answered %v", v, un)
		}
	}
}

// TestSchemaChangeEvents checks that a connection registered for schema
// changes is told of DDL made on another connection.
func TestSchemaChangeEvents(t *testing.T) {
	c := dialRaw(t)
	c.startup(4)
	c.sendMessage(4, 3, &message.Register{EventTypes: []primitive.EventType{primitive.EventTypeSchemaChange}})
	if _, ok := c.receive().Body.Message.(*message.Ready); !ok {
		t.Fatal("REGISTER not answered by READY")
	}
	exec(t, session(t, ""), "CREATE KEYSPACE evented WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
	f := c.receive()
	ev, ok := f.Body.Message.(*message.SchemaChangeEvent)
	if !ok || f.Header.StreamId != -1 {
		t.Fatalf("got %v on stream %d, want a SCHEMA_CHANGE event on stream -1", f.Body.Message, f.Header.StreamId)
	}
	if ev.ChangeType != primitive.SchemaChangeTypeCreated || ev.Target != primitive.SchemaChangeTargetKeyspace || ev.Keyspace != "evented" {
		t.Errorf("event %+v", ev)
	}
}

// TestProtocolV3 runs gocql on protocol version 3: prepared statements,
// paging defaults and the system tables work there too.
func TestProtocolV3(t *testing.T) {
	cfg := clusterConfig(gw, "")
	cfg.ProtoVersion = 3
	sess, err := cfg.CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	exec(t, sess,
		"CREATE KEYSPACE v3 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE v3.t (k int, c int, v text, PRIMARY KEY (k, c))")
	for c := range 3 {
		if err := sess.Query("INSERT INTO v3.t (k, c, v) VALUES (?, ?, ?)", 1, c, "x").Exec(); err != nil {
			t.Fatal(err)
		}
	}
	if got := ints(t, sess, "SELECT c FROM v3.t WHERE k = ?", 1); len(got) != 3 || got[2] != 2 {
		t.Errorf("rows on v3: %v", got)
	}
}
