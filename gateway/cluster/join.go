package cluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/sharding"
)

// A shard joins a running cluster in steps, each taken once every live
// gateway serves the ring of the step before (AwaitRing), as Cassandra's
// bootstrap does with pending ranges:
//
//  1. Under every member's schema lock, the new shard takes the catalog
//     (CopyCatalog's), its identity and tokens, and every member records
//     it as joining at a new ring version. Gateways then write the ranges
//     it will replicate to it too, as a pending replica.
//  2. The ranges it will replicate are streamed to it, each reconciled
//     from every replica that holds it now (JoinOptions.Stream), so that
//     it is a merge of them and every write acknowledged before is there.
//  3. Every member records it as normal at a new ring version: reads of
//     its ranges go to it, and the shards that gave them up keep their
//     copies until cqlpg cleanup.
//
// A join cut short is resumed by running it again: a shard recorded as
// joining streams its ranges again, which changes nothing already there.

// JoinOptions configure a join.
type JoinOptions struct {
	// Name, Datacenter and Rack place the shard; Name defaults to the
	// next free shardN.
	Name, Datacenter, Rack string
	// NumTokens is how many tokens the shard takes.
	NumTokens int
	// Stream copies to the joining shard (index joiner of topo) the
	// ranges it will replicate.
	Stream func(ctx context.Context, topo *sharding.Topology, joiner int) error
	// Progress hears of each step.
	Progress func(step string)
	// GatewayTimeout is how long a gateway's silence takes to count it as
	// gone; BarrierLimit bounds the wait for the live ones to switch rings.
	GatewayTimeout, BarrierLimit time.Duration
}

// Join adds the shard at url to the cluster, as described above.
func (c *Cluster) Join(ctx context.Context, url string, o JoinOptions) error {
	progress := func(format string, args ...any) {
		if o.Progress != nil {
			o.Progress(fmt.Sprintf(format, args...))
		}
	}
	cur := c.ring.Load()
	members, version, err := pgschema.LoadMembers(ctx, cur.control[0])
	if err != nil {
		return err
	}
	pools, err := openControl(ctx, []string{url})
	if err != nil {
		return fmt.Errorf("the new shard: %w", err)
	}
	to := pools[0]
	defer to.Close()
	node, err := pgschema.LoadNode(ctx, to)
	if err != nil {
		return err
	}
	joiner := -1
	for i, m := range members {
		if node != nil && m.HostID == node.HostID {
			joiner = i
		}
	}
	switch {
	case joiner >= 0 && members[joiner].State == pgschema.MemberNormal:
		return fmt.Errorf("the shard is already a member of the cluster, as %s", members[joiner].Name)
	case joiner >= 0:
		progress("resuming the join of %s", members[joiner].Name)
	default:
		if err := c.checkJoin(ctx, members, to, node); err != nil {
			return err
		}
		m, err := c.admit(ctx, members, version, url, to, o)
		if err != nil {
			return err
		}
		members, version, joiner = append(members, m), version+1, len(members)
		progress("%s takes the catalog and %d tokens, and joins at ring version %d", m.Name, len(m.Tokens), version)
	}
	if err := c.switchRing(ctx, version, o); err != nil {
		return err
	}
	topo := c.Topology()
	if err := o.Stream(ctx, topo, joiner); err != nil {
		return fmt.Errorf("streaming to %s: %w (run the command again to resume)", members[joiner].Name, err)
	}
	members[joiner].State = pgschema.MemberNormal
	if err := c.saveMembers(ctx, members, version+1, url); err != nil {
		return err
	}
	if err := c.switchRing(ctx, version+1, o); err != nil {
		return err
	}
	progress("%s is a normal member at ring version %d", members[joiner].Name, version+1)
	return nil
}

// checkJoin refuses what cannot join: a topology operation in progress, a
// member down, or a shard that holds another cluster's membership.
func (c *Cluster) checkJoin(ctx context.Context, members []pgschema.Member, to *pgxpool.Pool, node *pgschema.Node) error {
	for _, m := range members {
		if m.State != pgschema.MemberNormal {
			return fmt.Errorf("a topology operation is in progress: %s is %s; finish it first (run it again to resume)", m.Name, m.State)
		}
	}
	for _, s := range c.Topology().Shards {
		if !s.Pool.Alive() {
			return fmt.Errorf("shard %s is down: a join needs every member up", s.Info.Name)
		}
	}
	theirs, _, err := pgschema.LoadMembers(ctx, to)
	if err != nil {
		return err
	}
	if len(theirs) > 0 {
		return fmt.Errorf("the shard belongs to another cluster (it records %d members)", len(theirs))
	}
	return nil
}

