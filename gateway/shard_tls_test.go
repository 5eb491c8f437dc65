package gateway_test

import (
	"context"
	"crypto/x509"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cqlpg/cqlpg/gateway"
	"github.com/cqlpg/cqlpg/gateway/certs/certstest"
	"github.com/cqlpg/cqlpg/gateway/cluster"
	"github.com/cqlpg/cqlpg/sharding/localpg"
)

// writeFile replaces the file name in dir whole (certstest.WriteFile),
// owned like dir when the test runs as root, so that a server running as
// another user reads it.
func writeFile(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(dir, name)
	certstest.WriteFile(t, path, data)
	if st, err := os.Stat(dir); err == nil && os.Geteuid() == 0 {
		sys := st.Sys().(*syscall.Stat_t)
		if err := os.Chown(path, int(sys.Uid), int(sys.Gid)); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// TestShardTLS runs a gateway on a shard that takes TLS connections only,
// and logs them in by client certificate: the gateway verifies the
// shard's certificate (sslmode=verify-full) and presents its own. A shard
// certificate from another authority is refused with a clear error.
// Renewing the gateway's client certificate (a new authority the shard
// now trusts instead of the old one) and reloading, as SIGHUP does, keeps
// the open connections, and the connections opened after it use the new
// certificate. (sharding's TestConnConfigRefresh has the files read again
// when they change, without a reload.)
func TestShardTLS(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	clusters := tempShards(t, 1, localpg.Options{})
	pg := clusters[0]
	admin, err := pgx.Connect(ctx, pg.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	run := func(sql string) {
		t.Helper()
		if _, err := admin.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}

	// The shard: a server certificate, client certificates from ca1
	// required over TCP, the socket left to the test.
	ca1 := certstest.NewAuthority(t, "cqlpg shard CA")
	serverCert, serverKey := ca1.Issue(t, 2, "localhost", x509.ExtKeyUsageServerAuth)
	writeFile(t, pg.Dir(), "server.crt", serverCert)
	writeFile(t, pg.Dir(), "server.key", serverKey)
	writeFile(t, pg.Dir(), "clients.crt", ca1.PEM)
	writeFile(t, pg.Dir(), "pg_hba.conf", []byte("local all all trust\nhostssl all all 127.0.0.1/32 cert\n"))
	run("ALTER SYSTEM SET ssl = on")
	run("ALTER SYSTEM SET ssl_cert_file = 'server.crt'")
	run("ALTER SYSTEM SET ssl_key_file = 'server.key'")
	run("ALTER SYSTEM SET ssl_ca_file = 'clients.crt'")
	run("SELECT pg_reload_conf()")

	// The gateway's side: the authority it trusts, its certificate.
	dir := t.TempDir()
	caFile := writeFile(t, dir, "ca.pem", ca1.PEM)
	clientCert, clientKey := ca1.Issue(t, 10, localpg.Superuser, x509.ExtKeyUsageClientAuth)
	certFile := writeFile(t, dir, "client.pem", clientCert)
	keyFile := writeFile(t, dir, "client-key.pem", clientKey)
	shardURL := func(rootCert string) string {
		return fmt.Sprintf("postgres://%s@127.0.0.1:%d/%s?sslmode=verify-full&sslrootcert=%s&sslcert=%s&sslkey=%s",
			localpg.Superuser, pg.Port(), pg.Database(), rootCert, certFile, keyFile)
	}

	// A plain connection is turned away, and a shard certificate the
	// gateway's authorities did not sign is refused.
	plain := fmt.Sprintf("postgres://%s@127.0.0.1:%d/%s?sslmode=disable", localpg.Superuser, pg.Port(), pg.Database())
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		c, err := pgx.Connect(ctx, plain)
		if err != nil && strings.Contains(err.Error(), "no encryption") {
			break
		}
		if c != nil {
			c.Close(ctx)
		}
		if time.Now().After(deadline) {
			t.Fatalf("a plain connection: %v, want it refused", err)
		}
	}
	other := writeFile(t, dir, "other-ca.pem", certstest.NewAuthority(t, "another CA").PEM)
	cfg := gateway.Config{Listen: "127.0.0.1:0", Log: testLogger(), Shards: []cluster.ShardConfig{{URL: shardURL(other)}}}
	startCtx, startCancel := context.WithTimeout(ctx, 20*time.Second)
	s, err := gateway.New(startCtx, cfg)
	startCancel()
	if err == nil {
		s.Shutdown(ctx)
		t.Fatal("a gateway started on a shard whose certificate its authorities did not sign")
	}
	if msg := err.Error(); !strings.Contains(msg, "certificate signed by unknown authority") {
		t.Errorf("a shard certificate from another authority: %v", err)
	}

	s, logs := startLoggedGateway(t, func(c *gateway.Config) {
		c.Shards = []cluster.ShardConfig{{URL: shardURL(caFile)}}
		c.ShardConns = 2
	})
	sess := sessionOn(t, s, "")
	exec(t, sess, "CREATE KEYSPACE tls WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE tls.t (k int PRIMARY KEY, v text)")
	for i := range 20 {
		exec(t, sess, fmt.Sprintf("INSERT INTO tls.t (k, v) VALUES (%d, 'v')", i))
	}
	// The gateway's connections by client certificate serial.
	serials := func() map[int32]string {
		rows, err := admin.Query(ctx, `SELECT a.pid, coalesce(s.client_serial::text, 'none') FROM pg_stat_activity a
			JOIN pg_stat_ssl s USING (pid) WHERE a.client_addr IS NOT NULL AND a.backend_type = 'client backend'`)
		if err != nil {
			t.Fatal(err)
		}
		out := map[int32]string{}
		for rows.Next() {
			var pid int32
			var serial string
			rows.Scan(&pid, &serial)
			out[pid] = serial
		}
		return out
	}
	before := serials()
	if len(before) == 0 {
		t.Fatal("the gateway has no connection to the shard")
	}
	for pid, serial := range before {
		if serial != "10" {
			t.Fatalf("connection %d has client certificate %s, want 10", pid, serial)
		}
	}

	// Renewal: the shard trusts only ca2 from now on, and the gateway's
	// certificate files are replaced by one ca2 signed.
	ca2 := certstest.NewAuthority(t, "cqlpg shard CA 2")
	writeFile(t, pg.Dir(), "clients.crt", ca2.PEM)
	run("SELECT pg_reload_conf()")
	renewed, renewedKey := ca2.Issue(t, 20, localpg.Superuser, x509.ExtKeyUsageClientAuth)
	writeFile(t, dir, "client.pem", renewed)
	writeFile(t, dir, "client-key.pem", renewedKey)
	if err := s.ReloadCertificates(); err != nil { // as on SIGHUP
		t.Fatal(err)
	}
	var n int
	if err := sess.Query("SELECT count(*) FROM tls.t").Scan(&n); err != nil || n != 20 {
		t.Fatalf("a read after the renewal: %d rows, %v", n, err)
	}
	after := serials()
	for pid := range before {
		if _, ok := after[pid]; !ok {
			t.Errorf("connection %d was dropped by the renewal", pid)
		}
	}
	// The shard drops the old connections; the new ones use the renewed
	// certificate, which the shard takes.
	run("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE client_addr IS NOT NULL")
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		err := sess.Query("SELECT count(*) FROM tls.t").Scan(&n)
		if err == nil && n == 20 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no read with the renewed certificate: %v\n%s", err, grepLines(logs.String(), "certificate"))
		}
	}
	renewedSerials := slices.Collect(func(yield func(string) bool) {
		for _, s := range serials() {
			if !yield(s) {
				return
			}
		}
	})
	if len(renewedSerials) == 0 || slices.ContainsFunc(renewedSerials, func(s string) bool { return s != "20" }) {
		t.Errorf("after the renewal the gateway connects with certificates %q, want 20", renewedSerials)
	}
}
