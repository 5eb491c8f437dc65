package exec

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/cqlpg/cqlpg/sharding"
	"github.com/cqlpg/cqlpg/translate"
)

// Lightweight transactions run Paxos on a quorum of each partition's
// replicas (paxos.go): a conditional write checks its conditions against
// the state a quorum's reads find under a promised ballot, and proposes
// its writes, stamped with the ballot's time, only when they hold.

// conditional runs a lightweight transaction on one row and answers with
// [applied] and, when refused, the values its conditions saw.
func (e *Execution) conditional(ctx context.Context, stmt *sharding.Statement, p *translate.Write, key [][]byte,
	r *rowArgs, placement *sharding.Placement, resp *[]byte) error {
	c := p.Conditions
	if err := e.checkCASConsistency(); err != nil {
		return err
	}
	if err := e.checkConditionValues(c); err != nil {
		return err
	}
	t := p.Table
	px, err := e.newPaxos(t, placement, key[:len(t.PartitionKey)], e.serialLevel())
	if err != nil {
		return err
	}
	r.key, r.token = key, px.token
	fetch := fetchOf(c)
	px.reads = e.casReads(c, r, fetch)
	var state casState
	var applied bool
	err = px.run(ctx, func(ts int64, found [][][]byte) ([]sharding.Step, error) {
		var err error
		if state, err = casStateOf(c, px.reads, found, fetch); err != nil {
			return nil, err
		}
		if applied, err = e.conditionsHold(c, state.row, state.static); err != nil || !applied {
			return nil, err
		}
		r.timestamp = ts
		return casSteps([]casWrite{{e: e, stmt: stmt, w: p, r: r}})
	})
	if err != nil {
		return err
	}
	if applied && p.Views {
		replicas, _ := placement.WriteReplicas(sharding.Token(px.token))
		e.awaitViews(ctx, replicas)
	}
	*resp = appendCASResult(*resp, t, c, applied, state.shown)
	return nil
}

// casReplicas returns the replicas of token that a lightweight
// transaction's Paxos runs on, the pending one last while ranges move,
// and how many are pending. As Cassandra's Paxos, it refuses while more
// than one replica of the token is pending.
func casReplicas(placement *sharding.Placement, token sharding.Token, level sharding.Consistency) ([]int, int, error) {
	replicas, pending := placement.WriteReplicas(token)
	if pending > 1 {
		return nil, 0, &sharding.UnavailableError{Consistency: level, Required: len(replicas) + 1, Alive: len(replicas),
			Msg: fmt.Sprintf("Cannot perform LWT operation as there is more than one (%d) pending range movement", pending)}
	}
	return replicas, pending, nil
}

// checkCASConsistency applies Cassandra's checks of a conditional write's
// consistency levels: a serial level for its reads, another for its commit.
func (e *Execution) checkCASConsistency() error {
	if s := sharding.Consistency(e.params.SerialConsistency); s != 0 && !isSerial(s) {
		return invalidf("Invalid consistency for conditional update. Must be one of SERIAL or LOCAL_SERIAL")
	}
	if c := sharding.Consistency(e.params.Consistency); isSerial(c) {
		return invalidf("%s is not supported as conditional update commit consistency. "+
			"Use ANY if you mean \"make sure it is accepted but I don't care how many replicas commit it for non-SERIAL reads\"", c)
	}
	return nil
}

func isSerial(c sharding.Consistency) bool {
	return c == sharding.Serial || c == sharding.LocalSerial
}

// serialLevel is the level a conditional write's errors report.
func (e *Execution) serialLevel() sharding.Consistency {
	if s := sharding.Consistency(e.params.SerialConsistency); s != 0 {
		return s
	}
	return sharding.Serial
}

// casRead is one read of a lightweight transaction, with the execution
// whose values it binds.
type casRead struct {
	e    *Execution
	read *translate.Select
	args *rowArgs
}

// firstRow keeps a copy of the first row a statement returns.
type firstRow struct{ row [][]byte }

func (f *firstRow) Row(values [][]byte) error {
	if f.row == nil {
		f.row = make([][]byte, len(values))
		for i, v := range values {
			if v != nil {
				f.row[i] = append([]byte{}, v...)
			}
		}
	}
	return nil
}

func int8Value(v int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(v)) }

// casWrite is one write of a lightweight transaction.
type casWrite struct {
	e    *Execution
	stmt *sharding.Statement
	w    *translate.Write
	r    *rowArgs
}

// casSteps returns the statements of a transaction's writes, their
// values bound, after the table lock a partition or range deletion among
// them takes (lockFor): the writes are of one table.
func casSteps(writes []casWrite) ([]sharding.Step, error) {
	steps := make([]sharding.Step, 0, len(writes)+1)
	for _, wr := range writes {
		if lock := lockFor(wr.w); lock != nil {
			steps = append(steps, sharding.Step{Stmt: lock})
			break
		}
	}
	for _, wr := range writes {
		var args argBuffer
		if err := args.build(wr.e, wr.w.Params, wr.r); err != nil {
			return nil, err
		}
		steps = append(steps, sharding.Step{Stmt: wr.stmt, Args: args.args, Formats: binaryParams})
	}
	return steps, nil
}

// serialReads runs Paxos, with an empty proposal, on each partition a
// SERIAL or LOCAL_SERIAL SELECT reads, so that the quorum read that
// follows sees every conditional write decided before it, and none that
// may yet be undone (Cassandra's readWithPaxos). A read of several
// partitions by key runs one such round per partition, as Cassandra's
// pager does; unpaged, or with a limit within one page, Cassandra reads
// them as one group and refuses. A range read at a serial level is a
// quorum read without Paxos, as in Cassandra 4.
func (e *Execution) serialReads(ctx context.Context, p *translate.Select, q selectQuery) error {
	if p.Route != translate.RoutePartitions {
		return nil
	}
	keys, err := e.keyProduct(p.Keys)
	if err != nil {
		return err
	}
	if len(keys) > 1 && (q.page <= 0 || q.limit > 0 && q.limit <= q.page) {
		return invalidf("SERIAL/LOCAL_SERIAL consistency may only be requested for one partition at a time")
	}
	placement, err := e.placement(p.Table.Keyspace)
	if err != nil {
		return err
	}
	level := sharding.Consistency(e.params.Consistency)
	for _, key := range keys {
		px, err := e.newPaxos(p.Table, placement, key, level)
		if err != nil {
			return err
		}
		px.read = true
		if err := px.run(ctx, func(int64, [][][]byte) ([]sharding.Step, error) { return nil, nil }); err != nil {
			return err
		}
	}
	return nil
}
