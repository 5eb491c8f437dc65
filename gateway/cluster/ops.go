package cluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/sharding"
)

// Every topology operation is one movement of ranges, taken as Join's
// comment says: the members record the movement (a shard joining, one
// leaving, or both for a replacement) at a new ring version; once every
// live gateway serves it, writes reach the replicas the movement adds as
// pending ones, and the ranges they gain are streamed to them; then the
// members record the ring after the movement (the joining normal, the
// leaving gone) at the next version. At most one movement runs at a time,
// and one cut short is resumed by running its command again, or rolled
// back by Abort.

// currentMembers returns the members at the newest ring version any
// reachable member records, brings every reachable member that records
// an older one up to it (a step cut short between members), and has this
// cluster serve it.
func (c *Cluster) currentMembers(ctx context.Context) ([]pgschema.Member, int64, error) {
	if _, err := c.CheckRing(ctx); err != nil {
		return nil, 0, err
	}
	control := c.Control()
	var members []pgschema.Member
	var version int64
	for _, pool := range control {
		qctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		ms, v, err := pgschema.LoadMembers(qctx, pool)
		cancel()
		if err == nil && v > version {
			members, version = ms, v
		}
	}
	if members == nil {
		return nil, 0, errors.New("no member can be reached")
	}
	for _, pool := range control {
		qctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		pgx.BeginFunc(qctx, pool, func(tx pgx.Tx) error {
			_, err := pgschema.SaveMembers(qctx, tx, members, version)
			return err
		})
		cancel()
	}
	if _, err := c.CheckRing(ctx); err != nil {
		return nil, 0, err
	}
	if c.RingVersion() != version {
		return nil, 0, fmt.Errorf("the members record ring version %d, and the gateway serves %d", version, c.RingVersion())
	}
	return members, version, nil
}

// memberUp reports whether member i of the ring served answers within two
// seconds.
func (c *Cluster) memberUp(ctx context.Context, i int) bool {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	return c.Control()[i].Ping(ctx) == nil
}

// needUp refuses an operation (named what) while a member is down, but
// the one numbered except.
func (c *Cluster) needUp(ctx context.Context, except int, what string) error {
	for i, s := range c.Topology().Shards {
		if i != except && !c.memberUp(ctx, i) {
			return fmt.Errorf("shard %s is down: %s needs every member up (replace a dead shard with cqlpg shard replace, or drop it with cqlpg shard remove)",
				s.Info.Name, what)
		}
	}
	return nil
}

// Operation describes the topology operation the members record, or
// returns "" when none is in progress.
func Operation(members []pgschema.Member) string {
	var joining, leaving []pgschema.Member
	for _, m := range members {
		switch m.State {
		case pgschema.MemberJoining:
			joining = append(joining, m)
		case pgschema.MemberLeaving:
			leaving = append(leaving, m)
		}
	}
	switch {
	case len(joining) == 1 && len(leaving) == 1:
		return fmt.Sprintf("%s replaces %s (cqlpg shard replace %s URL)", joining[0].Name, leaving[0].Name, leaving[0].Name)
	case len(joining) == 1 && len(leaving) == 0:
		return fmt.Sprintf("%s joins (cqlpg shard add)", joining[0].Name)
	case len(joining) == 0 && len(leaving) == 1:
		return fmt.Sprintf("%s leaves (cqlpg shard decommission %s, or cqlpg shard remove %s if it is down)",
			leaving[0].Name, leaving[0].Name, leaving[0].Name)
	case len(joining)+len(leaving) > 0:
		var names []string
		for _, m := range append(joining, leaving...) {
			names = append(names, m.Name+" "+m.State)
		}
		return strings.Join(names, ", ")
	}
	return ""
}

// inProgress refuses a second topology operation while one runs, naming
// it and how to resume or roll it back, and one while a keyspace's
// replication change streams.
func (c *Cluster) inProgress(members []pgschema.Member) error {
	if op := Operation(members); op != "" {
		return fmt.Errorf("a topology operation is in progress: %s; run its command again to resume it, or cqlpg shard abort to roll it back", op)
	}
	return c.replicationChanging()
}

// replicationChanging refuses while a keyspace's replication change
// streams (its gateways do it; it ends by itself).
func (c *Cluster) replicationChanging() error {
	if err := c.Reload(context.Background()); err != nil {
		return err
	}
	for _, ks := range c.Schema().Keyspaces() {
		if ks.ReplicationFrom != nil {
			return fmt.Errorf("the replication of keyspace %s changes, and the gateways stream it to its new replicas: wait until they are done (cqlpg_stream_running)", ks.Name)
		}
	}
	return nil
}

