package exec

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/primitive"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/sharding"
	"github.com/cqlpg/cqlpg/translate"
)

// Lightweight transactions are serialized per partition by a transaction
// advisory lock on the partition's first replica, which every gateway
// takes there. Under the lock a conditional write reads the current state
// from that replica, checks its conditions, and when they hold writes every
// replica (the first inside the lock's transaction) before committing,
// which releases the lock. Its timestamp is the partition's next ballot
// (cqlpg.lwt_ballot), so the partition's conditional writes take effect in
// the order they apply whatever the clocks say. A SERIAL read takes the
// same lock and reads the first replica, which holds every committed
// conditional write.
//
// The first replica is the partition's serialization point and there is no
// failover: while it is down, conditional writes and serial reads of its
// partitions are unavailable. A write that fails on any replica is answered
// with an error and leaves the first replica unchanged; replicas it reached
// keep it.

// conditional runs a lightweight transaction on one row and answers with
// [applied] and, when refused, the values its conditions saw.
func (e *Execution) conditional(ctx context.Context, stmt *sharding.Statement, p *translate.Write, key [][]byte,
	r *rowArgs, placement *sharding.Placement, resp *[]byte) error {
	c := p.Conditions
	if err := e.checkCASConsistency(); err != nil {
		return err
	}
	if err := e.checkConditionValues(c); err != nil {
		return err
	}
	t := p.Table
	token := sharding.KeyToken(key[:len(t.PartitionKey)])
	r.key, r.token = key, int64(token)
	replicas, err := casReplicas(placement, token, e.serialLevel())
	if err != nil {
		return err
	}
	fetch := fetchOf(c)
	reads := e.casReads(c, r, fetch)
	tx, found, err := e.beginCAS(ctx, replicas, LockKey(t, key[:len(t.PartitionKey)]), e.serialLevel(), true, reads)
	if err != nil {
		return err
	}
	defer tx.release(ctx)
	state, err := casStateOf(c, reads, found, fetch)
	if err != nil {
		return err
	}
	applied, err := e.conditionsHold(c, state.row, state.static)
	if err != nil {
		return err
	}
	if applied {
		r.timestamp = tx.ballot
		if err := applyConditional(ctx, tx, []casWrite{{e: e, stmt: stmt, w: p, r: r}}, replicas); err != nil {
			return err
		}
		if err := tx.commit(ctx); err != nil {
			return err
		}
	}
	*resp = appendCASResult(*resp, t, c, applied, state.shown)
	return nil
}

// casReplicas returns the replicas a lightweight transaction on token
// writes, the pending one last while ranges move. As Cassandra's Paxos,
// it refuses while more than one replica of the token is pending.
func casReplicas(placement *sharding.Placement, token sharding.Token, level sharding.Consistency) ([]int, error) {
	replicas, pending := placement.WriteReplicas(token)
	if pending > 1 {
		return nil, &sharding.UnavailableError{Consistency: level, Required: len(replicas) + 1, Alive: len(replicas),
			Msg: fmt.Sprintf("Cannot perform LWT operation as there is more than one (%d) pending range movement", pending)}
	}
	return replicas, nil
}

// checkCASConsistency applies Cassandra's checks of a conditional write's
// consistency levels: a serial level for its reads, another for its commit.
func (e *Execution) checkCASConsistency() error {
	if s := sharding.Consistency(e.params.SerialConsistency); s != 0 && !isSerial(s) {
		return invalidf("Invalid consistency for conditional update. Must be one of SERIAL or LOCAL_SERIAL")
	}
	if c := sharding.Consistency(e.params.Consistency); isSerial(c) {
		return invalidf("%s is not supported as conditional update commit consistency. "+
			"Use ANY if you mean \"make sure it is accepted but I don't care how many replicas commit it for non-SERIAL reads\"", c)
	}
	return nil
}

func isSerial(c sharding.Consistency) bool {
	return c == sharding.Serial || c == sharding.LocalSerial
}

// serialLevel is the level a conditional write's errors report.
func (e *Execution) serialLevel() sharding.Consistency {
	if s := sharding.Consistency(e.params.SerialConsistency); s != 0 {
		return s
	}
	return sharding.Serial
}

