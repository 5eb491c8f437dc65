package gateway

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
)

// TLSConfig returns the CQL listener's TLS settings: the server's
// certificate and key (PEM files), and, when clientCAFile is given, the
// certificate authorities a client certificate must chain to, which every
// client must then present.
func TLSConfig(certFile, keyFile, clientCAFile string) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("TLS certificate: %w", err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if clientCAFile != "" {
		pem, err := os.ReadFile(clientCAFile)
		if err != nil {
			return nil, fmt.Errorf("TLS client certificate authorities: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, errors.New("TLS client certificate authorities: no PEM certificate in " + clientCAFile)
		}
		cfg.ClientCAs, cfg.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	return cfg, nil
}

// atLeastTLS12 returns cfg, or a copy of it refusing protocol versions
// older than TLS 1.2 when it would accept them: TLS 1.0 and 1.1 are never
// served, whoever built the configuration.
func atLeastTLS12(cfg *tls.Config) *tls.Config {
	if cfg.MinVersion >= tls.VersionTLS12 {
		return cfg
	}
	cfg = cfg.Clone()
	cfg.MinVersion = tls.VersionTLS12
	return cfg
}
