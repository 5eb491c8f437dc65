package sharding

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

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
// batch, reads (ops with Rows) first, then in their order, and counts
// them; one alone shares nothing. The others keep the order they were
// queued in. A read answered before the commit thus sees none of the
// transaction's writes, which its failure could still undo.
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
		case as && bs && (a.Rows == nil) != (b.Rows == nil):
			if a.Rows != nil {
				return -1
			}
			return 1
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
		conn, err := pgconn.ConnectConfig(ctx, w.pool.config.get())
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
		if err := w.collectShared(ctx, pl); err != nil {
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
			if strayCancel(ctx, w.batch[i], err) {
				w.again(i)
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
// failure, or a cancel it was not the target of, which it runs again),
// the writes before it and every op after it run again alone. It
// returns an error only when the connection is unusable.
func (w *worker) collectShared(ctx context.Context, pl *pgconn.Pipeline) error {
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
			case strayCancel(ctx, op, err):
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
	// The sync point: the transaction has committed, or was rolled back,
	// which the commit itself may do (a deferred constraint): the writes
	// then run again alone, as after an op's failure.
	if _, err, fatal := collect(pl, nil); fatal {
		return err
	} else if err != nil && failed < 0 {
		failed = w.shared
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

// strayCancel reports whether op, failed with err, was cancelled by a
// cancel request meant for a statement before it, and runs again. Postgres
// cancels whatever statement its backend runs when the request arrives,
// which comes on a connection of its own, from the canceller's timer: the
// statement it was sent for may have ended by then, and the next one of
// the pipeline (or of the next pipeline) been cancelled in its place. An
// op still short of its deadline, whose pipeline is within the pool's
// timeout (which cancels too), was not the target; it runs again unless it
// passed rows on already, a few times at most. Its statement was rolled
// back with its transaction: running it again applies it once.
func strayCancel(ctx context.Context, op *Op, err error) bool {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "57014" || ctx.Err() != nil || op.passed > 0 || op.cancels >= maxStrayCancels {
		return false
	}
	if !op.Deadline.IsZero() && !time.Now().Add(cancelSlack).Before(op.Deadline) {
		return false
	}
	op.cancels++
	return true
}

// maxStrayCancels bounds the times an op runs again after a cancel meant
// for another.
const maxStrayCancels = 3

// again queues op i of the batch to run again, alone.
func (w *worker) again(i int) {
	op := w.batch[i]
	w.batch[i] = nil
	op.alone = true
	select {
	case w.pool.queue <- op:
	default:
		w.pool.finish(op, &ShardError{Shard: w.pool.name, Err: ErrQueueFull, Unsent: true})
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
					op.passed++
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
// unusable; op.passed counts the rows it handed on.
func collect(pl *pgconn.Pipeline, op *Op) (parsed int, err error, fatal bool) {
	if op == nil {
		return collectEach(pl, nil, nil, nil)
	}
	return collectEach(pl, op.Rows, op.Sinks, &op.passed)
}

// collectEach reads results up to the next sync point, handing the rows
// of every statement to rows or, with each set, those of the ith
// statement to each[i], counting them in passed when set, and returns as
// collect does.
func collectEach(pl *pgconn.Pipeline, rows RowSink, each []RowSink, passed *int) (parsed int, err error, fatal bool) {
	for i := 0; ; {
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
			sink := rows
			if each != nil {
				sink = sinkAt(each, i)
			}
			i++
			for r.NextRow() {
				if sink != nil && err == nil {
					err = sink.Row(r.Values())
					if passed != nil {
						*passed++
					}
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
