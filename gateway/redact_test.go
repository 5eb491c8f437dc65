package gateway

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/cqlpg/cqlpg/sharding"
)

func TestRedactSecrets(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"postgres://cqlpg:s3cret@db1:5432/cqlpg?sslmode=disable", "postgres://cqlpg:*****@db1:5432/cqlpg?sslmode=disable"},
		{"dial postgresql://u:p%40ss@h/db: refused", "dial postgresql://u:*****@h/db: refused"},
		{"host=db1 user=cqlpg password=s3cret dbname=x", "host=db1 user=cqlpg password=***** dbname=x"},
		{"host=db1 password='s3 cret' dbname=x", "host=db1 password='*****' dbname=x"},
		{"CREATE ROLE r WITH PASSWORD = 'it''s' AND LOGIN = true", "CREATE ROLE r WITH PASSWORD = '*****' AND LOGIN = true"},
		{"CREATE USER u WITH password 'pw' SUPERUSER", "CREATE USER u WITH password '*****' SUPERUSER"},
		{"ALTER ROLE r WITH PASSWORD $$p'w$$", "ALTER ROLE r WITH PASSWORD '*****'"},
		{"CREATE ROLE r WITH HASHED PASSWORD '$2a$10$abc'", "CREATE ROLE r WITH HASHED PASSWORD '*****'"},
		{"ALTER ROLE r WITH OPTIONS = {'password': 'x'}", "ALTER ROLE r WITH OPTIONS = {'password': '*****'}"},
	} {
		if got := sharding.Redact(tc.in); got != tc.want {
			t.Errorf("sharding.Redact(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	// Nothing else changes.
	for _, s := range []string{
		"password authentication failed for user \"cqlpg\"",
		"SELECT * FROM ks.t WHERE k = 1",
		"http://example.com/path",
		"postgres://cqlpg@db1/cqlpg",
	} {
		if got := sharding.Redact(s); got != s {
			t.Errorf("sharding.Redact(%q) = %q, want it unchanged", s, got)
		}
	}
}

func TestRedactingLogger(t *testing.T) {
	var buf bytes.Buffer
	log := redacting(slog.New(slog.NewTextHandler(&buf, nil)))
	if redacting(log) != log {
		t.Error("a redacting logger wrapped twice")
	}
	err := fmt.Errorf("connect postgres://cqlpg:s3cret@db1/cqlpg: %w", errors.New("refused"))
	log.With("shard", "host=db1 password=s3cret").Error("shard down", "err", err,
		slog.Group("g", "cql", "CREATE ROLE r WITH PASSWORD 's3cret'"), "n", 3)
	out := buf.String()
	if strings.Contains(out, "s3cret") {
		t.Errorf("the log holds the password: %s", out)
	}
	for _, want := range []string{"postgres://cqlpg:*****@db1/cqlpg: refused", "password=*****", "PASSWORD '*****'", "n=3"} {
		if !strings.Contains(out, want) {
			t.Errorf("the log lacks %q: %s", want, out)
		}
	}
}
