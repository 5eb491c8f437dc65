package repair

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/sharding"
)

// Streaming gives the replicas a movement adds (a topology operation's,
// or a keyspace replication change's) the data of the ranges they gain:
// each range of each table is copied in pages from one replica that
// holds it to those that gain it, merged cell by cell with what they
// hold (the writes reaching them meanwhile as pending replicas), write
// times, expiries and deletions included. The replica copied is the one
// that gives the range up when there is one (a join, a decommission), as
// Cassandra's strict range movement streams from it; otherwise (a
// replica lost, a replication change) the range is then reconciled among
// all the replicas that hold it, so that the new ones hold their merge. Merging changes nothing
// already there, so a stream cut short is resumed by streaming again.

// A Piece is one range of one table to stream.
type Piece struct {
	Table *pgschema.Table
	Range sharding.Range
	// From are the replicas that hold the range and are up, To those
	// that gain it.
	From, To []int
	// Strict says that From[0] is the replica that gives the range up, a
	// copy of which is enough (sharding.Movement.Losing).
	Strict bool
}

// Pieces returns the pieces of the tables (but counter tables, whose
// totals cannot be merged) of keyspace (every keyspace if
// empty) that movements gives, leaving out lost, a replica whose data is
// gone (-1 for none). It fails for a range that no other replica holds.
func Pieces(topo *sharding.Topology, schema *pgschema.Schema, keyspace string, lost int,
	movements func(ks *pgschema.Keyspace) []sharding.Movement) ([]Piece, error) {
	var pieces []Piece
	for _, ks := range schema.Keyspaces() {
		if ks.Virtual || pgschema.IsSystemKeyspace(ks.Name) || (keyspace != "" && ks.Name != keyspace) {
			continue
		}
		moves := movements(ks)
		for _, t := range ks.SortedTables() {
			if t.Virtual || t.IsCounter() {
				continue // a counter's total cannot be merged: cluster.CopyCounters copies it
			}
			for _, m := range moves {
				var replicas []int
				for _, r := range m.From {
					if r != lost {
						replicas = append(replicas, r)
					}
				}
				if len(replicas) == 0 {
					return nil, fmt.Errorf("%s.%s (%d, %d]: no replica holds it but %s, which is down", ks.Name, t.Name,
						m.Range.Start, m.Range.End, topo.Shards[lost].Info.Name)
				}
				p := Piece{Table: t, Range: m.Range, From: replicas, To: m.To}
				if m.Losing >= 0 && m.Losing != lost {
					p.From = append([]int{m.Losing}, slices.DeleteFunc(slices.Clone(replicas), func(r int) bool { return r == m.Losing })...)
					p.Strict = true
				}
				pieces = append(pieces, p)
			}
		}
	}
	return pieces, nil
}

// StreamProgress reports a stream under way.
type StreamProgress struct {
	Done, Total int
	Rows, Bytes int64
	Elapsed     time.Duration
}

// Stream streams pieces, two at a time, at most perSecond rows a second
// if it is above zero, and returns the rows it sent; progress, if set,
// hears of each piece done, one call at a time.
func Stream(ctx context.Context, topo *sharding.Topology, pieces []Piece, perSecond float64,
	progress func(StreamProgress)) (int64, error) {
	var (
		mu          sync.Mutex
		done        int
		rows, bytes int64
		start       = time.Now()
		next        = make(chan Piece)
		errs        = make([]error, 2)
		wg          sync.WaitGroup
		ctx2, abort = context.WithCancel(ctx)
	)
	defer abort()
	for w := range errs {
		wg.Go(func() {
			for p := range next {
				n, b, err := streamRange(ctx2, topo, p)
				if err != nil {
					errs[w] = fmt.Errorf("%s.%s (%d, %d]: %w", p.Table.Keyspace, p.Table.Name, p.Range.Start, p.Range.End, err)
					abort()
					return
				}
				mu.Lock()
				done, rows, bytes = done+1, rows+n, bytes+b
				elapsed := time.Since(start)
				if progress != nil {
					progress(StreamProgress{Done: done, Total: len(pieces), Rows: rows, Bytes: bytes, Elapsed: elapsed})
				}
				// The throughput limit: wait until the rows so far are
				// within it.
				var wait time.Duration
				if perSecond > 0 {
					wait = time.Duration(float64(rows)/perSecond*float64(time.Second)) - elapsed
				}
				mu.Unlock()
				if wait > 0 {
					select {
					case <-time.After(wait):
					case <-ctx2.Done():
					}
				}
			}
		})
	}
feed:
	for _, p := range pieces {
		select {
		case next <- p:
		case <-ctx2.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return rows, err
	}
	return rows, ctx.Err()
}

// streamRange streams one piece, and returns the rows and bytes it sent.
func streamRange(ctx context.Context, topo *sharding.Topology, p Piece) (int64, int64, error) {
	run := newRepairRun(topo, 0)
	st := statementsFor(p.Table)
	for _, r := range p.Range.Inclusive() {
		if err := run.bulk(ctx, st, r[0], r[1], p.From[:1], p.To); err != nil {
			return run.moved.Load(), run.bytes.Load(), err
		}
		if len(p.From) > 1 && !p.Strict {
			if _, err := run.reconcile(ctx, st, r[0], r[1], append(slices.Clone(p.From), p.To...), true); err != nil {
				return run.moved.Load(), run.bytes.Load(), err
			}
		}
	}
	return run.moved.Load(), run.bytes.Load(), run.err()
}
