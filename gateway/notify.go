package gateway

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/cqlpg/cqlpg/gateway/cluster"
	"github.com/cqlpg/cqlpg/pgschema"
)

// Gateways tell each other of changes with NOTIFY on the shards. A gateway
// that changed the schema notifies every shard once the change has
// committed on all of them; every gateway LISTENs on one shard, and on
// hearing of a version it does not serve, reloads its schema snapshot and
// pushes SCHEMA_CHANGE events to its clients, as for its own DDL. A
// notification is lost while its listener is reconnecting, so the
// listener also compares the shard's schema version with its own every
// versionCheck, and on every (re)connection.

// versionCheck is how often a gateway compares its schema version with its
// listening shard's, in case a notification was lost.
const versionCheck = 5 * time.Second

// follow keeps one connection listening for the other gateways'
// notifications, on the first shard that accepts it, until ctx ends; it
// reconnects, to whichever shard answers, when the connection fails.
func (r *registry) follow(ctx context.Context) {
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		conn, shard, err := r.dialListener(ctx)
		if err != nil {
			r.log.Debug("cannot listen for the other gateways' notifications", "err", err)
			select {
			case <-ctx.Done():
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, versionCheck)
			continue
		}
		backoff = 100 * time.Millisecond
		err = r.listen(ctx, conn)
		conn.Close(context.Background())
		if ctx.Err() == nil {
			r.log.Warn("lost the connection listening for the other gateways; reconnecting", "shard", shard, "err", err)
		}
	}
}

// dialListener connects to the first shard that answers and listens on
// the gateways' channels there.
func (r *registry) dialListener(ctx context.Context) (*pgx.Conn, int, error) {
	var errs []error
	for i, sh := range r.srv.cluster.Topology().Shards {
		dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		conn, err := pgx.Connect(dctx, sh.URL)
		if err == nil {
			for _, ch := range []string{cluster.SchemaChannel, cluster.GatewaysChannel} {
				if _, err = conn.Exec(dctx, "LISTEN "+pgx.Identifier{ch}.Sanitize()); err != nil {
					conn.Close(context.Background())
					break
				}
			}
		}
		cancel()
		if err == nil {
			return conn, i, nil
		}
		errs = append(errs, fmt.Errorf("shard %d: %w", i, err))
	}
	return nil, 0, errors.Join(errs...)
}

// listen handles notifications on conn until it fails or ctx ends,
// checking the shard's schema version when none comes for a while and
// once at the start, for what happened while nobody listened.
func (r *registry) listen(ctx context.Context, conn *pgx.Conn) error {
	if err := r.checkVersion(ctx, conn); err != nil {
		return err
	}
	// The registrations too may have changed while nobody listened.
	r.kick()
	for {
		wctx, cancel := context.WithTimeout(ctx, versionCheck)
		n, err := conn.WaitForNotification(wctx)
		cancel()
		switch {
		case ctx.Err() != nil:
			return nil
		case errors.Is(err, context.DeadlineExceeded):
			if err := r.checkVersion(ctx, conn); err != nil {
				return err
			}
		case err != nil:
			return err
		default:
			r.notified(ctx, n)
		}
	}
}

// notified acts on one notification.
func (r *registry) notified(ctx context.Context, n *pgconn.Notification) {
	switch n.Channel {
	case cluster.SchemaChannel:
		version, err := parseUUID(n.Payload)
		if err != nil {
			r.log.Warn("malformed schema notification", "payload", n.Payload)
			return
		}
		if r.knows(version) {
			return
		}
		r.srv.followSchema(ctx)
	case cluster.GatewaysChannel:
		if n.Payload != pgschema.UUIDText(r.self.hostID[:]) {
			r.kick()
		}
	}
}

// knows reports whether version is the schema the gateway serves or one
// it is applying itself: then there is nothing to follow.
func (r *registry) knows(version [16]byte) bool {
	if r.srv.cluster.Schema().Version == version {
		return true
	}
	applying := r.srv.cluster.Applying(version)
	return applying
}