// admit records the shard at url, whose control pool is to, as a joining
// member: it takes the catalog and its identity and tokens, and every
// member records it, all under every member's schema lock, so that no
// schema change falls between.
func (c *Cluster) admit(ctx context.Context, members []pgschema.Member, version int64, url string, to *pgxpool.Pool,
	o JoinOptions) (pgschema.Member, error) {
	m := pgschema.Member{HostID: NewUUID(4), Name: o.Name, Datacenter: o.Datacenter, Rack: o.Rack,
		State: pgschema.MemberJoining}
	var existing [][]sharding.Token
	names := map[string]bool{}
	for _, x := range members {
		names[x.Name] = true
		m.Position = max(m.Position, x.Position+1)
		var toks []sharding.Token
		for _, t := range x.Tokens {
			toks = append(toks, sharding.Token(t))
		}
		existing = append(existing, toks)
	}
	for i := len(members); m.Name == ""; i++ {
		if name := fmt.Sprintf("shard%d", i); !names[name] {
			m.Name = name
		}
	}
	if names[m.Name] {
		return m, fmt.Errorf("a member is already named %s", m.Name)
	}
	for _, t := range sharding.AllocateTokens(existing, o.NumTokens, time.Now().UnixNano()) {
		m.Tokens = append(m.Tokens, int64(t))
	}
	var err error
	if m.Address, err = pgschema.MemberAddress(url); err != nil {
		return m, err
	}
	all := append(slices.Clone(members), m)
	control := c.Control()
	txs := make([]pgx.Tx, len(control))
	defer func() {
		for _, tx := range txs {
			if tx != nil {
				tx.Rollback(context.WithoutCancel(ctx))
			}
		}
	}()
	for i, pool := range control {
		if txs[i], err = pool.Begin(ctx); err != nil {
			return m, err
		}
		if err := pgschema.Lock(ctx, txs[i]); err != nil {
			return m, err
		}
	}
	schema, err := pgschema.Load(ctx, txs[0])
	if err != nil {
		return m, err
	}
	if n := len(schema.Unloadable()); n > 0 {
		return m, fmt.Errorf("the cluster's catalog has %d objects that do not load (see /readyz): fix them first", n)
	}
	roles, err := pgschema.ReadRoles(ctx, txs[0])
	if err != nil {
		return m, err
	}
	err = pgx.BeginFunc(ctx, to, func(tx pgx.Tx) error {
		if err := pgschema.Lock(ctx, tx); err != nil {
			return err
		}
		var keyspaces int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM cqlpg.keyspaces`).Scan(&keyspaces); err != nil {
			return err
		}
		if keyspaces > 0 {
			return fmt.Errorf("the shard already holds %d keyspaces: give an empty database", keyspaces)
		}
		if _, err := tx.Exec(ctx, "SET LOCAL cqlpg.ddl = 'on'"); err != nil {
			return err
		}
		if err := pgschema.CopySchema(ctx, tx, schema); err != nil {
			return err
		}
		if err := pgschema.WriteRoles(ctx, tx, roles); err != nil {
			return err
		}
		if _, err := pgschema.ClaimNode(ctx, tx, &pgschema.Node{HostID: m.HostID, Name: m.Name, Datacenter: m.Datacenter,
			Rack: m.Rack, Tokens: m.Tokens}); err != nil {
			return err
		}
		_, err := pgschema.SaveMembers(ctx, tx, all, version+1)
		return err
	})
	if err != nil {
		return m, fmt.Errorf("the new shard: %w", err)
	}
	for i, tx := range txs {
		if _, err := pgschema.SaveMembers(ctx, tx, all, version+1); err != nil {
			return m, err
		}
		if err := tx.Commit(ctx); err != nil {
			return m, fmt.Errorf("member %d: %w", i, err)
		}
		txs[i] = nil
	}
	return m, nil
}

// saveMembers records members at version on every member, the joining
// shard at url included.
func (c *Cluster) saveMembers(ctx context.Context, members []pgschema.Member, version int64, url string) error {
	err := c.OnEveryShard(ctx, func(ctx context.Context, tx pgx.Tx) error {
		_, err := pgschema.SaveMembers(ctx, tx, members, version)
		return err
	})
	if err != nil {
		return fmt.Errorf("record the members at ring version %d: %w", version, err)
	}
	return nil
}

// switchRing has this cluster serve ring version and waits until every
// live gateway does.
func (c *Cluster) switchRing(ctx context.Context, version int64, o JoinOptions) error {
	if _, err := c.CheckRing(ctx); err != nil {
		return err
	}
	if c.RingVersion() < version {
		return errors.New("the members do not record the new ring")
	}
	return c.AwaitRing(ctx, version, o.GatewayTimeout, o.BarrierLimit)
}
