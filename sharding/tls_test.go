package sharding

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log/slog"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func TestCertFiles(t *testing.T) {
	t.Setenv("PGSSLKEY", "/env/key.pem")
	for conn, want := range map[string][]string{
		"postgres://u@h/db?sslmode=verify-full&sslrootcert=/ca.pem&sslcert=/c.pem": {"/ca.pem", "/c.pem", "/env/key.pem"},
		"host=h sslrootcert='/a dir/ca.pem' sslkey=/k.pem dbname=x":                {"/a dir/ca.pem", "/k.pem"},
		"host=h sslrootcert=system":                                                {"/env/key.pem"},
		"postgres://u@h/db":                                                        {"/env/key.pem"},
	} {
		if got := certFiles(conn); !slices.Equal(got, want) {
			t.Errorf("%s: %q, want %q", conn, got, want)
		}
	}
}

// TestConnConfigRefresh checks that a connection string's certificate
// file is read again once it changes, or after ReloadTLS, and that a file
// that does not parse leaves the settings read before.
func TestConnConfigRefresh(t *testing.T) {
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	writeCA := func(serial int64) {
		key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "test CA"},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	writeCA(1)
	c, err := newConnConfig("postgres://u@127.0.0.1/db?sslmode=verify-full&sslrootcert="+ca, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	first := c.get()
	if first.TLSConfig == nil || c.get() != first {
		t.Fatal("no TLS settings, or parsed again with nothing changed")
	}
	writeCA(2)
	if c.get() != first {
		t.Error("parsed again within a second of the last look")
	}
	c.looked = time.Time{}
	second := c.get()
	if second == first {
		t.Error("a changed file was not read again")
	}
	ReloadTLS()
	third := c.get()
	if third == second {
		t.Error("ReloadTLS did not make the file be read again")
	}
	if err := os.WriteFile(ca, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	ReloadTLS()
	if c.get() != third {
		t.Error("a file that does not parse replaced the settings")
	}
}
