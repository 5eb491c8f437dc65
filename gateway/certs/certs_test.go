package certs

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cqlpg/cqlpg/gateway/certs/certstest"
)

// testFiles is a certificate authority and the files of a server
// certificate it signs.
type testFiles struct {
	ca        *certstest.Authority
	pool      *x509.CertPool
	cert, key string
}

func newTestFiles(t *testing.T) *testFiles {
	t.Helper()
	f := &testFiles{ca: certstest.NewAuthority(t, "test CA")}
	f.pool = f.ca.Pool
	dir := t.TempDir()
	f.cert, f.key = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	f.issue(t, 2)
	return f
}

// issue writes a certificate for 127.0.0.1 with serial, and its key.
func (f *testFiles) issue(t *testing.T, serial int64) {
	t.Helper()
	f.ca.IssueFiles(t, serial, "server", x509.ExtKeyUsageServerAuth, f.cert, f.key)
}

// serve accepts TLS connections with cfg until the test ends, finishing
// each handshake.
func serve(t *testing.T, cfg *tls.Config) string {
	t.Helper()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				c.(*tls.Conn).Handshake()
				c.Close()
			}()
		}
	}()
	return ln.Addr().String()
}

// serial is the serial number a new connection to addr gets, 0 when its
// handshake fails.
func serial(f *testFiles, addr string) int64 {
	c, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: f.pool})
	if err != nil {
		return 0
	}
	defer c.Close()
	return c.ConnectionState().PeerCertificates[0].SerialNumber.Int64()
}

// syncBuffer is a log's output, written while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestReloadWhileServing renews the certificate over and over while
// clients keep connecting: every handshake succeeds, with a certificate
// that was in the files, and after the last Reload new connections get
// the last one.
func TestReloadWhileServing(t *testing.T) {
	f := newTestFiles(t)
	files, err := Load(f.cert, f.key, "", slog.New(slog.NewTextHandler(&syncBuffer{}, nil)))
	if err != nil {
		t.Fatal(err)
	}
	addr := serve(t, files.Config())
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if s := serial(f, addr); s < 2 || s > 20 {
					t.Errorf("a handshake during renewals got serial %d", s)
					return
				}
			}
		})
	}
	for s := int64(3); s <= 20; s++ {
		f.issue(t, s)
		// A reload may find a key that does not match its certificate,
		// read while the files were being written: it fails and the old
		// certificate stays.
		files.Reload()
		time.Sleep(60 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	if err := files.Reload(); err != nil {
		t.Fatal(err)
	}
	if s := serial(f, addr); s != 20 {
		t.Errorf("after the last reload: serial %d, want 20", s)
	}
}

// TestReloadOnChange changes the files without Reload: a handshake a
// second after the last check loads them, and files that do not load are
// logged once, not at every check, and leave the certificate served.
func TestReloadOnChange(t *testing.T) {
	f := newTestFiles(t)
	var logs syncBuffer
	files, err := Load(f.cert, f.key, "", slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	addr := serve(t, files.Config())

	f.issue(t, 3)
	if s := serial(f, addr); s != 2 {
		t.Errorf("within a second of the load: serial %d, want 2", s)
	}
	time.Sleep(checkEvery + 100*time.Millisecond)
	if s := serial(f, addr); s != 3 {
		t.Errorf("a second after the files changed: serial %d, want 3", s)
	}

	if err := os.WriteFile(f.key, []byte("not a key\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		time.Sleep(checkEvery + 100*time.Millisecond)
		if s := serial(f, addr); s != 3 {
			t.Errorf("with a garbage key: serial %d, want 3", s)
		}
	}
	if n := strings.Count(logs.String(), "do not load"); n != 1 {
		t.Errorf("the garbage key logged %d times, want once:\n%s", n, logs.String())
	}
	if err := files.Reload(); err == nil || !strings.Contains(err.Error(), f.key) {
		t.Errorf("Reload with a garbage key: %v, want an error naming %s", err, f.key)
	}
}
