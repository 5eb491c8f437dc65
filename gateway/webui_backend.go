package gateway

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"time"

	"github.com/cqlpg/cqlpg/gateway/auth"
	"github.com/cqlpg/cqlpg/gateway/cluster"
	"github.com/cqlpg/cqlpg/gateway/cqlwire"
	"github.com/cqlpg/cqlpg/gateway/webui"
	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/sharding"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
)

// The gateway's side of the web view (gateway/webui): what the view reads
// of it, through webui.Backend.

// uiBackend is the server as the web view's backend.
type uiBackend struct{ s *Server }

func (b uiBackend) Cluster() *cluster.Cluster     { return b.s.cluster }
func (b uiBackend) Ready() bool                   { return b.s.ready.Load() }
func (b uiBackend) RequestTimeout() time.Duration { return b.s.cfg.RequestTimeout }
func (b uiBackend) ReadTimeout() time.Duration    { return b.s.cfg.ReadTimeout }
func (b uiBackend) Datacenter() string            { return b.s.cfg.Datacenter }

// MaySelect reports whether role may read t's rows: always without
// authentication.
func (b uiBackend) MaySelect(role string, t *pgschema.Table) bool {
	return b.s.auth.MaySelect(role, t)
}

func (b uiBackend) Login(w http.ResponseWriter, r *http.Request) (string, bool) {
	return b.s.uiLogin(w, r)
}

func (b uiBackend) ReplicaRows(ctx context.Context, role, cql string, key [][]byte, shard int) (*message.RowsResult, error) {
	return b.s.replicaRows(ctx, role, cql, key, shard)
}

// uiLogin checks the client's credentials when authentication is on, by
// the same rules as a CQL login (remembered logins, failed logins limited
// per address), and answers 401 when they are missing or wrong. It
// returns the role logged in as.
func (s *Server) uiLogin(w http.ResponseWriter, r *http.Request) (string, bool) {
	a := s.auth
	if a == nil {
		return "", true
	}
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

// replicaRows runs a read on one replica only, as role, through the
// gateway's own path: the statement is planned and cached as a client's
// would be, the role must be allowed to run it, and rows come back as a
// client would see them. cql must read a single partition, whose key
// values are key.
func (s *Server) replicaRows(ctx context.Context, role, cql string, key [][]byte, shard int) (*message.RowsResult, error) {
	c := &conn{srv: s, log: s.log, version: byte(primitive.ProtocolVersion4)}
	ks := ""
	c.keyspace.Store(&ks)
	if s.auth != nil {
		s.auth.Attach(c, role)
		defer s.auth.Forget(c)
	}
	st, err := s.env.prepare("", []byte(cql))
	if err != nil {
		return nil, err
	}
	q := &cqlwire.QueryParams{Consistency: uint16(sharding.One), Values: key}
	e, err := s.env.newExecution(c, time.Now(), st, q, fromQuery)
	if err != nil {
		return nil, err
	}
	defer e.release()
	e.pinned = []int{shard}
	var resp []byte
	if err := e.run(ctx, st, &resp); err != nil {
		return nil, err
	}
	msg, err := resultCodec.Decode(bytes.NewReader(resp), primitive.ProtocolVersion4)
	if err != nil {
		return nil, err
	}
	rows, ok := msg.(*message.RowsResult)
	if !ok {
		return nil, errors.New("the read returned no rows result")
	}
	return rows, nil
}

// resultCodec decodes RESULT bodies.
var resultCodec = func() message.Codec {
	for _, c := range message.DefaultMessageCodecs {
		if c.GetOpCode() == primitive.OpCodeResult {
			return c
		}
	}
	panic("no RESULT codec")
}()
