package main_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlpg/cqlpg/sharding/localpg"
)

// testCA signs server certificates for 127.0.0.1 into PEM files.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pool *x509.CertPool
}

func newTestCA(t *testing.T) *testCA {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "cqlpg test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true,
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca := &testCA{key: key, pool: x509.NewCertPool()}
	ca.cert, _ = x509.ParseCertificate(der)
	ca.pool.AddCert(ca.cert)
	return ca
}

// issue writes a server certificate with serial and its key to the files
// cert and key.
func (ca *testCA) issue(t *testing.T, serial int64, cert, key string) {
	t.Helper()
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "cqlpg"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &k.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalECPrivateKey(k)
	for path, block := range map[string]*pem.Block{cert: {Type: "CERTIFICATE", Bytes: der}, key: {Type: "EC PRIVATE KEY", Bytes: keyDER}} {
		if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

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
	ca := newTestCA(t)
	dir := t.TempDir()
	cert, key := filepath.Join(dir, "server.pem"), filepath.Join(dir, "server-key.pem")
	ca.issue(t, 2, cert, key)
	p := startServeWith(t, bin, "--shard", clusters[0].URL(),
		"--tls-cert", cert, "--tls-key", key, "--http-tls-cert", cert, "--http-tls-key", key)

	// served is the serial of the certificate a new connection to port
	// gets.
	served := func(port int) int64 {
		t.Helper()
		conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp",
			"127.0.0.1:"+strconv.Itoa(port), &tls.Config{RootCAs: ca.pool})
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
	cfg.SslOpts = &gocql.SslOptions{Config: &tls.Config{RootCAs: ca.pool}, EnableHostVerification: true}
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

	ca.issue(t, 3, cert, key)
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
