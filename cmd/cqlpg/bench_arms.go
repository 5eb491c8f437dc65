package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gocql/gocql"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cqlpg/cqlpg/sharding"
	"github.com/cqlpg/cqlpg/translate"
)

// The workloads of bench compare, in report order. Every arm runs each of
// them on bench.kv, whose partitions hold rowsPerPartition rows.
var compareWorkloads = []string{"insert", "select", "slice", "in8", "batch10", "mix"}

// quorumWorkloads run on quorumShards shards of their own, with bench.kv
// replicated to all of them: "insert-rf3" is the point INSERT at QUORUM,
// which the direct arms match by writing to every replica and waiting
// for a majority. They are not run unless asked for, since they start
// shards of their own.
var quorumWorkloads = []string{"insert-rf3"}

const quorumShards = 3

const (
	rowsPerPartition = 20
	sliceRows        = 10
	inPartitions     = 8
	batchRows        = 10
	// pageSize is gocql's default page size, which the gateway turns into
	// the row limit of its paged reads; the direct arms send the same.
	pageSize = 5000
)

// The CQL of each workload, as the gateway arms send it.
const (
	cqlInsert = "INSERT INTO bench.kv (k, c, v, w) VALUES (?, ?, ?, ?)"
	cqlSelect = "SELECT k, c, v, w FROM bench.kv WHERE k = ? AND c = ?"
	cqlSlice  = "SELECT k, c, v, w FROM bench.kv WHERE k = ? AND c >= ? AND c < ?"
	cqlIn     = "SELECT k, c, v, w FROM bench.kv WHERE k IN (?, ?, ?, ?, ?, ?, ?, ?) AND c = ?"
)

// rng is a per-worker xorshift generator: workers never share state.
type rng uint64

func (r *rng) next() uint32 {
	x := uint64(*r)
	x ^= x << 13
	x ^= x >> 7
	x ^= x << 17
	*r = rng(x)
	return uint32(x >> 32)
}

// compareArm is one way of running the workloads. do runs one operation
// of workload wl and is safe for concurrent use.
type compareArm struct {
	name  string
	do    func(ctx context.Context, wl string, r *rng) error
	close func()
	// exec runs a schema statement; only the gateway arms have it.
	exec func(stmt string) error
	// pid is the gateway's process when it runs apart from this one.
	pid int
}

// keyspace picks the keys of one operation.
type keyspace struct{ partitions uint32 }

func (ks keyspace) key(r *rng) (k, c int32) {
	return int32(r.next() % ks.partitions), int32(r.next() % rowsPerPartition)
}

// gocqlArm drives the gateway srv with an unmodified gocql session,
// which prepares each statement once and binds values after.
func gocqlArm(name string, srv *benchServer, ks keyspace, coalesce time.Duration) (*compareArm, error) {
	sess, err := gocqlSession(srv, coalesce)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	read := func(q *gocql.Query) error {
		iter := q.Iter()
		var k, c, v int32
		var w string
		for iter.Scan(&k, &c, &v, &w) {
		}
		return iter.Close()
	}
	insert := func(r *rng) error {
		k, c := ks.key(r)
		return sess.Query(cqlInsert, k, c, k+c, "value").Exec()
	}
	sel := func(r *rng) error {
		k, c := ks.key(r)
		return read(sess.Query(cqlSelect, k, c))
	}
	do := func(ctx context.Context, wl string, r *rng) error {
		switch wl {
		case "insert":
			return insert(r)
		case "insert-rf3":
			k, c := ks.key(r)
			return sess.Query(cqlInsert, k, c, k+c, "value").Consistency(gocql.Quorum).Exec()
		case "select":
			return sel(r)
		case "slice":
			k, _ := ks.key(r)
			from := int32(r.next() % (rowsPerPartition - sliceRows + 1))
			return read(sess.Query(cqlSlice, k, from, from+sliceRows))
		case "in8":
			args := make([]any, 0, inPartitions+1)
			for range inPartitions {
				k, _ := ks.key(r)
				args = append(args, k)
			}
			_, c := ks.key(r)
			return read(sess.Query(cqlIn, append(args, c)...))
		case "batch10":
			k, _ := ks.key(r)
			b := sess.NewBatch(gocql.UnloggedBatch)
			for c := range int32(batchRows) {
				b.Query(cqlInsert, k, c, k+c, "value")
			}
			return sess.ExecuteBatch(b)
		case "mix":
			if r.next()%2 == 0 {
				return insert(r)
			}
			return sel(r)
		}
		return fmt.Errorf("unknown workload %q", wl)
	}
	return &compareArm{name: name, do: do, close: sess.Close, pid: srv.pid,
		exec: func(stmt string) error { return sess.Query(stmt).Exec() }}, nil
}

