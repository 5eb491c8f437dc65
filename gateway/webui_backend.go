package gateway

import (
	"context"
	"errors"
	"github.com/cqlpg/cqlpg/gateway/advise"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/cqlpg/cqlpg/gateway/auth"
	"github.com/cqlpg/cqlpg/gateway/cluster"
	"github.com/cqlpg/cqlpg/gateway/exec"
	"github.com/cqlpg/cqlpg/gateway/webui"
	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
)

// The gateway's side of the web view (gateway/webui): what the view reads
// of it, through webui.Backend.

// uiBackend is the server as the web view's backend.
type uiBackend struct{ s *Server }

func (b uiBackend) Cluster() *cluster.Cluster            { return b.s.cluster }
func (b uiBackend) Ready() bool                          { return b.s.ready.Load() }
func (b uiBackend) RequestTimeout() time.Duration        { return b.s.cfg.RequestTimeout }
func (b uiBackend) ReadTimeout() time.Duration           { return b.s.cfg.ReadTimeout }
func (b uiBackend) Datacenter() string                   { return b.s.cfg.Datacenter }
func (b uiBackend) HotPartitions() []advise.HotPartition { return b.s.env.Hot.Hot(20) }
func (b uiBackend) FilterStats() []advise.QueryStats     { return b.s.env.Cache.FilterStats() }

// MaySelect reports whether role may read t's rows: always without
// authentication.
func (b uiBackend) MaySelect(role string, t *pgschema.Table) bool {
	return b.s.auth.MaySelect(role, t)
}

func (b uiBackend) Login(w http.ResponseWriter, r *http.Request) (string, bool) {
	return b.s.uiLogin(w, r)
}

func (b uiBackend) ReplicaRows(ctx context.Context, role, cql string, key [][]byte, shard int) ([][][]byte, error) {
	sess := &uiSession{log: b.s.log}
	if a := b.s.auth; a != nil {
		a.Attach(sess, role)
		defer a.Forget(sess)
	}
	return b.s.env.ReadReplica(ctx, sess, cql, key, shard)
}

// uiLogin checks the client's credentials when authentication is on, by
// the same rules as a CQL login (remembered logins, failed logins limited
// per address), and answers 401 when they are missing or wrong. It
// returns the role logged in as.
func (s *Server) uiLogin(w http.ResponseWriter, r *http.Request) (string, bool) {
	if !s.cfg.Auth.Enabled {
		return "", true
	}
	// The HTTP listener serves while the gateway starts, before it can
	// check a login: nothing is let through until it can.
	if !s.authSet.Load() {
		http.Error(w, "not ready: logins are not checked yet", http.StatusServiceUnavailable)
		return "", false
	}
	a := s.auth
	user, password, ok := r.BasicAuth()
	if !ok {
		webui.Unauthorized(w, "authentication is required: log in with a CQL role")
		return "", false
	}
	host := r.RemoteAddr
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.cfg.RequestTimeout)
	defer cancel()
	if err := a.Login(ctx, host, user, password); err != nil {
		var refused *auth.Error
		if errors.As(err, &refused) && refused.Throttled {
			http.Error(w, err.Error(), http.StatusTooManyRequests)
		} else {
			webui.Unauthorized(w, err.Error())
		}
		return "", false
	}
	return user, true
}

// uiSession is the session of the web view's reads, which act for the
// role logged in to the view.
type uiSession struct{ log *slog.Logger }

func (u *uiSession) ProtocolVersion() byte { return byte(primitive.ProtocolVersion4) }
func (u *uiSession) Keyspace() string      { return "" }
func (u *uiSession) SetKeyspace(string)    {}
func (u *uiSession) LocalAddr() net.Addr   { return nil }
func (u *uiSession) Logger() *slog.Logger  { return u.log }
func (u *uiSession) Answer(int16, *[]byte, error, *exec.Statement, time.Time) {
	panic("the web view's reads run synchronously")
}
