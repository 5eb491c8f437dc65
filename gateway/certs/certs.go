// Package certs serves a TLS listener's certificate from PEM files that
// may be replaced while the listener runs, as certificates are renewed:
// each new handshake gets the certificate the files hold, and connections
// already open keep the one they started with.
//
// The files are read again on Reload (the gateway's SIGHUP), and when a
// handshake finds them changed: at most once a second, a handshake
// compares the files' modification times and sizes with those of the
// files last read. A certificate that does not load (a file half
// written, a key that does not match its certificate) leaves the one
// served in place.
package certs

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// checkEvery is how often handshakes look at the files.
const checkEvery = time.Second

// Files is a certificate and its private key read from PEM files, and,
// when a file of them is given, the authorities a client certificate must
// chain to.
type Files struct {
	cert, key, clientCA string
	log                 *slog.Logger

	// served is what the last load that succeeded read; handshakes read
	// it without a lock.
	served atomic.Pointer[loaded]
	// checked is when a handshake last looked at the files, in Unix
	// nanoseconds.
	checked atomic.Int64
	// mu serializes loads. failed are the stamps of files that did not
	// load, which handshakes do not try again until they change.
	mu     sync.Mutex
	failed stamps
}

// loaded is a certificate as read, with the settings a handshake gets.
type loaded struct {
	config *tls.Config
	stamps stamps
}

// stamp is what tells a file changed: its modification time and size, or
// a size of -1 when it could not be read.
type stamp struct {
	mod  int64
	size int64
}

// stamps are those of the certificate, key and client authorities files.
type stamps [3]stamp

// Load reads the certificate and key files, and clientCA unless it is
// empty; log tells of the loads handshakes make.
func Load(cert, key, clientCA string, log *slog.Logger) (*Files, error) {
	if log == nil {
		log = slog.Default()
	}
	f := &Files{cert: cert, key: key, clientCA: clientCA, log: log}
	if err := f.Reload(); err != nil {
		return nil, err
	}
	f.checked.Store(time.Now().UnixNano())
	return f, nil
}

// Reload reads the files again, changed or not. On an error the
// certificate served stays the one last loaded.
func (f *Files) Reload() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	st, err := f.load()
	if err != nil {
		f.failed = st
	}
	return err
}

// Config returns the listener's TLS settings: the certificate served at
// each handshake, TLS 1.2 at least, and with client authorities, a client
// certificate that chains to them required.
func (f *Files) Config() *tls.Config {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: f.certificate}
	if f.clientCA != "" {
		// The authorities change with the files too, and a handshake's
		// are those of the configuration it gets for its client.
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
		cfg.GetConfigForClient = f.configForClient
	}
	return cfg
}

func (f *Files) certificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	f.check()
	return &f.served.Load().config.Certificates[0], nil
}

func (f *Files) configForClient(*tls.ClientHelloInfo) (*tls.Config, error) {
	f.check()
	return f.served.Load().config, nil
}

// check loads the files when they changed since they were last read, if
// no handshake has looked at them in the last second. The handshake that
// looks waits for the load, and gets what it loaded.
func (f *Files) check() {
	now := time.Now().UnixNano()
	last := f.checked.Load()
	if now-last < int64(checkEvery) || !f.checked.CompareAndSwap(last, now) {
		return
	}
	st := f.stat()
	if st == f.served.Load().stamps {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if st == f.failed || st == f.served.Load().stamps {
		return
	}
	if st, err := f.load(); err != nil {
		f.failed = st
		f.log.Warn("TLS certificate files changed but do not load; serving the previous certificate", "err", err)
		return
	}
	f.log.Info("reloaded the TLS certificate, which new connections get", "cert", f.cert)
}

// load reads the files and serves what they hold; it returns their
// stamps as they were before the reading. f.mu is held.
func (f *Files) load() (stamps, error) {
	st := f.stat()
	certPEM, err := os.ReadFile(f.cert)
	if err != nil {
		return st, fmt.Errorf("TLS certificate: %w", err)
	}
	keyPEM, err := os.ReadFile(f.key)
	if err != nil {
		return st, fmt.Errorf("TLS certificate's key: %w", err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return st, fmt.Errorf("TLS certificate %s with key %s: %w", f.cert, f.key, err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if f.clientCA != "" {
		pem, err := os.ReadFile(f.clientCA)
		if err != nil {
			return st, fmt.Errorf("TLS client certificate authorities: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return st, errors.New("TLS client certificate authorities: no PEM certificate in " + f.clientCA)
		}
		cfg.ClientCAs, cfg.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	f.served.Store(&loaded{config: cfg, stamps: st})
	f.failed = stamps{}
	return st, nil
}

// stat returns the files' stamps now.
func (f *Files) stat() stamps {
	var st stamps
	for i, name := range []string{f.cert, f.key, f.clientCA} {
		if name == "" {
			continue
		}
		fi, err := os.Stat(name)
		if err != nil {
			st[i] = stamp{size: -1}
			continue
		}
		st[i] = stamp{mod: fi.ModTime().UnixNano(), size: fi.Size()}
	}
	return st
}
