package exec

import (
	"context"
	"encoding/binary"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqlpg/cqlpg/gateway/cqlwire"
	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/sharding"
	"github.com/cqlpg/cqlpg/translate"
)

// maxTTL is Cassandra's largest TTL: 20 years in seconds.
const maxTTL = 630720000

// write applies a write to every replica of each row or range it names,
// and waits for the consistency level's acknowledgements. batchTS is the
// timestamp of the batch the write belongs to, if any.
func (e *Execution) write(ctx context.Context, stmt *sharding.Statement, p *translate.Write, batchTS *int64, resp *[]byte) error {
	if (p.Counter || p.Conditions != nil) && e.mutations == nil {
		kind := primitive.WriteTypeCas
		if p.Counter {
			kind = primitive.WriteTypeCounter
		}
		done, err := e.holdGate(ctx, kind)
		if err != nil {
			return err
		}
		defer done()
	}
	r, err := e.writeTimes(p, batchTS)
	if err != nil {
		return err
	}
	keys, err := e.keyProduct(p.Keys)
	if err != nil {
		return err
	}
	placement, err := e.placement(p.Table.Keyspace)
	if err != nil {
		return err
	}
	if p.Conditions != nil {
		return e.conditional(ctx, stmt, p, keys[0], &r, placement, resp)
	}
	if err := e.checkWriteConsistency(p.Table.Name, p.Counter); err != nil {
		return err
	}
	w, err := e.prepareWrite(stmt, p, r, keys, placement)
	if err != nil || w == nil {
		return err
	}
	w.send()
	timeout, writeType := e.env.Config.WriteTimeout, primitive.WriteTypeSimple
	if p.Counter {
		timeout, writeType = e.env.Config.CounterWriteTimeout, primitive.WriteTypeCounter
	}
	if err := w.wait(ctx, timeout, writeType); err != nil {
		return err
	}
	if p.Views {
		e.awaitViews(ctx, w.shards())
	}
	if resp != nil {
		*resp = cqlwire.AppendInt(*resp, cqlwire.ResultVoid)
	}
	return nil
}

// writeTimes returns the write time and expiry of a write's cells.
func (e *Execution) writeTimes(p *translate.Write, batchTS *int64) (rowArgs, error) {
	var r rowArgs
	var err error
	if r.timestamp, err = e.timestamp(p.Timestamp, batchTS); err != nil {
		return r, err
	}
	r.expiry, err = e.expiry(p)
	return r, err
}