// casRead is one read of a lightweight transaction, with the execution
// whose values it binds.
type casRead struct {
	e    *Execution
	read *translate.Select
	args *rowArgs
}

// casTx is a lightweight transaction's transaction on its partition's
// first replica, which holds the partition's lock until it ends.
type casTx struct {
	tx     *sharding.Tx
	ballot int64
	// timeout bounds the write and the commit, which go on past the
	// request's context.
	timeout time.Duration
}

// firstRow keeps a copy of the first row a statement returns.
type firstRow struct{ row [][]byte }

func (f *firstRow) Row(values [][]byte) error {
	if f.row == nil {
		f.row = make([][]byte, len(values))
		for i, v := range values {
			if v != nil {
				f.row[i] = append([]byte{}, v...)
			}
		}
	}
	return nil
}

// The statements that take a partition's lock and its next ballot.
var (
	lwtLock   = sharding.Statement{SQL: pgschema.LWTLockSQL, ParamOIDs: []uint32{pgschema.OIDInt8}}
	lwtBallot = sharding.Statement{SQL: pgschema.LWTBallotSQL, ParamOIDs: []uint32{pgschema.OIDInt8}}
)

// beginCAS begins a transaction on a partition's first replica, through
// its shard pool, takes the partition's lock and, if asked, its next
// ballot, and runs reads, all in one round trip. It returns the first row
// of each read (nil for none), as Postgres values. It writes nothing: a
// first replica that cannot be reached makes the partition unavailable to
// lightweight transactions.
func (e *Execution) beginCAS(ctx context.Context, replicas []int, lock int64, level sharding.Consistency,
	ballot bool, reads []casRead) (*casTx, [][][]byte, error) {
	unavailable := &sharding.UnavailableError{Consistency: level, Required: 1}
	if len(replicas) == 0 {
		return nil, nil, unavailable
	}
	lockArg := [][]byte{int8Value(lock)}
	steps := []sharding.Step{{Stmt: &lwtLock, Args: lockArg, Formats: binaryParams}}
	var ballotRow firstRow
	sinks := []sharding.RowSink{nil}
	if ballot {
		steps = append(steps, sharding.Step{Stmt: &lwtBallot, Args: lockArg, Formats: binaryParams})
		sinks = append(sinks, &ballotRow)
	}
	found := make([]firstRow, len(reads))
	for i, rd := range reads {
		var args argBuffer
		if err := args.build(rd.e, rd.read.Params, rd.args); err != nil {
			return nil, nil, err
		}
		steps = append(steps, sharding.Step{Stmt: &sharding.Statement{SQL: rd.read.SQL, ParamOIDs: paramOIDs(rd.read.Params)},
			Args: args.args, Formats: binaryParams})
		sinks = append(sinks, &found[i])
	}
	shard := e.topo.Shards[replicas[0]]
	tx, err := shard.Pool.Begin(ctx, steps, sinks)
	if err != nil {
		var pgErr *pgconn.PgError
		switch {
		case ctx.Err() != nil && ballot:
			// Waiting for the lock took the request's time, as Paxos
			// contention does; nothing was written.
			return nil, nil, &WriteTimeoutError{WriteType: primitive.WriteTypeCas, Consistency: level,
				BlockFor: len(replicas), err: ctx.Err()}
		case ctx.Err() != nil:
			return nil, nil, ctx.Err()
		case !errors.As(err, &pgErr):
			// The shard could not be reached, or the connection failed;
			// what ran on it is rolled back.
			return nil, nil, fmt.Errorf("%w: shard %s: %v", unavailable, shard.Info.Name, err)
		}
		return nil, nil, err
	}
	x := &casTx{tx: tx, timeout: e.env.Config.RequestTimeout}
	if ballot {
		b := ballotRow.row
		if len(b) != 1 || len(b[0]) != 8 {
			x.release(ctx)
			return nil, nil, errors.New("lwt transaction: no ballot")
		}
		x.ballot = int64(binary.BigEndian.Uint64(b[0]))
	}
	rows := make([][][]byte, len(reads))
	for i := range found {
		rows[i] = found[i].row
	}
	return x, rows, nil
}

