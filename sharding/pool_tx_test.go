package sharding_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/cqlpg/cqlpg/sharding"
)

// TestPoolTx runs transactions that last several round trips on a real
// PostgreSQL, beside the pool's ops: each step's rows reach its own sink,
// a lock taken in one transaction holds until it commits or rolls back,
// the pool's ops run while every worker connection's shard has a
// transaction open, a step the shard refuses or a lock wait cut short by
// the context ends the transaction with the error and leaves nothing
// held, and a transaction whose backend dies fails as a shard failure.
func TestPoolTx(t *testing.T) {
	ctx, pool := onePool(t)
	step := func(sql string) sharding.Step { return sharding.Step{Stmt: sharding.NewStatement(sql, nil)} }
	exec := func(sql string) error {
		op := sharding.NewOp(sharding.NewStatement(sql, nil), nil, nil, nil)
		pool.Submit(op)
		return op.Wait(ctx)
	}
	if err := exec("CREATE TABLE t (k int PRIMARY KEY, v text)"); err != nil {
		t.Fatal(err)
	}

	// Rows by step; the lock holds while the transaction is open, and the
	// pool's one worker connection still serves ops.
	var a, b rows
	tx, err := pool.Begin(ctx, []sharding.Step{step("SELECT pg_advisory_xact_lock(7)"), step("SELECT 1, 'a'"), step("SELECT 2, 'b'")},
		[]sharding.RowSink{nil, &a, &b})
	if err != nil {
		t.Fatal(err)
	}
	if len(a) != 1 || a[0][1] != "a" || len(b) != 1 || b[0][1] != "b" {
		t.Fatalf("rows by step: %v %v", a, b)
	}
	if err := exec("INSERT INTO t VALUES (0, 'op beside the transaction')"); err != nil {
		t.Fatalf("an op while a transaction is open: %v", err)
	}
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	if _, err := pool.Begin(short, []sharding.Step{step("SELECT pg_advisory_xact_lock(7)")}, nil); err == nil {
		t.Fatal("a second transaction took the lock the first holds")
	}
	cancel()
	if err := tx.Run(ctx, []sharding.Step{step("INSERT INTO t VALUES (1, 'in the transaction')")}, nil); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	// Committed, the write is there and the lock free.
	var got rows
	tx, err = pool.Begin(ctx, []sharding.Step{step("SELECT pg_try_advisory_xact_lock(7)::text"), step("SELECT v FROM t WHERE k = 1")},
		[]sharding.RowSink{&got, &got})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0][0] != "true" || got[1][0] != "in the transaction" {
		t.Fatalf("after the commit: %v, want the lock free and the row written", got)
	}
	if err := tx.Run(ctx, []sharding.Step{step("INSERT INTO t VALUES (2, 'rolled back')")}, nil); err != nil {
		t.Fatal(err)
	}
	tx.Rollback(ctx)

	// A refused step ends the transaction; the next one finds nothing
	// held and nothing written.
	_, err = pool.Begin(ctx, []sharding.Step{step("SELECT pg_advisory_xact_lock(7)"), step("INSERT INTO t VALUES (1, 'twice')")}, nil)
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "23505" {
		t.Fatalf("a step the shard refuses: %v, want unique_violation", err)
	}
	got = nil
	tx, err = pool.Begin(ctx, []sharding.Step{step("SELECT pg_try_advisory_xact_lock(7)::text"), step("SELECT count(*)::text FROM t WHERE k = 2")},
		[]sharding.RowSink{&got, &got})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0][0] != "true" || got[1][0] != "0" {
		t.Fatalf("after a refused step and a rollback: %v, want the lock free and no row 2", got)
	}

	// A lock wait that outlasts its context is cancelled on the shard.
	short, cancel = context.WithTimeout(ctx, 200*time.Millisecond)
	start := time.Now()
	_, err = pool.Begin(short, []sharding.Step{step("SELECT pg_advisory_xact_lock(7)")}, nil)
	cancel()
	if err == nil || time.Since(start) > 5*time.Second {
		t.Fatalf("a lock wait past its context: %v after %v", err, time.Since(start))
	}
	tx.Rollback(ctx)

	// A backend that dies fails the transaction as a shard failure, and
	// the next transaction runs on a new connection.
	_, err = pool.Begin(ctx, []sharding.Step{step("SELECT pg_terminate_backend(pg_backend_pid())")}, nil)
	var se *sharding.ShardError
	if !errors.As(err, &se) {
		t.Fatalf("a transaction whose backend died: %v (%T), want a shard error", err, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		tx, err := pool.Begin(ctx, []sharding.Step{step("SELECT 1")}, nil)
		if err == nil {
			tx.Rollback(ctx)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no transaction after a backend died: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
