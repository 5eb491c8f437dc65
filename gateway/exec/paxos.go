package exec

import (
	"bytes"
	"context"
	"errors"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/primitive"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/cqlpg/cqlpg/gateway/repair"
	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/sharding"
)

// Lightweight transactions run Cassandra's Paxos on each partition, with
// the gateway as proposer and every replica of the partition, natural or
// pending, as an acceptor whose state is its row of cqlpg.paxos (the
// migration that makes it states the acceptor's rules). Any quorum of the
// replicas up serves, and gateways that contend are ordered by their
// ballots, never by a lock. One round:
//
//  1. Prepare: a new ballot goes to every replica up, with the reads of
//     what the conditions test in the same transaction (Paxos v2's read in
//     the prepare), and the round waits for a quorum of promises. A
//     refusal is contention: back off, then take a ballot later than any
//     seen.
//  2. An accepted proposal later than every commit the quorum knows was
//     left half done by another round: it is proposed again under this
//     ballot and committed, and the round starts over. Promisers that miss
//     the latest commit get it, and the round starts over.
//  3. The quorum's reads, equal or reconciled by read repair, are the state
//     the conditions see.
//  4. Propose: the writes, or nothing when a condition fails and for a
//     SERIAL read, go to every replica up; a quorum must accept. An empty
//     proposal accepted by a quorum keeps a value that a minority accepted
//     from appearing after a read that did not see it (CASSANDRA-12126).
//     When only some accept, the outcome is unknown: a CAS write timeout.
//  5. Commit: every replica applies the writes and records the commit in
//     one transaction; the round waits for the request's consistency
//     level, and replicas down get hints.
//
// Writes carry the ballot's time as their timestamp. A replica promises
// only ballots later than any it has seen, so a partition's commits take
// timestamps in the order they are decided, whatever the gateways' clocks
// say. A proposal finished by another round keeps its own timestamps.

// ballot is a Paxos ballot: a time in microseconds, which orders ballots,
// and a random id that tells two of the same time apart.
type ballot struct{ time, id int64 }

// newBallot returns a ballot later than every timestamp this gateway has
// given out, from its clock (skewed as a test asks: Hooks.ClockSkew), and
// at least min. A minimum learned from other gateways is not fed back
// into the clock (CASSANDRA-11991).
func (px *paxos) newBallot(min int64) ballot {
	now := time.Now().Add(time.Duration(px.e.env.Hooks.ClockSkew.Load()))
	return ballot{time: max(ServerTimestamp(now), min), id: rand.Int64()}
}

// The acceptor's statements (pgschema.Paxos*SQL).
var (
	stmtPaxosPrepare = sharding.NewStatement(pgschema.PaxosPrepareSQL, []uint32{pgschema.OIDUUID, pgschema.OIDBytea,
		pgschema.OIDInt8, pgschema.OIDInt8, pgschema.OIDInt8, pgschema.OIDInt8})
	stmtPaxosPropose = sharding.NewStatement(pgschema.PaxosProposeSQL, []uint32{pgschema.OIDUUID, pgschema.OIDBytea,
		pgschema.OIDInt8, pgschema.OIDInt8, pgschema.OIDInt8, pgschema.OIDBytea, pgschema.OIDInt8})
	stmtPaxosAccept = sharding.NewStatement(pgschema.PaxosAcceptSQL, []uint32{pgschema.OIDUUID, pgschema.OIDBytea,
		pgschema.OIDInt8, pgschema.OIDInt8, pgschema.OIDInt8, pgschema.OIDBytea, pgschema.OIDInt8})
	stmtPaxosCommit = sharding.NewStatement(pgschema.PaxosCommitSQL, []uint32{pgschema.OIDUUID, pgschema.OIDBytea,
		pgschema.OIDInt8, pgschema.OIDInt8, pgschema.OIDBytea, pgschema.OIDInt8})
)

