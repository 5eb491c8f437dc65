package main_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlpg/cqlpg/gateway/certs/certstest"
	"github.com/cqlpg/cqlpg/sharding/localpg"
)

// TestServeSIGHUP sends SIGHUP to `cqlpg serve`, serving CQL and HTTPS
// from certificate files: the process goes on running, new connections
// to both listeners get the certificate the files hold now, and a
// session opened before still answers. With a key file that does not
// load, SIGHUP logs the error and the certificate served stays.
func TestServeSIGHUP(t *testing.T) {
	bin := buildCqlpg(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	clusters, stop, err := localpg.TempClusters(ctx, 1, localpg.Options{})
	if err != nil {
		t.Fatalf("start PostgreSQL: %v", err)
	}
	t.Cleanup(stop)
	ca := certstest.NewAuthority(t, "cqlpg test CA")
	dir := t.TempDir()
	cert, key := filepath.Join(dir, "server.pem"), filepath.Join(dir, "server-key.pem")
	ca.IssueFiles(t, 2, "cqlpg", x509.ExtKeyUsageServerAuth, cert, key)
	p := startServeWith(t, bin, "--shard", clusters[0].URL(),
		"--tls-cert", cert, "--tls-key", key, "--http-tls-cert", cert, "--http-tls-key", key)

	// served is the serial of the certificate a new connection to port
	// gets.
	served := func(port int) int64 {
		t.Helper()
		conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp",
			"127.0.0.1:"+strconv.Itoa(port), &tls.Config{RootCAs: ca.Pool})
		if err != nil {
			t.Fatalf("TLS handshake with port %d: %v\n%s", port, err, p.output.String())
		}
		defer conn.Close()
		return conn.ConnectionState().PeerCertificates[0].SerialNumber.Int64()
	}
	serials := func() (cql, https int64) { return served(p.cqlPort), served(p.httpPort) }
	if cql, https := serials(); cql != 2 || https != 2 {
		t.Fatalf("serials before SIGHUP: CQL %d, HTTPS %d, want 2", cql, https)
	}
	cfg := gocql.NewCluster("127.0.0.1")
	cfg.Port, cfg.Timeout = p.cqlPort, 10*time.Second
	cfg.SslOpts = &gocql.SslOptions{Config: &tls.Config{RootCAs: ca.Pool}, EnableHostVerification: true}
	sess, err := cfg.CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()

	// hangUp sends SIGHUP and waits for the gateway to log line once
	// more than it had.
	hangUp := func(line string) {
		t.Helper()
		n := strings.Count(p.output.String(), line)
		if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(20 * time.Second); strings.Count(p.output.String(), line) == n; {
			select {
			case err := <-p.done:
				t.Fatalf("cqlpg serve exited on SIGHUP: %v\n%s", err, p.output.String())
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("no %q logged after SIGHUP\n%s", line, p.output.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	answers := func(step string) {
		t.Helper()
		var v string
		if err := sess.Query("SELECT release_version FROM system.local").Scan(&v); err != nil {
			t.Errorf("%s: the session opened before: %v", step, err)
		}
	}

	ca.IssueFiles(t, 3, "cqlpg", x509.ExtKeyUsageServerAuth, cert, key)
	hangUp("SIGHUP: reloaded the TLS certificates")
	if cql, https := serials(); cql != 3 || https != 3 {
		t.Errorf("serials after SIGHUP: CQL %d, HTTPS %d, want 3", cql, https)
	}
	answers("after SIGHUP")

	if err := os.WriteFile(key, []byte("not a key\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	hangUp("SIGHUP: a TLS certificate did not reload")
	if !strings.Contains(p.output.String(), key) {
		t.Errorf("the failed reload's log does not name %s:\n%s", key, p.output.String())
	}
	if cql, https := serials(); cql != 3 || https != 3 {
		t.Errorf("serials after a failed SIGHUP: CQL %d, HTTPS %d, want 3", cql, https)
	}
	answers("after a failed SIGHUP")
	sess.Close()
	p.stop(t)
}
