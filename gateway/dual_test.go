package gateway_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
	"github.com/gocql/gocql"

	"github.com/cqlpg/cqlpg/gateway"
	"github.com/cqlpg/cqlpg/gateway/certs/certstest"
	"github.com/cqlpg/cqlpg/gateway/cluster"
	"github.com/cqlpg/cqlpg/sharding/localpg"
)

// startDualPair starts an origin (a gateway on a shard of its own) and a
// gateway in front of it and of another shard (o says how), with a plain
// gateway on that shard too, to read the target directly.
func startDualPair(t *testing.T, o gateway.OriginConfig) (originGW, target, proxy *gateway.Server) {
	return startDualPairTLS(t, o, nil)
}

// startDualPairTLS is startDualPair with an origin that serves CQL over
// TLS as originTLS says.
func startDualPairTLS(t *testing.T, o gateway.OriginConfig, originTLS *tls.Config) (originGW, target, proxy *gateway.Server) {
	ctx := context.Background()
	clusters, stop, err := localpg.TempClusters(ctx, 2, localpg.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	serve := func(shard string, o *gateway.OriginConfig, tc *tls.Config) *gateway.Server {
		s, err := gateway.New(ctx, gateway.Config{Listen: "127.0.0.1:0", HTTP: "127.0.0.1:0", Log: testLogger(),
			Shards: []cluster.ShardConfig{{URL: shard}}, Origin: o, TLS: tc})
		if err != nil {
			t.Fatal(err)
		}
		go s.Serve()
		t.Cleanup(func() { s.Shutdown(context.Background()) })
		return s
	}
	originGW = serve(clusters[0].URL(), nil, originTLS)
	target = serve(clusters[1].URL(), nil, nil)
	o.Addr = originGW.Addr().String()
	proxy = serve(clusters[1].URL(), &o, nil)
	return originGW, target, proxy
}

// TestDualWritesForgetPrepared bounds the statements a gateway with an
// origin keeps prepared on both sides: past the bound it forgets them,
// and drivers, answered UNPREPARED, prepare them again without their
// applications seeing it.
func TestDualWritesForgetPrepared(t *testing.T) {
	_, _, proxy := startDualPair(t, gateway.OriginConfig{MaxPrepared: 3})
	sess := sessionOn(t, proxy, "")
	exec(t, sess, "CREATE KEYSPACE dp WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE dp.t (k int PRIMARY KEY, v int)")
	for round := range 3 {
		for i := range 8 {
			// Eight statements, each its own text.
			q := fmt.Sprintf("INSERT INTO dp.t (k, v) VALUES (?, ?) USING TTL %d", 1000+i)
			if err := sess.Query(q, i, round).Exec(); err != nil {
				t.Fatalf("round %d, statement %d: %v", round, i, err)
			}
		}
	}
	var n int
	if err := sess.Query("SELECT count(*) FROM dp.t").Scan(&n); err != nil || n != 8 {
		t.Errorf("%d rows, %v", n, err)
	}
	m := scrape(t, proxy)
	if kept := m["cqlpg_dual_prepared_statements"]; kept < 1 || kept > 3 {
		t.Errorf("the gateway keeps %v statements, past its bound of 3", kept)
	}
	for _, side := range []string{"origin", "target"} {
		if f := m[`cqlpg_dual_write_failures_total{side="`+side+`"}`]; f != 0 {
			t.Errorf("%v writes failed on the %s", f, side)
		}
	}
}

// TestDualWritesV5 runs dual writes for a client speaking protocol v5
// with LZ4: the gateway's link to the origin (another cqlpg, on a shard
// of its own) speaks v5 in segments, uncompressed. DDL, prepared writes
// with their result metadata ids, a batch, a value larger than a segment
// and paged reads from the origin all pass; both clusters end with the
// same cells at the same write times, given by the gateway.
func TestDualWritesV5(t *testing.T) {
	originGW, target, proxy := startDualPair(t, gateway.OriginConfig{})

	s := startupV5On(t, dialRawTo(t, proxy, 30*time.Second), "lz4")
	s.query(1, "CREATE KEYSPACE dv5 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}", nil)
	s.query(2, "CREATE TABLE dv5.t (k int, c int, v text, PRIMARY KEY (k, c))", nil)
	s.send(3, &message.Prepare{Query: "INSERT INTO t (k, c, v) VALUES (?, ?, ?)", Keyspace: "dv5"})
	ins, ok := s.receive().Body.Message.(*message.PreparedResult)
	if !ok {
		t.Fatal("PREPARE not answered PREPARED")
	}
	value := func(n int32) *primitive.Value {
		return primitive.NewValue(binary.BigEndian.AppendUint32(nil, uint32(n)))
	}
	// Cut across three segments each way, and incompressible: the
	// protocol library's decoder, unlike drivers, cannot inflate a
	// segment more than eightfold.
	big := make([]byte, 300<<10)
	for i, x := 0, uint32(1); i < len(big); i++ {
		x = x*1664525 + 1013904223
		big[i] = 'a' + byte(x>>24)%26
	}
	large := string(big)
	for c := range int32(5) {
		v := "v"
		if c == 4 {
			v = large
		}
		s.send(int16(10+c), &message.Execute{QueryId: ins.PreparedQueryId, ResultMetadataId: ins.ResultMetadataId,
			Options: &message.QueryOptions{Consistency: primitive.ConsistencyLevelOne,
				PositionalValues: []*primitive.Value{value(1), value(c), primitive.NewValue([]byte(v))}}})
		if f := s.receive(); f.Body.Message.GetOpCode() != primitive.OpCodeResult {
			t.Fatalf("EXECUTE %d: %v", c, f.Body.Message)
		}
	}
	s.send(20, &message.Batch{Type: primitive.BatchTypeLogged, Consistency: primitive.ConsistencyLevelOne,
		Children: []*message.BatchChild{
			{Id: ins.PreparedQueryId, Values: []*primitive.Value{value(2), value(0), primitive.NewValue([]byte("b"))}},
			{Query: "INSERT INTO dv5.t (k, c, v) VALUES (2, 1, 'b')"},
		}})
	if f := s.receive(); f.Body.Message.GetOpCode() != primitive.OpCodeResult {
		t.Fatalf("BATCH: %v", f.Body.Message)
	}
	// Paged reads go to the origin, the second page with its paging state.
	f := s.query(21, "SELECT c, v FROM dv5.t WHERE k = 1", &message.QueryOptions{PageSize: 3})
	page := mustRows(t, f)
	if len(page.Data) != 3 || page.Metadata.PagingState == nil {
		t.Fatalf("first page: %d rows, paging state %x", len(page.Data), page.Metadata.PagingState)
	}
	f = s.query(22, "SELECT c, v FROM dv5.t WHERE k = 1", &message.QueryOptions{PageSize: 3, PagingState: page.Metadata.PagingState})
	if rest := mustRows(t, f); len(rest.Data) != 2 || !bytes.Equal(rest.Data[1][1], []byte(large)) {
		t.Fatalf("second page: %d rows", len(rest.Data))
	}

	// Both sides hold the same cells at the same write times.
	cells := func(addr string) []string {
		host, port, _ := net.SplitHostPort(addr)
		cc := gocql.NewCluster(host)
		cc.Port, _ = strconv.Atoi(port)
		cc.DisableInitialHostLookup = true
		sess, err := cc.CreateSession()
		if err != nil {
			t.Fatal(err)
		}
		defer sess.Close()
		iter := sess.Query("SELECT k, c, v, WRITETIME(v) FROM dv5.t").Iter()
		var out []string
		var k, c int
		var v string
		var wt int64
		for iter.Scan(&k, &c, &v, &wt) {
			out = append(out, fmt.Sprint(k, c, len(v), wt))
		}
		if err := iter.Close(); err != nil {
			t.Fatal(err)
		}
		return out
	}
	want, got := cells(originGW.Addr().String()), cells(target.Addr().String())
	if len(want) != 7 || strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("origin:\n%s\ntarget:\n%s", strings.Join(want, "\n"), strings.Join(got, "\n"))
	}
}

