package gateway_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/frame"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
	"github.com/gocql/gocql"
	"github.com/jackc/pgx/v5"

	"github.com/cqlpg/cqlpg/gateway"
)

// The tests of gateways on the same shards run a second gateway beside the
// package's (gw) and check what each tells drivers of the other: peers,
// tokens, topology and schema events, prepared ids.

// eventConn is a raw protocol connection that keeps the events arriving
// between responses.
type eventConn struct {
	*rawConn
	events []*frame.Frame
}

// dialGateway opens a raw connection to a gateway and starts it on v4.
func dialGateway(t *testing.T, s *gateway.Server) *eventConn {
	t.Helper()
	nc, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(time.Minute))
	c := &eventConn{rawConn: &rawConn{t: t, nc: nc, codec: frame.NewCodec()}}
	c.startup(4)
	return c
}

// register asks for events and waits for READY.
func (c *eventConn) register(types ...primitive.EventType) {
	c.t.Helper()
	if _, ok := c.request(&message.Register{EventTypes: types}).(*message.Ready); !ok {
		c.t.Fatal("REGISTER not answered by READY")
	}
}

// request sends a request on stream 10 and returns its response, keeping
// the events that come first.
func (c *eventConn) request(msg message.Message) message.Message {
	c.t.Helper()
	c.sendMessage(4, 10, msg)
	for {
		f := c.receive()
		if f.Header.StreamId == 10 {
			return f.Body.Message
		}
		c.events = append(c.events, f)
	}
}

// query runs CQL at ONE.
func (c *eventConn) query(cql string) message.Message {
	return c.request(&message.Query{Query: cql, Options: &message.QueryOptions{Consistency: primitive.ConsistencyLevelOne}})
}

// waitEvent returns the first event, kept or arriving within timeout, for
// which match is true, dropping the others; nil after the timeout.
func (c *eventConn) waitEvent(timeout time.Duration, match func(message.Message) bool) message.Message {
	c.t.Helper()
	for len(c.events) > 0 {
		f := c.events[0]
		c.events = c.events[1:]
		if match(f.Body.Message) {
			return f.Body.Message
		}
	}
	defer c.nc.SetReadDeadline(time.Now().Add(time.Minute))
	c.nc.SetReadDeadline(time.Now().Add(timeout))
	for {
		f, err := c.codec.DecodeFrame(c.nc)
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return nil
		}
		if err != nil {
			c.t.Fatalf("decode event: %v", err)
		}
		if f.Header.StreamId == -1 && match(f.Body.Message) {
			return f.Body.Message
		}
	}
}

// topologyEvent matches a TOPOLOGY_CHANGE of a gateway's address.
func topologyEvent(change primitive.TopologyChangeType, addr net.Addr) func(message.Message) bool {
	a := addr.(*net.TCPAddr)
	return func(m message.Message) bool {
		ev, ok := m.(*message.TopologyChangeEvent)
		return ok && ev.ChangeType == change && int(ev.Address.Port) == a.Port && ev.Address.Addr.Equal(a.IP)
	}
}

// statusEvent matches a STATUS_CHANGE of the gateway at addr.
func statusEvent(change primitive.StatusChangeType, addr net.Addr) func(message.Message) bool {
	a := addr.(*net.TCPAddr)
	return func(m message.Message) bool {
		ev, ok := m.(*message.StatusChangeEvent)
		return ok && ev.ChangeType == change && int(ev.Address.Port) == a.Port && ev.Address.Addr.Equal(a.IP)
	}
}

// schemaEvent matches a SCHEMA_CHANGE.
func schemaEvent(change primitive.SchemaChangeType, target primitive.SchemaChangeTarget, ks, name string) func(message.Message) bool {
	return func(m message.Message) bool {
		ev, ok := m.(*message.SchemaChangeEvent)
		return ok && ev.ChangeType == change && ev.Target == target && ev.Keyspace == ks && ev.Object == name
	}
}

