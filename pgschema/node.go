package pgschema

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// Node is a shard's identity on the ring, stored in the shard itself so
// that every gateway on the same shards sees the same ring.
type Node struct {
	HostID     [16]byte
	Name       string
	Datacenter string
	Rack       string
	Tokens     []int64
}

// LoadNode reads a shard's identity; it returns nil when the shard has not
// joined the ring yet.
func LoadNode(ctx context.Context, q Querier) (*Node, error) {
	n := &Node{}
	err := q.QueryRow(ctx, `SELECT host_id, name, datacenter, rack, tokens FROM cqlpg.node`).
		Scan(&n.HostID, &n.Name, &n.Datacenter, &n.Rack, &n.Tokens)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read shard identity: %w", err)
	}
	return n, nil
}

// ClaimNode stores n as the shard's identity unless the shard already has
// one, and returns the identity that holds: when two gateways join a new
// shard at once, both end up with the same tokens.
func ClaimNode(ctx context.Context, q Querier, n *Node) (*Node, error) {
	if _, err := q.Exec(ctx, `INSERT INTO cqlpg.node (host_id, name, datacenter, rack, tokens)
		VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`, n.HostID, n.Name, n.Datacenter, n.Rack, n.Tokens); err != nil {
		return nil, fmt.Errorf("store shard identity: %w", err)
	}
	return LoadNode(ctx, q)
}
