package cluster

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/sharding"
)

// Membership lives in the cluster, not in each gateway's flags: every
// shard records the members (cqlpg.members) and the ring version. A
// gateway reaches the whole cluster through any one member: it takes the
// membership of the newest ring version among the shards it was given,
// opens the members it was not given at the addresses they record, and
// leaves out a shard it was given that is not a member, saying so, rather
// than hand it token ranges whose data it does not hold.
//
// The first start of a cluster (or of one older than membership) records
// it: every shard given is then a member, in the order given, each taking
// tokens that balance the ring with those before it.

// membership returns the cluster's members in joining order, the ring
// version, and the connection string and control pool of each member,
// taking over the control pools of the shards given (Control) that are
// members and closing the others.
//
// down marks the shards given that cannot be reached: they are left out
// of the reading, and a member among them is reached, when it is back, at
// the address the catalog records.
func (c *Cluster) membership(ctx context.Context, cfg Config, down []error) ([]pgschema.Member, int64, []string, []*pgxpool.Pool, error) {
	var members []pgschema.Member
	var version int64
	given := c.Control()
	nodes := make([]*pgschema.Node, len(given))
	for i, pool := range given {
		if down[i] != nil {
			continue
		}
		node, err := pgschema.LoadNode(ctx, pool)
		if err != nil {
			return nil, 0, nil, nil, fmt.Errorf("shard %d: %w", i, err)
		}
		nodes[i] = node
		ms, v, err := pgschema.LoadMembers(ctx, pool)
		if err != nil {
			return nil, 0, nil, nil, fmt.Errorf("shard %d: %w", i, err)
		}
		if v > version {
			members, version = ms, v
		}
	}
	if members == nil {
		if slices.ContainsFunc(down, func(err error) bool { return err != nil }) {
			return nil, 0, nil, nil, errors.New("a shard given cannot be reached, and the others record no members: start the cluster with every shard up")
		}
		if err := c.recordMembers(ctx, cfg, given); err != nil {
			return nil, 0, nil, nil, err
		}
		return c.membership(ctx, cfg, down)
	}
	byHost := map[[16]byte]int{}
	for i, n := range nodes {
		if n != nil {
			byHost[n.HostID] = i
		}
	}
	pools := make([]*pgxpool.Pool, len(members))
	urls := make([]string, len(members))
	used := make([]bool, len(given))
	var missing []int
	for j, m := range members {
		if i, ok := byHost[m.HostID]; ok {
			pools[j], urls[j], used[i] = given[i], cfg.Shards[i].URL, true
			continue
		}
		urls[j] = pgschema.MemberURL(m.Address, cfg.Shards[0].URL)
		missing = append(missing, j)
	}
	for i, u := range used {
		if !u && down[i] != nil {
			given[i].Close() // reached at the address the catalog records, if a member
			continue
		}
		if !u {
			c.log.Warn("a shard given is not a member of the cluster, and gets no token ranges: add it with cqlpg shard add",
				"shard", sharding.Redact(cfg.Shards[i].URL), "members", len(members), "ring_version", version)
			given[i].Close()
		}
	}
	if len(missing) > 0 {
		found := make([]string, len(missing))
		for k, j := range missing {
			found[k] = urls[j]
		}
		opened, _, err := openMembers(ctx, found, c.log)
		if err != nil {
			c.ring.Store(nil)
			for _, p := range pools {
				if p != nil {
					p.Close()
				}
			}
			return nil, 0, nil, nil, fmt.Errorf("a member the catalog records: %w", err)
		}
		for k, j := range missing {
			pools[j] = opened[k]
			c.log.Info("reaching a member that was not given, at the address the catalog records",
				"shard", members[j].Name, "address", members[j].Address)
		}
	}
	return members, version, urls, pools, nil
}

// recordMembers records the shards given as the cluster's members, at
// ring version 1, on every one of them: each joins the ring as shards
// always have, claiming its identity and tokens unless it has them.
func (c *Cluster) recordMembers(ctx context.Context, cfg Config, given []*pgxpool.Pool) error {
	infos, err := c.join(ctx, cfg, given)
	if err != nil {
		return err
	}
	members := make([]pgschema.Member, len(infos))
	for i, in := range infos {
		addr, err := pgschema.MemberAddress(cfg.Shards[i].URL)
		if err != nil {
			return fmt.Errorf("shard %d: %w", i, err)
		}
		members[i] = pgschema.Member{HostID: in.HostID, Name: in.Name, Address: addr, Datacenter: in.DC, Rack: in.Rack,
			State: pgschema.MemberNormal, Position: i}
		for _, t := range in.Tokens {
			members[i].Tokens = append(members[i].Tokens, int64(t))
		}
	}
	err = c.OnEveryShard(ctx, func(ctx context.Context, tx pgx.Tx) error {
		_, err := pgschema.SaveMembers(ctx, tx, members, 1)
		return err
	})
	if err != nil {
		return fmt.Errorf("record the cluster's members: %w", err)
	}
	c.log.Info("recorded the cluster's members", "shards", len(members))
	return nil
}

// CopyCatalog gives the shard at url, migrated if need be, the cluster's
// catalog: its schema (keyspaces, types, tables with their dropped
// columns, indexes, as the members hold them, at the same schema version)
// and its roles and permissions. It refuses a shard that already holds a
// keyspace. A shard joining the cluster takes the catalog this way before
// any data.
func (c *Cluster) CopyCatalog(ctx context.Context, url string) error {
	pools, err := openControl(ctx, []string{url}, c.log)
	if err != nil {
		return err
	}
	to := pools[0]
	defer to.Close()
	var schema *pgschema.Schema
	var roles *pgschema.Roles
	err = c.ReadCatalog(ctx, func(q pgschema.Querier) error {
		var err error
		if schema, err = pgschema.Load(ctx, q); err != nil {
			return err
		}
		roles, err = pgschema.ReadRoles(ctx, q)
		return err
	})
	if err != nil {
		return fmt.Errorf("read the cluster's catalog: %w", err)
	}
	if n := len(schema.Unloadable()); n > 0 {
		return fmt.Errorf("the cluster's catalog has %d objects that do not load (see /readyz): fix them first", n)
	}
	return pgx.BeginFunc(ctx, to, func(tx pgx.Tx) error {
		if err := pgschema.Lock(ctx, tx); err != nil {
			return err
		}
		var keyspaces int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM cqlpg.keyspaces`).Scan(&keyspaces); err != nil {
			return err
		}
		if keyspaces > 0 {
			return fmt.Errorf("the shard already holds %d keyspaces", keyspaces)
		}
		if _, err := tx.Exec(ctx, "SET LOCAL cqlpg.ddl = 'on'"); err != nil {
			return err
		}
		if err := pgschema.CopySchema(ctx, tx, schema); err != nil {
			return err
		}
		return pgschema.WriteRoles(ctx, tx, roles)
	})
}