// paxos is one lightweight transaction's Paxos on one partition.
type paxos struct {
	e     *Execution
	table *pgschema.Table
	// key is the partition key, as the token hashes it; token its token.
	key   []byte
	token int64
	// replicas are the electorate, natural then pending; pending counts
	// the pending ones. targets are those asked: the replicas up that
	// count for the serial level.
	replicas, targets []int
	pending           int
	// level is the serial consistency level; commit the level the commit
	// waits for.
	level, commit sharding.Consistency
	// read is set for a SERIAL read, whose timeouts are read timeouts.
	read bool
	// reads are what the conditions test, read with each prepare;
	// readSteps their statements, bound once.
	reads     []casRead
	readSteps []sharding.Step
	// lifetime is how long the state outlives a ballot, in microseconds.
	lifetime int64

	b           ballot
	minTime     int64
	contentions int
	// propose is when the rounds give up (cas_contention_timeout), write
	// when the commit does; both count from the request's arrival.
	propose, write time.Time
	// quorum are the replicas that promised b, and found what the
	// conditions' reads found on them.
	quorum []int
	found  [][][]byte
	// mine are the round's own proposals that replicas split on, oldest
	// first.
	mine []proposal
}

// newPaxos readies Paxos on the partition of t keyed partition, on its
// replicas in placement, refusing it as Unavailable when too few are up
// for the serial level.
func (e *Execution) newPaxos(t *pgschema.Table, placement *sharding.Placement, partition [][]byte,
	level sharding.Consistency) (*paxos, error) {
	token := sharding.KeyToken(partition)
	replicas, pending, err := casReplicas(placement, token, level)
	if err != nil {
		return nil, err
	}
	topo := e.topo
	acks := topo.RequireWrite(level, replicas, pending, e.env.Config.Datacenter)
	if err := topo.Available(&acks, replicas); err != nil {
		return nil, err
	}
	px := &paxos{e: e, table: t, key: sharding.AppendKey(nil, partition), token: int64(token),
		replicas: replicas, pending: pending, level: level, commit: sharding.Consistency(e.params.Consistency)}
	local := level == sharding.LocalSerial && slices.ContainsFunc(replicas, func(r int) bool {
		return topo.Shards[r].Info.DC == e.env.Config.Datacenter
	})
	for _, r := range replicas {
		if topo.Shards[r].Pool.Alive() && (!local || topo.Shards[r].Info.DC == e.env.Config.Datacenter) {
			px.targets = append(px.targets, r)
		}
	}
	px.lifetime = max(repair.BallotLifetime, time.Duration(tableGCGrace(t))*time.Second).Microseconds()
	cfg := &e.env.Config
	px.propose = e.Now.Add(cfg.CASContentionTimeout)
	px.write = e.Now.Add(max(cfg.CASContentionTimeout, cfg.WriteTimeout))
	return px, nil
}

// paxosStripes is how many locks a gateway's Paxos rounds share.
const paxosStripes = 1024

// lock waits until no other round of this gateway runs on a partition
// that shares the round's stripe, as Cassandra's coordinators serialize
// their own rounds on one key: contention is then left to rounds of other
// gateways. It gives up, as contention does, at the round's deadline, and
// returns the function that lets the next round in.
func (px *paxos) lock(ctx context.Context) (func(), error) {
	v := px.e.env
	v.paxosLocksOnce.Do(func() {
		for i := range v.paxosLocks {
			v.paxosLocks[i] = make(chan struct{}, 1)
		}
	})
	h := fnv.New64a()
	h.Write(px.table.ID[:])
	h.Write(px.key)
	l := v.paxosLocks[h.Sum64()%paxosStripes]
	select {
	case l <- struct{}{}:
		return func() { <-l }, nil
	default:
	}
	timer := time.NewTimer(time.Until(px.propose))
	defer timer.Stop()
	select {
	case l <- struct{}{}:
		return func() { <-l }, nil
	case <-timer.C:
	case <-ctx.Done():
	}
	return nil, px.timeout(0, px.quorumSize(), ctx.Err())
}

// need returns a fresh count of the acknowledgements a quorum of the
// electorate needs.
func (px *paxos) need() sharding.Acks {
	return px.e.topo.RequireWrite(px.level, px.replicas, px.pending, px.e.env.Config.Datacenter)
}

// quorumSize is how many promises or accepts a round needs.
func (px *paxos) quorumSize() int {
	a := px.need()
	return a.Need()
}

