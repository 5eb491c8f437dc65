package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
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

// OpOptions configure a topology operation.
type OpOptions struct {
	// Stream copies the ranges of topo's movement (Topology.Movements)
	// to the replicas that gain them, reconciled from those that hold
	// them now, leaving out lost, the index of a member whose data is
	// gone (-1 for none).
	Stream func(ctx context.Context, topo *sharding.Topology, lost int) error
	// Progress hears of each step.
	Progress func(step string)
	// GatewayTimeout is how long a gateway's silence takes to count it as
	// gone; BarrierLimit bounds the wait for the live ones to switch rings.
	GatewayTimeout, BarrierLimit time.Duration
}

func (o OpOptions) progress(format string, args ...any) {
	if o.Progress != nil {
		o.Progress(fmt.Sprintf(format, args...))
	}
}

// JoinOptions configure a join.
type JoinOptions struct {
	// Name, Datacenter and Rack place the shard; Name defaults to the
	// next free shardN.
	Name, Datacenter, Rack string
	// NumTokens is how many tokens the shard takes.
	NumTokens int
	// Force takes a shard that holds what a join cut short and then
	// aborted left there, wiping it first.
	Force bool
	OpOptions
}

// Join adds the shard at url to the cluster, as described above.
func (c *Cluster) Join(ctx context.Context, url string, o JoinOptions) error {
	members, version, err := c.currentMembers(ctx)
	if err != nil {
		return err
	}
	to, node, err := openJoiner(ctx, url, c.log)
	if err != nil {
		return err
	}
	defer to.Close()
	joiner := memberOf(members, node)
	switch {
	case joiner >= 0 && members[joiner].State == pgschema.MemberNormal:
		return fmt.Errorf("the shard is already a member of the cluster, as %s", members[joiner].Name)
	case joiner >= 0 && members[joiner].State == pgschema.MemberLeaving:
		return fmt.Errorf("the shard is %s, leaving the ring: finish that first", members[joiner].Name)
	case joiner >= 0:
		o.progress("resuming the join of %s", members[joiner].Name)
	default:
		if err := c.checkJoin(ctx, members, to, o.Force, -1); err != nil {
			return err
		}
		m := c.newMember(members, o.Name, o.Datacenter, o.Rack)
		var existing [][]sharding.Token
		for _, x := range members {
			existing = append(existing, x.RingTokens())
		}
		var reps []sharding.Replication
		for _, ks := range c.Schema().Keyspaces() {
			if !ks.Virtual && !pgschema.IsSystemKeyspace(ks.Name) {
				reps = append(reps, ks.Replication)
			}
		}
		rf := sharding.AllocationFactor(reps, o.Datacenter)
		for _, t := range sharding.AllocateTokensRF(existing, o.NumTokens, rf, time.Now().UnixNano()) {
			m.Tokens = append(m.Tokens, int64(t))
		}
		all := append(slices.Clone(members), m)
		if err := c.admit(ctx, all, version, url, to, o.Force); err != nil {
			return err
		}
		members, version = all, version+1
		o.progress("%s takes the catalog and %d tokens, and joins at ring version %d", m.Name, len(m.Tokens), version)
	}
	return c.move(ctx, members, version, -1, o.OpOptions)
}

// openJoiner opens the control pool of the shard at url and reads its
// identity, if it has one.
func openJoiner(ctx context.Context, url string, log *slog.Logger) (*pgxpool.Pool, *pgschema.Node, error) {
	pools, err := openControl(ctx, []string{url}, log)
	if err != nil {
		return nil, nil, fmt.Errorf("the new shard: %w", err)
	}
	node, err := pgschema.LoadNode(ctx, pools[0])
	if err != nil {
		pools[0].Close()
		return nil, nil, fmt.Errorf("the new shard: %w", err)
	}
	return pools[0], node, nil
}

// memberOf returns the index of the member that node is, or -1.
func memberOf(members []pgschema.Member, node *pgschema.Node) int {
	for i, m := range members {
		if node != nil && m.HostID == node.HostID {
			return i
		}
	}
	return -1
}

// newMember returns a new joining member named name (the next free shardN
// if empty), placed after members.
func (c *Cluster) newMember(members []pgschema.Member, name, dc, rack string) pgschema.Member {
	m := pgschema.Member{HostID: NewUUID(4), Name: name, Datacenter: dc, Rack: rack, State: pgschema.MemberJoining}
	names := map[string]bool{}
	for _, x := range members {
		names[x.Name] = true
		m.Position = max(m.Position, x.Position+1)
	}
	for i := len(members); m.Name == ""; i++ {
		if name := fmt.Sprintf("shard%d", i); !names[name] {
			m.Name = name
		}
	}
	return m
}

