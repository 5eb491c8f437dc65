package sharding

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
)

// Statement is an SQL statement that shards prepare once per connection.
type Statement struct {
	// Name is the server-side prepared statement name, derived from SQL,
	// so the same text always has the same name on every connection.
	Name      string
	SQL       string
	ParamOIDs []uint32
}

// NewStatement returns the statement for an SQL text and the types of its
// parameters. Its name digests both: the same text sent with other types
// (a table dropped and made again with other column types) is another
// statement, never one prepared for the old types.
func NewStatement(sql string, paramOIDs []uint32) *Statement {
	b := []byte(sql)
	for _, oid := range paramOIDs {
		b = binary.BigEndian.AppendUint32(b, oid)
	}
	sum := sha256.Sum256(b)
	return &Statement{Name: "cqlpg_" + hex.EncodeToString(sum[:12]), SQL: sql, ParamOIDs: paramOIDs}
}

// RowSink receives the rows of a statement, in the pool's goroutine, as
// Postgres binary values that stay valid only until Row returns.
type RowSink interface {
	Row(values [][]byte) error
}

// Op is one execution of a statement on one shard, or of several in one
// transaction. Its Args stay owned by the caller and must not change until
// Wait returns.
type Op struct {
	Stmt *Statement
	Args [][]byte
	// Formats gives each argument's format (1 = binary); nil means text.
	Formats []int16
	// After are statements run after Stmt in the same transaction: the op
	// applies all of them, or none when one fails.
	After []Step
	// Rows receives the result rows of every statement; nil discards them.
	Rows RowSink
	// Tag is the caller's, for telling ops apart on a Notify channel.
	Tag int
	// Deadline, when set, is when the op's outcome stops being awaited: a
	// statement of the op still running on the shard then is cancelled,
	// so that it no longer holds a connection, locks or a worker. Reset
	// and its kin clear it.
	Deadline time.Time
	// Order, when not zero, lets an op of one statement share one
	// transaction with the other such ops of its pipeline: one commit
	// and one answer from Postgres for them all. They run sorted by
	// Order, so that writes given an order by the rows they change take
	// their row locks in the same order on every connection. A shared
	// write is finished once the transaction commits; should another op
	// of it fail, the writes it rolled back and the ops it skipped run
	// again on their own.
	Order uint64

	done chan error
	// notify, when set, receives the op once it has run, in place of
	// done; Err then tells its outcome.
	notify chan<- *Op
	// then, when set, is called with the op once it has run, in place of
	// done and notify.
	then Completer
	err  error
	// alone is set on an op to run again after the transaction it shared
	// failed: it then runs in a transaction of its own.
	alone bool
	// replans counts the times the op met a statement prepared before a
	// schema change (stalePlan) and was run again.
	replans int
}

// Completer is told of ops that have run (NewThenOp). OpDone runs in the
// pool's goroutine, or in Submit's when the op fails before it is sent:
// it must not block, and must not call Submit while holding a lock that
// another OpDone takes.
type Completer interface {
	OpDone(op *Op)
}

// Step is one statement of an op that runs several in one transaction.
type Step struct {
	Stmt    *Statement
	Args    [][]byte
	Formats []int16
}

// NewOp returns an Op ready to be submitted.
func NewOp(stmt *Statement, args [][]byte, formats []int16, rows RowSink) *Op {
	return &Op{Stmt: stmt, Args: args, Formats: formats, Rows: rows, done: make(chan error, 1)}
}

// NewNotifyOp returns an Op that is sent to notify once it has run. The
// channel must have room for every op sent to it, so that the pool never
// blocks on a caller that stopped listening.
func NewNotifyOp(stmt *Statement, args [][]byte, formats []int16, rows RowSink, notify chan<- *Op, tag int) *Op {
	return &Op{Stmt: stmt, Args: args, Formats: formats, Rows: rows, Tag: tag, notify: notify}
}

