package gateway_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"path/filepath"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlpg/cqlpg/gateway"
	"github.com/cqlpg/cqlpg/gateway/certs/certstest"
	"github.com/cqlpg/cqlpg/gateway/cluster"
)

// testPKI is a certificate authority with a server and a client
// certificate it signed, written as PEM files.
type testPKI struct {
	dir                           string
	ca                            *certstest.Authority
	pool                          *x509.CertPool
	client                        tls.Certificate
	caFile, serverCert, serverKey string
}

func newTestPKI(t *testing.T) *testPKI {
	t.Helper()
	p := &testPKI{dir: t.TempDir(), ca: certstest.NewAuthority(t, "cqlpg test CA")}
	p.pool = p.ca.Pool
	p.caFile = filepath.Join(p.dir, "ca.pem")
	certstest.WriteFile(t, p.caFile, p.ca.PEM)
	p.serverCert, p.serverKey = filepath.Join(p.dir, "server.pem"), filepath.Join(p.dir, "server-key.pem")
	p.issueServer(t, 2)
	p.client = p.ca.Pair(t, 3, "client", x509.ExtKeyUsageClientAuth)
	return p
}

// issueServer writes a new server certificate with serial, and its key,
// over the server's files, as a renewal would.
func (p *testPKI) issueServer(t *testing.T, serial int64) {
	t.Helper()
	p.ca.IssueFiles(t, serial, "cqlpg", x509.ExtKeyUsageServerAuth, p.serverCert, p.serverKey)
}

// TestTLS serves CQL over TLS: with a server certificate only, and with
// client certificates required; plain connections and clients without a
// certificate are turned away.
func TestTLS(t *testing.T) {
	pki := newTestPKI(t)
	ctx := context.Background()
	start := func(clientCA string) *gateway.Server {
		tlsCfg, err := gateway.TLSConfig(pki.serverCert, pki.serverKey, clientCA)
		if err != nil {
			t.Fatal(err)
		}
		cfg := gateway.Config{Listen: "127.0.0.1:0", Log: testLogger(), TLS: tlsCfg}
		for _, u := range shardURLs {
			cfg.Shards = append(cfg.Shards, cluster.ShardConfig{URL: u})
		}
		s, err := gateway.New(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		go s.Serve()
		t.Cleanup(func() { s.Shutdown(context.Background()) })
		return s
	}
	connect := func(s *gateway.Server, withTLS bool, cert *tls.Certificate) error {
		cfg := clusterConfig(s, "")
		cfg.ConnectTimeout, cfg.Timeout = 3*time.Second, 3*time.Second
		if withTLS {
			tc := &tls.Config{RootCAs: pki.pool}
			if cert != nil {
				tc.Certificates = []tls.Certificate{*cert}
			}
			cfg.SslOpts = &gocql.SslOptions{Config: tc, EnableHostVerification: true}
		}
		sess, err := cfg.CreateSession()
		if err != nil {
			return err
		}
		defer sess.Close()
		var v string
		return sess.Query("SELECT release_version FROM system.local").Scan(&v)
	}

	server := start("")
	if err := connect(server, true, nil); err != nil {
		t.Errorf("TLS client: %v", err)
	}
	if err := connect(server, false, nil); err == nil {
		t.Error("plain client served by a TLS listener")
	}

	mutual := start(pki.caFile)
	if err := connect(mutual, true, &pki.client); err != nil {
		t.Errorf("TLS client with a certificate: %v", err)
	}
	if err := connect(mutual, true, nil); err == nil {
		t.Error("client without a certificate served where one is required")
	}
	if _, err := gateway.TLSConfig(pki.serverCert, pki.serverKey, pki.serverKey); err == nil {
		t.Error("a key file taken for certificate authorities")
	}
}