// member returns the members (currentMembers), the ring version and the
// index of the member named name.
func (c *Cluster) member(ctx context.Context, name string) ([]pgschema.Member, int64, int, error) {
	members, version, err := c.currentMembers(ctx)
	if err != nil {
		return nil, 0, -1, err
	}
	for i, m := range members {
		if m.Name == name {
			return members, version, i, nil
		}
	}
	return nil, 0, -1, fmt.Errorf("no member is named %s (see cqlpg shard status)", name)
}

// move takes the movement members record at version through: it streams
// the ranges replicas gain (from the replicas that hold them, but lost),
// then records the ring after the movement at version+1.
func (c *Cluster) move(ctx context.Context, members []pgschema.Member, version int64, lost int, o OpOptions) error {
	if err := c.switchRing(ctx, version, o); err != nil {
		return err
	}
	topo := c.Topology()
	if err := o.Stream(ctx, topo, lost); err != nil {
		return fmt.Errorf("streaming: %w (run the command again to resume, or cqlpg shard abort to roll back)", err)
	}
	// The last step holds counter updates and lightweight transactions,
	// which must not run on two rings at once; once no gateway runs one
	// on the ring before, the counters and the ballots move.
	if !topo.Held {
		if err := c.holdWrites(ctx, version+1, lost, o); err != nil {
			return fmt.Errorf("%w (run the command again to resume, or cqlpg shard abort to roll back)", err)
		}
		version++
		o.progress("counter updates and lightweight transactions wait from ring version %d", version)
	}
	held := time.Now()
	topo = c.Topology()
	if n, err := c.streamBallots(ctx, topo, lost); err != nil {
		return fmt.Errorf("streaming the Paxos state of lightweight transactions: %w (run the command again to resume)", err)
	} else if n > 0 {
		o.progress("streamed %d partitions' Paxos states", n)
	}
	if tables := c.CounterTables(""); len(tables) > 0 {
		n, err := c.copyCounters(ctx, topo, tables, lost)
		if err != nil {
			return fmt.Errorf("copying counters: %w (run the command again to resume, or cqlpg shard abort to roll back)", err)
		}
		o.progress("copied %d counter rows", n)
	}
	var after []pgschema.Member
	for _, m := range members {
		switch m.State {
		case pgschema.MemberLeaving:
			o.progress("%s leaves the ring at ring version %d", m.Name, version+1)
		case pgschema.MemberJoining:
			m.State = pgschema.MemberNormal
			o.progress("%s is a normal member at ring version %d", m.Name, version+1)
			fallthrough
		default:
			after = append(after, m)
		}
	}
	// A member that left records the cluster without it too, so that its
	// catalog sends a gateway given its address to the members.
	if err := c.saveMembers(ctx, after, version+1, lost); err != nil {
		return err
	}
	if err := c.switchRing(ctx, version+1, o); err != nil {
		return err
	}
	o.progress("counter updates and lightweight transactions waited up to %s", time.Since(held).Round(time.Millisecond))
	// Gateways that had not switched yet may have hinted writes for a
	// member gone since the members recorded it.
	for _, pool := range c.Control() {
		if err := pgschema.DropFormerHints(ctx, pool, after); err != nil {
			return err
		}
	}
	return nil
}

// saveMembers records members at version on every member of the ring
// served but lost, each in its own transaction.
func (c *Cluster) saveMembers(ctx context.Context, members []pgschema.Member, version int64, lost int) error {
	err := c.onMembers(ctx, func(i int) bool { return i == lost }, func(tx pgx.Tx) error {
		_, err := pgschema.SaveMembers(ctx, tx, members, version)
		return err
	})
	if err != nil {
		return fmt.Errorf("record the members at ring version %d: %w (run the command again to resume)", version, err)
	}
	return nil
}

// onMembers runs f in a transaction on every member of the ring served
// that skip does not leave out, one after the other, and returns their
// failures, each named by its member.
func (c *Cluster) onMembers(ctx context.Context, skip func(i int) bool, f func(tx pgx.Tx) error) error {
	topo, control := c.Snapshot()
	var errs []error
	for i, pool := range control {
		if skip(i) {
			continue
		}
		if err := pgx.BeginFunc(ctx, pool, f); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", topo.Shards[i].Info.Name, err))
		}
	}
	return errors.Join(errs...)
}

