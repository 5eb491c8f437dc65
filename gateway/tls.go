package gateway

import (
	"crypto/tls"

	"github.com/cqlpg/cqlpg/gateway/certs"
)

// TLSConfig returns the CQL listener's TLS settings: the server's
// certificate and key (PEM files), and, when clientCAFile is given, the
// certificate authorities a client certificate must chain to, which every
// client must then present. The files are read again when they change
// (package certs); Config.TLSCerts, set to the files instead, reloads
// them on ReloadCertificates too.
func TLSConfig(certFile, keyFile, clientCAFile string) (*tls.Config, error) {
	f, err := certs.Load(certFile, keyFile, clientCAFile, nil)
	if err != nil {
		return nil, err
	}
	return f.Config(), nil
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