// run runs rounds until one decides: decide is given what the
// conditions' reads found under a promised ballot and returns the writes
// to propose, nil for none, with the ballot's time as their timestamp.
// With writes, run returns once they are committed at the commit level.
//
// A proposal of its own that some replicas accepted, but not a quorum,
// may yet be finished by another round, or never: run tries again with a
// later ballot, which tells. The proposal is decided when that round finds
// it committed, or finishes it; undone when nothing was accepted after it,
// and the round then reads and decides anew. When a later proposal was
// accepted, other than its own, the outcome is unknown: a CAS write
// timeout, as Cassandra answers every such split.
func (px *paxos) run(ctx context.Context, decide func(ts int64, found [][][]byte) ([]sharding.Step, error)) error {
	unlock, err := px.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	for {
		if done, err := px.begin(ctx); done || err != nil {
			return err
		}
		steps, err := decide(px.b.time, px.found)
		if err != nil {
			return err
		}
		var value []byte
		if steps != nil {
			value = appendBatchRecord(nil, &batchRecord{parts: []batchPart{{steps: steps}}})
		}
		if value != nil && len(px.replicas) == 1 && len(px.targets) == 1 {
			if decided, err := px.acceptAndCommit(ctx, value, steps); decided || err != nil {
				return err
			}
			if err := px.backoff(ctx); err != nil {
				return err
			}
			continue
		}
		outcome, err := px.proposeValue(ctx, value)
		switch {
		case err != nil:
			return err
		case outcome == proposalSplit && value != nil:
			px.mine = append(px.mine, proposal{ballot: px.b.time, value: value})
		case outcome == proposalAccepted && value == nil:
			return nil
		case outcome == proposalAccepted:
			return px.commitValue(ctx, px.b.time, value, steps, px.commit, true)
		}
		if err := px.backoff(ctx); err != nil {
			return err
		}
	}
}

// proposal is a proposal of the round's own that only some replicas
// accepted.
type proposal struct {
	ballot int64
	value  []byte
}

// The outcomes of a proposal.
const (
	// proposalAccepted: a quorum accepted it.
	proposalAccepted = iota
	// proposalRefused: every replica asked answered, and refused it.
	proposalRefused
	// proposalSplit: not a quorum, but some accepted it or failed in a way
	// that may have.
	proposalSplit
)

// isMine reports whether value, accepted or committed at ballot b, is one
// of the round's own split proposals.
func (px *paxos) isMine(b int64, value []byte) bool {
	return slices.ContainsFunc(px.mine, func(p proposal) bool { return p.ballot <= b && bytes.Equal(p.value, value) })
}

// settle judges the round's own split proposals by what a quorum that
// promised a later ballot holds: mrc its latest commit, inProgress the
// latest proposal accepted after it, which is none of them. It reports
// whether one of them is the latest commit, and returns a CAS write
// timeout when their outcome cannot be told.
func (px *paxos) settle(mrc, inProgress *promise) (bool, error) {
	if mrc != nil && px.isMine(mrc.committed, mrc.commit) {
		return true, nil
	}
	latest := px.mine[len(px.mine)-1].ballot
	if mrc != nil && mrc.committed > latest || inProgress != nil && inProgress.accepted > latest {
		// Another value was decided or proposed after the round's own,
		// which may have been committed before it.
		return false, px.timeout(0, px.quorumSize(), nil)
	}
	return false, nil
}

// promise is a replica's answer to a prepare.
type promise struct {
	shard     int
	promised  bool
	seen      int64
	accepted  int64 // 0 for none
	proposal  []byte
	committed int64 // 0 for none
	commit    []byte
	reads     []firstRow
}

// Row takes the prepare's one row.
func (p *promise) Row(v [][]byte) error {
	if len(v) != 6 {
		return errors.New("paxos prepare: unexpected row")
	}
	p.promised = len(v[0]) == 1 && v[0][0] == 1
	p.seen, p.accepted, p.committed = int8Of(v[1]), int8Of(v[2]), int8Of(v[4])
	p.proposal, p.commit = bytes.Clone(v[3]), bytes.Clone(v[5])
	return nil
}