// switchRing has this cluster serve ring version and waits until every
// live gateway does.
func (c *Cluster) switchRing(ctx context.Context, version int64, o OpOptions) error {
	c.notifyRing(ctx, version)
	if _, err := c.CheckRing(ctx); err != nil {
		return err
	}
	if c.RingVersion() < version {
		return errors.New("the members do not record the new ring")
	}
	return c.AwaitRing(ctx, version, o.GatewayTimeout, o.BarrierLimit)
}

// Decommission takes the member named name out of the ring: it becomes a
// leaving member, the replicas that take its ranges over receive them
// (from it and the other replicas, merged), and it leaves. Its data stays
// where it is. Unless force, it refuses when the members left would be
// fewer than a keyspace's replication factor in a datacenter.
func (c *Cluster) Decommission(ctx context.Context, name string, force bool, o OpOptions) error {
	members, version, i, err := c.member(ctx, name)
	if err != nil {
		return err
	}
	switch members[i].State {
	case pgschema.MemberLeaving:
		o.progress("resuming the decommission of %s", name)
	case pgschema.MemberJoining:
		return fmt.Errorf("%s is joining: data is moving to it; finish the join or roll it back with cqlpg shard abort", name)
	default:
		if err := c.inProgress(members); err != nil {
			return err
		}
		if len(members) == 1 {
			return fmt.Errorf("%s is the only member", name)
		}
		if err := c.needUp(ctx, -1, "a decommission"); err != nil {
			return err
		}
		if !force {
			if err := c.checkReplication(members, i); err != nil {
				return err
			}
		}
		members[i].State = pgschema.MemberLeaving
		if err := c.saveMembers(ctx, members, version+1, -1); err != nil {
			return err
		}
		version++
		o.progress("%s is leaving at ring version %d", name, version)
	}
	return c.move(ctx, members, version, -1, o)
}

// checkReplication refuses to take member out when the members left in
// its datacenter would be fewer than a keyspace's replication factor
// there, with Cassandra's words.
func (c *Cluster) checkReplication(members []pgschema.Member, out int) error {
	inDC := map[string]int{}
	total := 0
	for _, m := range members {
		if m.State == pgschema.MemberNormal {
			inDC[m.Datacenter]++
			total++
		}
	}
	dc := members[out].Datacenter
	for _, ks := range c.Schema().Keyspaces() {
		if ks.Virtual || pgschema.IsSystemKeyspace(ks.Name) {
			continue
		}
		rep, n := ks.Replication, total
		rf := rep.Factor
		if rep.Class == sharding.NetworkTopologyStrategyClass {
			n = inDC[dc]
			if f, ok := rep.DCFactors[dc]; ok {
				rf = f
			}
		}
		if rf >= n && rf > 0 {
			return fmt.Errorf("Not enough live nodes to maintain replication factor in keyspace %s (RF = %d, N = %d). Perform a forceful decommission to ignore.",
				ks.Name, rf, n)
		}
	}
	return nil
}

// Remove takes the member named name, which must be down, out of the
// ring: the replicas that take its ranges over receive them from the
// replicas that hold them and are up, and it is dropped from the members.
func (c *Cluster) Remove(ctx context.Context, name string, o OpOptions) error {
	members, version, i, err := c.member(ctx, name)
	if err != nil {
		return err
	}
	if c.memberUp(ctx, i) {
		return fmt.Errorf("%s is up: take a live shard out with cqlpg shard decommission %s", name, name)
	}
	switch members[i].State {
	case pgschema.MemberLeaving:
		o.progress("resuming the removal of %s", name)
	case pgschema.MemberJoining:
		return fmt.Errorf("%s is joining: roll the join back with cqlpg shard abort", name)
	default:
		if err := c.inProgress(members); err != nil {
			return err
		}
		if err := c.needUp(ctx, i, "a removal"); err != nil {
			return err
		}
		members[i].State = pgschema.MemberLeaving
		if err := c.saveMembers(ctx, members, version+1, i); err != nil {
			return err
		}
		version++
		o.progress("%s is leaving at ring version %d; its ranges stream from the replicas up", name, version)
	}
	return c.move(ctx, members, version, i, o)
}