// NewNotifyTx is NewTx for an op sent to notify once it has run.
func NewNotifyTx(steps []Step, notify chan<- *Op, tag int) *Op {
	op := NewNotifyOp(steps[0].Stmt, steps[0].Args, steps[0].Formats, nil, notify, tag)
	op.After = steps[1:]
	return op
}

// Reset readies op to run stmt, keeping its done channel: an op is
// recycled this way only once its outcome has been received (Wait or
// WaitUntil returned it), when no pool holds it any more.
func (op *Op) Reset(stmt *Statement, args [][]byte, formats []int16, rows RowSink) {
	done := op.done
	if done == nil {
		done = make(chan error, 1)
	}
	*op = Op{Stmt: stmt, Args: args, Formats: formats, Rows: rows, done: done}
}

// ResetNotify is Reset for an op sent to notify once it has run, which
// may be recycled once received from notify.
func (op *Op) ResetNotify(stmt *Statement, args [][]byte, formats []int16, rows RowSink, notify chan<- *Op, tag int) {
	*op = Op{Stmt: stmt, Args: args, Formats: formats, Rows: rows, Tag: tag, notify: notify}
}

// NewThenOp returns an Op that is handed to then once it has run.
func NewThenOp(stmt *Statement, args [][]byte, formats []int16, rows RowSink, then Completer, tag int) *Op {
	return &Op{Stmt: stmt, Args: args, Formats: formats, Rows: rows, Tag: tag, then: then}
}

// ResetThen is Reset for an op handed to then once it has run, which may
// be recycled once then has been called.
func (op *Op) ResetThen(stmt *Statement, args [][]byte, formats []int16, rows RowSink, then Completer, tag int) {
	*op = Op{Stmt: stmt, Args: args, Formats: formats, Rows: rows, Tag: tag, then: then, done: op.done}
}

// Err returns the outcome of an op received from its Notify channel or
// handed to its Completer.
func (op *Op) Err() error { return op.err }

// finish hands the op its outcome.
func (op *Op) finish(err error) {
	if op.then != nil {
		op.err = err
		op.then.OpDone(op)
		return
	}
	if op.notify != nil {
		op.err = err
		op.notify <- op
		return
	}
	op.done <- err
}

// NewTx returns an Op that runs steps, at least one, in order in one
// transaction.
func NewTx(steps []Step, rows RowSink) *Op {
	op := NewOp(steps[0].Stmt, steps[0].Args, steps[0].Formats, rows)
	op.After = steps[1:]
	return op
}

// step returns the op's statement j: Stmt, then those of Then.
func (op *Op) step(j int) (*Statement, [][]byte, []int16) {
	if j == 0 {
		return op.Stmt, op.Args, op.Formats
	}
	s := &op.After[j-1]
	return s.Stmt, s.Args, s.Formats
}

