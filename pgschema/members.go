package pgschema

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cqlpg/cqlpg/sharding"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Member is a shard of the cluster as cqlpg.members records it, the same
// on every shard.
type Member struct {
	HostID [16]byte
	Name   string
	// Address is where gateways reach the shard: its connection string
	// without a password (MemberAddress).
	Address          string
	Datacenter, Rack string
	Tokens           []int64
	State            string
	// Position is the shard's place in the order shards joined the ring,
	// which numbers them alike on every gateway.
	Position int
}

// The states of a member.
const (
	MemberNormal  = "normal"
	MemberJoining = "joining"
	MemberLeaving = "leaving"
)

// LoadMembers reads the members a shard records, in joining order, and
// the ring version; a shard that records none (a cluster that has not
// recorded its membership yet) gives nil and 0.
func LoadMembers(ctx context.Context, q Querier) ([]Member, int64, error) {
	var version int64
	rows, err := q.Query(ctx, `SELECT host_id, name, address, datacenter, rack, tokens, state, position,
		(SELECT version FROM cqlpg.ring_version) FROM cqlpg.members ORDER BY position`)
	if err != nil {
		return nil, 0, fmt.Errorf("read members: %w", err)
	}
	defer rows.Close()
	var ms []Member
	for rows.Next() {
		var m Member
		var v *int64
		if err := rows.Scan(&m.HostID, &m.Name, &m.Address, &m.Datacenter, &m.Rack, &m.Tokens, &m.State, &m.Position, &v); err != nil {
			return nil, 0, fmt.Errorf("read members: %w", err)
		}
		if v != nil {
			version = *v
		}
		ms = append(ms, m)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("read members: %w", err)
	}
	return ms, version, nil
}