// Replace has the shard at url take the tokens of the member named name,
// which must be down: it joins as the others do, holding the dead one's
// tokens once it is normal, and receives their ranges from the replicas
// up; the dead member is then dropped.
func (c *Cluster) Replace(ctx context.Context, name, url string, o JoinOptions) error {
	members, version, dead, err := c.member(ctx, name)
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
	case joiner >= 0 && members[joiner].State == pgschema.MemberJoining && members[dead].State == pgschema.MemberLeaving:
		o.progress("resuming the replacement of %s by %s", name, members[joiner].Name)
	case joiner >= 0:
		return fmt.Errorf("the shard is already a member of the cluster, as %s", members[joiner].Name)
	case c.memberUp(ctx, dead):
		return fmt.Errorf("Cannot replace a live node %s: take it out with cqlpg shard decommission %s, or stop it first", name, name)
	case members[dead].State != pgschema.MemberNormal:
		return c.inProgress(members)
	default:
		if err := c.checkJoin(ctx, members, to, o.Force, dead); err != nil {
			return err
		}
		dc, rack := members[dead].Datacenter, members[dead].Rack
		m := c.newMember(members, o.Name, dc, rack)
		m.Tokens = slices.Clone(members[dead].Tokens)
		members[dead].State = pgschema.MemberLeaving
		all := append(slices.Clone(members), m)
		if err := c.admit(ctx, all, version, url, to, o.Force); err != nil {
			return err
		}
		members, version = all, version+1
		o.progress("%s takes the catalog and the tokens of %s, and joins at ring version %d", m.Name, name, version)
	}
	return c.move(ctx, members, version, dead, o.OpOptions)
}

// Abort rolls back the topology operation in progress: joining members
// are dropped (their databases keep what they received; add them again
// with --force), leaving ones are normal again. It returns what it rolled
// back.
func (c *Cluster) Abort(ctx context.Context, o OpOptions) (string, error) {
	members, version, err := c.currentMembers(ctx)
	if err != nil {
		return "", err
	}
	op := Operation(members)
	if op == "" {
		return "", errors.New("no topology operation is in progress")
	}
	var back []pgschema.Member
	for _, m := range members {
		switch m.State {
		case pgschema.MemberJoining:
			continue
		case pgschema.MemberLeaving:
			m.State = pgschema.MemberNormal
		}
		back = append(back, m)
	}
	err = c.onMembers(ctx, func(i int) bool { return members[i].State == pgschema.MemberJoining || !c.memberUp(ctx, i) },
		func(tx pgx.Tx) error {
			_, err := pgschema.SaveMembers(ctx, tx, back, version+1)
			return err
		})
	if err != nil {
		return "", fmt.Errorf("record the members at ring version %d: %w (run the command again)", version+1, err)
	}
	return op, c.switchRing(ctx, version+1, o)
}

// streamBallots gives the shards that gain ranges in topo's movement the
// Paxos state (cqlpg.paxos) that the ranges' replicas, but the one
// leaving, hold, merged into theirs: the latest promise, accepted
// proposal and commit of each partition (paxosMergeSQL, which any order
// of copies comes to the same). It runs while lightweight transactions
// are held, so no round is in flight: the shards that become replicas
// then answer a prepare as the replicas they replace would, and a
// proposal a round left half done is found and finished. It copies a
// page at a time, and returns the states copied.
func (c *Cluster) streamBallots(ctx context.Context, topo *sharding.Topology, lost int) (int64, error) {
	// One copy per range, source and destination, whatever keyspaces
	// move the range alike.
	type rangeCopy struct {
		r        sharding.Range
		from, to int
	}
	done := map[rangeCopy]bool{}
	control := c.Control()
	var sent int64
	for _, ks := range c.Schema().Keyspaces() {
		for _, m := range topo.Movements(ks.Replication) {
			for _, to := range m.To {
				for _, from := range m.From {
					cp := rangeCopy{m.Range, from, to}
					if slices.Contains(m.From, to) || from == lost || done[cp] {
						continue
					}
					done[cp] = true
					n, err := copyPaxos(ctx, control[from], control[to], m.Range)
					sent += n
					if err != nil {
						return sent, fmt.Errorf("%s to %s: %w", topo.Shards[from].Info.Name, topo.Shards[to].Info.Name, err)
					}
				}
			}
		}
	}
	return sent, nil
}

// paxosPage is how many partitions' Paxos states one copy statement moves.
const paxosPage = 500

