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

// rows collects a statement's rows as text.
type rows [][]string

func (r *rows) Row(values [][]byte) error {
	var row []string
	for _, v := range values {
		row = append(row, string(v))
	}
	*r = append(*r, row)
	return nil
}

// onePool starts a throwaway PostgreSQL and a pool of one connection to
// it, both gone when the test ends, and returns them with a context
// bounding the test.
func onePool(t *testing.T) (context.Context, *sharding.Pool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	clusters, stop, err := localpg.TempClusters(ctx, 1, localpg.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	pool, err := sharding.NewPool(sharding.PoolConfig{Name: "s0", URL: clusters[0].URL(), Conns: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return ctx, pool
}

// TestPoolTransactions runs ops of several statements on a real
// PostgreSQL: they apply together or not at all, a local setting lasts
// for the op alone, and a statement whose op failed before it was
// prepared is prepared again, while one that was prepared is not.
func TestPoolTransactions(t *testing.T) {
	ctx, pool := onePool(t)
	run := func(op *sharding.Op) error {
		t.Helper()
		pool.Submit(op)
		return op.Wait(ctx)
	}
	text := func(sql string, args ...string) sharding.Step {
		s := sharding.Step{Stmt: sharding.NewStatement(sql, nil)}
		for _, a := range args {
			s.Args = append(s.Args, []byte(a))
		}
		return s
	}
	count := func() string {
		t.Helper()
		var r rows
		if err := run(sharding.NewOp(sharding.NewStatement("SELECT count(*)::text FROM t", nil), nil, nil, &r)); err != nil {
			t.Fatal(err)
		}
		return r[0][0]
	}
	if err := run(sharding.NewTx([]sharding.Step{text("CREATE TABLE t (k int PRIMARY KEY)")}, nil)); err != nil {
		t.Fatal(err)
	}
	insert := "INSERT INTO t VALUES ($1::int)"

	// The second insert fails, so the first one does not apply either.
	err := run(sharding.NewTx([]sharding.Step{text(insert, "1"), text(insert, "1")}, nil))
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "23505" {
		t.Fatalf("duplicate key in one transaction: got %v, want SQLSTATE 23505", err)
	}
	if got := count(); got != "0" {
		t.Fatalf("rows after a failed transaction: %s, want 0", got)
	}
	if err := run(sharding.NewTx([]sharding.Step{text(insert, "1"), text(insert, "2")}, nil)); err != nil {
		t.Fatal(err)
	}
	if got := count(); got != "2" {
		t.Fatalf("rows after a transaction: %s, want 2", got)
	}

	// A setting made local to the op holds for its later statements and
	// is gone afterwards.
	show := text("SELECT current_setting('synchronous_commit')")
	var r rows
	err = run(sharding.NewTx([]sharding.Step{text("SELECT set_config('synchronous_commit', 'on', true)"), show}, &r))
	if err != nil || len(r) != 2 || r[1][0] != "on" {
		t.Fatalf("setting inside the op: %v %v", r, err)
	}
	r = nil
	if err := run(sharding.NewTx([]sharding.Step{show}, &r)); err != nil || r[0][0] != "off" {
		t.Fatalf("setting after the op: %v %v, want off", r, err)
	}

	// A failing first statement skips the prepare of the next one, which
	// must be prepared when it runs again; the failed statement itself
	// was prepared, and must not be prepared twice.
	fresh := text("INSERT INTO t VALUES ($1::int + 100)", "3")
	if err := run(sharding.NewTx([]sharding.Step{text(insert, "1"), fresh}, nil)); err == nil {
		t.Fatal("duplicate key: no error")
	}
	if err := run(sharding.NewTx([]sharding.Step{fresh, text(insert, "4")}, nil)); err != nil {
		t.Fatalf("statements after a failed op: %v", err)
	}
	if got := count(); got != "4" {
		t.Fatalf("rows: %s, want 4", got)
	}
}

// TestPoolSharedTransactions runs ops that share their pipeline's
// transaction (Op.Order) on a real PostgreSQL, one of them failing: the
// failed op gets its error, the write rolled back with it and the ops it
// skipped run again and succeed, and every read passes its rows on
// exactly once.
func TestPoolSharedTransactions(t *testing.T) {
	ctx, pool := onePool(t)
	stmt := func(sql string) *sharding.Statement { return sharding.NewStatement(sql, nil) }
	setup := sharding.NewTx([]sharding.Step{{Stmt: stmt("CREATE TABLE t (k int PRIMARY KEY)")},
		{Stmt: stmt("INSERT INTO t VALUES (1)")}}, nil)
	pool.Submit(setup)
	if err := setup.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	insert, count := stmt("INSERT INTO t VALUES ($1::int)"), stmt("SELECT count(*)::text FROM t WHERE k < $1::int")
	op := func(s *sharding.Statement, arg string, rows sharding.RowSink, order uint64) *sharding.Op {
		o := sharding.NewOp(s, [][]byte{[]byte(arg)}, nil, rows)
		o.Order = order
		return o
	}
	var before, after rows
	ops := []*sharding.Op{
		op(count, "100", &before, 1), // runs first, sees k = 1 alone
		op(insert, "10", nil, 5),     // rolled back, then runs alone
		op(insert, "1", nil, 6),      // fails: duplicate key
		op(insert, "11", nil, 7),     // skipped, then runs alone
		op(count, "100", &after, 9),  // skipped, then runs alone
		op(insert, "12", nil, 0),     // a transaction of its own
	}
	// The connection is busy while the ops queue, so that one pipeline
	// takes them all.
	sleep := sharding.NewOp(stmt("SELECT pg_sleep(0.2)"), nil, nil, nil)
	pool.Submit(sleep)
	time.Sleep(50 * time.Millisecond)
	for _, o := range ops {
		pool.Submit(o)
	}
	for i, o := range ops {
		err := o.Wait(ctx)
		var pgErr *pgconn.PgError
		switch {
		case i == 2 && (!errors.As(err, &pgErr) || pgErr.Code != "23505"):
			t.Errorf("duplicate key: %v, want SQLSTATE 23505", err)
		case i != 2 && err != nil:
			t.Errorf("op %d: %v", i, err)
		}
	}
	if len(before) != 1 || before[0][0] != "1" {
		t.Errorf("read before the failure passed on %v, want one row of 1", before)
	}
	// It runs after the failed transaction; the writes run again may
	// come before or after it.
	if len(after) != 1 {
		t.Errorf("read skipped and run again passed on %v, want one row", after)
	}
	// Ops that share a transaction see one transaction start time.
	var starts rows
	if err := sleep.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	sleep.Reset(sleep.Stmt, nil, nil, nil)
	pool.Submit(sleep)
	time.Sleep(50 * time.Millisecond)
	shared := make([]*sharding.Op, 3)
	for i := range shared {
		shared[i] = op(stmt("SELECT now()::text WHERE $1::int > 0"), "1", &starts, 1)
		pool.Submit(shared[i])
	}
	for _, o := range shared {
		if err := o.Wait(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if len(starts) != 3 || starts[0][0] != starts[1][0] || starts[1][0] != starts[2][0] {
		t.Errorf("transaction start times of ops in one pipeline: %v, want one", starts)
	}
	var all rows
	final := op(stmt("SELECT string_agg(k::text, ',' ORDER BY k) FROM t WHERE $1::int > 0"), "1", &all, 0)
	pool.Submit(final)
	if err := final.Wait(ctx); err != nil || len(all) != 1 || all[0][0] != "1,10,11,12" {
		t.Errorf("rows after the ops: %v %v, want 1,10,11,12", all, err)
	}
}

// TestPoolSharedReadsSeeNoSharedWrite shares one pipeline's transaction
// between a write, a read of the row it writes, queued after it and
// ordered after it too, and a second write; the transaction then fails at
// its commit (the first write breaks a deferred unique constraint). The
// read must not pass on the first write, which is never applied: reads of
// a shared transaction run before its writes, and see only what others
// committed. The writes must not be acknowledged by the failed commit:
// they run again alone, the first failing for its own reason and the
// second applying.
func TestPoolSharedReadsSeeNoSharedWrite(t *testing.T) {
	ctx, pool := onePool(t)
	stmt := func(sql string) *sharding.Statement { return sharding.NewStatement(sql, nil) }
	setup := sharding.NewTx([]sharding.Step{
		{Stmt: stmt("CREATE TABLE t (k int PRIMARY KEY, v text CONSTRAINT one_v UNIQUE DEFERRABLE INITIALLY DEFERRED)")},
		{Stmt: stmt("INSERT INTO t VALUES (0, 'taken')")}}, nil)
	pool.Submit(setup)
	if err := setup.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	op := func(sql, arg string, rows sharding.RowSink, order uint64) *sharding.Op {
		o := sharding.NewOp(stmt(sql), [][]byte{[]byte(arg)}, nil, rows)
		o.Order = order
		return o
	}
	var read rows
	lost := op("INSERT INTO t VALUES (1, $1::text)", "taken", nil, 5)
	reader := op("SELECT v FROM t WHERE k = 1 AND $1::int > 0", "1", &read, 6)
	kept := op("INSERT INTO t VALUES (2, $1::text)", "free", nil, 7)
	// The connection is busy while the ops queue, so that one pipeline
	// takes them all.
	sleep := sharding.NewOp(stmt("SELECT pg_sleep(0.2)"), nil, nil, nil)
	pool.Submit(sleep)
	for pool.Stats().Busy == 0 {
		time.Sleep(time.Millisecond)
	}
	for _, o := range []*sharding.Op{lost, reader, kept} {
		pool.Submit(o)
	}
	var pgErr *pgconn.PgError
	if err := lost.Wait(ctx); !errors.As(err, &pgErr) || pgErr.Code != "23505" {
		t.Errorf("the write breaking the constraint: %v, want SQLSTATE 23505", err)
	}
	if err := reader.Wait(ctx); err != nil || len(read) != 0 {
		t.Errorf("the read of the row that write names passed on %v (%v), want nothing", read, err)
	}
	if err := kept.Wait(ctx); err != nil {
		t.Errorf("the other write: %v", err)
	}
	var all rows
	final := op("SELECT string_agg(k || '=' || v, ',' ORDER BY k) FROM t WHERE $1::int > 0", "1", &all, 0)
	pool.Submit(final)
	if err := final.Wait(ctx); err != nil || len(all) != 1 || all[0][0] != "0=taken,2=free" {
		t.Errorf("rows after the ops: %v %v, want 0=taken,2=free", all, err)
	}
}

// TestPoolLiveness kills a shard's server: the pool marks it down at the
// first failure, fails ops at once while it is down, tells its listener,
// and marks it up again once the server is back.
func TestPoolLiveness(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	clusters, stop, err := localpg.TempClusters(ctx, 1, localpg.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	changes := make(chan bool, 4)
	pool, err := sharding.NewPool(sharding.PoolConfig{Name: "s0", URL: clusters[0].URL(), Conns: 2,
		OnChange: func(up bool) { changes <- up }})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	ping := func() error {
		op := sharding.NewOp(sharding.NewStatement("SELECT 1", nil), nil, nil, nil)
		pool.Submit(op)
		return op.Wait(ctx)
	}
	if err := ping(); err != nil || !pool.Alive() {
		t.Fatalf("ping: %v, alive %v", err, pool.Alive())
	}
	if err := clusters[0].Kill(); err != nil {
		t.Fatal(err)
	}
	if err := ping(); err == nil {
		t.Fatal("ping of a killed server succeeded")
	}
	if up := <-changes; up || pool.Alive() {
		t.Fatal("pool still alive after a failed connection")
	}
	start := time.Now()
	err = ping()
	if !sharding.Unsent(err) || !errors.Is(err, sharding.ErrShardDown) || time.Since(start) > 50*time.Millisecond {
		t.Errorf("op on a down shard: %v after %v, want ErrShardDown at once", err, time.Since(start))
	}
	if err := clusters[0].Restart(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case up := <-changes:
		if !up || !pool.Alive() {
			t.Fatalf("change %v, alive %v", up, pool.Alive())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("pool not up 10 s after the server restarted")
	}
	if err := ping(); err != nil {
		t.Errorf("ping after restart: %v", err)
	}
}

// TestPoolBackendTerminated: ops whose backend an administrator
// terminates while they run fail as a shard failure, not as a statement
// error, alone or sharing a transaction, and the pool's next op runs on a
// new connection.
func TestPoolBackendTerminated(t *testing.T) {
	ctx, pool := onePool(t)
	ping := func() error {
		op := sharding.NewOp(sharding.NewStatement("SELECT 1", nil), nil, nil, nil)
		pool.Submit(op)
		return op.Wait(ctx)
	}
	// The op's own backend ends itself, as pg_terminate_backend from
	// another session would end it.
	terminate := sharding.NewStatement("SELECT pg_terminate_backend(pg_backend_pid())", nil)
	for _, shared := range []bool{false, true} {
		if err := ping(); err != nil {
			t.Fatal(err)
		}
		var ops []*sharding.Op
		if shared {
			// Two ops that may share a transaction, queued behind a busy
			// op so that one pipeline takes them together.
			busy := sharding.NewOp(sharding.NewStatement("SELECT pg_sleep(0.2)", nil), nil, nil, nil)
			pool.Submit(busy)
			for range 2 {
				op := sharding.NewOp(terminate, nil, nil, nil)
				op.Order = 1
				ops = append(ops, op)
				pool.Submit(op)
			}
			// The busy op may have joined their pipeline and died with it.
			busy.Wait(ctx)
		} else {
			ops = append(ops, sharding.NewOp(terminate, nil, nil, nil))
			pool.Submit(ops[0])
		}
		for _, op := range ops {
			err := op.Wait(ctx)
			var se *sharding.ShardError
			if !errors.As(err, &se) {
				t.Errorf("shared %v: op on a terminated backend: %v (%T), want a shard error", shared, err, err)
			}
		}
		deadline := time.Now().Add(10 * time.Second)
		for ping() != nil {
			if time.Now().After(deadline) {
				t.Fatalf("shared %v: pool does not recover after its backend was terminated", shared)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// TestPoolStalePlan reshapes a table after a statement was prepared on the
// pool's connection, as a schema change does: Postgres refuses the
// prepared statement ("cached plan must not change result type"), and the
// pool runs it again on a new connection, where it returns the new shape.
// The statement meets its stale plan alone, and as two ops sharing their
// pipeline's transaction, where the first one's refusal rolls back both.
func TestPoolStalePlan(t *testing.T) {
	ctx, pool := onePool(t)
	run := func(op *sharding.Op) error {
		t.Helper()
		pool.Submit(op)
		return op.Wait(ctx)
	}
	ddl := func(sql string) {
		t.Helper()
		if err := run(sharding.NewTx([]sharding.Step{{Stmt: sharding.NewStatement(sql, nil)}}, nil)); err != nil {
			t.Fatal(err)
		}
	}
	ddl("CREATE TABLE t (k int PRIMARY KEY, v int)")
	ddl("INSERT INTO t VALUES (1, 1)")
	sel := sharding.NewStatement("SELECT * FROM t", nil)
	for _, c := range []struct {
		change string
		// columns is how many columns the change adds (or, below zero,
		// drops).
		columns int
		// shared runs the statement after the change as two ops sharing
		// one pipeline's transaction.
		shared bool
	}{
		{"ALTER TABLE t ADD w int", 1, false},
		{"ALTER TABLE t DROP v", -1, true},
		{"ALTER TABLE t ADD x text", 1, true},
		{"ALTER TABLE t DROP w", -1, false},
	} {
		// Prepares the statement on the connection, before the change.
		var r rows
		if err := run(sharding.NewOp(sel, nil, nil, &r)); err != nil {
			t.Fatalf("before %s: %v", c.change, err)
		}
		before := len(r[0])
		ddl(c.change)
		n, busy := 1, (*sharding.Op)(nil)
		if c.shared {
			n = 2
			// A busy op holds the connection so that the next pipeline
			// takes both ops together: the pool's one worker has taken
			// its batch once it counts as busy.
			busy = sharding.NewOp(sharding.NewStatement("SELECT pg_sleep(0.2)", nil), nil, nil, nil)
			pool.Submit(busy)
			for pool.Stats().Busy == 0 {
				time.Sleep(time.Millisecond)
			}
		}
		results := make([]rows, n)
		var ops []*sharding.Op
		for i := range n {
			op := sharding.NewOp(sel, nil, nil, &results[i])
			if c.shared {
				op.Order = uint64(i + 1)
			}
			ops = append(ops, op)
			pool.Submit(op)
		}
		for i, op := range ops {
			if err := op.Wait(ctx); err != nil {
				t.Fatalf("after %s: op %d: %v", c.change, i, err)
			}
			if want := before + c.columns; len(results[i]) != 1 || len(results[i][0]) != want {
				t.Errorf("after %s: op %d: rows %v, want one of %d columns", c.change, i, results[i], want)
			}
		}
		if busy != nil {
			if err := busy.Wait(ctx); err != nil {
				t.Fatalf("busy op: %v", err)
			}
		}
	}
}