// Wait blocks until the op has run and returns its error, or returns
// ctx's error first. An op abandoned this way still runs to completion.
func (op *Op) Wait(ctx context.Context) error {
	select {
	case err := <-op.done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// WaitUntil is Wait that also gives up when expire is closed. finished
// tells whether the op's outcome was received, after which the op may be
// recycled; an op given up on still runs to completion.
func (op *Op) WaitUntil(ctx context.Context, expire <-chan struct{}) (finished bool, err error) {
	select {
	case err := <-op.done:
		return true, err
	case <-expire:
		return false, context.DeadlineExceeded
	case <-ctx.Done():
		return false, ctx.Err()
	}
}

// binaryResults asks Postgres for every result column in binary format.
var binaryResults = []int16{1}

// maxPipeline bounds how many queued ops one connection sends at once;
// larger batches gain little and delay the first answer.
const maxPipeline = 16

// Pool runs statements on one shard over a fixed number of connections.
// Each connection takes every op queued while it was busy and sends them as
// one pipeline (each op in its own implicit transaction: one sync point
// after its statements), so concurrent requests share round trips and
// Postgres's group commit.
//
// A pool also tells whether its shard is up. A failed connection marks it
// down; while down, ops fail at once instead of queueing behind
// connection attempts, and one prober reconnects in the background until
// the shard answers again. Requests use Alive to refuse work the
// consistency level cannot get, as Cassandra's failure detector lets it.
type Pool struct {
	name   string
	config *pgconn.Config
	queue  chan *Op
	stop   chan struct{}
	wg     sync.WaitGroup
	log    *slog.Logger
	// timeout bounds one pipeline's round trip.
	timeout time.Duration

	down    atomic.Bool
	probing atomic.Bool
	// downs counts the times the shard went down: a connection opened
	// before the last one is to a server that has since failed.
	downs atomic.Uint64
	// onChange, when set, is called after the shard goes down or up.
	onChange func(up bool)
	// run, when set, runs each op in the submitting goroutine in place of
	// a connection (NewFuncPool).
	run func(*Op) error
	// conns is the number of connections, and stats counts their work
	// (Stats).
	conns int
	stats poolStats
}

// PoolConfig configures a Pool.
type PoolConfig struct {
	Name    string // for logs
	URL     string
	Conns   int
	Timeout time.Duration
	Log     *slog.Logger
	// OnChange, when set, is called (in the pool's goroutines) each time
	// the shard goes down or comes back up.
	OnChange func(up bool)
	// Null makes a pool that reaches no server and finishes every op at
	// once, with no rows and no error: a benchmark arm that leaves only
	// the gateway's own cost (cqlpg bench compare), never a deployment.
	Null bool
}

// NewPool starts a pool's connection workers; connections are opened on
// first use and reopened after failures.
func NewPool(cfg PoolConfig) (*Pool, error) {
	if cfg.Null {
		return NewFuncPool(cfg.Name, func(*Op) error { return nil }), nil
	}
	pc, err := pgconn.ParseConfig(cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("shard %s: %w", cfg.Name, err)
	}
	if cfg.Conns <= 0 {
		cfg.Conns = 4
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	// A pipeline past its timeout has its statement cancelled, as an op
	// past its deadline does, rather than its connection broken (pgconn's
	// default), which would mark the shard down for one slow statement;
	// only a server that does not answer the cancel within
	// cancelDeadlineDelay loses the connection.
	pc.BuildContextWatcherHandler = func(conn *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.CancelRequestContextWatcherHandler{Conn: conn, DeadlineDelay: cancelDeadlineDelay}
	}
	p := &Pool{name: cfg.Name, config: pc, queue: make(chan *Op, 1024), stop: make(chan struct{}),
		log: cfg.Log.With("shard", cfg.Name), timeout: cfg.Timeout, onChange: cfg.OnChange, conns: cfg.Conns}
	for range cfg.Conns {
		p.wg.Go(p.work)
	}
	return p, nil
}

// Submit queues op for one of the pool's connections. It fails the op at
// once when the shard is down or its queue is full.
func (p *Pool) Submit(op *Op) {
	if p.run != nil {
		if err := p.run(op); err != ErrDeferred {
			op.finish(err)
		}
		return
	}
	if p.down.Load() {
		p.finish(op, &ShardError{Shard: p.name, Err: ErrShardDown, Unsent: true})
		return
	}
	select {
	case p.queue <- op:
	case <-p.stop:
		p.finish(op, errPoolClosed)
	default:
		p.finish(op, &ShardError{Shard: p.name, Err: errQueueFull, Unsent: true})
	}
}

// finish hands op its outcome, counting it (Stats).
func (p *Pool) finish(op *Op, err error) {
	p.stats.ops.Add(1)
	if err != nil {
		p.stats.failed.Add(1)
	}
	op.finish(err)
}

var (
	errPoolClosed = errors.New("shard pool is closed")
	errQueueFull  = errors.New("too many statements queued for the shard")
	// ErrShardDown is the error of ops submitted while the shard is down.
	ErrShardDown = errors.New("shard is down")
)

// Alive reports whether the shard is taken to be up: no connection to it
// has failed since it last answered.
func (p *Pool) Alive() bool { return !p.down.Load() }

// probeInterval is how often a down shard is tried again.
const probeInterval = 200 * time.Millisecond

// markDown records that the shard failed and starts the prober.
func (p *Pool) markDown(err error) {
	p.downs.Add(1)
	if p.down.Swap(true) {
		return
	}
	p.log.Warn("shard is down", "err", err)
	if p.onChange != nil {
		p.onChange(false)
	}
	if !p.probing.Swap(true) {
		p.wg.Go(p.probe)
	}
}

// probe connects to the shard until it answers, then marks it up.
func (p *Pool) probe() {
	defer p.probing.Store(false)
	t := time.NewTicker(probeInterval)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		conn, err := pgconn.ConnectConfig(ctx, p.config)
		if err == nil {
			err = conn.Exec(ctx, "SELECT 1").Close()
			conn.Close(ctx)
		}
		cancel()
		if err == nil {
			p.down.Store(false)
			p.log.Info("shard is up")
			if p.onChange != nil {
				p.onChange(true)
			}
			return
		}
	}
}

// Close stops the workers after their current pipelines and closes the
// connections; queued ops fail.
func (p *Pool) Close() {
	close(p.stop)
	p.wg.Wait()
	for {
		select {
		case op := <-p.queue:
			p.finish(op, errPoolClosed)
		default:
			return
		}
	}
}

// worker state: one connection and the statements prepared on it.
type worker struct {
	pool     *Pool
	conn     *pgconn.PgConn
	connDown uint64 // the pool's downs when conn was opened
	prepared map[string]bool
	// batch is the pipeline's ops, the first shared of them sharing one
	// transaction; an op is set to nil once finished.
	batch  []*Op
	shared int
	// parses names the statements the pipeline prepares, in order; op i
	// prepares parses[parseAt[i]:parseAt[i+1]].
	parses  []string
	parseAt []int
	// cancel cancels the statement running when an op's deadline passes.
	cancel canceller
	// stale is set when a statement prepared on conn was found stale
	// (stalePlan): the connection is closed after the pipeline, and its
	// prepared statements with it.
	stale bool
}

// cancelDeadlineDelay is how long a cancel request sent as a context ends
// has to take effect before the connection is given up.
const cancelDeadlineDelay = 2 * time.Second

// canceller cancels the statement running on a worker's connection once
// the deadline it is armed with passes. The worker arms it with the
// deadline of the op whose results it is reading, which is the op whose
// statement the shard runs (a pipeline's statements run in order), and
// disarms it after the pipeline. Its timer is the worker's one, reset
// rather than made anew for each op.
type canceller struct {
	pool  *Pool
	mu    sync.Mutex
	conn  *pgconn.PgConn
	at    time.Time // zero while disarmed
	timer *time.Timer
}

// cancelSlack is how close to the deadline it is armed with a canceller
// is left armed rather than reset: deadlines of ops queued together are
// that close.
const cancelSlack = time.Millisecond

// arm has the statement running on conn cancelled at at; a zero at
// disarms.
func (k *canceller) arm(conn *pgconn.PgConn, at time.Time) {
	if at.IsZero() {
		k.disarm()
		return
	}
	k.mu.Lock()
	if k.conn == conn && !k.at.IsZero() && at.Sub(k.at).Abs() < cancelSlack {
		k.mu.Unlock()
		return
	}
	k.conn, k.at = conn, at
	k.mu.Unlock()
	if k.timer == nil {
		k.timer = time.AfterFunc(time.Until(at), k.fire)
	} else {
		k.timer.Reset(time.Until(at))
	}
}

func (k *canceller) disarm() {
	k.mu.Lock()
	armed := !k.at.IsZero()
	k.conn, k.at = nil, time.Time{}
	k.mu.Unlock()
	if armed {
		k.timer.Stop()
	}
}

// fire sends the cancel request, unless the canceller was disarmed or
// armed later since its timer was set. Postgres cancels the statement
// running then, which fails with SQLSTATE 57014 (query_canceled); the
// pipeline goes on with the next op.
func (k *canceller) fire() {
	k.mu.Lock()
	conn, at := k.conn, k.at
	if conn == nil || at.IsZero() || time.Now().Before(at) {
		k.mu.Unlock()
		return
	}
	k.at = time.Time{}
	k.mu.Unlock()
	k.pool.stats.cancelled.Add(1)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := conn.CancelRequest(ctx); err != nil {
		k.pool.log.Warn("cancelling a statement past its deadline", "err", err)
	}
}

func (p *Pool) work() {
	w := &worker{pool: p, batch: make([]*Op, 0, maxPipeline), parseAt: make([]int, 0, maxPipeline+1), cancel: canceller{pool: p}}
	defer w.close()
	for {
		select {
		case op := <-p.queue:
			w.batch = append(w.batch[:0], op)
		case <-p.stop:
			return
		}
	drain:
		for len(w.batch) < maxPipeline {
			select {
			case op := <-p.queue:
				w.batch = append(w.batch, op)
			default:
				break drain
			}
		}
		w.run()
	}
}

func (w *worker) close() {
	if w.conn != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		w.dropConn(ctx)
		cancel()
	}
}

// dropConn closes the worker's connection.
func (w *worker) dropConn(ctx context.Context) {
	w.conn.Close(ctx)
	w.conn = nil
	w.pool.stats.open.Add(-1)
}

// fail finishes every op of the batch not yet finished with err.
func (w *worker) fail(err error) {
	for _, op := range w.batch {
		if op != nil {
			w.pool.finish(op, err)
		}
	}
}

// done finishes op i of the batch.
func (w *worker) done(i int, err error) {
	op := w.batch[i]
	w.batch[i] = nil
	w.pool.finish(op, err)
}

// share moves the ops that may share a transaction to the front of the
// batch, in their order, and counts them; one alone shares nothing. The
// others keep the order they were queued in.
func (w *worker) share() {
	n := 0
	for _, op := range w.batch {
		if op.shares() {
			n++
		}
	}
	if n < 2 {
		w.shared = 0
		return
	}
	slices.SortStableFunc(w.batch, func(a, b *Op) int {
		switch as, bs := a.shares(), b.shares(); {
		case as && bs:
			return cmp.Compare(a.Order, b.Order)
		case as:
			return -1
		case bs:
			return 1
		}
		return 0
	})
	w.shared = n
}

// shares reports whether the op may share its pipeline's transaction.
func (op *Op) shares() bool { return op.Order != 0 && len(op.After) == 0 && !op.alone }

// run sends the batch as one pipeline and hands each op its result.
func (w *worker) run() {
	ctx, cancel := context.WithTimeout(context.Background(), w.pool.timeout)
	defer cancel()
	stats := &w.pool.stats
	stats.busy.Add(1)
	defer stats.busy.Add(-1)
	if w.conn != nil && (w.connDown != w.pool.downs.Load() || w.conn.IsClosed()) {
		w.dropConn(ctx)
	}
	if w.conn == nil {
		downs := w.pool.downs.Load()
		conn, err := pgconn.ConnectConfig(ctx, w.pool.config)
		if err != nil {
			w.pool.markDown(err)
			w.fail(&ShardError{Shard: w.pool.name, Err: err, Unsent: true})
			return
		}
		w.conn, w.connDown, w.prepared = conn, downs, map[string]bool{}
		stats.open.Add(1)
	}
	began := time.Now()
	w.share()
	pl := w.conn.StartPipeline(ctx)
	w.parses, w.parseAt = w.parses[:0], w.parseAt[:0]
	for i, op := range w.batch {
		w.parseAt = append(w.parseAt, len(w.parses))
		for j := range len(op.After) + 1 {
			stmt, args, formats := op.step(j)
			if !w.prepared[stmt.Name] {
				pl.SendPrepare(stmt.Name, stmt.SQL, stmt.ParamOIDs)
				w.prepared[stmt.Name] = true
				w.parses = append(w.parses, stmt.Name)
			}
			pl.SendQueryPrepared(stmt.Name, args, formats, binaryResults)
		}
		// A sync point ends each transaction: after the shared ops, and
		// after each op of its own.
		if i >= w.shared-1 {
			pl.SendPipelineSync()
		}
	}
	w.parseAt = append(w.parseAt, len(w.parses))
	if err := pl.Flush(); err != nil {
		w.broken(pl, err)
		return
	}
	defer w.cancel.disarm()
	if w.shared > 0 {
		// The shared transaction runs until its earliest deadline.
		var first time.Time
		for _, op := range w.batch[:w.shared] {
			if !op.Deadline.IsZero() && (first.IsZero() || op.Deadline.Before(first)) {
				first = op.Deadline
			}
		}
		w.cancel.arm(w.conn, first)
		if err := w.collectShared(pl); err != nil {
			w.broken(pl, err)
			return
		}
	}
	for i := w.shared; i < len(w.batch); i++ {
		w.cancel.arm(w.conn, w.batch[i].Deadline)
		parsed, err, fatal := collect(pl, w.batch[i])
		if fatal {
			w.broken(pl, err)
			return
		}
		if err != nil {
			w.unprepare(i, parsed, i+1)
			if w.replan(i, err) {
				continue
			}
		}
		w.done(i, err)
	}
	if err := pl.Close(); err != nil {
		w.pool.log.Warn("closing pipeline", "err", err)
	}
	if w.stale {
		w.stale = false
		w.dropConn(ctx)
	}
	stats.pipelines.Observe(time.Since(began))
}

// stalePlan reports whether err is Postgres refusing a statement that was
// prepared on the connection before a schema change reshaped what it
// returns ("cached plan must not change result type"). The statement did
// not run; on a new connection, prepared anew, it can. The error is told
// by its SQLSTATE (feature_not_supported, which other refusals share) and
// the server function that raises it, not by its message, which the
// server's lc_messages may translate.
func stalePlan(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "0A000" && pgErr.Routine == "RevalidateCachedQuery"
}

// replan reports whether op i, failed with err, runs again on a fresh
// connection (stalePlan), and if so queues it. An op is run again at most
// once for each of the pool's connections, since each may hold its own
// stale copy of the statement; past that, a schema change that keeps
// coming gets its error through.
func (w *worker) replan(i int, err error) bool {
	op := w.batch[i]
	if !stalePlan(err) || op.replans >= w.pool.conns {
		return false
	}
	op.replans++
	w.stale = true
	w.again(i)
	return true
}

// unprepare forgets the statements that ops from..to-1 were to prepare
// once op from has failed after parsed of its own prepares: Postgres
// skips what follows an error up to the sync point, prepares too, and
// those are prepared again next time.
func (w *worker) unprepare(from, parsed, to int) {
	for _, name := range w.parses[w.parseAt[from]+parsed : w.parseAt[to]] {
		delete(w.prepared, name)
	}
}

// collectShared reads the results of the ops sharing the pipeline's
// transaction, up to its sync point. A read is finished as soon as its
// rows are in; a write once the transaction has committed. When an op
// fails, Postgres rolls the transaction back and skips the rest: the
// failed op gets its error (unless it is a deadlock or serialization
// failure, which it runs again), the writes before it and every op after
// it run again alone. It returns an error only when the connection is
// unusable.
func (w *worker) collectShared(pl *pgconn.Pipeline) error {
	failed := -1
	for i := range w.shared {
		op := w.batch[i]
		parsed, err, fatal := collectResult(pl, op)
		if fatal {
			return err
		}
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) {
			failed = i
			w.unprepare(i, parsed, w.shared)
			// A write that lost a deadlock or a serialization conflict
			// is run again; a read may have passed rows on already.
			switch {
			case op.Rows == nil && (pgErr.Code == "40P01" || pgErr.Code == "40001"):
				w.again(i)
			case w.replan(i, err):
			default:
				w.done(i, err)
			}
			break
		}
		if op.Rows != nil {
			w.done(i, err)
		}
	}
	// The sync point: the transaction has committed, or was rolled back.
	if _, err, fatal := collect(pl, nil); fatal {
		return err
	}
	for i := range w.shared {
		switch {
		case w.batch[i] == nil:
		case failed < 0:
			w.done(i, nil)
		default:
			w.again(i)
		}
	}
	return nil
}

