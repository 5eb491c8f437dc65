package gateway_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestPaxosAcceptor checks a replica's acceptor rules, as the catalog's
// functions apply them on a shard: ballots are ordered by their time
// alone, so one of the same time as a promise is refused; a proposal is
// accepted at the ballot promised or a later one; a promise answers with
// the accepted proposal and the most recent commit; a commit is
// idempotent, keeps the newer one when an older arrives late, and drops
// the proposal it supersedes.
func TestPaxosAcceptor(t *testing.T) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, shardURLs[0])
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	const table = "00000000-0000-0000-0000-0000000acce9"
	key := []byte("acceptor")
	type promise struct {
		promised            bool
		seen                int64
		accepted, committed *int64
		proposal, commit    []byte
	}
	prepare := func(ballot, id int64) promise {
		t.Helper()
		var p promise
		if err := conn.QueryRow(ctx, "SELECT * FROM cqlpg.paxos_prepare($1, $2, 7, $3, $4, 1)", table, key, ballot, id).Scan(
			&p.promised, &p.seen, &p.accepted, &p.proposal, &p.committed, &p.commit); err != nil {
			t.Fatal(err)
		}
		return p
	}
	propose := func(ballot, id int64, value []byte) bool {
		t.Helper()
		var ok bool
		if err := conn.QueryRow(ctx, "SELECT cqlpg.paxos_propose($1, $2, 7, $3, $4, $5, 1)", table, key, ballot, id, value).Scan(&ok); err != nil {
			t.Fatal(err)
		}
		return ok
	}
	commit := func(ballot int64, value []byte) {
		t.Helper()
		if _, err := conn.Exec(ctx, "SELECT cqlpg.paxos_commit($1, $2, 7, $3, $4, 1)", table, key, ballot, value); err != nil {
			t.Fatal(err)
		}
	}
	is := func(v *int64, want int64) bool { return v != nil && *v == want }

	if p := prepare(100, 1); !p.promised || p.accepted != nil || p.committed != nil {
		t.Errorf("first prepare: %+v, want a promise with nothing accepted or committed", p)
	}
	if p := prepare(100, 2); p.promised || p.seen != 100 {
		t.Errorf("prepare of another ballot of the same time: %+v, want refused, 100 seen", p)
	}
	if p := prepare(99, 3); p.promised {
		t.Errorf("prepare of an earlier ballot: %+v, want refused", p)
	}
	if propose(100, 2, []byte("x")) {
		t.Error("a proposal at a ballot of the promised time but another id was accepted")
	}
	if !propose(100, 1, []byte("v1")) {
		t.Error("a proposal at the promised ballot was refused")
	}
	if p := prepare(101, 1); !p.promised || !is(p.accepted, 100) || !bytes.Equal(p.proposal, []byte("v1")) {
		t.Errorf("prepare after an acceptance: %+v, want a promise carrying the proposal accepted at 100", p)
	}
	if propose(100, 1, []byte("v1")) {
		t.Error("a proposal at a ballot earlier than the promise was accepted")
	}
	if !propose(103, 5, nil) {
		t.Error("a proposal later than every ballot seen was refused")
	}
	if p := prepare(104, 1); !p.promised || !is(p.accepted, 103) || p.proposal != nil {
		t.Errorf("prepare after an empty proposal: %+v, want it accepted at 103, empty", p)
	}
	commit(105, []byte("c105"))
	commit(105, []byte("c105"))
	commit(102, []byte("late"))
	p := prepare(106, 1)
	if !p.promised || p.accepted != nil || !is(p.committed, 105) || !bytes.Equal(p.commit, []byte("c105")) {
		t.Errorf("prepare after commits at 105, 105 and a late 102: %+v, want the commit at 105 and no proposal", p)
	}
	if p := prepare(105, 9); p.promised || p.seen != 106 {
		t.Errorf("prepare at the commit's time: %+v, want refused", p)
	}
	commit(107, []byte("c107"))
	if p := prepare(107, 2); p.promised || p.seen != 107 {
		t.Errorf("prepare at a ballot committed without a promise here: %+v, want refused, 107 seen", p)
	}
}
