package repair

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/sharding"
)

// The state of a repair and how it runs statements on replicas: each
// statement runs in a transaction after pgschema.RepairSettingsSQL, within
// the repair's timeout per statement.

const (
	repairBuckets = 16
	// repairLeafRows bounds the rows of each part a bucket may hold on a
	// replica to be read whole and compared row by row.
	repairLeafRows = 1000
	// repairPageRows is the size of a page copied in bulk.
	repairPageRows = 1000
	// repairPartitionRows bounds the rows of a partition read whole by a
	// partition repair; a larger one is copied in pages.
	repairPartitionRows = 10000
	// defaultRepairTimeout bounds one statement on one replica.
	defaultRepairTimeout = 10 * time.Second
)

// repairStmts are the statements repairing one table.
type repairStmts struct {
	table               *pgschema.Table
	digest, read, merge *sharding.Statement
	page                [pgschema.NumRepairParts]*sharding.Statement
	// lock runs before a merge that brings deletions, as before a
	// client's deletion (pgschema.Table.DeletionLockSQL); nil when the
	// table has no deletions part.
	lock *sharding.Statement
	// key names the columns identifying a row of each part, and parts
	// lists the parts the table has.
	key   [pgschema.NumRepairParts][]string
	parts []pgschema.RepairPart
}

// repairCache holds the statements of the tables repaired lately. Tables
// are immutable and a schema change makes new ones, so entries never go
// stale; the map is emptied when it grows past a bound.
var repairCache struct {
	sync.Mutex
	m map[*pgschema.Table]*repairStmts
}

const maxRepairCache = 256

var repairSettings = sharding.NewStatement(pgschema.RepairSettingsSQL, nil)

// statementsFor returns the repair statements of t, building them once.
func statementsFor(t *pgschema.Table) *repairStmts {
	repairCache.Lock()
	defer repairCache.Unlock()
	if s, ok := repairCache.m[t]; ok {
		return s
	}
	if repairCache.m == nil || len(repairCache.m) >= maxRepairCache {
		repairCache.m = map[*pgschema.Table]*repairStmts{}
	}
	s := &repairStmts{table: t,
		digest: sharding.NewStatement(t.DigestSQL(), []uint32{pgschema.OIDInt8, pgschema.OIDInt8, pgschema.OIDInt8Array}),
		read:   sharding.NewStatement(t.ReadRepairSQL(), []uint32{pgschema.OIDInt8, pgschema.OIDInt8, pgschema.OIDInt8}),
		merge:  sharding.NewStatement(t.MergeSQL(), []uint32{pgschema.OIDJSON, pgschema.OIDJSON, pgschema.OIDJSON}),
	}
	for p := range pgschema.RepairPart(pgschema.NumRepairParts) {
		if !t.HasPart(p) {
			continue
		}
		s.parts = append(s.parts, p)
		s.key[p] = t.RepairKey(p)
		oids := []uint32{pgschema.OIDInt8, pgschema.OIDInt8, pgschema.OIDInt8}
		if p == pgschema.RepairRows {
			oids = append(oids, pgschema.OIDJSON)
		}
		s.page[p] = sharding.NewStatement(t.PageRepairSQL(p), oids)
	}
	if t.HasPart(pgschema.RepairDeletions) {
		s.lock = sharding.NewStatement(t.DeletionLockSQL(), nil)
	}
	repairCache.m[t] = s
	return s
}

// repairRun is the state of one repair: of a partition, a range, or
// everything.
type repairRun struct {
	topo     *sharding.Topology
	timeout  time.Duration
	leafRows int

	mu sync.Mutex
	// down holds the shards found unreachable during the run, and seen
	// the failures already reported, which the ranges after do not
	// report again.
	down map[int]bool
	seen map[string]bool
	// onError, when set, hears of each failure as it happens.
	onError func(error)
	errs    []error

	moved atomic.Int64
	// bytes counts what was sent with them: the rows as the merge
	// statements take them.
	bytes atomic.Int64
}