// copyPaxos merges the Paxos state from holds in the token range r into
// to's, a page at a time, and returns the states copied.
func copyPaxos(ctx context.Context, from, to *pgxpool.Pool, r sharding.Range) (int64, error) {
	var sent int64
	for _, bounds := range r.Inclusive() {
		// The page's last row, where the next starts: token, table, digest;
		// nil before the first page.
		var after struct {
			token  *int64
			table  *string
			digest []byte
		}
		for {
			rows, err := from.Query(ctx, `SELECT table_id::text, key, digest, token, promised, promised_id, accepted,
				proposal, committed, commit, expires FROM cqlpg.paxos
				WHERE token BETWEEN $1 AND $2 AND ($3::bigint IS NULL OR (token, table_id, digest) > ($3, $4::uuid, $5))
				ORDER BY token, table_id, digest LIMIT $6`,
				bounds[0], bounds[1], after.token, after.table, after.digest, paxosPage)
			if err != nil {
				return sent, err
			}
			var b paxosBatch
			var p paxosState
			_, err = pgx.ForEachRow(rows, []any{&p.table, &p.key, &p.digest, &p.token, &p.promised, &p.promisedID,
				&p.accepted, &p.proposal, &p.committed, &p.commit, &p.expires}, func() error {
				b.add(&p)
				token, table := p.token, p.table
				after.token, after.table, after.digest = &token, &table, p.digest
				return nil
			})
			if err != nil {
				return sent, err
			}
			if len(b.table) == 0 {
				break
			}
			if _, err := to.Exec(ctx, paxosMergeSQL, b.table, b.key, b.token, b.promised, b.promisedID, b.accepted,
				b.proposal, b.committed, b.commit, b.expires); err != nil {
				return sent, err
			}
			sent += int64(len(b.table))
			if len(b.table) < paxosPage {
				break
			}
		}
	}
	return sent, nil
}

// paxosState is a partition's Paxos state on one replica.
type paxosState struct {
	table                       string
	key, digest                 []byte
	token, promised, promisedID int64
	accepted, committed         *int64
	proposal, commit            []byte
	expires                     int64
}

// paxosBatch is Paxos states as the columns paxosMergeSQL takes.
type paxosBatch struct {
	table                                []string
	key, proposal, commit                [][]byte
	token, promised, promisedID, expires []int64
	accepted, committed                  []*int64
}

// add appends p, whose nullable ballots are copied: a scan may reuse them.
func (b *paxosBatch) add(p *paxosState) {
	own := func(v *int64) *int64 {
		if v == nil {
			return nil
		}
		c := *v
		return &c
	}
	b.table, b.key, b.token = append(b.table, p.table), append(b.key, p.key), append(b.token, p.token)
	b.promised, b.promisedID = append(b.promised, p.promised), append(b.promisedID, p.promisedID)
	b.accepted, b.proposal = append(b.accepted, own(p.accepted)), append(b.proposal, p.proposal)
	b.committed, b.commit = append(b.committed, own(p.committed)), append(b.commit, p.commit)
	b.expires = append(b.expires, p.expires)
}

// paxosMergeSQL merges Paxos states into a shard's, keeping the later of
// each promise, accepted proposal and commit.
const paxosMergeSQL = `INSERT INTO cqlpg.paxos AS p (table_id, key, token, promised, promised_id, accepted, proposal,
	committed, commit, expires)
SELECT * FROM unnest($1::uuid[], $2::bytea[], $3::bigint[], $4::bigint[], $5::bigint[], $6::bigint[], $7::bytea[],
	$8::bigint[], $9::bytea[], $10::bigint[])
ON CONFLICT (table_id, digest) DO UPDATE SET
	promised = GREATEST(p.promised, excluded.promised),
	promised_id = CASE WHEN excluded.promised > p.promised THEN excluded.promised_id ELSE p.promised_id END,
	accepted = CASE WHEN excluded.accepted > COALESCE(p.accepted, 0) THEN excluded.accepted ELSE p.accepted END,
	proposal = CASE WHEN excluded.accepted > COALESCE(p.accepted, 0) THEN excluded.proposal ELSE p.proposal END,
	committed = CASE WHEN excluded.committed > COALESCE(p.committed, 0) THEN excluded.committed ELSE p.committed END,
	commit = CASE WHEN excluded.committed > COALESCE(p.committed, 0) THEN excluded.commit ELSE p.commit END,
	expires = GREATEST(p.expires, excluded.expires)`

// notifyRing tells the gateways, through every member up, that the
// members record ring version; one that misses it finds it at its next
// check.
func (c *Cluster) notifyRing(ctx context.Context, version int64) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	for _, pool := range c.Control() {
		pool.Exec(ctx, NotifySQL, RingChannel, strconv.FormatInt(version, 10))
	}
}