// SaveMembers records ms as the shard's members at ring version, in the
// caller's transaction, unless the shard already records that version or
// a newer one, and drops the hints it holds for shards not among them; it
// reports whether it wrote.
func SaveMembers(ctx context.Context, q Querier, ms []Member, version int64) (bool, error) {
	var cur int64
	if err := q.QueryRow(ctx, `SELECT coalesce((SELECT version FROM cqlpg.ring_version FOR UPDATE), 0)`).Scan(&cur); err != nil {
		return false, fmt.Errorf("read ring version: %w", err)
	}
	if cur >= version {
		return false, nil
	}
	if _, err := q.Exec(ctx, `DELETE FROM cqlpg.members`); err != nil {
		return false, fmt.Errorf("write members: %w", err)
	}
	for _, m := range ms {
		if _, err := q.Exec(ctx, `INSERT INTO cqlpg.members (host_id, name, address, datacenter, rack, tokens, state, position)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, m.HostID, m.Name, m.Address, m.Datacenter, m.Rack, m.Tokens, m.State, m.Position); err != nil {
			return false, fmt.Errorf("write member %s: %w", m.Name, err)
		}
	}
	if err := DropFormerHints(ctx, q, ms); err != nil {
		return false, err
	}
	if _, err := q.Exec(ctx, `INSERT INTO cqlpg.ring_version (version) VALUES ($1)
		ON CONFLICT (only_row) DO UPDATE SET version = excluded.version, changed_at = now(), writes_held = false`, version); err != nil {
		return false, fmt.Errorf("write ring version: %w", err)
	}
	return true, nil
}

// MemberAddress is where a shard reached by url is, for the other
// gateways: the connection string's host, port, database and user, and
// none of its secrets. A gateway adds its own password (MemberURL).
func MemberAddress(url string) (string, error) {
	cfg, err := pgconn.ParseConfig(url)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("host=%s port=%d dbname=%s user=%s", connValue(cfg.Host), cfg.Port,
		connValue(cfg.Database), connValue(cfg.User)), nil
}

// MemberURL is the connection string of a member at address, with the
// password of the connection string given, which reached another member:
// a cluster's shards share their credentials.
func MemberURL(address, given string) string {
	cfg, err := pgconn.ParseConfig(given)
	if err != nil || cfg.Password == "" {
		return address
	}
	return address + " password=" + connValue(cfg.Password)
}

// connValue quotes a value for a keyword/value connection string.
func connValue(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// HoldWrites records, in the caller's transaction, ring version version
// as the one before it with counter updates and lightweight transactions
// held (cqlpg.ring_version.writes_held), unless the shard already records
// that version or a newer one.
func HoldWrites(ctx context.Context, q Querier, version int64) error {
	_, err := q.Exec(ctx, `UPDATE cqlpg.ring_version SET version = $1, changed_at = now(), writes_held = true
		WHERE version < $1`, version)
	return err
}

// WritesHeld reports whether the shard's ring version holds counter
// writes to the ranges that move.
func WritesHeld(ctx context.Context, q Querier) (bool, error) {
	var frozen bool
	err := q.QueryRow(ctx, `SELECT coalesce((SELECT writes_held FROM cqlpg.ring_version), false)`).Scan(&frozen)
	return frozen, err
}

// DropFormerHints drops the hints the shard holds for shards that are not
// among members: they are never replayed, and go with the shard, as
// Cassandra excises a removed node's hints.
func DropFormerHints(ctx context.Context, q Querier, members []Member) error {
	hosts := make([][16]byte, len(members))
	for i, m := range members {
		hosts[i] = m.HostID
	}
	if _, err := q.Exec(ctx, `DELETE FROM cqlpg.hints WHERE target <> ALL($1::uuid[])`, hosts); err != nil {
		return fmt.Errorf("drop the hints of former members: %w", err)
	}
	return nil
}

// RingTokens returns the member's tokens as ring tokens.
func (m Member) RingTokens() []sharding.Token {
	out := make([]sharding.Token, len(m.Tokens))
	for i, t := range m.Tokens {
		out[i] = sharding.Token(t)
	}
	return out
}

// WipeShard drops, in the caller's transaction, what a shard holds as a
// member: its keyspaces and their data, its identity and the membership
// it records. A shard that a join cut short and then abandoned is wiped
// this way before it joins again.
func WipeShard(ctx context.Context, tx Querier) error {
	rows, err := tx.Query(ctx, `SELECT keyspace_name FROM cqlpg.keyspaces`)
	if err != nil {
		return err
	}
	var names []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return err
		}
		names = append(names, name)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, name := range names {
		if _, err := DropKeyspace(ctx, tx, name, true); err != nil {
			return fmt.Errorf("drop keyspace %s: %w", name, err)
		}
	}
	for _, table := range []string{"cqlpg.members", "cqlpg.ring_version", "cqlpg.node"} {
		if _, err := tx.Exec(ctx, "DELETE FROM "+table); err != nil {
			return fmt.Errorf("wipe %s: %w", table, err)
		}
	}
	return nil
}

// TopologyProgress is the streaming progress of a topology operation
// (cqlpg.topology_progress).
type TopologyProgress struct {
	Operation               string
	RangesTotal, RangesDone int64
	Rows, Bytes             int64
	StartedAt, UpdatedAt    time.Time
}

// SaveTopologyProgress records p on the shard.
func SaveTopologyProgress(ctx context.Context, q Querier, p TopologyProgress) error {
	_, err := q.Exec(ctx, `INSERT INTO cqlpg.topology_progress (operation, ranges_total, ranges_done, rows, bytes, started_at)
		VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (only_row) DO UPDATE SET operation = excluded.operation, ranges_total = excluded.ranges_total,
			ranges_done = excluded.ranges_done, rows = excluded.rows, bytes = excluded.bytes,
			started_at = excluded.started_at, updated_at = now()`,
		p.Operation, p.RangesTotal, p.RangesDone, p.Rows, p.Bytes, p.StartedAt)
	return err
}

// LoadTopologyProgress reads the progress the shard records, or nil.
func LoadTopologyProgress(ctx context.Context, q Querier) (*TopologyProgress, error) {
	var p TopologyProgress
	err := q.QueryRow(ctx, `SELECT operation, ranges_total, ranges_done, rows, bytes, started_at, updated_at
		FROM cqlpg.topology_progress`).Scan(&p.Operation, &p.RangesTotal, &p.RangesDone, &p.Rows, &p.Bytes, &p.StartedAt, &p.UpdatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &p, nil
}
