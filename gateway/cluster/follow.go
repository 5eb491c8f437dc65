package cluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

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
func (r *Registry) follow(ctx context.Context) {
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
func (r *Registry) dialListener(ctx context.Context) (*pgx.Conn, int, error) {
	var errs []error
	for i, sh := range r.cluster.Topology().Shards {
		dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		conn, err := pgx.Connect(dctx, sh.URL)
		if err == nil {
			for _, ch := range []string{SchemaChannel, GatewaysChannel, RingChannel} {
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
func (r *Registry) listen(ctx context.Context, conn *pgx.Conn) error {
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
func (r *Registry) notified(ctx context.Context, n *pgconn.Notification) {
	switch n.Channel {
	case SchemaChannel:
		version, ok := pgschema.ParseUUID(n.Payload)
		if !ok {
			r.log.Warn("malformed schema notification", "payload", n.Payload)
			return
		}
		if r.knows(version) {
			return
		}
		r.hooks.SchemaChanged(ctx)
	case GatewaysChannel:
		if n.Payload != pgschema.UUIDText(r.self.HostID[:]) {
			r.kick()
		}
	case RingChannel:
		// A topology operation recorded a new ring: switch now, rather
		// than at the next check, and say so in the next heartbeat.
		go func() {
			if switched, err := r.cluster.CheckRing(ctx); err != nil && ctx.Err() == nil {
				r.log.Warn("cannot follow the ring", "err", err)
			} else if switched {
				r.kick()
			}
		}()
	}
}

// knows reports whether version is the schema the gateway serves or one
// it is applying itself: then there is nothing to follow.
func (r *Registry) knows(version [16]byte) bool {
	if r.cluster.Schema().Version == version {
		return true
	}
	applying := r.cluster.Applying(version)
	return applying
}

// checkVersion compares the listening shard's schema version with the
// gateway's, following the schema when they differ.
func (r *Registry) checkVersion(ctx context.Context, conn *pgx.Conn) error {
	qctx, cancel := context.WithTimeout(ctx, versionCheck)
	defer cancel()
	var version [16]byte
	if err := conn.QueryRow(qctx, `SELECT version FROM cqlpg.schema_version`).Scan(&version); err != nil {
		return fmt.Errorf("read the schema version: %w", err)
	}
	if !r.knows(version) {
		r.hooks.SchemaChanged(ctx)
	}
	return nil
}
