package sharding

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
)

// binaryResults asks Postgres for every result column in binary format.
var binaryResults = []int16{1}

// MaxQueued is how many ops a pool holds for its connections; past it,
// Submit refuses ops with ErrQueueFull rather than letting requests wait
// behind a shard that is too far behind.
const MaxQueued = 1024

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
	config *connConfig
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
	// quantile caches the latency quantile reads speculate by.
	quantile quantileCache
	// tx holds the connections of transactions that last several round
	// trips (pool_tx.go).
	tx txState
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
	pc, err := newConnConfig(cfg.URL, func(pc *pgconn.Config) {
		pc.BuildContextWatcherHandler = func(conn *pgconn.PgConn) ctxwatch.Handler {
			return &pgconn.CancelRequestContextWatcherHandler{Conn: conn, DeadlineDelay: cancelDeadlineDelay}
		}
	}, cfg.Log.With("shard", cfg.Name))
	if err != nil {
		return nil, fmt.Errorf("shard %s: %w", cfg.Name, err)
	}
	p := &Pool{name: cfg.Name, config: pc, queue: make(chan *Op, MaxQueued), stop: make(chan struct{}),
		log: cfg.Log.With("shard", cfg.Name), timeout: cfg.Timeout, onChange: cfg.OnChange, conns: cfg.Conns,
		tx: newTxState(cfg.Conns)}
	for range cfg.Conns {
		p.wg.Go(p.work)
	}
	return p, nil
}

// Submit queues op for one of the pool's connections. It fails the op at
// once when the shard is down or its queue is full (ErrQueueFull).
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
		p.finish(op, &ShardError{Shard: p.name, Err: ErrQueueFull, Unsent: true})
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
	// ErrQueueFull is the error, in a ShardError, of ops refused because
	// the pool's queue was full: the shard is not down, it is behind.
	ErrQueueFull = errors.New("too many statements queued for the shard")
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

// probe connects to the shard until it answers, then marks it up. It
// logs why it cannot each time the reason changes: the error that marked
// the shard down may not be what keeps it down (a connection killed, then
// a password refused).
func (p *Pool) probe() {
	defer p.probing.Store(false)
	t := time.NewTicker(probeInterval)
	defer t.Stop()
	last := ""
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		conn, err := pgconn.ConnectConfig(ctx, p.config.get())
		if err == nil {
			err = conn.Exec(ctx, "SELECT 1").Close()
			conn.Close(ctx)
		}
		cancel()
		if err != nil && err.Error() != last {
			last = err.Error()
			p.log.Warn("shard is still down", "err", err)
		}
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
	p.closeTx()
	for {
		select {
		case op := <-p.queue:
			p.finish(op, errPoolClosed)
		default:
			return
		}
	}
}