// write applies steps inside the transaction, in one round trip; once
// started it goes on past ctx, for up to the transaction's timeout.
func (x *casTx) write(ctx context.Context, steps []sharding.Step) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), x.timeout)
	defer cancel()
	return x.tx.Run(ctx, steps, nil)
}

// commit commits the transaction, which releases the lock. Once the other
// replicas hold the write the first must too: ctx ending does not stop it.
func (x *casTx) commit(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), x.timeout)
	defer cancel()
	return x.tx.Commit(ctx)
}

// release rolls back the transaction unless it was committed, which
// releases the lock, and gives its connection back to the pool.
func (x *casTx) release(ctx context.Context) { x.tx.Rollback(ctx) }

func int8Value(v int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(v)) }

// LockKey identifies a partition's LWT lock: a digest of the table id and
// the partition key. Two partitions sharing a digest only wait for each
// other.
func LockKey(t *pgschema.Table, partition [][]byte) int64 {
	h := fnv.New64a()
	h.Write(t.ID[:])
	for _, k := range partition {
		h.Write(k)
		h.Write([]byte{0})
	}
	return int64(h.Sum64())
}

// casWrite is one write of a lightweight transaction.
type casWrite struct {
	e    *Execution
	stmt *sharding.Statement
	w    *translate.Write
	r    *rowArgs
}

// applyConditional applies a transaction's writes to every replica: the
// lock holder inside the transaction, the others through their pools, all
// at once. Once started it goes on past ctx, and it waits for every
// replica to answer, so that the lock is not released while a write may
// still land.
func applyConditional(ctx context.Context, tx *casTx, writes []casWrite, replicas []int) error {
	args := make([]argBuffer, len(writes))
	for i, wr := range writes {
		if err := args[i].build(wr.e, wr.w.Params, wr.r); err != nil {
			return err
		}
	}
	topo := writes[0].e.topo
	var ops []*sharding.Op
	for i, wr := range writes {
		for _, shard := range replicas[1:] {
			op := sharding.NewOp(wr.stmt, args[i].args, binaryParams, nil)
			topo.Shards[shard].Pool.Submit(op)
			ops = append(ops, op)
		}
	}
	steps := make([]sharding.Step, len(writes))
	for i, wr := range writes {
		steps[i] = sharding.Step{Stmt: wr.stmt, Args: args[i].args, Formats: binaryParams}
	}
	err := tx.write(ctx, steps)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), tx.timeout)
	defer cancel()
	// ops holds each write's op for each other replica in turn.
	failed := make([]bool, len(replicas)-1)
	var replicaErr error
	for i, op := range ops {
		if werr := op.Wait(ctx); werr != nil {
			failed[i%len(failed)] = true
			if replicaErr == nil {
				replicaErr = werr
			}
		}
	}
	if err != nil {
		return err
	}
	if replicaErr != nil {
		// Replicas that answered hold the write and the first one will
		// not: the outcome is unknown to the client, as after a CAS
		// timeout.
		acked := 0
		for _, f := range failed {
			if !f {
				acked++
			}
		}
		return &WriteTimeoutError{WriteType: primitive.WriteTypeCas, Consistency: writes[0].e.serialLevel(),
			Received: acked, BlockFor: len(replicas), err: replicaErr}
	}
	return nil
}

// serialRead takes the lock of the partition a SERIAL or LOCAL_SERIAL
// SELECT reads, so that the read, which goes to the partition's first
// replica, sees every conditional write applied before it and none half
// applied. It returns the function that releases the lock.
func (e *Execution) serialRead(ctx context.Context, p *translate.Select) (func(), error) {
	keys, err := e.keyProduct(p.Keys)
	if err != nil {
		return nil, err
	}
	if p.Route != translate.RoutePartitions || len(keys) != 1 {
		return nil, invalidf("SERIAL/LOCAL_SERIAL consistency may only be requested for one partition at a time")
	}
	placement, err := e.placement(p.Table.Keyspace)
	if err != nil {
		return nil, err
	}
	replicas := placement.Replicas(sharding.KeyToken(keys[0]))
	tx, _, err := e.beginCAS(ctx, replicas, LockKey(p.Table, keys[0]), sharding.Consistency(e.params.Consistency), false, nil)
	if err != nil {
		return nil, err
	}
	return func() { tx.release(ctx) }, nil
}