// directPlans are the gateway's plans of the workloads' statements, whose
// SQL the direct arms run with the parameters the gateway would send.
type directPlans struct {
	insert, sel, slice, in *directStmt
}

// directStmt is one plan's shard statement and parameters.
type directStmt struct {
	stmt   *sharding.Statement
	params []translate.Param
}

func loadDirectPlans(ctx context.Context, pool *pgxpool.Pool) (*directPlans, error) {
	planner, err := benchPlanner(ctx, pool)
	if err != nil {
		return nil, err
	}
	prepare := func(cql string) (*directStmt, error) {
		plan, err := planner(cql)
		if err != nil {
			return nil, err
		}
		switch p := plan.(type) {
		case *translate.Write:
			return &directStmt{sharding.NewStatement(p.SQL, storageOIDs(p.Params)), p.Params}, nil
		case *translate.Select:
			// gocql reads in pages, so the gateway runs the paged SQL.
			return &directStmt{sharding.NewStatement(p.PageSQL, storageOIDs(p.PageParams)), p.PageParams}, nil
		}
		return nil, fmt.Errorf("%s: unexpected plan %T", cql, plan)
	}
	var d directPlans
	for _, s := range []struct {
		to  **directStmt
		cql string
	}{{&d.insert, cqlInsert}, {&d.sel, cqlSelect}, {&d.slice, cqlSlice}, {&d.in, cqlIn}} {
		if *s.to, err = prepare(s.cql); err != nil {
			return nil, err
		}
	}
	return &d, nil
}

// args fills in the statement's parameters for the row (k, c), as
// bindArgs does, asking for gocql's page size, all in binary format.
func (s *directStmt) args(bound [][]byte, k, c int32) ([][]byte, []int16) {
	formats := make([]int16, len(s.params))
	for i := range formats {
		formats[i] = 1
	}
	return bindArgs(s.params, bound, k, c, pageSize), formats
}

// call is one statement of an operation of a direct arm.
type call struct {
	stmt    *sharding.Statement
	args    [][]byte
	formats []int16
	// order lets D2 share transactions as the gateway does
	// (sharding.Op.Order): reads first, writes by their row.
	order uint64
}

// directCalls returns the statements one operation of workload wl runs
// on the shard, and whether they form one transaction (a batch).
func directCalls(d *directPlans, ks keyspace, wl string, r *rng) ([]call, bool) {
	one := func(s *directStmt, bound [][]byte, k, c int32) call {
		args, formats := s.args(bound, k, c)
		order := uint64(1)
		if s == d.insert {
			order = 2 + uint64(uint32(k))<<32 | uint64(uint32(c))
		}
		return call{s.stmt, args, formats, order}
	}
	insert := func() []call {
		k, c := ks.key(r)
		return []call{one(d.insert, rowValues(k, c), k, c)}
	}
	sel := func() []call {
		k, c := ks.key(r)
		return []call{one(d.sel, [][]byte{int4(k), int4(c)}, k, c)}
	}
	switch wl {
	case "insert", "insert-rf3":
		return insert(), false
	case "select":
		return sel(), false
	case "slice":
		k, _ := ks.key(r)
		from := int32(r.next() % (rowsPerPartition - sliceRows + 1))
		return []call{one(d.slice, [][]byte{int4(k), int4(from), int4(from + sliceRows)}, k, 0)}, false
	case "in8":
		keys := make([]int32, inPartitions)
		bound := make([][]byte, 0, inPartitions+1)
		for i := range keys {
			keys[i], _ = ks.key(r)
			bound = append(bound, int4(keys[i]))
		}
		_, c := ks.key(r)
		bound = append(bound, int4(c))
		calls := make([]call, inPartitions)
		for i, k := range keys {
			calls[i] = one(d.in, bound, k, c)
		}
		return calls, false
	case "batch10":
		k, _ := ks.key(r)
		calls := make([]call, batchRows)
		for c := range int32(batchRows) {
			calls[c] = one(d.insert, rowValues(k, c), k, c)
		}
		return calls, true
	case "mix":
		if r.next()%2 == 0 {
			return insert(), false
		}
		return sel(), false
	}
	return nil, false
}