func portOf(s *gateway.Server) int { return s.Addr().(*net.TCPAddr).Port }

// nodeRow is system.local, or a row of system.peers(_v2), as gocql reads
// it.
type nodeRow map[string]any

func (r nodeRow) str(col string) string {
	if u, ok := r[col].(gocql.UUID); ok {
		return u.String()
	}
	return fmt.Sprint(r[col])
}

func (r nodeRow) tokens() []string {
	ts, _ := r["tokens"].([]string)
	return slices.Sorted(slices.Values(ts))
}

func nodeRows(t *testing.T, sess *gocql.Session, query string) []nodeRow {
	t.Helper()
	rows, err := sess.Query(query).Iter().SliceMap()
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	out := make([]nodeRow, len(rows))
	for i, r := range rows {
		out[i] = r
	}
	return out
}

func localRow(t *testing.T, sess *gocql.Session) nodeRow {
	t.Helper()
	rows := nodeRows(t, sess, "SELECT * FROM system.local WHERE key = 'local'")
	if len(rows) != 1 {
		t.Fatalf("system.local: %d rows", len(rows))
	}
	return rows[0]
}

// peerByHost returns the peers_v2 row of a host id, if listed.
func peerByHost(t *testing.T, sess *gocql.Session, table, hostID string) nodeRow {
	t.Helper()
	for _, r := range nodeRows(t, sess, "SELECT * FROM "+table) {
		if r.str("host_id") == hostID {
			return r
		}
	}
	return nil
}

