// Package certstest makes certificates for tests: an authority, and the
// server and client certificates it signs for 127.0.0.1 and localhost,
// as PEM, in memory or in files.
package certstest

import (
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
	"testing"
	"time"
)

// Authority is a certificate authority of one test.
type Authority struct {
	Cert *x509.Certificate
	// PEM is the authority's certificate, as clients and servers trust it.
	PEM []byte
	// Pool holds the authority's certificate, for a tls.Config.
	Pool *x509.CertPool
	key  *ecdsa.PrivateKey
}

// NewAuthority makes an authority called name, valid for an hour either
// side of now.
func NewAuthority(t testing.TB, name string) *Authority {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true,
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	a := &Authority{key: key, Pool: x509.NewCertPool(), PEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
	a.Cert, _ = x509.ParseCertificate(der)
	a.Pool.AddCert(a.Cert)
	return a
}

// Issue signs a certificate with serial for name, 127.0.0.1 and
// localhost, for a server or a client as usage says, and returns it and
// its key as PEM.
func (a *Authority) Issue(t testing.TB, serial int64, name string, usage x509.ExtKeyUsage) (certPEM, keyPEM []byte) {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost"}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.Cert, &key.PublicKey, a.key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalECPrivateKey(key)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
}

// IssueFiles issues a certificate as Issue does and writes it and its key
// over the files cert and key, as a renewal would.
func (a *Authority) IssueFiles(t testing.TB, serial int64, name string, usage x509.ExtKeyUsage, cert, key string) {
	t.Helper()
	certPEM, keyPEM := a.Issue(t, serial, name, usage)
	WriteFile(t, cert, certPEM)
	WriteFile(t, key, keyPEM)
}

// Pair issues a certificate as Issue does, for use in memory.
func (a *Authority) Pair(t testing.TB, serial int64, name string, usage x509.ExtKeyUsage) tls.Certificate {
	t.Helper()
	pair, err := tls.X509KeyPair(a.Issue(t, serial, name, usage))
	if err != nil {
		t.Fatal(err)
	}
	return pair
}

// WriteFile replaces a file whole: the data goes to a new file, renamed
// over the old one, so that a reader never sees half of it.
func WriteFile(t testing.TB, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path+".new", data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".new", path); err != nil {
		t.Fatal(err)
	}
}
