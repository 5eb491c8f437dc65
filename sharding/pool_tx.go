package sharding

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// Tx is a transaction on one of a pool's connections that lasts several
// round trips, as a lightweight transaction holds its partition's lock in
// one while it writes the other replicas. Its connections are the pool's
// own but not its workers': a transaction waiting on another shard never
// holds a connection that the pool's ops need, so transactions on two
// shards waiting on each other's ops cannot starve both pools. At most as
// many run at once as the pool has workers; Begin waits for a place.
//
// A Tx is used by one goroutine at a time, and ends with Commit or
// Rollback, which give its connection back.
type Tx struct {
	pool *Pool
	c    *txConn
}

// txConn is a connection of the pool's transactions.
type txConn struct {
	conn *pgconn.PgConn
	// downs is the pool's downs when conn was opened: a connection
	// opened before the shard last failed is not used again.
	downs uint64
}

// txState is a pool's transactions: their idle connections, and the
// places that bound how many run at once.
type txState struct {
	slots chan struct{}
	idle  chan *txConn
}

func newTxState(conns int) txState {
	return txState{slots: make(chan struct{}, conns), idle: make(chan *txConn, conns)}
}

// Begin begins a transaction on the shard and runs steps in it, all in one
// round trip, handing the rows of step i to sinks[i] (nil discards them).
// A step that fails, or ctx ending while a step waits (for a lock, say),
// rolls the transaction back and returns the error: a PgError when the
// shard refused a step, a ShardError when it could not be reached.
func (p *Pool) Begin(ctx context.Context, steps []Step, sinks []RowSink) (*Tx, error) {
	if p.run != nil {
		// A pool without connections runs each step as an op.
		tx := &Tx{pool: p}
		return tx, tx.Run(ctx, steps, sinks)
	}
	if p.down.Load() {
		return nil, &ShardError{Shard: p.name, Err: ErrShardDown, Unsent: true}
	}
	select {
	case p.tx.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-p.stop:
		return nil, errPoolClosed
	}
	c, err := p.txConn(ctx)
	if err != nil {
		<-p.tx.slots
		return nil, err
	}
	tx := &Tx{pool: p, c: c}
	begin := []Step{{Stmt: &beginStatement}}
	if err := tx.run(ctx, append(begin, steps...), append([]RowSink{nil}, sinks...)); err != nil {
		tx.Rollback(ctx)
		return nil, err
	}
	return tx, nil
}

// Run runs steps in the transaction, in one round trip, as Begin does.
// On failure the transaction can only be rolled back.
func (tx *Tx) Run(ctx context.Context, steps []Step, sinks []RowSink) error {
	if tx.pool.run != nil {
		for i, s := range steps {
			op := NewOp(s.Stmt, s.Args, s.Formats, sinkAt(sinks, i))
			tx.pool.Submit(op)
			if err := op.Wait(ctx); err != nil {
				return err
			}
		}
		return nil
	}
	return tx.run(ctx, steps, sinks)
}

// Commit commits the transaction and gives its connection back.
func (tx *Tx) Commit(ctx context.Context) error {
	if tx.c == nil {
		return nil
	}
	err := tx.run(ctx, []Step{{Stmt: &commitStatement}}, nil)
	tx.end()
	return err
}

// Rollback rolls the transaction back, unless it has ended, and gives its
// connection back. It goes on for a while past ctx, so that a lock the
// transaction holds is not left to the connection's end.
func (tx *Tx) Rollback(ctx context.Context) {
	if tx.c == nil {
		return
	}
	if conn := tx.c.conn; conn != nil && !conn.IsClosed() && conn.TxStatus() != 'I' {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		if _, err := conn.Exec(rctx, "ROLLBACK").ReadAll(); err != nil {
			tx.drop(rctx)
		}
		cancel()
	}
	tx.end()
}

// end gives the transaction's connection back to the idle ones, or closes
// it when it is broken or they are enough, and frees its place.
func (tx *Tx) end() {
	c, p := tx.c, tx.pool
	tx.c = nil
	if c.conn != nil && !c.conn.IsClosed() && c.conn.TxStatus() == 'I' && c.downs == p.downs.Load() {
		select {
		case p.tx.idle <- c:
			<-p.tx.slots
			return
		default:
		}
	}
	if c.conn != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		c.conn.Close(ctx)
		cancel()
		p.stats.open.Add(-1)
	}
	<-p.tx.slots
}

// drop closes a connection that failed.
func (tx *Tx) drop(ctx context.Context) {
	if tx.c.conn != nil {
		tx.c.conn.Close(ctx)
		tx.c.conn = nil
		tx.pool.stats.open.Add(-1)
	}
}

// txConn returns an idle connection of the pool's transactions, or opens
// one.
func (p *Pool) txConn(ctx context.Context) (*txConn, error) {
	for {
		select {
		case c := <-p.tx.idle:
			if c.downs == p.downs.Load() && !c.conn.IsClosed() {
				return c, nil
			}
			c.conn.Close(ctx)
			p.stats.open.Add(-1)
			continue
		default:
		}
		break
	}
	downs := p.downs.Load()
	conn, err := pgconn.ConnectConfig(ctx, p.config.get())
	if err != nil {
		if ctx.Err() == nil {
			p.markDown(err)
		}
		return nil, &ShardError{Shard: p.name, Err: err, Unsent: true}
	}
	p.stats.open.Add(1)
	return &txConn{conn: conn, downs: downs}, nil
}

// closeTx closes the idle connections of the pool's transactions.
func (p *Pool) closeTx() {
	for {
		select {
		case c := <-p.tx.idle:
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			c.conn.Close(ctx)
			cancel()
		default:
			return
		}
	}
}

// run sends steps as one pipeline, unprepared, and reads their results
// (collect). A lost connection marks the shard down.
func (tx *Tx) run(ctx context.Context, steps []Step, sinks []RowSink) error {
	conn := tx.c.conn
	if conn == nil {
		return &ShardError{Shard: tx.pool.name, Err: errors.New("the transaction's connection failed")}
	}
	pl := conn.StartPipeline(ctx)
	for _, s := range steps {
		pl.SendQueryParams(s.Stmt.SQL, s.Args, s.Stmt.ParamOIDs, s.Formats, binaryResults)
	}
	pl.SendPipelineSync()
	err := pl.Flush()
	fatal := err != nil
	if err == nil {
		if sinks == nil {
			sinks = []RowSink{} // each statement's rows to none
		}
		_, err, fatal = collectEach(pl, nil, sinks, nil)
	}
	if fatal {
		pl.Close()
		tx.drop(ctx)
		if ctx.Err() == nil {
			tx.pool.markDown(err)
		}
		return &ShardError{Shard: tx.pool.name, Err: err}
	}
	if cerr := pl.Close(); cerr != nil && err == nil {
		err = cerr
	}
	return err
}

func sinkAt(sinks []RowSink, i int) RowSink {
	if i < len(sinks) {
		return sinks[i]
	}
	return nil
}

var (
	beginStatement  = Statement{SQL: "BEGIN"}
	commitStatement = Statement{SQL: "COMMIT"}
)