// again queues op i of the batch to run again, alone.
func (w *worker) again(i int) {
	op := w.batch[i]
	w.batch[i] = nil
	op.alone = true
	select {
	case w.pool.queue <- op:
	default:
		w.pool.finish(op, &ShardError{Shard: w.pool.name, Err: errQueueFull, Unsent: true})
	}
}

// broken fails the remaining ops after the connection failed.
func (w *worker) broken(pl *pgconn.Pipeline, err error) {
	pl.Close()
	w.dropConn(context.Background())
	w.pool.markDown(err)
	w.fail(&ShardError{Shard: w.pool.name, Err: err})
}

// collectResult reads the results of an op that shares its transaction:
// its prepares' and its statement's, up to the statement's rows or the
// first error. It returns how many of the op's prepares succeeded, the
// op's error, and whether the connection is unusable.
func collectResult(pl *pgconn.Pipeline, op *Op) (parsed int, err error, fatal bool) {
	for {
		res, rerr := pl.GetResults()
		if rerr != nil {
			return parsed, rerr, connLost(rerr)
		}
		switch r := res.(type) {
		case *pgconn.StatementDescription:
			parsed++
		case *pgconn.ResultReader:
			for r.NextRow() {
				if op.Rows != nil && err == nil {
					err = op.Rows.Row(r.Values())
				}
			}
			if _, cerr := r.Close(); cerr != nil {
				return parsed, cerr, connLost(cerr)
			}
			return parsed, err, false
		default:
			return parsed, errors.New("pipeline result out of order"), true
		}
	}
}

