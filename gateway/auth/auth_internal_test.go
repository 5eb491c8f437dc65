package auth

import (
	"testing"
	"time"

	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/translate"
)

// BenchmarkAuthorize measures the permission check every QUERY, EXECUTE
// and batch statement passes with authentication on, from the cached
// access: the session and cache lookups, then the resource chain.
func BenchmarkAuthorize(b *testing.B) {
	table := &pgschema.Table{Keyspace: "ks", Name: "t"}
	plan := &translate.Select{Table: table}
	for _, bc := range []struct {
		name  string
		Super bool
		Perms map[translate.Resource]translate.Permissions
	}{
		{"superuser", true, nil},
		{"table grant", false, map[translate.Resource]translate.Permissions{
			{Kind: translate.TableResource, Keyspace: "ks", Name: "t"}: translate.PermSelect}},
		{"all keyspaces grant", false, map[translate.Resource]translate.Permissions{
			{Kind: translate.AllKeyspacesResource}: translate.PermSelect}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			a := &Authenticator{}
			c := new(int) // any comparable value keys a session
			e := &accessEntry{}
			a.sessions.Store(c, &authSession{role: "r", access: e})
			acc := &Access{Role: "r", Super: bc.Super, Perms: bc.Perms,
				tables: map[[2]string]translate.Permissions{}, keyspaces: map[string]translate.Permissions{},
				expires: time.Now().Add(time.Hour)}
			for r, p := range bc.Perms {
				switch r.Kind {
				case translate.TableResource:
					acc.tables[[2]string{r.Keyspace, r.Name}] = p
				case translate.AllKeyspacesResource:
					acc.allKeyspaces = p
				}
			}
			e.cur.Store(acc)
			now := time.Now()
			b.ReportAllocs()
			for b.Loop() {
				if err := a.Authorize(c, plan, now); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func TestSASLPlain(t *testing.T) {
	for _, tc := range []struct {
		token, user, password, err string
	}{
		{token: "\x00alice\x00secret", user: "alice", password: "secret"},
		{token: "authz\x00alice\x00secret", user: "alice", password: "secret"},
		{token: "\x00alice\x00p\xc3\xa4ss", user: "alice", password: "p\xc3\xa4ss"},
		{token: "", err: "Password must not be null"},
		{token: "alice", err: "Password must not be null"},
		{token: "\x00alice", err: "Authentication ID must not be null"},
		{token: "\x00alice\x00", err: "Password must not be null"},
		{token: "\x00\x00secret", err: "Authentication ID must not be null"},
		{token: "a\x00b\x00c\x00d", err: `Credential format error: username or password is empty or contains NUL(\0) character`},
	} {
		user, password, err := SASLPlain([]byte(tc.token))
		switch {
		case tc.err != "" && (err == nil || err.Error() != tc.err):
			t.Errorf("%q: error %v, want %q", tc.token, err, tc.err)
		case tc.err == "" && (err != nil || user != tc.user || password != tc.password):
			t.Errorf("%q: %q %q %v, want %q %q", tc.token, user, password, err, tc.user, tc.password)
		}
	}
}
