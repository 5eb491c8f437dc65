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
}

func newTestPKI(t *testing.T) *testPKI {
	t.Helper()
	p := &testPKI{dir: t.TempDir(), pool: x509.NewCertPool()}
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "cqlpg test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true,
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	p.pool.AddCert(ca)
	issue := func(serial int64, name string, usage x509.ExtKeyUsage) ([]byte, *ecdsa.PrivateKey) {
		key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
			IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		return der, key
	}
	write := func(name, kind string, der []byte) string {
		path := filepath.Join(p.dir, name)
		if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	p.caFile = write("ca.pem", "CERTIFICATE", caDER)
	serverDER, serverKey := issue(2, "cqlpg", x509.ExtKeyUsageServerAuth)
	p.serverCert = write("server.pem", "CERTIFICATE", serverDER)
	keyDER, _ := x509.MarshalECPrivateKey(serverKey)
	p.serverKey = write("server-key.pem", "EC PRIVATE KEY", keyDER)
	clientDER, clientKey := issue(3, "client", x509.ExtKeyUsageClientAuth)
	p.client = tls.Certificate{Certificate: [][]byte{clientDER}, PrivateKey: clientKey}
	return p
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