// checkJoin refuses what cannot join: a topology operation in progress,
// a member down (but the one being replaced, lost), or a shard that holds
// another cluster's membership (unless force).
func (c *Cluster) checkJoin(ctx context.Context, members []pgschema.Member, to *pgxpool.Pool, force bool, lost int) error {
	if err := c.inProgress(members); err != nil {
		return err
	}
	if err := c.needUp(ctx, lost, "a join"); err != nil {
		return err
	}
	if force {
		return nil
	}
	theirs, _, err := pgschema.LoadMembers(ctx, to)
	if err != nil {
		return err
	}
	if len(theirs) > 0 {
		return errors.New("the shard belongs to a cluster (its catalog records the cluster's members): give an empty database, or --force to wipe a shard a join cut short left behind")
	}
	return nil
}

// admit records the last of all, a new member whose control pool is to,
// as joining, at version+1, setting its address: it takes the catalog and its identity, and
// every member records all, under every member's schema lock, so that no
// schema change falls between. The members of all that are not joining
// must be up but any leaving (a shard replaced). With force, the shard is
// wiped first.
func (c *Cluster) admit(ctx context.Context, all []pgschema.Member, version int64, url string, to *pgxpool.Pool, force bool) error {
	m := &all[len(all)-1]
	for _, x := range all[:len(all)-1] {
		if x.Name == m.Name {
			return fmt.Errorf("a member is already named %s", m.Name)
		}
	}
	var err error
	if m.Address, err = pgschema.MemberAddress(url); err != nil {
		return err
	}
	control := c.Control()
	txs := make([]pgx.Tx, len(control))
	defer func() {
		for _, tx := range txs {
			if tx != nil {
				tx.Rollback(context.WithoutCancel(ctx))
			}
		}
	}()
	var first pgx.Tx
	for i, pool := range control {
		if all[i].State == pgschema.MemberLeaving {
			continue // the shard replaced, which is down
		}
		if txs[i], err = pool.Begin(ctx); err != nil {
			return err
		}
		if err := pgschema.Lock(ctx, txs[i]); err != nil {
			return err
		}
		if first == nil {
			first = txs[i]
		}
	}
	schema, err := pgschema.Load(ctx, first)
	if err != nil {
		return err
	}
	if n := len(schema.Unloadable()); n > 0 {
		return fmt.Errorf("the cluster's catalog has %d objects that do not load (see /readyz): fix them first", n)
	}
	roles, err := pgschema.ReadRoles(ctx, first)
	if err != nil {
		return err
	}
	err = pgx.BeginFunc(ctx, to, func(tx pgx.Tx) error {
		if err := pgschema.Lock(ctx, tx); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "SET LOCAL cqlpg.ddl = 'on'"); err != nil {
			return err
		}
		if force {
			if err := pgschema.WipeShard(ctx, tx); err != nil {
				return err
			}
		}
		var keyspaces int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM cqlpg.keyspaces`).Scan(&keyspaces); err != nil {
			return err
		}
		if keyspaces > 0 {
			return fmt.Errorf("the shard already holds %d keyspaces: give an empty database, or --force to wipe a shard a join cut short left behind", keyspaces)
		}
		if err := pgschema.CopySchema(ctx, tx, schema); err != nil {
			return err
		}
		if err := pgschema.WriteRoles(ctx, tx, roles); err != nil {
			return err
		}
		node, err := pgschema.ClaimNode(ctx, tx, &pgschema.Node{HostID: m.HostID, Name: m.Name, Datacenter: m.Datacenter,
			Rack: m.Rack, Tokens: m.Tokens})
		if err != nil {
			return err
		}
		if node.HostID != m.HostID {
			return errors.New("the shard already has an identity: give an empty database, or --force")
		}
		_, err = pgschema.SaveMembers(ctx, tx, all, version+1)
		return err
	})
	if err != nil {
		return fmt.Errorf("the new shard: %w", err)
	}
	for i, tx := range txs {
		if tx == nil {
			continue
		}
		if _, err := pgschema.SaveMembers(ctx, tx, all, version+1); err != nil {
			return err
		}
		if err := tx.Commit(ctx); err != nil {
			return fmt.Errorf("member %s: %w", all[i].Name, err)
		}
		txs[i] = nil
	}
	return nil
}
