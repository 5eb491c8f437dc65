package main_test

import (
	"context"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cqlpg/cqlpg/sharding/localpg"
)

// TestServeTermDrains sends SIGTERM to `cqlpg serve` while writes wait on
// a table its shard has locked: the process stops taking connections,
// answers every write once the lock goes, within --shutdown-grace, and
// exits with status 0.
func TestServeTermDrains(t *testing.T) {
	bin := buildCqlpg(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	clusters, stop, err := localpg.TempClusters(ctx, 1, localpg.Options{})
	if err != nil {
		t.Fatalf("start PostgreSQL: %v", err)
	}
	t.Cleanup(stop)
	const grace = 20 * time.Second
	p := startServeWith(t, bin, "--shard", clusters[0].URL(), "--shutdown-grace", grace.String(),
		"--write-timeout", "30s", "--request-timeout", "40s")
	sess := p.session(t)
	defer sess.Close()
	for _, q := range []string{
		"CREATE KEYSPACE term WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE term.t (k int PRIMARY KEY, v int)",
	} {
		if err := sess.Query(q).Exec(); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}

	// The shard locks the table: writes wait.
	conn, err := pgx.Connect(ctx, clusters[0].URL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var ident string
	if err := conn.QueryRow(ctx, `SELECT format('%I.%I', table_schema, table_name) FROM information_schema.tables
		WHERE table_name = 't' AND table_schema LIKE '%term%'`).Scan(&ident); err != nil {
		t.Fatalf("find the table on the shard: %v", err)
	}
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "LOCK TABLE "+ident+" IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	const writes = 50
	errs := make([]error, writes)
	var wg sync.WaitGroup
	for i := range writes {
		wg.Go(func() { errs[i] = sess.Query("INSERT INTO term.t (k, v) VALUES (?, ?)", i, i).Exec() })
	}
	// Wait until the writes wait on the lock.
	watch, err := pgx.Connect(ctx, clusters[0].URL())
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Close(ctx)
	for deadline := time.Now().Add(20 * time.Second); ; {
		var waiting int
		if err := watch.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'").Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no write waits on the lock")
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // the rest of the writes arrive

	termAt := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	select {
	case err := <-p.done:
		t.Fatalf("cqlpg serve exited with writes in flight: %v\n%s", err, p.output.String())
	default:
	}
	if err := tx.Rollback(ctx); err != nil { // the lock goes
		t.Fatal(err)
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("write %d in flight at SIGTERM: %v", i, err)
		}
	}
	select {
	case err := <-p.done:
		if err != nil {
			t.Fatalf("cqlpg serve exited with %v\n%s", err, p.output.String())
		}
	case <-time.After(grace):
		t.Fatalf("cqlpg serve still running %v after SIGTERM\n%s", grace, p.output.String())
	}
	took := time.Since(termAt)
	if took > grace {
		t.Errorf("stopping took %v, more than the grace of %v", took, grace)
	}
	var n int
	if err := watch.QueryRow(ctx, "SELECT count(*) FROM "+ident).Scan(&n); err != nil || n != writes {
		t.Errorf("the shard holds %d rows (%v), want the %d writes answered", n, err, writes)
	}
	t.Logf("%d writes in flight at SIGTERM answered; the process exited 0 after %v", writes, took.Round(time.Millisecond))
}