// begin takes a ballot that a quorum promises, finishing what earlier
// rounds left half done, and reads the conditions' state on the quorum.
func (px *paxos) begin(ctx context.Context) (done bool, err error) {
	for {
		px.b = px.newBallot(px.minTime)
		promises, err := px.prepare(ctx)
		if err != nil {
			return false, err
		}
		if promises == nil {
			if err := px.backoff(ctx); err != nil {
				return false, err
			}
			continue
		}
		// The latest commit the quorum knows, and the latest proposal
		// accepted after it, which a round left unfinished.
		var mrc, inProgress *promise
		for _, p := range promises {
			if p.committed != 0 && (mrc == nil || p.committed > mrc.committed) {
				mrc = p
			}
			if p.accepted != 0 && (inProgress == nil || p.accepted > inProgress.accepted) {
				inProgress = p
			}
		}
		if inProgress != nil && (inProgress.proposal == nil || mrc != nil && inProgress.accepted <= mrc.committed) {
			inProgress = nil
		}
		if len(px.mine) > 0 {
			if inProgress != nil && px.isMine(inProgress.accepted, inProgress.proposal) {
				if committed, err := px.finish(ctx, inProgress.proposal); committed || err != nil {
					return committed, err
				}
				continue
			}
			if done, err := px.settle(mrc, inProgress); done || err != nil {
				return done, err
			}
		}
		if inProgress != nil {
			if _, err := px.finish(ctx, inProgress.proposal); err != nil {
				return false, err
			}
			continue
		}
		if mrc != nil {
			var behind []int
			for _, p := range promises {
				if p.committed < mrc.committed {
					behind = append(behind, p.shard)
				}
			}
			if len(behind) > 0 {
				// A quorum must know the last commit before anything is
				// read or proposed.
				steps, err := decodeValue(mrc.commit)
				if err != nil {
					return false, err
				}
				if err := px.sendCommit(ctx, mrc.committed, mrc.commit, steps, behind); err != nil {
					return false, err
				}
				continue
			}
		}
		return false, px.readState(ctx, promises)
	}
}

// finish proposes again, under the current ballot, a proposal a round
// had a replica accept, and commits it when a quorum accepts, which it
// reports; it keeps its writes' timestamps.
func (px *paxos) finish(ctx context.Context, value []byte) (bool, error) {
	steps, err := decodeValue(value)
	if err != nil {
		return false, err
	}
	outcome, err := px.proposeValue(ctx, value)
	if err != nil {
		return false, err
	}
	if outcome != proposalAccepted {
		return false, px.backoff(ctx)
	}
	px.e.env.Metrics.PaxosReplays.Inc()
	// Its commit waits as a SERIAL read's data read would: for a quorum.
	level := sharding.Quorum
	if px.level == sharding.LocalSerial {
		level = sharding.LocalQuorum
	}
	if err := px.commitValue(ctx, px.b.time, value, steps, level, false); err != nil {
		return false, err
	}
	return true, nil
}

// decodeValue returns the writes of a proposal.
func decodeValue(value []byte) ([]sharding.Step, error) {
	rec, err := decodeBatchRecord(value)
	if err != nil {
		return nil, err
	}
	if len(rec.parts) != 1 {
		return nil, errBatchRecord
	}
	return rec.parts[0].steps, nil
}

// paxosCall is one phase's messages to some replicas.
type paxosCall struct {
	notify  chan *sharding.Op
	pending int
}

// send submits op(i) to each of shards, as transactions that answer on one
// channel. Each op runs to its end on its shard even when the phase stops
// waiting for it; none is reused.
func (px *paxos) send(phase string, shards []int, deadline time.Time,
	op func(i int, notify chan<- *sharding.Op) *sharding.Op) *paxosCall {
	c := &paxosCall{notify: make(chan *sharding.Op, len(shards)), pending: len(shards)}
	drop := px.e.env.Hooks.PaxosDrop.Load()
	for i, s := range shards {
		if drop != nil && (*drop)(phase, s) {
			c.pending--
			continue
		}
		o := op(i, c.notify)
		o.Deadline = deadline.Add(cancelGrace)
		px.e.topo.Shards[s].Pool.Submit(o)
	}
	return c
}

// next returns the next op that finished, or nil once deadline passes or
// ctx ends.
func (c *paxosCall) next(ctx context.Context, deadline time.Time) *sharding.Op {
	if c.pending == 0 {
		return nil
	}
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	select {
	case op := <-c.notify:
		c.pending--
		return op
	case <-timer.C:
	case <-ctx.Done():
	}
	return nil
}

// args returns the arguments that name the partition, then the ballot's
// time and id.
func (px *paxos) args(b ballot) [][]byte {
	return [][]byte{px.table.ID[:], px.key, int8Value(px.token), int8Value(b.time), int8Value(b.id)}
}

func (px *paxos) expires(ballotTime int64) []byte { return int8Value(ballotTime + px.lifetime) }

