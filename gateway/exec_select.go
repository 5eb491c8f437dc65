package gateway

import (
	"context"
	"encoding/binary"
	"math"

	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/sharding"
	"github.com/cqlpg/cqlpg/translate"
)

// binaryParams sends every parameter in binary format.
var binaryParams = []int16{1}

// selectRows runs a SELECT and appends a Rows result.
func (e *execution) selectRows(ctx context.Context, st *statement, p *translate.Select, resp *[]byte) error {
	limit, err := e.limit(p.Limit)
	if err != nil {
		return err
	}
	*resp = appendInt(*resp, resultRows)
	*resp = appendRowsMetadata(*resp, p.Result, e.params.skipMetadata(), nil)
	countAt := len(*resp)
	*resp = appendInt(*resp, 0)
	w := rowWriter{st: st, plan: p, out: resp, limit: limit}
	switch {
	case p.Table.Virtual:
		err = e.virtualRows(p, &w)
	case p.Route == translate.RoutePartitions:
		err = e.partitionRows(ctx, st, p, &w)
	default:
		err = e.scanRows(ctx, st, p, &w)
	}
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint32((*resp)[countAt:], uint32(w.rows))
	return nil
}

// limit reads a LIMIT value; -1 means none.
func (e *execution) limit(v *translate.Value) (int, error) {
	if v == nil {
		return -1, nil
	}
	b, unset := e.bound.Get(*v)
	switch {
	case unset:
		return -1, nil
	case b == nil:
		return 0, invalidf("Invalid null value of limit")
	}
	n, ok := int32Value(b)
	if !ok {
		return 0, invalidf("Invalid limit value")
	}
	if n <= 0 {
		return 0, invalidf("LIMIT must be strictly positive")
	}
	return int(n), nil
}

// placement returns the replica sets of a keyspace's partitions.
func (e *execution) placement(keyspace string) (*sharding.Placement, *pgschema.Keyspace, error) {
	k := e.schema.Keyspace(keyspace)
	if k == nil {
		return nil, nil, invalidf("keyspace %s does not exist", keyspace)
	}
	return e.topo.Placement(k.Replication), k, nil
}

// partitionRows reads the partitions the WHERE clause names, in key order.
func (e *execution) partitionRows(ctx context.Context, st *statement, p *translate.Select, w *rowWriter) error {
	keys, err := e.keyProduct(p.Keys)
	if err != nil {
		return err
	}
	placement, _, err := e.placement(p.Table.Keyspace)
	if err != nil {
		return err
	}
	if len(keys) == 1 {
		// One partition: rows go straight into the response.
		return e.readPartition(ctx, st, placement, keys[0], w)
	}
	parts := make([]*rowWriter, len(keys))
	errs := make(chan error, len(keys))
	for i, key := range keys {
		buf := make([]byte, 0, 256)
		parts[i] = &rowWriter{st: st, plan: p, out: &buf, limit: w.limit, ends: []int{}}
		go func() { errs <- e.readPartition(ctx, st, placement, key, parts[i]) }()
	}
	for range keys {
		if err := <-errs; err != nil {
			return err
		}
	}
	return w.concat(parts)
}

// readPartition reads one partition from one of its replicas.
func (e *execution) readPartition(ctx context.Context, st *statement, placement *sharding.Placement, key [][]byte, w *rowWriter) error {
	token := sharding.KeyToken(key)
	replicas := placement.Replicas(token)
	if len(replicas) == 0 {
		return &sharding.UnavailableError{Consistency: sharding.Consistency(e.params.consistency), Required: 1}
	}
	var args argBuffer
	if err := args.build(e, st.plan.(*translate.Select).Params, &rowArgs{key: key, token: int64(token)}); err != nil {
		return err
	}
	op := sharding.NewOp(st.read, args.args, binaryParams, w)
	e.topo.Shards[replicas[0]].Pool.Submit(op)
	return op.Wait(ctx)
}

// scanRange is a run of token ranges read from one shard: (start, end].
type scanRange struct {
	start, end int64
	shard      int
}