// ringTokens reads the ring from the shards' identities: every shard's
// vnode tokens.
func ringTokens(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, u := range shardURLs {
		conn, err := pgx.Connect(context.Background(), u)
		if err != nil {
			t.Fatal(err)
		}
		var tokens []int64
		err = conn.QueryRow(context.Background(), "SELECT tokens FROM cqlpg.node").Scan(&tokens)
		conn.Close(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, tok := range tokens {
			out = append(out, strconv.FormatInt(tok, 10))
		}
	}
	slices.Sort(out)
	return out
}

// ringSeen returns the ring as drivers see it through a gateway: its
// tokens and its peers', sorted.
func ringSeen(t *testing.T, sess *gocql.Session) []string {
	t.Helper()
	all := localRow(t, sess).tokens()
	for _, p := range nodeRows(t, sess, "SELECT * FROM system.peers_v2") {
		all = append(all, p.tokens()...)
	}
	slices.Sort(all)
	return all
}

// checkTokenSplit checks, through one gateway, that its tokens and its
// peers' are disjoint and make up the ring.
func checkTokenSplit(t *testing.T, sess *gocql.Session, ring []string) {
	t.Helper()
	for _, p := range nodeRows(t, sess, "SELECT * FROM system.peers_v2") {
		if len(p.tokens()) == 0 {
			t.Errorf("peer %s has no tokens", p.str("host_id"))
		}
	}
	if all := ringSeen(t, sess); !slices.Equal(all, ring) {
		t.Errorf("local and peer tokens (%d) are not the ring's %d tokens, each once", len(all), len(ring))
	}
}

// TestGatewaysPeers starts a second gateway on the shared shards and
// checks that each lists the other in system.peers_v2 and system.peers,
// with the address and port its clients reach it by, its host id, schema
// version and tokens as it reports them itself, and that the tokens of
// the gateways split the ring.
func TestGatewaysPeers(t *testing.T) {
	b := startGatewayWith(t, func(*gateway.Config) {})
	t.Cleanup(func() { b.Shutdown(context.Background()) })
	sa, sb := sessionOn(t, gw, ""), sessionOn(t, b, "")
	la, lb := localRow(t, sa), localRow(t, sb)
	if la.str("host_id") == lb.str("host_id") {
		t.Fatalf("both gateways have host id %s", la.str("host_id"))
	}
	eventually(t, "the new gateway in the first one's peers", func() bool {
		return peerByHost(t, sa, "system.peers_v2", lb.str("host_id")) != nil
	})
	// Read local again: the gateways' shares are final once each knows the
	// other.
	la, lb = localRow(t, sa), localRow(t, sb)
	for _, tc := range []struct {
		name         string
		viewer       *gocql.Session
		local        nodeRow
		port         int
		viewerHostID string
	}{
		{"b seen from a", sa, lb, portOf(b), la.str("host_id")},
		{"a seen from b", sb, la, portOf(gw), lb.str("host_id")},
	} {
		v2 := peerByHost(t, tc.viewer, "system.peers_v2", tc.local.str("host_id"))
		if v2 == nil {
			t.Errorf("%s: not in system.peers_v2", tc.name)
			continue
		}
		want := map[string]string{
			"peer": "127.0.0.1", "peer_port": "7000", "native_address": "127.0.0.1",
			"native_port": strconv.Itoa(tc.port), "preferred_ip": "127.0.0.1",
			"data_center": tc.local.str("data_center"), "rack": tc.local.str("rack"),
			"release_version": tc.local.str("release_version"), "schema_version": tc.local.str("schema_version"),
		}
		for col, w := range want {
			if got := v2.str(col); got != w {
				t.Errorf("%s: peers_v2.%s = %q, want %q", tc.name, col, got, w)
			}
		}
		if !slices.Equal(v2.tokens(), tc.local.tokens()) {
			t.Errorf("%s: peers_v2 tokens differ from the gateway's own", tc.name)
		}
		if peerByHost(t, tc.viewer, "system.peers_v2", tc.viewerHostID) != nil {
			t.Errorf("%s: the gateway lists itself as a peer", tc.name)
		}
		// The legacy table is keyed by address alone: a gateway at the
		// viewer's own address is not in it.
		if v1 := peerByHost(t, tc.viewer, "system.peers", tc.local.str("host_id")); v1 != nil {
			t.Errorf("%s: system.peers lists a gateway at the viewer's address: %v", tc.name, v1)
		}
	}
	ring := ringTokens(t)
	for _, sess := range []*gocql.Session{sa, sb} {
		checkTokenSplit(t, sess, ring)
	}
	if n, m := len(la.tokens()), len(lb.tokens()); n+m > len(ring) || n < len(ring)/3 || m < len(ring)/3 {
		t.Errorf("token shares %d and %d of %d", n, m, len(ring))
	}
	var peer gocql.UUID
	if err := sa.Query("SELECT host_id FROM system.peers_v2 WHERE peer = '127.0.0.1' AND peer_port = 7000").
		Scan(&peer); err != nil {
		t.Errorf("peers_v2 by its key: %v", err)
	}
}

// connectLog records the hosts a gocql session connected to and ran
// queries on.
type connectLog struct {
	mu        sync.Mutex
	connected map[int]bool
	queried   map[int]bool
}

func (l *connectLog) ObserveConnect(c gocql.ObservedConnect) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c.Err == nil {
		l.connected[c.Host.Port()] = true
	}
}

func (l *connectLog) ObserveQuery(_ context.Context, q gocql.ObservedQuery) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if q.Err == nil {
		l.queried[q.Host.Port()] = true
	}
}

func (l *connectLog) has(m map[int]bool, ports ...int) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, p := range ports {
		if !m[p] {
			return false
		}
	}
	return true
}