// prepare asks every target to promise px.b, reading the conditions'
// state with it, and returns the promises of a quorum, or nil when a
// replica refused: it raises the next ballot's minimum past what it saw.
func (px *paxos) prepare(ctx context.Context) ([]*promise, error) {
	if px.readSteps == nil {
		px.readSteps = make([]sharding.Step, len(px.reads))
		for i, rd := range px.reads {
			var err error
			if px.readSteps[i], err = rd.step(); err != nil {
				return nil, err
			}
		}
	}
	args := append(px.args(px.b), px.expires(px.b.time))
	answers := make([]promise, len(px.targets))
	call := px.send("prepare", px.targets, px.propose, func(i int, notify chan<- *sharding.Op) *sharding.Op {
		p := &answers[i]
		p.shard, p.reads = px.targets[i], make([]firstRow, len(px.reads))
		steps := append([]sharding.Step{{Stmt: stmtPaxosPrepare, Args: args, Formats: binaryParams}}, px.readSteps...)
		op := sharding.NewNotifyTx(steps, notify, i)
		op.Sinks = make([]sharding.RowSink, 1+len(px.reads))
		op.Sinks[0] = p
		for j := range p.reads {
			op.Sinks[1+j] = &p.reads[j]
		}
		return op
	})
	defer px.leave(call, nil)
	acks := px.need()
	var promises []*promise
	var failed error
	for !acks.Met() {
		op := call.next(ctx, px.propose)
		if op == nil {
			return nil, px.timeout(acks.Got(), acks.Need(), failed)
		}
		p := &answers[op.Tag]
		switch err := op.Err(); {
		case err != nil && permanent(err):
			return nil, err
		case err != nil:
			failed = err
			continue
		case !p.promised:
			px.minTime = max(px.minTime, p.seen+1)
			return nil, nil
		}
		promises = append(promises, p)
		acks.Ack(px.e.topo.Shards[p.shard].Info.DC)
	}
	px.quorum = px.quorum[:0]
	for _, p := range promises {
		px.quorum = append(px.quorum, p.shard)
	}
	return promises, nil
}

// step returns the statement of a read, its values bound: the statement
// compiled with the plan it belongs to (Statement.condReads).
func (rd casRead) step() (sharding.Step, error) {
	var args argBuffer
	if err := args.build(rd.e, rd.read.Params, rd.args); err != nil {
		return sharding.Step{}, err
	}
	stmt := rd.e.St.condReads[rd.read]
	if stmt == nil {
		return sharding.Step{}, errors.New("lwt read: statement not compiled with its plan")
	}
	return sharding.Step{Stmt: stmt, Args: args.args, Formats: binaryParams}, nil
}

// readState makes the state the conditions see from the reads the
// promisers sent: when they differ, the quorum is repaired and read again.
func (px *paxos) readState(ctx context.Context, promises []*promise) error {
	px.found = make([][][]byte, len(px.reads))
	agree := true
	for i := range px.reads {
		px.found[i] = promises[0].reads[i].row
		for _, p := range promises[1:] {
			agree = agree && slices.EqualFunc(p.reads[i].row, px.found[i], bytes.Equal)
		}
	}
	if agree || len(px.reads) == 0 {
		return nil
	}
	px.e.env.Metrics.ReadRepairs.Inc()
	rctx, cancel := context.WithDeadline(ctx, px.propose)
	defer cancel()
	if err := repair.PartitionOn(rctx, px.e.env.Cluster.Topology(), px.table, px.token, px.quorum); err != nil {
		if errors.Is(err, repair.ErrCounter) {
			return nil
		}
		if rctx.Err() != nil || !permanent(err) {
			return px.timeout(len(px.quorum)-1, len(px.quorum), err)
		}
		return err
	}
	for i, step := range px.readSteps {
		var row firstRow
		op := sharding.NewOp(step.Stmt, step.Args, step.Formats, &row)
		op.Deadline = px.propose.Add(cancelGrace)
		px.e.topo.Shards[px.quorum[0]].Pool.Submit(op)
		if err := op.Wait(rctx); err != nil {
			if rctx.Err() != nil {
				px.e.abandon() // the op may still read its arguments
			}
			if permanent(err) {
				return err
			}
			return px.timeout(len(px.quorum)-1, len(px.quorum), err)
		}
		px.found[i] = row.row
	}
	return nil
}