func newRepairRun(topo *sharding.Topology, timeout time.Duration) *repairRun {
	if timeout <= 0 {
		timeout = defaultRepairTimeout
	}
	return &repairRun{topo: topo, timeout: timeout, leafRows: repairLeafRows, down: map[int]bool{}, seen: map[string]bool{}}
}

// err returns the failures of the run, joined, or nil.
func (r *repairRun) err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return errors.Join(r.errs...)
}

// fail records that a replica could not take part; an unreachable one is
// skipped for the rest of the run.
func (r *repairRun) fail(shard int, err error, unreachable bool) {
	r.mu.Lock()
	if r.down[shard] || r.seen[err.Error()] {
		r.mu.Unlock()
		return
	}
	r.seen[err.Error()] = true
	if unreachable {
		r.down[shard] = true
	}
	r.errs = append(r.errs, err)
	report := r.onError
	r.mu.Unlock()
	if report != nil {
		report(err)
	}
}

func (r *repairRun) isDown(shard int) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.down[shard]
}

// up returns the replicas not found unreachable.
func (r *repairRun) up(replicas []int) []int {
	var out []int
	for _, s := range replicas {
		if !r.isDown(s) {
			out = append(out, s)
		}
	}
	return out
}

// repairSink keeps the rows of a repair statement. A statement abandoned
// at its timeout still runs to its end, and its late rows are refused.
type repairSink struct {
	mu     sync.Mutex
	rows   [][][]byte
	closed bool
}

var errRepairAbandoned = errors.New("repair statement abandoned at its timeout")

func (s *repairSink) Row(values [][]byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errRepairAbandoned
	}
	row := make([][]byte, len(values))
	for i, v := range values {
		if v != nil {
			row[i] = append([]byte{}, v...)
		}
	}
	s.rows = append(s.rows, row)
	return nil
}

func (s *repairSink) close() [][][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return s.rows
}