// scanRanges splits the ring into ranges read from one replica each, in
// token order. A range's replica is the previous range's when it holds the
// range too, so that runs of ranges merge into one query.
func (e *execution) scanRanges(placement *sharding.Placement) []scanRange {
	ring := e.topo.Ring
	tokens := ring.Tokens()
	var out []scanRange
	add := func(start, end int64, rangeIndex int) {
		replicas := placement.RangeReplicas(rangeIndex)
		if len(replicas) == 0 {
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
	for i, t := range tokens {
		add(prev, int64(t), i)
		prev = int64(t)
	}
	if prev != math.MaxInt64 {
		add(prev, math.MaxInt64, 0) // the wrap-around part of range 0
	}
	return out
}

// scanRows reads every token range, merging the shards' rows in token
// order.
func (e *execution) scanRows(ctx context.Context, st *statement, p *translate.Select, w *rowWriter) error {
	placement, _, err := e.placement(p.Table.Keyspace)
	if err != nil {
		return err
	}
	ranges := e.scanRanges(placement)
	if len(ranges) == 0 {
		return &sharding.UnavailableError{Consistency: sharding.Consistency(e.params.consistency), Required: 1}
	}
	parts := make([]*rowWriter, len(ranges))
	ops := make([]*sharding.Op, len(ranges))
	argsets := make([]argBuffer, len(ranges))
	for i, r := range ranges {
		buf := make([]byte, 0, 256)
		parts[i] = &rowWriter{st: st, plan: p, out: &buf, limit: w.limit, ends: []int{}}
		if err := argsets[i].build(e, p.ScanParams, &rowArgs{rangeStart: r.start, rangeEnd: r.end}); err != nil {
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
	return w.concat(parts)
}

// rowWriter encodes rows into a Rows result body as they arrive from a
// shard: it converts each slot from Postgres's binary form to CQL's and
// computes the outputs.
type rowWriter struct {
	st    *statement
	plan  *translate.Select
	out   *[]byte
	rows  int
	limit int
	// ends, when not nil, records where each row ends in out, so that rows
	// of several writers can be merged under a limit.
	ends []int
	vals [][]byte
	conv []byte
}

// Row implements sharding.RowSink.
func (w *rowWriter) Row(values [][]byte) error {
	if w.limit >= 0 && w.rows >= w.limit {
		return nil
	}
	// Size the conversion arena so that no conversion moves it: converted
	// values are at most a few bytes longer than Postgres's.
	need := 0
	for _, v := range values {
		need += len(v) + 8
	}
	if cap(w.conv) < need {
		w.conv = make([]byte, 0, need)
	}
	w.conv, w.vals = w.conv[:0], w.vals[:0]
	for i, v := range values {
		if conv := w.st.slotConv[i]; conv != nil && v != nil {
			start := len(w.conv)
			var err error
			if w.conv, err = conv(w.conv, v); err != nil {
				return err
			}
			v = w.conv[start:len(w.conv):len(w.conv)]
		}
		w.vals = append(w.vals, v)
	}
	w.emit()
	return nil
}

// emit appends the outputs of the row whose slot values are in w.vals.
func (w *rowWriter) emit() {
	for _, o := range w.plan.Outputs {
		if o.Kind == translate.OutToken {
			var key [8][]byte
			parts := key[:0]
			for _, s := range o.Slots {
				parts = append(parts, w.vals[s])
			}
			var tok [8]byte
			binary.BigEndian.PutUint64(tok[:], uint64(sharding.KeyToken(parts)))
			*w.out = appendBytes(*w.out, tok[:])
			continue
		}
		*w.out = appendBytes(*w.out, w.vals[o.Slots[0]])
	}
	w.rows++
	if w.ends != nil {
		w.ends = append(w.ends, len(*w.out))
	}
}

// concat appends the rows of parts, in order, up to the limit.
func (w *rowWriter) concat(parts []*rowWriter) error {
	for _, p := range parts {
		n := p.rows
		if w.limit >= 0 && w.rows+n > w.limit {
			n = w.limit - w.rows
		}
		if n <= 0 {
			continue
		}
		end := len(*p.out)
		if n < p.rows {
			end = p.ends[n-1]
		}
		*w.out = append(*w.out, (*p.out)[:end]...)
		w.rows += n
	}
	return nil
}
