package repair

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/sharding"
)

// Streaming gives the replicas a movement adds (a topology operation's,
// or a keyspace replication change's) the data of the ranges they gain:
// each range of each table is reconciled from the replicas that hold it
// now onto those that gain it (RangeOn), so that they hold the merge of
// those replicas, write times, expiries and deletions included, and the
// writes arriving meanwhile reach them as pending replicas. Reconciling
// changes nothing already there, so a stream cut short is resumed by
// streaming again.

// A Piece is one range of one table to stream.
type Piece struct {
	Table *pgschema.Table
	Range sharding.Range
	// Replicas are the replicas that hold the range and are up, then
	// those that gain it.
	Replicas []int
}

// Pieces returns the pieces of the tables of keyspace (every keyspace if
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
			if t.Virtual {
				continue
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
				pieces = append(pieces, Piece{Table: t, Range: m.Range, Replicas: append(replicas, m.To...)})
			}
		}
	}
	return pieces, nil
}

// StreamProgress reports a stream under way.
type StreamProgress struct {
	Done, Total int
	Rows        int64
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
		rows        int64
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
				n, err := RangeOn(ctx2, topo, p.Table, int64(p.Range.Start), int64(p.Range.End), p.Replicas)
				if err != nil {
					errs[w] = fmt.Errorf("%s.%s (%d, %d]: %w", p.Table.Keyspace, p.Table.Name, p.Range.Start, p.Range.End, err)
					abort()
					return
				}
				mu.Lock()
				done, rows = done+1, rows+n
				elapsed := time.Since(start)
				if progress != nil {
					progress(StreamProgress{Done: done, Total: len(pieces), Rows: rows, Elapsed: elapsed})
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
