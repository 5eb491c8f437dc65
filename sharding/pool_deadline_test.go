package sharding_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/cqlpg/cqlpg/sharding"
	"github.com/cqlpg/cqlpg/sharding/localpg"
)

// TestPoolDeadline: a statement still running when its op's deadline
// passes is cancelled (SQLSTATE 57014) at the deadline, the op queued
// behind it in the same pipeline runs, and the connection stays usable;
// an op without a deadline is not cancelled.
func TestPoolDeadline(t *testing.T) {
	ctx, pool := onePool(t)
	sleep := sharding.NewStatement("SELECT pg_sleep(5)", nil)
	quick := sharding.NewStatement("SELECT 1", nil)
	notify := make(chan *sharding.Op, 2)
	began := time.Now()
	slow := sharding.NewNotifyOp(sleep, nil, nil, nil, notify, 0)
	slow.Deadline = began.Add(300 * time.Millisecond)
	next := sharding.NewNotifyOp(quick, nil, nil, nil, notify, 1)
	next.Deadline = began.Add(10 * time.Second)
	pool.Submit(slow)
	pool.Submit(next)
	for range 2 {
		op := <-notify
		switch op.Tag {
		case 0:
			var pgErr *pgconn.PgError
			if !errors.As(op.Err(), &pgErr) || pgErr.Code != "57014" {
				t.Fatalf("the statement past its deadline ended with %v, want query_canceled", op.Err())
			}
			if d := time.Since(began); d > 2*time.Second {
				t.Errorf("cancelled after %v, deadline 300ms", d)
			}
			t.Logf("cancelled after %v", time.Since(began).Round(time.Millisecond))
		case 1:
			if op.Err() != nil {
				t.Fatalf("the op behind the cancelled one: %v", op.Err())
			}
		}
	}
	if st := pool.Stats(); st.Cancelled != 1 || !pool.Alive() {
		t.Errorf("cancelled %d, alive %v; want 1 and alive", st.Cancelled, pool.Alive())
	}
	op := sharding.NewOp(sharding.NewStatement("SELECT pg_sleep(0.4)", nil), nil, nil, nil)
	pool.Submit(op)
	if err := op.Wait(ctx); err != nil {
		t.Fatalf("an op without a deadline: %v", err)
	}
}

// TestPoolTimeoutCancels: a pipeline still running at the pool's timeout
// has its statement cancelled rather than its connection broken: the op
// fails, the shard stays up and the connection serves the next op.
func TestPoolTimeoutCancels(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	clusters, stop, err := localpg.TempClusters(ctx, 1, localpg.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	pool, err := sharding.NewPool(sharding.PoolConfig{Name: "s0", URL: clusters[0].URL(), Conns: 1, Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	began := time.Now()
	op := sharding.NewOp(sharding.NewStatement("SELECT pg_sleep(5)", nil), nil, nil, nil)
	pool.Submit(op)
	err = op.Wait(ctx)
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "57014" {
		t.Fatalf("a statement past the pool's timeout ended with %v, want query_canceled", err)
	}
	t.Logf("cancelled after %v", time.Since(began).Round(time.Millisecond))
	if !pool.Alive() {
		t.Fatal("the shard was marked down")
	}
	next := sharding.NewOp(sharding.NewStatement("SELECT 1", nil), nil, nil, nil)
	pool.Submit(next)
	if err := next.Wait(ctx); err != nil {
		t.Fatalf("the next op: %v", err)
	}
	if st := pool.Stats(); st.Open != 1 {
		t.Errorf("%d connections open, want the one kept", st.Open)
	}
}

// TestPoolCancelSparesNextOp runs ops whose statement ends just as their
// deadline passes, each followed on the connection by an op with time to
// spare, in the same pipeline or the next one. The cancel sent at the
// deadline takes a connection and a process of its own on the shard, and
// often arrives once the statement it was sent for has ended: Postgres
// then cancels the next statement instead. The next op must succeed all
// the same.
func TestPoolCancelSparesNextOp(t *testing.T) {
	_, pool := onePool(t)
	sleep := sharding.NewStatement("SELECT pg_sleep($1::float8)", nil)
	const trials = 60
	cancelled, hit := 0, 0
	for i := range trials {
		notify := make(chan *sharding.Op, 2)
		began := time.Now()
		first := sharding.NewNotifyOp(sleep, [][]byte{[]byte("0.05")}, nil, nil, notify, 0)
		first.Deadline = began.Add(50*time.Millisecond - time.Duration(i%6)*500*time.Microsecond)
		next := sharding.NewNotifyOp(sleep, [][]byte{[]byte("0.02")}, nil, nil, notify, 1)
		next.Deadline = began.Add(10 * time.Second)
		pool.Submit(first)
		if i%2 == 1 {
			<-notify // the next op in the pipeline after the first one's
		}
		pool.Submit(next)
		for range 2 - i%2 {
			<-notify
		}
		var pgErr *pgconn.PgError
		if errors.As(first.Err(), &pgErr) && pgErr.Code == "57014" {
			cancelled++
		}
		if err := next.Err(); errors.As(err, &pgErr) && pgErr.Code == "57014" {
			hit++
		} else if err != nil {
			t.Fatalf("trial %d: the next op: %v", i, err)
		}
	}
	t.Logf("%d of %d first ops were cancelled at their deadline; the others had ended when their cancel arrived",
		cancelled, trials)
	if hit > 0 {
		t.Errorf("%d of %d ops were cancelled by a cancel meant for the op before them", hit, trials)
	}
	if st := pool.Stats(); st.Cancelled == 0 {
		t.Error("no cancel was sent")
	}
}

// TestPoolQueueFull fills the queue of a pool whose one connection is
// busy: the op past MaxQueued is refused at once, as a shard error that
// never left the gateway, wrapping ErrQueueFull; the ops queued before it
// run once the connection is free.
func TestPoolQueueFull(t *testing.T) {
	ctx, pool := onePool(t)
	sleep := sharding.NewOp(sharding.NewStatement("SELECT pg_sleep(2)", nil), nil, nil, nil)
	pool.Submit(sleep)
	// The worker has taken the sleep from the queue once it is busy.
	for pool.Stats().Busy == 0 {
		time.Sleep(time.Millisecond)
	}
	quick := sharding.NewStatement("SELECT 1", nil)
	queued := make([]*sharding.Op, sharding.MaxQueued)
	for i := range queued {
		queued[i] = sharding.NewOp(quick, nil, nil, nil)
		pool.Submit(queued[i])
	}
	refused := sharding.NewOp(quick, nil, nil, nil)
	pool.Submit(refused)
	err := refused.Wait(ctx)
	var se *sharding.ShardError
	if !errors.Is(err, sharding.ErrQueueFull) || !errors.As(err, &se) || !se.Unsent {
		t.Fatalf("the op past a full queue: %v, want an unsent shard error wrapping ErrQueueFull", err)
	}
	if err := sleep.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	for i, op := range queued {
		if err := op.Wait(ctx); err != nil {
			t.Fatalf("queued op %d: %v", i, err)
		}
	}
	if !pool.Alive() {
		t.Error("a full queue marked the shard down")
	}
}