// exec runs steps in one transaction on a shard, after the repair
// settings, within the run's timeout, and returns the rows of all of them.
// A statement that gave up waiting for a lock a client holds (or lost a
// deadlock) is tried again a few times. A failure is recorded, and the
// shard left out of the rest of the run if it is unreachable.
func (r *repairRun) exec(ctx context.Context, shard int, steps ...sharding.Step) ([][][]byte, error) {
	sh := r.topo.Shards[shard]
	if r.isDown(shard) {
		return nil, fmt.Errorf("shard %s is down", sh.Info.Name)
	}
	steps = append([]sharding.Step{{Stmt: repairSettings}}, steps...)
	var err error
	for attempt := range repairAttempts {
		if attempt > 0 {
			select {
			case <-time.After(min(time.Duration(attempt)*pgschema.RepairLockTimeout, time.Second)):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		var rows [][][]byte
		if rows, err = r.run(ctx, sh, steps); err == nil {
			return rows, nil
		}
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || (pgErr.Code != "55P03" && pgErr.Code != "40P01") {
			break
		}
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	var se *sharding.ShardError
	unreachable := errors.As(err, &se)
	if errors.Is(err, context.DeadlineExceeded) {
		unreachable = true
		err = fmt.Errorf("shard %s did not answer within %v", sh.Info.Name, r.timeout)
	} else if !unreachable {
		err = fmt.Errorf("shard %s: %w", sh.Info.Name, err)
	}
	r.fail(shard, err, unreachable)
	return nil, err
}

// locked returns merges, the table's lock first when one of them brings
// deletions.
func (st *repairStmts) locked(merges []sharding.Step) []sharding.Step {
	for _, m := range merges {
		if st.lock != nil && m.Args[pgschema.RepairDeletions] != nil {
			return append([]sharding.Step{{Stmt: st.lock}}, merges...)
		}
	}
	return merges
}

// mergeTurns holds, by shard and table, the turn of this process's merges
// that take the table's lock (they bring deletions).
var mergeTurns sync.Map // mergeTurnKey → *sync.Mutex

type mergeTurnKey struct {
	host  [16]byte
	table string
}

// execMerges runs merges (st.locked's steps) on a shard. Those that take
// the table's lock take their turn with this process's other merges of
// the table on the shard: a stream's or a repair's ranges, merged side by
// side, would otherwise wait for each other's lock, and give up after
// the lock timeout that keeps them from holding up clients, as often as
// they retry. Clients' deletions still take the lock between them.
func (r *repairRun) execMerges(ctx context.Context, shard int, st *repairStmts, steps []sharding.Step) ([][][]byte, error) {
	if st.lock != nil && len(steps) > 0 && steps[0].Stmt == st.lock {
		key := mergeTurnKey{r.topo.Shards[shard].Info.HostID, st.table.Ident()}
		turn, _ := mergeTurns.LoadOrStore(key, &sync.Mutex{})
		turn.(*sync.Mutex).Lock()
		defer turn.(*sync.Mutex).Unlock()
	}
	return r.exec(ctx, shard, steps...)
}

// repairAttempts bounds the tries of a statement that waits for locks:
// about 9 s of trying, long enough for an autovacuum holding the table
// to finish or be cancelled (Postgres cancels it once it has blocked a
// lock for deadlock_timeout, a second), which the merge's lock timeout
// alone never waits for.
const repairAttempts = 10

// run runs steps once in one transaction on a shard.
func (r *repairRun) run(ctx context.Context, sh *sharding.Shard, steps []sharding.Step) ([][][]byte, error) {
	sink := &repairSink{}
	op := sharding.NewTx(steps, sink)
	sh.Pool.Submit(op)
	wctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	err := op.Wait(wctx)
	rows := sink.close()
	return rows, err
}

// each runs f for every replica at once and returns the places in
// replicas of those for which it succeeded, in order. Failures are
// recorded by exec.
func (r *repairRun) each(ctx context.Context, replicas []int, f func(i, shard int) error) ([]int, error) {
	ok := make([]bool, len(replicas))
	var wg sync.WaitGroup
	for i, s := range replicas {
		wg.Go(func() { ok[i] = f(i, s) == nil })
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var done []int
	for i := range replicas {
		if ok[i] {
			done = append(done, i)
		}
	}
	return done, nil
}

// pick returns the replicas at the places given.
func pick(replicas, places []int) []int {
	out := make([]int, len(places))
	for i, p := range places {
		out[i] = replicas[p]
	}
	return out
}

func textInt(v int64) []byte { return strconv.AppendInt(nil, v, 10) }

// digestKey and digestSum are one row of a digest: a part of one bucket.
type digestKey struct {
	part   int16
	bucket int32
}

type digestSum struct{ rows, h1, h2 int64 }

// digestRow is a digest row and the tokens its rows lie between.
type digestRow struct {
	sum         digestSum
	first, last int64
}

// digest digests [lo, hi] on a shard in buckets starting at starts.
func (r *repairRun) digest(ctx context.Context, shard int, st *repairStmts, lo, hi int64, starts []int64) (map[digestKey]digestRow, error) {
	arr := []byte("{")
	for i, s := range starts {
		if i > 0 {
			arr = append(arr, ',')
		}
		arr = strconv.AppendInt(arr, s, 10)
	}
	arr = append(arr, '}')
	rows, err := r.exec(ctx, shard, sharding.Step{Stmt: st.digest, Args: [][]byte{textInt(lo), textInt(hi), arr}})
	if err != nil {
		return nil, err
	}
	out := make(map[digestKey]digestRow, len(rows))
	i8 := func(b []byte) int64 { return int64(binary.BigEndian.Uint64(b)) }
	for _, row := range rows {
		k := digestKey{int16(binary.BigEndian.Uint16(row[0])), int32(binary.BigEndian.Uint32(row[1]))}
		out[k] = digestRow{sum: digestSum{i8(row[2]), i8(row[3]), i8(row[4])}, first: i8(row[5]), last: i8(row[6])}
	}
	return out, nil
}

// bucketStarts splits [lo, hi] into at most k buckets of equal width and
// returns their first tokens.
func bucketStarts(lo, hi int64, k int) []int64 {
	span := uint64(hi) - uint64(lo)
	step := span/uint64(k) + 1
	var out []int64
	for off := uint64(0); ; off += step {
		out = append(out, int64(uint64(lo)+off))
		if span-off < step {
			return out
		}
	}
}