// TestGatewaysDiscovery connects gocql, with its defaults, to one gateway
// and checks that it discovers the other, connects to it and runs queries
// on both; that a client registered for topology changes hears of a
// gateway joining and leaving; and that a gateway shut down leaves the
// other's peers at once. The second gateway listens on an address of its
// own, as gateways on different hosts do: gocql's load balancing tells
// hosts apart by address alone.
func TestGatewaysDiscovery(t *testing.T) {
	events := dialGateway(t, gw)
	events.register(primitive.EventTypeTopologyChange, primitive.EventTypeStatusChange)
	b := startGatewayWith(t, func(c *gateway.Config) { c.Listen = "127.0.0.2:0" })
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			b.Shutdown(context.Background())
		}
	})
	if events.waitEvent(5*time.Second, topologyEvent(primitive.TopologyChangeTypeNewNode, b.Addr())) == nil {
		t.Fatal("no NEW_NODE event for the new gateway")
	}
	if events.waitEvent(5*time.Second, statusEvent(primitive.StatusChangeTypeUp, b.Addr())) == nil {
		t.Fatal("no UP event for the new gateway")
	}
	// At an address of its own, the gateway is in the legacy table too.
	lb := localRow(t, sessionOn(t, b, ""))
	if v1 := peerByHost(t, sessionOn(t, gw, ""), "system.peers", lb.str("host_id")); v1 == nil ||
		v1.str("rpc_address") != "127.0.0.2" || !slices.Equal(v1.tokens(), lb.tokens()) {
		t.Errorf("system.peers row of the gateway at 127.0.0.2: %v", v1)
	}

	log := &connectLog{connected: map[int]bool{}, queried: map[int]bool{}}
	cfg := clusterConfig(gw, "")
	cfg.HostFilter = nil // the default: every host the gateway lists
	cfg.ConnectObserver, cfg.QueryObserver = log, log
	// A query already on its way to the gateway as it closes fails with
	// EOF; applications retry those on another host, as here.
	cfg.RetryPolicy = &gocql.SimpleRetryPolicy{NumRetries: 2}
	sess, err := cfg.CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	eventually(t, "connections to both gateways", func() bool { return log.has(log.connected, portOf(gw), portOf(b)) })
	eventually(t, "queries on both gateways", func() bool {
		exec(t, sess, "SELECT key FROM system.local")
		return log.has(log.queried, portOf(gw), portOf(b))
	})

	start := time.Now()
	stopped = true
	shutdown := make(chan error, 1)
	go func() { shutdown <- b.Shutdown(context.Background()) }()
	if events.waitEvent(5*time.Second, topologyEvent(primitive.TopologyChangeTypeRemovedNode, b.Addr())) == nil {
		t.Fatal("no REMOVED_NODE event for the gateway shut down")
	}
	if events.waitEvent(5*time.Second, statusEvent(primitive.StatusChangeTypeDown, b.Addr())) == nil {
		t.Fatal("no DOWN event for the gateway shut down")
	}
	t.Logf("a gateway shutting down left the other's peers after %v", time.Since(start).Round(time.Millisecond))
	if err := <-shutdown; err != nil {
		t.Fatal(err)
	}
	for _, r := range nodeRows(t, sessionOn(t, gw, ""), "SELECT * FROM system.peers_v2") {
		if r.str("native_port") == strconv.Itoa(portOf(b)) {
			t.Errorf("the gateway shut down is still a peer: %v", r)
		}
	}
	// The driver drops it and goes on with the gateway left.
	for range 20 {
		exec(t, sess, "SELECT key FROM system.local")
	}
}

