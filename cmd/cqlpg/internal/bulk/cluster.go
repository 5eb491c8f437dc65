package bulk

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/sharding"
)

// Cluster is the shards a load or unload works on: the ring, each shard's
// connection string in the ring's order, and the schema.
type Cluster struct {
	Ring   *sharding.Ring
	URLs   []string
	Schema *pgschema.Schema
}

// Open reads the schema from the first shard that answers. urls are in
// the ring's shard order.
func Open(ctx context.Context, ring *sharding.Ring, urls []string) (*Cluster, error) {
	if len(urls) != len(ring.Shards()) {
		return nil, fmt.Errorf("%d shard URLs for a ring of %d shards", len(urls), len(ring.Shards()))
	}
	var errs []error
	for _, u := range urls {
		conn, err := pgx.Connect(ctx, pgschema.GatewayConnString(u))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		s, err := pgschema.Load(ctx, conn)
		conn.Close(ctx)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		return &Cluster{Ring: ring, URLs: urls, Schema: s}, nil
	}
	return nil, fmt.Errorf("no shard gave the schema: %w", errors.Join(errs...))
}

// table looks up keyspace.table and its replica placement.
func (c *Cluster) table(keyspace, table string) (*pgschema.Table, *sharding.Placement, error) {
	ks := c.Schema.Keyspace(keyspace)
	if ks == nil {
		return nil, nil, fmt.Errorf("keyspace %s does not exist", keyspace)
	}
	t := c.Schema.Table(keyspace, table)
	if t == nil {
		return nil, nil, fmt.Errorf("table %s.%s does not exist", keyspace, table)
	}
	if t.Virtual || pgschema.IsSystemKeyspace(keyspace) {
		return nil, nil, fmt.Errorf("table %s.%s is a system table", keyspace, table)
	}
	return t, c.Ring.Placement(ks.Replication), nil
}

// connect opens a connection to shard i as the gateway connects.
func (c *Cluster) connect(ctx context.Context, i int) (*pgx.Conn, error) {
	conn, err := pgx.Connect(ctx, pgschema.GatewayConnString(c.URLs[i]))
	if err != nil {
		return nil, fmt.Errorf("shard %s: %w", c.Ring.Shards()[i].Name, err)
	}
	return conn, nil
}

func quote(name string) string { return pgschema.Quote(name) }

func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = quote(n)
	}
	return strings.Join(q, ", ")
}