// prepareWrite builds a write without conditions: for each row, its key,
// token and arguments, added for its replicas to the replica writes it
// returns, or to the batch's mutations (then it returns none). r holds
// the cells' write time and expiry. Both ways of running a write use it:
// waiting for the replicas (write) and answering from the pools'
// goroutines (startWrite); only the completion differs.
func (e *Execution) prepareWrite(stmt *sharding.Statement, p *translate.Write, r rowArgs, keys [][][]byte,
	placement *sharding.Placement) (*replicaWrites, error) {
	npk := len(p.Table.PartitionKey)
	var w *replicaWrites
	if e.mutations == nil {
		w = e.newReplicaWrites(p.Counter, p.InPlace)
		if len(keys) == 1 {
			w.order = rowOrder(p.Table, keys[0])
		}
	}
	gcGrace, lock := tableGCGrace(p.Table), lockFor(p)
	for _, key := range keys {
		row := r
		row.key = key
		token := sharding.KeyToken(key[:npk])
		row.token = int64(token)
		e.env.Hot.note(p.Table, row.token)
		replicas, pending := placement.WriteReplicas(token)
		if p.Counter && pending > 0 {
			// A counter's total cannot be merged with increments a
			// pending replica got: the movement copies it there instead,
			// while counter writes wait (holdGate).
			replicas, pending = replicas[:len(replicas)-pending], 0
		}
		if len(replicas) == 0 {
			return nil, &sharding.UnavailableError{Consistency: sharding.Consistency(e.params.Consistency), Required: 1}
		}
		// The one row of a single-row write is built in the execution's
		// buffer; rows of several keep theirs until all are sent.
		args := &e.args
		if len(keys) > 1 || e.mutations != nil {
			args = new(argBuffer)
		}
		if err := args.build(e, p.Params, &row); err != nil {
			return nil, err
		}
		if e.mutations != nil {
			e.mutations.add(p, stmt, args.args, &row, replicas, pending)
			continue
		}
		// Every replica applies the same write; the reconciliation in its
		// SQL makes the order in which replicas see writes irrelevant.
		if err := w.add(replicas, pending, sharding.Step{Stmt: stmt, Args: args.args, Formats: binaryParams}, lock, gcGrace); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// deletionLocks holds the statements taking the lock of a table for its
// partition and range deletions, by their text.
var deletionLocks sync.Map

// lockFor returns the statement a write runs first in its transaction on
// each replica, nil for none: a partition or range deletion takes its
// table's lock (pgschema.Table.DeletionLockSQL), so that a write creating
// a row it covers is not running meanwhile.
func lockFor(p *translate.Write) *sharding.Statement {
	if p.Kind != translate.WriteDeleteRange {
		return nil
	}
	sql := p.Table.DeletionLockSQL()
	if st, ok := deletionLocks.Load(sql); ok {
		return st.(*sharding.Statement)
	}
	st, _ := deletionLocks.LoadOrStore(sql, sharding.NewStatement(sql, nil))
	return st.(*sharding.Statement)
}

// tableGCGrace returns a table's gc_grace_seconds.
func tableGCGrace(t *pgschema.Table) int64 {
	// A table without the option would otherwise cost a parse error,
	// which allocates, on every write.
	if o := t.Options[pgschema.OptGCGraceSeconds]; o != "" {
		if g, err := strconv.ParseInt(o, 10, 64); err == nil {
			return g
		}
	}
	return defaultGCGrace
}

// timestamp returns a write's timestamp in microseconds: USING TIMESTAMP,
// else the batch's, else the client's default timestamp, else the
// gateway's (ServerTimestamp).
func (e *Execution) timestamp(using *translate.Value, batchTS *int64) (int64, error) {
	if using != nil {
		b, unset := e.bound.Get(*using)
		switch {
		case unset:
		case b == nil:
			return 0, invalidf("Invalid null value of timestamp")
		case len(b) != 8:
			return 0, invalidf("Expected 8 or 0 byte long (%d)", len(b))
		default:
			ts := int64(binary.BigEndian.Uint64(b))
			if ts == math.MinInt64 {
				return 0, invalidf("Out of bound timestamp, must be in [%d, %d]", math.MinInt64+1, math.MaxInt64)
			}
			return ts, nil
		}
	}
	if batchTS != nil {
		return *batchTS, nil
	}
	if e.params.HasTimestamp {
		return e.params.Timestamp, nil
	}
	return ServerTimestamp(e.Now.Add(time.Duration(e.env.Hooks.ClockSkew.Load()))), nil
}

// lastTimestamp is the last timestamp ServerTimestamp gave.
var lastTimestamp atomic.Int64

// ServerTimestamp returns a timestamp for a write that brought none, as a
// Cassandra coordinator gives one: the request's arrival in microseconds,
// or, should that not be later than the last timestamp given, one past
// it. The gateway's timestamps thus never repeat and never go back, so
// two writes to one cell that arrive together, or across a step back of
// the wall clock, still apply in the order they were given theirs.
func ServerTimestamp(now time.Time) int64 {
	for {
		last, ts := lastTimestamp.Load(), now.UnixMicro()
		if ts <= last {
			ts = last + 1
		}
		if lastTimestamp.CompareAndSwap(last, ts) {
			return ts
		}
	}
}

// maxExpiry is the last second a cell can live to: Cassandra 4.1 keeps
// expiry times in 32 bits, and so does cqlpg.
const maxExpiry = math.MaxInt32 - 1

// expiry returns when a write's cells expire, in seconds since the epoch,
// or 0 when they do not: USING TTL, else the table's default_time_to_live.
// A TTL of 0 or null never expires; an unset one takes the table default.
func (e *Execution) expiry(p *translate.Write) (int32, error) {
	ttl := int64(0)
	if d, ok := p.Table.Options["default_time_to_live"]; ok {
		ttl, _ = strconv.ParseInt(d, 10, 32)
	}
	if p.Counter {
		return 0, nil
	}
	which := "default ttl"
	if p.TTL != nil {
		b, unset := e.bound.Get(*p.TTL)
		switch {
		case unset:
		case b == nil:
			ttl = 0
		default:
			n, ok := int32Value(b)
			if !ok {
				return 0, invalidf("Expected 4 or 0 byte int (%d)", len(b))
			}
			ttl, which = int64(n), "ttl"
		}
	}
	if ttl < 0 {
		return 0, invalidf("A TTL must be greater or equal to 0, but was %d", ttl)
	}
	if ttl > maxTTL {
		return 0, invalidf("ttl is too large. requested (%d) maximum (%d)", ttl, maxTTL)
	}
	if ttl == 0 {
		return 0, nil
	}
	if int64(e.nowSeconds)+ttl > maxExpiry {
		return 0, invalidf("Request on table %s.%s with %s of %d seconds exceeds maximum supported expiration date "+
			"of 2038-01-19T03:14:06+00:00. In order to avoid this use a lower TTL, change the expiration date overflow "+
			"policy or upgrade to a version where this limitation is fixed. See CASSANDRA-14092 for more details.",
			p.Table.Keyspace, p.Table.Name, which, ttl)
	}
	return e.nowSeconds + int32(ttl), nil
}

// holdGate holds a counter update, lightweight transaction or SERIAL
// read while a topology operation's last step holds them
// (Topology.Held), then runs it on the ring after that step, and counts
// it as running on its snapshot until done is called. It fails with a
// write timeout of kind if the step outlasts the write's timeout.
func (e *Execution) holdGate(ctx context.Context, kind primitive.WriteType) (done func(), err error) {
	if e.topo.Held {
		timeout := e.env.Config.WriteTimeout
		if kind == primitive.WriteTypeCounter {
			timeout = e.env.Config.CounterWriteTimeout
		}
		deadline := time.Now().Add(timeout)
		for e.topo.Held {
			if time.Now().After(deadline) || ctx.Err() != nil {
				return nil, &WriteTimeoutError{Consistency: sharding.Consistency(e.params.Consistency), WriteType: kind, BlockFor: 1}
			}
			time.Sleep(5 * time.Millisecond)
			e.topo = e.env.Cluster.Topology()
		}
		// The step may have changed a keyspace's replication too (a
		// replication change switches while these are held): place the
		// request by the schema the gateway serves now.
		e.schema = e.env.Cluster.Schema()
	}
	topo := e.topo
	topo.HeldWrites.Add(1)
	return func() { topo.HeldWrites.Add(-1) }, nil
}
