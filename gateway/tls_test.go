package gateway_test

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
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlpg/cqlpg/gateway"
	"github.com/cqlpg/cqlpg/gateway/cluster"
)

// testPKI is a certificate authority with a server and a client
// certificate it signed, written as PEM files.
type testPKI struct {
	dir                           string
	pool                          *x509.CertPool
	client                        tls.Certificate
	caFile, serverCert, serverKey string
	ca                            *x509.Certificate
	caKey                         *ecdsa.PrivateKey
}

func newTestPKI(t *testing.T) *testPKI {
	t.Helper()
	p := &testPKI{dir: t.TempDir(), pool: x509.NewCertPool()}
	p.caKey, _ = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "cqlpg test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true,
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &p.caKey.PublicKey, p.caKey)
	if err != nil {
		t.Fatal(err)
	}
	p.ca, _ = x509.ParseCertificate(caDER)
	p.pool.AddCert(p.ca)
	p.caFile = p.write(t, "ca.pem", "CERTIFICATE", caDER)
	p.serverCert, p.serverKey = filepath.Join(p.dir, "server.pem"), filepath.Join(p.dir, "server-key.pem")
	p.issueServer(t, 2)
	clientDER, clientKey := p.issue(t, 3, "client", x509.ExtKeyUsageClientAuth)
	p.client = tls.Certificate{Certificate: [][]byte{clientDER}, PrivateKey: clientKey}
	return p
}

// issue signs a certificate for 127.0.0.1 with serial, and returns it and
// its key.
func (p *testPKI) issue(t *testing.T, serial int64, name string, usage x509.ExtKeyUsage) ([]byte, *ecdsa.PrivateKey) {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, &key.PublicKey, p.caKey)
	if err != nil {
		t.Fatal(err)
	}
	return der, key
}

// write writes a PEM file of one block in the PKI's directory.
func (p *testPKI) write(t *testing.T, name, kind string, der []byte) string {
	t.Helper()
	path := filepath.Join(p.dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// issueServer writes a new server certificate with serial, and its key,
// over the server's files, as a renewal would.
func (p *testPKI) issueServer(t *testing.T, serial int64) {
	t.Helper()
	der, key := p.issue(t, serial, "cqlpg", x509.ExtKeyUsageServerAuth)
	keyDER, _ := x509.MarshalECPrivateKey(key)
	p.write(t, filepath.Base(p.serverCert), "CERTIFICATE", der)
	p.write(t, filepath.Base(p.serverKey), "EC PRIVATE KEY", keyDER)
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