// checkVersion compares the listening shard's schema version with the
// gateway's, following the schema when they differ.
func (r *registry) checkVersion(ctx context.Context, conn *pgx.Conn) error {
	qctx, cancel := context.WithTimeout(ctx, versionCheck)
	defer cancel()
	var version [16]byte
	if err := conn.QueryRow(qctx, `SELECT version FROM cqlpg.schema_version`).Scan(&version); err != nil {
		return fmt.Errorf("read the schema version: %w", err)
	}
	if !r.knows(version) {
		r.srv.followSchema(ctx)
	}
	return nil
}

// followSchema reloads the schema that another gateway changed and pushes
// the changes it finds to the connections registered for SCHEMA_CHANGE.
func (s *Server) followSchema(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.RequestTimeout)
	defer cancel()
	old, cur, err := s.cluster.SwapSchema(ctx)
	if err != nil {
		s.log.Warn("cannot reload the schema another gateway changed", "err", err)
		return
	}
	if old.Version == cur.Version {
		return
	}
	events := schemaEvents(old, cur)
	s.log.Debug("followed a schema change", "version", pgschema.UUIDText(cur.Version[:]), "events", len(events))
	for _, ev := range events {
		s.broadcastSchemaChange(ev.change, ev.target, ev.keyspace, ev.name)
	}
}

// schemaEvent is one SCHEMA_CHANGE event's content.
type schemaEvent struct {
	change, target, keyspace, name string
}

// schemaEvents derives the SCHEMA_CHANGE events that lead from one schema
// snapshot to another, as the gateway that made the changes sent them:
// keyspaces, user types and tables created, dropped or changed, a table
// counting as changed when its definition or its indexes are. A dropped
// keyspace gives one event, as in Cassandra; a created one is followed by
// what it was created with.
func schemaEvents(old, cur *pgschema.Schema) []schemaEvent {
	var out []schemaEvent
	for _, k := range cur.Keyspaces() {
		if k.Virtual {
			continue
		}
		was := old.Keyspace(k.Name)
		switch {
		case was == nil:
			out = append(out, schemaEvent{"CREATED", "KEYSPACE", k.Name, ""})
			was = &pgschema.Keyspace{}
		case was.CreateStatement() != k.CreateStatement():
			out = append(out, schemaEvent{"UPDATED", "KEYSPACE", k.Name, ""})
		}
		out = append(out, elementEvents(k.Name, "TYPE", typeDefinitions(was), typeDefinitions(k))...)
		out = append(out, elementEvents(k.Name, "TABLE", tableDefinitions(was), tableDefinitions(k))...)
	}
	for _, k := range old.Keyspaces() {
		if !k.Virtual && cur.Keyspace(k.Name) == nil {
			out = append(out, schemaEvent{"DROPPED", "KEYSPACE", k.Name, ""})
		}
	}
	return out
}

// elementEvents compares a keyspace's elements of one kind, given by name
// as their definitions.
func elementEvents(keyspace, target string, old, cur map[string]string) []schemaEvent {
	var out []schemaEvent
	for _, name := range sortedKeys(cur) {
		switch def, ok := old[name]; {
		case !ok:
			out = append(out, schemaEvent{"CREATED", target, keyspace, name})
		case def != cur[name]:
			out = append(out, schemaEvent{"UPDATED", target, keyspace, name})
		}
	}
	for _, name := range sortedKeys(old) {
		if _, ok := cur[name]; !ok {
			out = append(out, schemaEvent{"DROPPED", target, keyspace, name})
		}
	}
	return out
}

func typeDefinitions(k *pgschema.Keyspace) map[string]string {
	out := make(map[string]string, len(k.Types))
	for name, t := range k.Types {
		out[name] = t.CreateStatement()
	}
	return out
}

// tableDefinitions gives each table's full definition: DESCRIBE's with
// the internals (id, dropped columns) and the indexes.
func tableDefinitions(k *pgschema.Keyspace) map[string]string {
	out := make(map[string]string, len(k.Tables))
	for name, t := range k.Tables {
		var b strings.Builder
		b.WriteString(t.Describe(true))
		for _, idx := range t.SortedIndexes() {
			b.WriteString(idx.CreateStatement(t))
		}
		out[name] = b.String()
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// parseUUID reads a uuid's canonical text.
func parseUUID(s string) ([16]byte, error) {
	u, ok := pgschema.ParseUUID(s)
	if !ok {
		return u, fmt.Errorf("malformed uuid %q", s)
	}
	return u, nil
}