// proposeValue asks every target to accept value (nil for an empty
// proposal) at px.b, and tells whether a quorum did, every replica
// refused, or the replicas split; when the round's time runs out first,
// the outcome is unknown: a CAS write timeout.
func (px *paxos) proposeValue(ctx context.Context, value []byte) (int, error) {
	args := append(px.args(px.b), value, px.expires(px.b.time))
	answers := make([]firstRow, len(px.targets))
	call := px.send("propose", px.targets, px.propose, func(i int, notify chan<- *sharding.Op) *sharding.Op {
		return sharding.NewNotifyOp(stmtPaxosPropose, args, binaryParams, &answers[i], notify, i)
	})
	defer px.leave(call, nil)
	acks := px.need()
	split := call.pending < len(px.targets) // a message dropped may have arrived
	for !acks.Met() && call.pending > 0 {
		op := call.next(ctx, px.propose)
		if op == nil {
			return 0, px.timeout(acks.Got(), acks.Need(), nil)
		}
		switch err := op.Err(); {
		case err != nil && permanent(err):
			return 0, err
		case err != nil:
			split = true
		case isTrue(answers[op.Tag].row):
			acks.Ack(px.e.topo.Shards[px.targets[op.Tag]].Info.DC)
		}
	}
	switch {
	case acks.Met():
		return proposalAccepted, nil
	case split || acks.Got() > 0:
		return proposalSplit, nil
	}
	return proposalRefused, nil
}

// acceptAndCommit proposes value to the partition's only replica and
// commits it there in the same transaction: one replica's acceptance is
// a quorum's. It reports whether the replica accepted; a failure of the
// replica leaves the outcome unknown, a CAS write timeout.
func (px *paxos) acceptAndCommit(ctx context.Context, value []byte, steps []sharding.Step) (bool, error) {
	args := append(px.args(px.b), value, px.expires(px.b.time))
	all := append([]sharding.Step{{Stmt: stmtPaxosAccept, Args: args, Formats: binaryParams}},
		px.commitSteps(px.b.time, value, steps)...)
	call := px.send("propose", px.targets, px.write, func(i int, notify chan<- *sharding.Op) *sharding.Op {
		return sharding.NewNotifyTx(all, notify, i)
	})
	defer px.leave(call, nil)
	cctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), px.write)
	defer cancel()
	op := call.next(cctx, px.write)
	if op == nil {
		return false, px.timeout(0, 1, nil)
	}
	var pgErr *pgconn.PgError
	switch err := op.Err(); {
	case err == nil:
		return true, nil
	case errors.As(err, &pgErr) && pgErr.Code == pgschema.PaxosRefused:
		return false, nil
	case permanent(err):
		return false, err
	default:
		return false, px.timeout(0, 1, err)
	}
}

// isTrue reports whether row is one boolean true.
func isTrue(row [][]byte) bool { return len(row) == 1 && len(row[0]) == 1 && row[0][0] == 1 }

// commitValue commits value, decided at ballot time b: every replica
// applies its writes, steps, and records the commit, in one transaction,
// and replicas down get hints. It waits for level's acknowledgements
// (none for ANY) until the round's write deadline; a commit that does
// not meet it in time is a CAS write timeout at level. own tells the
// round's own value from one it finishes for another.
func (px *paxos) commitValue(ctx context.Context, b int64, value []byte, steps []sharding.Step,
	level sharding.Consistency, own bool) error {
	topo := px.e.topo
	acks := topo.RequireWrite(level, px.replicas, px.pending, px.e.env.Config.Datacenter)
	var up []int
	for _, r := range px.replicas {
		if topo.Shards[r].Pool.Alive() {
			up = append(up, r)
		} else {
			px.hintCommit(r, b, value, steps)
		}
	}
	cctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), px.write)
	defer cancel()
	call := px.sendCommitTo(b, value, steps, up)
	var failed error
	for level != sharding.Any && !acks.Met() && call.pending > 0 {
		op := call.next(cctx, px.write)
		if op == nil {
			break
		}
		shard := up[op.Tag]
		switch err := op.Err(); {
		case err == nil:
			acks.Ack(topo.Shards[shard].Info.DC)
		case permanent(err):
			return err
		default:
			failed = err
			px.hintCommit(shard, b, value, steps)
		}
	}
	if call.pending > 0 {
		// The replicas still committing are followed, and hinted if they
		// fail, after the client is answered.
		px.drainCommit(call, up, b, value, steps)
	}
	if level == sharding.Any || acks.Met() {
		return nil
	}
	if !own {
		return px.timeout(acks.Got(), acks.Need(), failed)
	}
	return &WriteTimeoutError{WriteType: primitive.WriteTypeCas, Consistency: level, Received: acks.Got(),
		BlockFor: acks.Need(), Contentions: px.contentions, err: failed}
}