// d1Arm runs each statement in its own round trip on a pgx pool of as many
// connections as the gateway keeps to the shard, over the same socket: a
// batch is BEGIN, its statements and COMMIT, one round trip each. With a
// pool per replica it writes a single statement to all of them at once
// and returns when a majority has answered, as a QUORUM write does.
func d1Arm(pools []*pgxpool.Pool, d *directPlans, ks keyspace) *compareArm {
	one := func(ctx context.Context, calls []call, tx bool) error {
		conn, err := pools[0].Acquire(ctx)
		if err != nil {
			return err
		}
		defer conn.Release()
		pc := conn.Conn().PgConn()
		if tx {
			if err := pc.Exec(ctx, "BEGIN").Close(); err != nil {
				return err
			}
		}
		for _, c := range calls {
			if err := execParams(ctx, pc, c.stmt.SQL, c.args, c.stmt.ParamOIDs); err != nil {
				if tx {
					err = errors.Join(err, pc.Exec(ctx, "ROLLBACK").Close())
				}
				return err
			}
		}
		if tx {
			return pc.Exec(ctx, "COMMIT").Close()
		}
		return nil
	}
	everyReplica := func(ctx context.Context, c call) error {
		acks := make(chan error, len(pools))
		for _, p := range pools {
			go func() {
				conn, err := p.Acquire(ctx)
				if err == nil {
					err = execParams(ctx, conn.Conn().PgConn(), c.stmt.SQL, c.args, c.stmt.ParamOIDs)
					conn.Release()
				}
				acks <- err
			}()
		}
		return quorum(len(pools), func() error { return <-acks })
	}
	return directArm("D1", len(pools), d, ks, one, everyReplica)
}

// d2Arm submits the same statements to a shard pool of the same size,
// which pipelines every op queued while a connection was busy (up to 16)
// and runs a batch as one op in one transaction, as the gateway's
// executor does. With a pool per replica it submits a single statement
// to each and returns when a majority has run it.
func d2Arm(pools []*sharding.Pool, d *directPlans, ks keyspace) *compareArm {
	one := func(ctx context.Context, calls []call, tx bool) error {
		if tx {
			steps := make([]sharding.Step, len(calls))
			for i, c := range calls {
				steps[i] = sharding.Step{Stmt: c.stmt, Args: c.args, Formats: c.formats}
			}
			op := sharding.NewTx(steps, nil)
			pools[0].Submit(op)
			return op.Wait(ctx)
		}
		ops := make([]*sharding.Op, len(calls))
		for i, c := range calls {
			ops[i] = sharding.NewOp(c.stmt, c.args, c.formats, nil)
			ops[i].Order = c.order
			pools[0].Submit(ops[i])
		}
		return waitAll(ctx, ops)
	}
	everyReplica := func(ctx context.Context, c call) error {
		// The channel has room for every replica's answer, so the pools
		// never wait on the ones this write no longer needs.
		done := make(chan *sharding.Op, len(pools))
		for i, p := range pools {
			op := sharding.NewNotifyOp(c.stmt, c.args, c.formats, nil, done, i)
			op.Order = c.order
			p.Submit(op)
		}
		return quorum(len(pools), func() error { return (<-done).Err() })
	}
	return directArm("D2", len(pools), d, ks, one, everyReplica)
}

// directArm is an arm that runs each operation's SQL itself: with one
// shard, its statements through one (as one transaction when tx is set);
// with several, a replicated write's one statement through everyReplica.
func directArm(name string, shards int, d *directPlans, ks keyspace,
	one func(ctx context.Context, calls []call, tx bool) error,
	everyReplica func(ctx context.Context, c call) error) *compareArm {
	do := func(ctx context.Context, wl string, r *rng) error {
		calls, tx := directCalls(d, ks, wl, r)
		switch {
		case calls == nil:
			return fmt.Errorf("unknown workload %q", wl)
		case shards == 1:
			return one(ctx, calls, tx)
		case len(calls) != 1 || tx:
			return fmt.Errorf("workload %q is not a replicated write", wl)
		}
		return everyReplica(ctx, calls[0])
	}
	return &compareArm{name: name, do: do, close: func() {}}
}

// quorum waits, taking the n replicas' answers one by one from next, for
// a majority to succeed or for so many to fail that none can; the answers
// not taken are left on a channel with room for them.
func quorum(n int, next func() error) error {
	need := n/2 + 1
	var errs []error
	for ok := 0; ok < need; {
		if err := next(); err != nil {
			errs = append(errs, err)
			if len(errs) > n-need {
				return errors.Join(errs...)
			}
			continue
		}
		ok++
	}
	return nil
}