// connLost reports whether an error reading results means the connection
// is gone: any error that is not Postgres's answer to a statement, and
// Postgres's own notice that it is ending the session (severity FATAL or
// PANIC, as when an administrator terminates the backend or the server
// shuts down: SQLSTATE 57P01-57P03), which it sends before closing.
func connLost(err error) bool {
	var pgErr *pgconn.PgError
	return !errors.As(err, &pgErr) ||
		pgErr.Severity == "FATAL" || pgErr.Severity == "PANIC" || strings.HasPrefix(pgErr.Code, "57P0")
}

// collect reads one op's results up to its sync point; with op nil, it
// reads up to the next sync point. It returns how many of the op's
// prepares succeeded, the op's error, and whether the connection is
// unusable.
func collect(pl *pgconn.Pipeline, op *Op) (parsed int, err error, fatal bool) {
	for {
		res, rerr := pl.GetResults()
		if rerr != nil {
			if connLost(rerr) {
				return parsed, rerr, true
			}
			if err == nil {
				err = rerr
			}
			continue
		}
		switch r := res.(type) {
		case *pgconn.StatementDescription:
			parsed++
		case *pgconn.ResultReader:
			for r.NextRow() {
				if op != nil && op.Rows != nil && err == nil {
					err = op.Rows.Row(r.Values())
				}
			}
			if _, cerr := r.Close(); cerr != nil && err == nil {
				err = cerr
			}
		case *pgconn.PipelineSync:
			return parsed, err, false
		case nil:
			return parsed, errors.New("pipeline ended before its sync point"), true
		}
	}
}

// ShardError reports a shard that could not be reached or whose connection
// failed, as opposed to an error the shard returned for a statement.
type ShardError struct {
	Shard string
	Err   error
	// Unsent is set when the statement never left the gateway.
	Unsent bool
}

// Unsent reports whether err is a shard failure that kept the statement
// from being sent at all, so that it certainly did not apply.
func Unsent(err error) bool {
	var se *ShardError
	return errors.As(err, &se) && se.Unsent
}

func (e *ShardError) Error() string { return fmt.Sprintf("shard %s: %v", e.Shard, e.Err) }
func (e *ShardError) Unwrap() error { return e.Err }
