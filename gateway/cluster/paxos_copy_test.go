package cluster

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cqlpg/cqlpg/migrations"
	"github.com/cqlpg/cqlpg/sharding"
	"github.com/cqlpg/cqlpg/sharding/localpg"
)

// TestCopyPaxos checks the copy of Paxos state to a shard that gains a
// range: every state of the range arrives, across several pages, none
// from outside it, and a state the gaining shard holds already keeps the
// later of each promise, acceptance and commit.
func TestCopyPaxos(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	clusters, stop, err := localpg.TempClusters(ctx, 2, localpg.Options{Settings: localpg.FastSettings})
	if err != nil {
		t.Fatalf("start PostgreSQL: %v", err)
	}
	defer stop()
	pools := make([]*pgxpool.Pool, 2)
	for i, c := range clusters {
		if err := migrations.Up(ctx, c.URL()); err != nil {
			t.Fatal(err)
		}
		if pools[i], err = pgxpool.New(ctx, c.URL()); err != nil {
			t.Fatal(err)
		}
		defer pools[i].Close()
	}
	from, to := pools[0], pools[1]
	const table = "00000000-0000-0000-0000-00000000c0de"
	// 1,300 states at tokens -100..1199; the range (0, 1100] holds 1,100,
	// three pages.
	if _, err := from.Exec(ctx, `INSERT INTO cqlpg.paxos (table_id, key, token, promised, promised_id, accepted,
		proposal, committed, commit, expires)
		SELECT $1::uuid, int4send(g), g, 50, 1, 40, 'a', 30, 'c', 1000 FROM generate_series(-100, 1199) g`, table); err != nil {
		t.Fatal(err)
	}
	// The gaining shard knows a later promise and commit of token 5, an
	// earlier of token 6.
	if _, err := to.Exec(ctx, `INSERT INTO cqlpg.paxos (table_id, key, token, promised, promised_id, committed, commit, expires)
		VALUES ($1::uuid, int4send(5), 5, 60, 2, 55, 'newer', 2000), ($1::uuid, int4send(6), 6, 10, 2, 5, 'older', 10)`,
		table); err != nil {
		t.Fatal(err)
	}
	n, err := copyPaxos(ctx, from, to, sharding.Range{Start: 0, End: 1100})
	if err != nil || n != 1100 {
		t.Fatalf("copied %d states (%v), want the range's 1100", n, err)
	}
	var count, outside int
	if err := to.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE token <= 0 OR token > 1100) FROM cqlpg.paxos
		WHERE table_id = $1::uuid`, table).Scan(&count, &outside); err != nil {
		t.Fatal(err)
	}
	if count != 1100 || outside != 0 {
		t.Errorf("the gaining shard holds %d states, %d outside the range; want 1100, none outside", count, outside)
	}
	type state struct {
		promised, accepted, committed int64
		commit                        string
		expires                       int64
	}
	for _, c := range []struct {
		token int
		want  state
	}{
		{5, state{60, 40, 55, "newer", 2000}},
		{6, state{50, 40, 30, "c", 1000}},
		{7, state{50, 40, 30, "c", 1000}},
	} {
		var got state
		if err := to.QueryRow(ctx, `SELECT promised, accepted, committed, convert_from(commit, 'UTF8'), expires
			FROM cqlpg.paxos WHERE table_id = $1::uuid AND token = $2`, table, c.token).Scan(
			&got.promised, &got.accepted, &got.committed, &got.commit, &got.expires); err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("token %d: %+v, want %+v", c.token, got, c.want)
		}
	}
}
