package sharding

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// A shard's connection string may name certificate files: sslrootcert,
// the authorities its server certificate must chain to, and sslcert and
// sslkey, the gateway's client certificate. They are read when the
// string is parsed, and read again for new connections once they change
// on disk (looked at no more than once a second) or after ReloadTLS (the
// gateway's SIGHUP): a renewed certificate applies to the connections
// opened after it, and the open ones keep theirs, so nothing is dropped.

// tlsGeneration counts the ReloadTLS calls.
var tlsGeneration atomic.Uint64

// ReloadTLS makes every shard connection string's certificate files be
// read again before the next connection.
func ReloadTLS() { tlsGeneration.Add(1) }

// connConfig is a shard's parsed connection settings, their TLS part kept
// as fresh as the files it was read from.
type connConfig struct {
	connString string
	adjust     func(*pgconn.Config) // applied to each parse
	files      []string             // the certificate files it names
	log        *slog.Logger

	mu     sync.Mutex
	cfg    *pgconn.Config
	stamp  string    // the files' sizes and times when cfg was parsed
	gen    uint64    // tlsGeneration when cfg was parsed
	looked time.Time // when the files were last looked at
}

// newConnConfig parses a connection string, adjust applied to the result.
func newConnConfig(connString string, adjust func(*pgconn.Config), log *slog.Logger) (*connConfig, error) {
	c := &connConfig{connString: connString, adjust: adjust, files: certFiles(connString), log: log}
	cfg, err := c.parse()
	if err != nil {
		return nil, err
	}
	c.cfg, c.stamp, c.gen, c.looked = cfg, fileStamp(c.files), tlsGeneration.Load(), time.Now()
	return c, nil
}

func (c *connConfig) parse() (*pgconn.Config, error) {
	cfg, err := pgconn.ParseConfig(c.connString)
	if err != nil {
		return nil, err
	}
	if c.adjust != nil {
		c.adjust(cfg)
	}
	return cfg, nil
}

// get returns the settings for a new connection: parsed again when the
// certificate files changed or ReloadTLS was called since. Files that do
// not parse (a certificate written halfway) leave the settings as they
// were, and are logged.
func (c *connConfig) get() *pgconn.Config {
	if len(c.files) == 0 {
		return c.cfg
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	gen := tlsGeneration.Load()
	if gen == c.gen && time.Since(c.looked) < time.Second {
		return c.cfg
	}
	c.looked = time.Now()
	stamp := fileStamp(c.files)
	if gen == c.gen && stamp == c.stamp {
		return c.cfg
	}
	c.gen, c.stamp = gen, stamp
	cfg, err := c.parse()
	if err != nil {
		c.log.Warn("cannot read the shard's certificate files again: new connections keep the certificates read before", "err", err)
		return c.cfg
	}
	c.log.Info("read the shard's certificate files again", "files", strings.Join(c.files, ", "))
	c.cfg = cfg
	return cfg
}

// TLSRefresher returns a hook for a pgx pool's BeforeConnect that gives
// each new connection the TLS settings of connString's certificate files
// as they are now. connString is the pool's.
func TLSRefresher(connString string, log *slog.Logger) (func(context.Context, *pgx.ConnConfig) error, error) {
	c, err := newConnConfig(connString, nil, log)
	if err != nil {
		return nil, err
	}
	return func(_ context.Context, cc *pgx.ConnConfig) error {
		fresh := c.get()
		cc.TLSConfig = fresh.TLSConfig
		cc.Fallbacks = fresh.Fallbacks
		return nil
	}, nil
}

// certFiles lists the certificate files a connection string names, in
// its URL or key=value form, or PostgreSQL's environment names.
func certFiles(connString string) []string {
	params := map[string]string{}
	if strings.HasPrefix(connString, "postgres://") || strings.HasPrefix(connString, "postgresql://") {
		if u, err := url.Parse(connString); err == nil {
			for k, v := range u.Query() {
				params[k] = v[len(v)-1]
			}
		}
	} else {
		params = keywordValues(connString)
	}
	var files []string
	for _, p := range []struct{ key, env string }{{"sslrootcert", "PGSSLROOTCERT"}, {"sslcert", "PGSSLCERT"}, {"sslkey", "PGSSLKEY"}} {
		f, ok := params[p.key]
		if !ok {
			f = os.Getenv(p.env)
		}
		if f != "" && f != "system" {
			files = append(files, f)
		}
	}
	return files
}

// keywordValues reads a key=value connection string: values may be
// quoted with single quotes, with backslash escapes.
func keywordValues(s string) map[string]string {
	out := map[string]string{}
	for s = strings.TrimSpace(s); s != ""; s = strings.TrimSpace(s) {
		eq := strings.IndexByte(s, '=')
		if eq < 0 {
			break
		}
		key := strings.TrimSpace(s[:eq])
		s = strings.TrimLeft(s[eq+1:], " \t")
		var val strings.Builder
		if strings.HasPrefix(s, "'") {
			i := 1
			for ; i < len(s) && s[i] != '\''; i++ {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				val.WriteByte(s[i])
			}
			s = s[min(i+1, len(s)):]
		} else {
			end := strings.IndexAny(s, " \t")
			if end < 0 {
				end = len(s)
			}
			val.WriteString(s[:end])
			s = s[end:]
		}
		out[key] = val.String()
	}
	return out
}

// fileStamp is the sizes and modification times of files, which change
// when any of them is written.
func fileStamp(files []string) string {
	var b strings.Builder
	for _, f := range files {
		if st, err := os.Stat(f); err == nil {
			fmt.Fprintf(&b, "%d:%d;", st.Size(), st.ModTime().UnixNano())
		} else {
			b.WriteString("missing;")
		}
	}
	return b.String()
}

// ParsePoolConfig parses a pgx pool's connection string, with the hook
// that keeps its connections' TLS settings as fresh as their certificate
// files (TLSRefresher).
func ParsePoolConfig(connString string, log *slog.Logger) (*pgxpool.Config, error) {
	pc, err := pgxpool.ParseConfig(connString)
	if err != nil {
		return nil, err
	}
	if pc.BeforeConnect, err = TLSRefresher(connString, log); err != nil {
		return nil, err
	}
	return pc, nil
}