// sendCommit sends a commit to shards and waits for each, until the
// round's propose deadline: the replicas of a quorum that missed it.
func (px *paxos) sendCommit(ctx context.Context, b int64, value []byte, steps []sharding.Step, shards []int) error {
	call := px.sendCommitTo(b, value, steps, shards)
	for call.pending > 0 {
		op := call.next(ctx, px.propose)
		if op == nil {
			px.drainCommit(call, shards, b, value, steps)
			return px.timeout(0, len(px.quorum), nil)
		}
		if err := op.Err(); err != nil {
			if permanent(err) {
				return err
			}
			px.hintCommit(shards[op.Tag], b, value, steps)
			px.drainCommit(call, shards, b, value, steps)
			return px.timeout(0, len(px.quorum), err)
		}
	}
	return nil
}

// commitSteps are the statements of a commit on one replica.
func (px *paxos) commitSteps(b int64, value []byte, steps []sharding.Step) []sharding.Step {
	args := [][]byte{px.table.ID[:], px.key, int8Value(px.token), int8Value(b), value, px.expires(b)}
	return append(slices.Clip(steps), sharding.Step{Stmt: stmtPaxosCommit, Args: args, Formats: binaryParams})
}

func (px *paxos) sendCommitTo(b int64, value []byte, steps []sharding.Step, shards []int) *paxosCall {
	all := px.commitSteps(b, value, steps)
	return px.send("commit", shards, px.write, func(i int, notify chan<- *sharding.Op) *sharding.Op {
		return sharding.NewNotifyTx(all, notify, i)
	})
}

// leave lets the ops of a phase still running finish after the round has
// moved on, handing each to done when set: their arguments may hold the
// request's values, so the execution is held until they have. Each
// finishes: the pools bound every round trip.
func (px *paxos) leave(call *paxosCall, done func(op *sharding.Op)) {
	if call.pending == 0 {
		return
	}
	px.e.hold()
	go func() {
		for ; call.pending > 0; call.pending-- {
			if op := <-call.notify; done != nil {
				done(op)
			}
		}
		px.e.Release()
	}()
}

// drainCommit follows the commits still running, hinting the replicas
// they fail on.
func (px *paxos) drainCommit(call *paxosCall, shards []int, b int64, value []byte, steps []sharding.Step) {
	px.leave(call, func(op *sharding.Op) {
		if err := op.Err(); err != nil && !permanent(err) {
			px.hintCommit(shards[op.Tag], b, value, steps)
		}
	})
}

// hintCommit keeps a commit for replica target, which is down or failed,
// on another replica that is up.
func (px *paxos) hintCommit(target int, b int64, value []byte, steps []sharding.Step) {
	topo := px.e.topo
	holder := hintHolder(topo, target, px.replicas)
	if holder < 0 {
		return
	}
	step := hintStep(topo.Shards[target].Info.HostID, px.commitSteps(b, value, steps), tableGCGrace(px.table))
	topo.Shards[holder].Pool.Submit(sharding.NewOp(step.Stmt, step.Args, step.Formats, nil))
	px.e.env.Metrics.HintsWritten.Inc()
}

// backoff counts a contention and waits before the next round, a random
// time that grows with the contentions, as Cassandra's Paxos v2 does; it
// gives up with a CAS write timeout when the wait would end past the
// round's deadline.
func (px *paxos) backoff(ctx context.Context) error {
	px.contentions++
	px.e.env.Metrics.PaxosContentions.Inc()
	limit := 10 * time.Millisecond
	for range min(px.contentions, 8) {
		limit = limit * 18 / 10
	}
	wait := rand.N(min(limit, 100*time.Millisecond))
	if time.Now().Add(wait).After(px.propose) {
		return px.timeout(0, px.quorumSize(), nil)
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return px.timeout(0, px.quorumSize(), ctx.Err())
	}
}

// timeout is the error of rounds that ran out of time with received of
// blockFor answers: a CAS write timeout, or for a SERIAL read a read
// timeout.
func (px *paxos) timeout(received, blockFor int, err error) error {
	if px.read {
		return &ReadTimeoutError{Consistency: px.level, Received: received, BlockFor: blockFor}
	}
	return &WriteTimeoutError{WriteType: primitive.WriteTypeCas, Consistency: px.level, Received: received,
		BlockFor: blockFor, Contentions: px.contentions, err: err}
}