// TestDualWritesTLS runs dual writes to an origin that serves CQL over TLS
// only and asks for client certificates: the gateway checks the origin's
// certificate against the authorities it was given and presents its own.
// An origin whose certificate another authority signed is refused at
// start.
func TestDualWritesTLS(t *testing.T) {
	ca := certstest.NewAuthority(t, "origin CA")
	dir := t.TempDir()
	serverCert, serverKey := ca.Issue(t, 2, "localhost", x509.ExtKeyUsageServerAuth)
	clientCert, clientKey := ca.Issue(t, 3, "gateway", x509.ExtKeyUsageClientAuth)
	cert, err := tls.X509KeyPair(serverCert, serverKey)
	if err != nil {
		t.Fatal(err)
	}
	originTLS := &tls.Config{Certificates: []tls.Certificate{cert}, ClientCAs: ca.Pool, ClientAuth: tls.RequireAndVerifyClientCert}
	o := gateway.OriginConfig{}
	o.TLSCA = writeFile(t, dir, "ca.pem", ca.PEM)
	o.TLSCert = writeFile(t, dir, "client.pem", clientCert)
	o.TLSKey = writeFile(t, dir, "client-key.pem", clientKey)
	originGW, target, proxy := startDualPairTLS(t, o, originTLS)

	sess := sessionOn(t, proxy, "")
	exec(t, sess, "CREATE KEYSPACE dtls WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE dtls.t (k int PRIMARY KEY, v text)")
	for i := range 10 {
		if err := sess.Query("INSERT INTO dtls.t (k, v) VALUES (?, ?)", i, "v").Exec(); err != nil {
			t.Fatal(err)
		}
	}
	// Read from the origin, through the gateway, and from the target.
	for name, s := range map[string]*gocql.Session{"the origin, through the gateway": sess, "the target": sessionOn(t, target, "")} {
		var n int
		if err := s.Query("SELECT count(*) FROM dtls.t").Scan(&n); err != nil || n != 10 {
			t.Errorf("%s holds %d rows (%v), want 10", name, n, err)
		}
	}
	if m := scrape(t, proxy); m[`cqlpg_dual_write_failures_total{side="origin"}`] != 0 {
		t.Errorf("writes failed on the origin: %v", m[`cqlpg_dual_write_failures_total{side="origin"}`])
	}

	// The origin's certificate checked against another authority.
	wrong := o
	wrong.Addr = originGW.Addr().String()
	wrong.TLSCA = writeFile(t, dir, "other-ca.pem", certstest.NewAuthority(t, "another CA").PEM)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := gateway.New(ctx, gateway.Config{Listen: "127.0.0.1:0", Log: testLogger(),
		Shards: []cluster.ShardConfig{{URL: shardURLs[0]}}, Origin: &wrong})
	if err == nil {
		s.Shutdown(ctx)
		t.Fatal("a gateway started with an origin whose certificate its authorities did not sign")
	}
	if !strings.Contains(err.Error(), "TLS with the origin "+wrong.Addr) || !strings.Contains(err.Error(), "certificate signed by unknown authority") {
		t.Errorf("an origin certificate from another authority: %v", err)
	}
}
