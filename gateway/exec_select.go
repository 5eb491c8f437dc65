package gateway

import (
	"context"
	"encoding/binary"
	"math"

	"github.com/cqlpg/cqlpg/sharding"
	"github.com/cqlpg/cqlpg/translate"
)

// binaryParams sends every parameter in binary format.
var binaryParams = []int16{1}

// selectRows runs a SELECT and appends a Rows result.
func (e *execution) selectRows(ctx context.Context, st *statement, p *translate.Select, resp *[]byte) error {
	limit, err := e.limit(p.Limit, "limit")
	if err != nil {
		return err
	}
	perPartition, err := e.limit(p.PerPartitionLimit, "per partition limit")
	if err != nil {
		return err
	}
	if len(p.SortSlots) > 0 && e.params.pageSize > 0 {
		return invalidf("Cannot page queries with both ORDER BY and a IN restriction on the partition key; " +
			"you must either remove the ORDER BY or the IN and sort client side, or disable paging for this query")
	}
	*resp = appendInt(*resp, resultRows)
	*resp = appendRowsMetadata(*resp, p.Result, e.params.skipMetadata(), nil)
	countAt := len(*resp)
	*resp = appendInt(*resp, 0)
	w := newRowWriter(e, st, p, resp, limit, perPartition)
	switch {
	case p.Table.Virtual:
		err = e.virtualRows(p, w)
	case p.Route == translate.RoutePartitions:
		err = e.partitionRows(ctx, st, p, w)
	default:
		err = e.scanRows(ctx, st, p, w)
	}
	if err == nil {
		err = w.finish()
	}
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint32((*resp)[countAt:], uint32(w.rows))
	return nil
}

// limit reads a LIMIT or PER PARTITION LIMIT value; -1 means none.
func (e *execution) limit(v *translate.Value, what string) (int, error) {
	if v == nil {
		return -1, nil
	}
	b, unset := e.bound.Get(*v)
	switch {
	case unset:
		return -1, nil
	case b == nil:
		return 0, invalidf("Invalid null value of %s", what)
	}
	n, ok := int32Value(b)
	if !ok {
		return 0, invalidf("Invalid %s value", what)
	}
	if n <= 0 {
		return 0, invalidf("LIMIT must be strictly positive")
	}
	return int(n), nil
}

// sqlLimit is the row limit a shard statement can apply itself: the rows
// of one partition are capped by both limits, those of a token range by
// LIMIT alone unless PER PARTITION LIMIT must first drop rows.
func (w *rowWriter) sqlLimit(partition bool) int {
	if w.plan.Aggregate {
		return 0
	}
	switch {
	case partition && w.limit > 0 && w.perPartition > 0:
		return min(w.limit, w.perPartition)
	case partition && w.perPartition > 0:
		return w.perPartition
	case w.perPartition > 0:
		return 0
	}
	return max(w.limit, 0)
}

// placement returns the replica sets of a keyspace's partitions.
func (e *execution) placement(keyspace string) (*sharding.Placement, error) {
	k := e.schema.Keyspace(keyspace)
	if k == nil {
		return nil, invalidf("keyspace %s does not exist", keyspace)
	}
	return e.topo.Placement(k.Replication), nil
}

// partitionRows reads the partitions the WHERE clause names, in key order.
func (e *execution) partitionRows(ctx context.Context, st *statement, p *translate.Select, w *rowWriter) error {
	keys, err := e.keyProduct(p.Keys)
	if err != nil {
		return err
	}
	placement, err := e.placement(p.Table.Keyspace)
	if err != nil {
		return err
	}
	if len(keys) == 1 {
		// One partition: rows go straight into the response.
		return e.readPartition(ctx, st, placement, keys[0], w, w)
	}
	parts := make([]*rowBuffer, len(keys))
	errs := make(chan error, len(keys))
	for i, key := range keys {
		parts[i] = &rowBuffer{w: w}
		go func() { errs <- e.readPartition(ctx, st, placement, key, parts[i], w) }()
	}
	for range keys {
		if err := <-errs; err != nil {
			return err
		}
	}
	return w.replay(parts)
}