// TestGatewaysSchemaChanges makes schema changes through one gateway and
// checks that the other serves them at once, and pushes them to its
// clients as SCHEMA_CHANGE events: a raw connection gets them, and gocql's
// cached metadata is refreshed by them.
func TestGatewaysSchemaChanges(t *testing.T) {
	b := startGatewayWith(t, func(*gateway.Config) {})
	t.Cleanup(func() { b.Shutdown(context.Background()) })
	sa := sessionOn(t, gw, "")
	exec(t, sa, "CREATE KEYSPACE gwschema WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
	sb := sessionOn(t, b, "")
	// The keyspace reaches the other gateway within milliseconds.
	eventually(t, "the keyspace on the other gateway", func() bool {
		_, err := sb.KeyspaceMetadata("gwschema")
		return err == nil
	})
	if md, err := sb.KeyspaceMetadata("gwschema"); err != nil || md.Tables["t"] != nil {
		t.Fatalf("keyspace metadata before: %v %v", md, err)
	}
	ra, rb := dialGateway(t, gw), dialGateway(t, b)
	rb.register(primitive.EventTypeSchemaChange)

	sent := time.Now()
	if _, ok := ra.query("CREATE TABLE gwschema.t (k int PRIMARY KEY, v text)").(*message.SchemaChangeResult); !ok {
		t.Fatal("CREATE TABLE not answered by SCHEMA_CHANGE")
	}
	created := time.Since(sent)
	if rb.waitEvent(time.Second, schemaEvent(primitive.SchemaChangeTypeCreated, primitive.SchemaChangeTargetTable, "gwschema", "t")) == nil {
		t.Fatal("no CREATED TABLE event within 1s from the other gateway")
	}
	evented := time.Since(sent)
	for {
		res := rb.query("INSERT INTO gwschema.t (k, v) VALUES (1, 'one')")
		if _, ok := res.(*message.VoidResult); ok {
			break
		}
		if time.Since(sent)-created > time.Second {
			t.Fatalf("the table is not usable through the other gateway 1s after it was created: %v", res)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("CREATE TABLE sent to one gateway: answered after %v, event from the other after %v, usable there after %v",
		created.Round(time.Microsecond), evented.Round(time.Microsecond), time.Since(sent).Round(time.Microsecond))
	eventually(t, "gocql's metadata of the other gateway refreshed", func() bool {
		md, err := sb.KeyspaceMetadata("gwschema")
		return err == nil && md.Tables["t"] != nil
	})

	for _, tc := range []struct {
		cql    string
		change primitive.SchemaChangeType
		target primitive.SchemaChangeTarget
		name   string
	}{
		{"ALTER TABLE gwschema.t ADD w int", primitive.SchemaChangeTypeUpdated, primitive.SchemaChangeTargetTable, "t"},
		{"CREATE INDEX ON gwschema.t (w)", primitive.SchemaChangeTypeUpdated, primitive.SchemaChangeTargetTable, "t"},
		{"CREATE TYPE gwschema.pt (x int)", primitive.SchemaChangeTypeCreated, primitive.SchemaChangeTargetType, "pt"},
		{"ALTER KEYSPACE gwschema WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 2}",
			primitive.SchemaChangeTypeUpdated, primitive.SchemaChangeTargetKeyspace, ""},
		{"DROP TABLE gwschema.t", primitive.SchemaChangeTypeDropped, primitive.SchemaChangeTargetTable, "t"},
		{"DROP KEYSPACE gwschema", primitive.SchemaChangeTypeDropped, primitive.SchemaChangeTargetKeyspace, ""},
	} {
		if _, ok := ra.query(tc.cql).(*message.SchemaChangeResult); !ok {
			t.Fatalf("%s: not answered by SCHEMA_CHANGE", tc.cql)
		}
		if rb.waitEvent(time.Second, schemaEvent(tc.change, tc.target, "gwschema", tc.name)) == nil {
			t.Errorf("%s: no %v %v event from the other gateway", tc.cql, tc.change, tc.target)
		}
	}

	// A gateway whose listening connection fails reconnects, and catches
	// up with what changed meanwhile.
	terminateListeners(t)
	exec(t, sa, "CREATE KEYSPACE gwschema2 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
	if rb.waitEvent(5*time.Second, schemaEvent(primitive.SchemaChangeTypeCreated, primitive.SchemaChangeTargetKeyspace, "gwschema2", "")) == nil {
		t.Error("no CREATED KEYSPACE event after the listening connections were cut")
	}
	exec(t, sa, "DROP KEYSPACE gwschema2")
}

// terminateListeners ends every gateway's listening connection.
func terminateListeners(t *testing.T) {
	t.Helper()
	for _, u := range shardURLs {
		conn, err := pgx.Connect(context.Background(), u)
		if err != nil {
			t.Fatal(err)
		}
		_, err = conn.Exec(context.Background(), `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
			WHERE pid <> pg_backend_pid() AND (query LIKE 'LISTEN %' OR query LIKE '%FROM cqlpg.schema_version')`)
		conn.Close(context.Background())
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestGatewaysPreparedIDs checks that a statement has the same prepared id
// on every gateway, and that a gateway that never saw it answers
// UNPREPARED with that id, as Cassandra does, so that drivers prepare it
// there and go on with the same id.
func TestGatewaysPreparedIDs(t *testing.T) {
	b := startGatewayWith(t, func(*gateway.Config) {})
	t.Cleanup(func() { b.Shutdown(context.Background()) })
	exec(t, sessionOn(t, gw, ""),
		"CREATE KEYSPACE IF NOT EXISTS gwprep WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE IF NOT EXISTS gwprep.t (k int PRIMARY KEY, v text)",
		"INSERT INTO gwprep.t (k, v) VALUES (1, 'one')")
	ra, rb := dialGateway(t, gw), dialGateway(t, b)
	query := fmt.Sprintf("SELECT v FROM gwprep.t WHERE k = 1 -- %d", time.Now().UnixNano())
	pa, ok := ra.request(&message.Prepare{Query: query}).(*message.PreparedResult)
	if !ok {
		t.Fatal("PREPARE on the first gateway failed")
	}
	execute := &message.Execute{QueryId: pa.PreparedQueryId,
		Options: &message.QueryOptions{Consistency: primitive.ConsistencyLevelOne}}
	un, ok := rb.request(execute).(*message.Unprepared)
	if !ok || !bytes.Equal(un.Id, pa.PreparedQueryId) {
		t.Fatalf("EXECUTE of an id the other gateway never saw: %v, want UNPREPARED with the id", un)
	}
	pb, ok := rb.request(&message.Prepare{Query: query}).(*message.PreparedResult)
	if !ok || !bytes.Equal(pb.PreparedQueryId, pa.PreparedQueryId) {
		t.Fatalf("prepared ids differ between gateways: %x and %x", pa.PreparedQueryId, pb)
	}
	for _, c := range []*eventConn{ra, rb} {
		rows, ok := c.request(execute).(*message.RowsResult)
		if !ok || len(rows.Data) != 1 {
			t.Errorf("EXECUTE of the shared id: %v", rows)
		}
	}
}

// TestGatewaysCrash kills a gateway process without letting it leave and
// checks that the other drops it from its peers once its heartbeat is
// older than the timeout, telling its clients.
func TestGatewaysCrash(t *testing.T) {
	timeout := 1500 * time.Millisecond
	a := startGatewayWith(t, func(c *gateway.Config) {
		c.Gateways.Heartbeat, c.Gateways.Timeout = 200*time.Millisecond, timeout
	})
	t.Cleanup(func() { a.Shutdown(context.Background()) })
	events := dialGateway(t, a)
	events.register(primitive.EventTypeTopologyChange)
	p := startGatewayProcess(t, shardURLs)
	t.Cleanup(func() { forgetGateway(t, p.port) })
	if events.waitEvent(5*time.Second, topologyEvent(primitive.TopologyChangeTypeNewNode, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: p.port})) == nil {
		t.Fatal("no NEW_NODE event for the gateway process")
	}
	sess := sessionOn(t, a, "")
	checkTokenSplit(t, sess, ringTokens(t))

	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	if events.waitEvent(timeout+5*time.Second, topologyEvent(primitive.TopologyChangeTypeRemovedNode, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: p.port})) == nil {
		t.Fatal("no REMOVED_NODE event for the killed gateway")
	}
	gone := time.Since(killed)
	t.Logf("a killed gateway left the other's peers after %v (timeout %v)", gone.Round(time.Millisecond), timeout)
	if gone < timeout-500*time.Millisecond {
		t.Errorf("the killed gateway left after %v, before its heartbeat could be %v old", gone, timeout)
	}
	for _, r := range nodeRows(t, sess, "SELECT * FROM system.peers_v2") {
		if r.str("native_port") == strconv.Itoa(p.port) {
			t.Errorf("the killed gateway is still a peer: %v", r)
		}
	}
	checkTokenSplit(t, sess, ringTokens(t))
}

// forgetGateway removes the registration a killed gateway left behind, so
// that the package's gateway stops listing it now rather than after its
// timeout.
func forgetGateway(t *testing.T, port int) {
	for _, u := range shardURLs {
		conn, err := pgx.Connect(context.Background(), u)
		if err != nil {
			t.Error(err)
			continue
		}
		_, err = conn.Exec(context.Background(), `DELETE FROM cqlpg.gateways WHERE rpc_port = $1`, port)
		if err == nil {
			_, err = conn.Exec(context.Background(), `SELECT pg_notify('cqlpg_gateways', '')`)
		}
		conn.Close(context.Background())
		if err != nil {
			t.Error(err)
		}
	}
}

// TestGatewaysPythonDriver runs the DataStax Python driver on one of two
// gateways: it reads the other from system.peers_v2 without complaint,
// knows both hosts, and finds the schema agreed after its DDL, which the
// other gateway follows.
func TestGatewaysPythonDriver(t *testing.T) {
	if err := installPythonDriver(); err != nil {
		t.Fatal(err)
	}
	b := startGatewayWith(t, func(c *gateway.Config) { c.Listen = "127.0.0.2:0" })
	t.Cleanup(func() { b.Shutdown(context.Background()) })
	// The new gateway, and it alone: one an earlier test killed may be
	// listed a moment longer, and the driver would find it refusing.
	eventually(t, "the new gateway alone in the first one's peers", func() bool {
		rows := nodeRows(t, sessionOn(t, gw, ""), "SELECT * FROM system.peers_v2")
		return len(rows) == 1 && rows[0].str("native_port") == strconv.Itoa(portOf(b))
	})
	host, port, _ := net.SplitHostPort(gw.Addr().String())
	var r pythonReport
	runPython(t, &r, "testdata/python/driver.py", host, port, fmt.Sprintf("python_gw_%d", time.Now().UnixNano()))
	for _, w := range r.Warnings {
		if downgradeLog.MatchString(w) || strings.Contains(w, "no load_balancing_policy") {
			continue
		}
		t.Errorf("driver logged: %s", w)
	}
	want := []string{gw.Addr().String(), b.Addr().String()}
	if got := slices.Sorted(slices.Values(r.Hosts)); !slices.Equal(got, slices.Sorted(slices.Values(want))) {
		t.Errorf("driver sees hosts %q, want %q", got, want)
	}
	if !slices.Equal(r.SchemaAgreed, []bool{true, true, true}) {
		t.Errorf("schema agreement with two gateways: %v, want all true", r.SchemaAgreed)
	}
}

// TestGatewaysWildcardAddress checks that a gateway listening on a
// wildcard address lists itself in the others' peers at an address of
// its host, where clients reach it, and never at the wildcard.
func TestGatewaysWildcardAddress(t *testing.T) {
	b := startGatewayWith(t, func(c *gateway.Config) { c.Listen = "0.0.0.0:0" })
	t.Cleanup(func() { b.Shutdown(context.Background()) })
	port := strconv.Itoa(portOf(b))
	var row nodeRow
	eventually(t, "the wildcard gateway in the first one's peers", func() bool {
		for _, r := range nodeRows(t, sessionOn(t, gw, ""), "SELECT * FROM system.peers_v2") {
			if r.str("native_port") == port {
				row = r
			}
		}
		return row != nil
	})
	addr := net.ParseIP(row.str("native_address"))
	if addr == nil || addr.IsUnspecified() {
		t.Fatalf("the wildcard gateway is listed at %q", row.str("native_address"))
	}
	nc, err := net.DialTimeout("tcp", net.JoinHostPort(addr.String(), port), 5*time.Second)
	if err != nil {
		t.Fatalf("the address listed for the wildcard gateway is unreachable: %v", err)
	}
	nc.Close()
	t.Logf("a gateway listening on 0.0.0.0 is listed at %s", addr)
}