// readPartition reads one partition from one of its replicas into sink.
func (e *execution) readPartition(ctx context.Context, st *statement, placement *sharding.Placement, key [][]byte,
	sink sharding.RowSink, w *rowWriter) error {
	token := sharding.KeyToken(key)
	replicas := placement.Replicas(token)
	if len(replicas) == 0 {
		return &sharding.UnavailableError{Consistency: sharding.Consistency(e.params.consistency), Required: 1}
	}
	var args argBuffer
	if err := args.build(e, st.plan.(*translate.Select).Params, &rowArgs{key: key, token: int64(token), limit: w.sqlLimit(true)}); err != nil {
		return err
	}
	op := sharding.NewOp(st.read, args.args, binaryParams, sink)
	e.topo.Shards[replicas[0]].Pool.Submit(op)
	return op.Wait(ctx)
}

// scanRange is a run of token ranges read from one shard: (start, end].
type scanRange struct {
	start, end int64
	shard      int
}

// scanRanges splits the tokens in (lo, hi] into ranges read from one
// replica each, in token order. A range's replica is the previous range's
// when it holds the range too, so that runs of ranges merge into one query.
func (e *execution) scanRanges(placement *sharding.Placement, lo, hi int64) []scanRange {
	var out []scanRange
	add := func(start, end int64, rangeIndex int) {
		start, end = max(start, lo), min(end, hi)
		replicas := placement.RangeReplicas(rangeIndex)
		if start >= end || len(replicas) == 0 {
			return
		}
		shard := replicas[0]
		if n := len(out); n > 0 {
			for _, r := range replicas {
				if r == out[n-1].shard {
					shard = r
				}
			}
			if out[n-1].shard == shard && out[n-1].end == start {
				out[n-1].end = end
				return
			}
		}
		out = append(out, scanRange{start: start, end: end, shard: shard})
	}
	prev := int64(math.MinInt64)
	for i, t := range e.topo.Ring.Tokens() {
		add(prev, int64(t), i)
		prev = int64(t)
	}
	add(prev, math.MaxInt64, 0) // the wrap-around part of range 0
	return out
}

// tokenBounds turns a query's token restrictions into the range (lo, hi]
// it reads; start above end reads nothing, with no wrap-around.
func (e *execution) tokenBounds(p *translate.Select) (lo, hi int64, err error) {
	lo, hi = math.MinInt64, math.MaxInt64
	value := func(b *translate.TokenBound) (int64, error) {
		v, unset := e.bound.Get(b.Value)
		if unset || v == nil {
			return 0, invalidf("Invalid null token value")
		}
		if len(v) != 8 {
			return 0, invalidf("Invalid token value")
		}
		return int64(binary.BigEndian.Uint64(v)), nil
	}
	if b := p.TokenStart; b != nil {
		if lo, err = value(b); err != nil {
			return 0, 0, err
		}
		if b.Inclusive && lo > math.MinInt64 {
			lo--
		}
	}
	if b := p.TokenEnd; b != nil {
		if hi, err = value(b); err != nil {
			return 0, 0, err
		}
		if !b.Inclusive {
			hi--
		}
	}
	return lo, hi, nil
}

// scanRows reads every token range in bounds, merging the shards' rows in
// token order.
func (e *execution) scanRows(ctx context.Context, st *statement, p *translate.Select, w *rowWriter) error {
	placement, err := e.placement(p.Table.Keyspace)
	if err != nil {
		return err
	}
	lo, hi, err := e.tokenBounds(p)
	if err != nil {
		return err
	}
	ranges := e.scanRanges(placement, lo, hi)
	if len(ranges) == 0 {
		if placement.Factor() == 0 {
			return &sharding.UnavailableError{Consistency: sharding.Consistency(e.params.consistency), Required: 1}
		}
		return nil
	}
	parts := make([]*rowBuffer, len(ranges))
	ops := make([]*sharding.Op, len(ranges))
	argsets := make([]argBuffer, len(ranges))
	for i, r := range ranges {
		parts[i] = &rowBuffer{w: w}
		if err := argsets[i].build(e, p.ScanParams, &rowArgs{rangeStart: r.start, rangeEnd: r.end, limit: w.sqlLimit(false)}); err != nil {
			return err
		}
		ops[i] = sharding.NewOp(st.scan, argsets[i].args, binaryParams, parts[i])
		e.topo.Shards[r.shard].Pool.Submit(ops[i])
	}
	for _, op := range ops {
		if err := op.Wait(ctx); err != nil {
			return err
		}
	}
	return w.replay(parts)
}
