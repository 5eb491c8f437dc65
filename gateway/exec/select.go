package exec

import (
	"context"
	"encoding/binary"
	"math"
	"slices"
	"sync"

	"github.com/cqlpg/cqlpg/gateway/cqlwire"
	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/sharding"
	"github.com/cqlpg/cqlpg/translate"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
)

// binaryParams sends every parameter in binary format.
var binaryParams = []int16{1}

// selectRows runs a SELECT and appends a Rows result: one page of it, with
// the paging state of the next, when the client asks for pages.
func (e *Execution) selectRows(ctx context.Context, st *Statement, p *translate.Select, resp *[]byte) error {
	q, err := e.selectQuery(st, p)
	if err != nil {
		return err
	}
	if isSerial(sharding.Consistency(e.params.Consistency)) && !p.Table.Virtual {
		done, err := e.holdGate(ctx, primitive.WriteTypeCas)
		if err != nil {
			return err
		}
		defer done()
		if err := e.serialReads(ctx, p, q); err != nil {
			return err
		}
	}
	w := e.startRows(st, p, resp, q)
	switch {
	case p.Table.Virtual:
		err = e.virtualRows(p, w)
	case p.Route == translate.RoutePartitions:
		err = e.partitionRows(ctx, p, w, q.from)
	default:
		err = e.scanRows(ctx, p, w, q.from)
	}
	if err != nil {
		return err
	}
	if p.Filtering || p.Index != "" {
		st.filtered.add(w.rows)
	}
	return w.end()
}

// selectQuery is what a SELECT's options and values ask of its rows.
type selectQuery struct {
	limit, perPartition int
	// page is the page size, -1 when the rows are not paged; from is
	// where the page starts, nil for the first.
	page int
	from *pageState
}

// selectQuery checks a SELECT's values and options, and reads its limits
// and paging state.
func (e *Execution) selectQuery(st *Statement, p *translate.Select) (selectQuery, error) {
	q := selectQuery{page: -1}
	if err := e.checkReadConsistency(); err != nil {
		return q, err
	}
	var err error
	if q.limit, err = e.limit(p.Limit); err != nil {
		return q, err
	}
	if q.perPartition, err = e.limit(p.PerPartitionLimit); err != nil {
		return q, err
	}
	if err := checkANNLimit(p, q.limit); err != nil {
		return q, err
	}
	if err := e.checkClusteringValues(p); err != nil {
		return q, err
	}
	// Rows merged from several partitions cannot be paged; aggregates are
	// always paged internally. Bad keys are reported first.
	if len(p.SortSlots) > 0 && (e.params.PageSize > 0 || p.Aggregate) {
		if _, err := e.keyProduct(p.Keys); err != nil {
			return q, err
		}
		return q, invalidf("Cannot page queries with both ORDER BY and a IN restriction on the partition key; " +
			"you must either remove the ORDER BY or the IN and sort client side, or disable paging for this query")
	}
	// A query is paged unless it folds all its rows into one (aggregates
	// without GROUP BY) or reads a virtual table.
	if e.params.PageSize > 0 && p.Pageable {
		q.page = int(e.params.PageSize)
	}
	if q.page > 0 && e.params.PagingState != nil {
		if q.from, err = decodePageState(e.params.PagingState, st.Id, pagingKey(e.topo)); err != nil {
			return q, err
		}
		if len(q.from.key) != len(p.PartitionSlots) || len(q.from.clustering) > len(p.PositionSlots) {
			return q, errPagingState()
		}
		q.limit = int(q.from.remaining)
	}
	return q, nil
}

// startRows appends the head of a Rows result to resp and returns the
// row writer that appends the rows.
func (e *Execution) startRows(st *Statement, p *translate.Select, resp *[]byte, q selectQuery) *rowWriter {
	*resp = cqlwire.AppendInt(*resp, cqlwire.ResultRows)
	metaAt := len(*resp)
	*resp = cqlwire.AppendRowsMetadata(*resp, p.Result, e.params.SkipMetadata(), nil)
	countAt := len(*resp)
	*resp = cqlwire.AppendInt(*resp, 0)
	w := newRowWriter(e, st, p, resp, q.limit, q.perPartition)
	w.page, w.metaAt, w.countAt = q.page, metaAt, countAt
	if q.from != nil {
		w.resume(q.from)
	}
	return w
}

// end finishes the rows and completes the result's head: its row count,
// and the paging state when there are more pages.
func (w *rowWriter) end() error {
	if err := w.finish(); err != nil {
		return err
	}
	resp, e := w.out, w.e
	binary.BigEndian.PutUint32((*resp)[w.countAt:], uint32(w.rows))
	if w.next != nil {
		// The metadata says there are more pages and carries the state,
		// after the flags and the column count.
		flags := binary.BigEndian.Uint32((*resp)[w.metaAt:])
		binary.BigEndian.PutUint32((*resp)[w.metaAt:], flags|uint32(cqlwire.RowsHasMorePages))
		*resp = slices.Insert(*resp, w.metaAt+8, cqlwire.AppendBytes(nil, w.next.encode(w.st.Id, pagingKey(e.topo)))...)
	}
	return nil
}

// limit reads a LIMIT or PER PARTITION LIMIT value, which Cassandra
// checks alike; -1 means none.
func (e *Execution) limit(v *translate.Value) (int, error) {
	if v == nil {
		return -1, nil
	}
	b, unset := e.bound.Get(*v)
	switch {
	case unset:
		return -1, nil
	case b == nil:
		return 0, invalidf("Invalid null value of limit")
	case len(b) != 4 && len(b) != 0:
		return 0, invalidf("Expected 4 or 0 byte int (%d)", len(b))
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

// checkClusteringValues refuses a null or unset value for a clustering
// column restricted by = or IN, as Cassandra does when it builds the
// clusterings a query reads.
func (e *Execution) checkClusteringValues(p *translate.Select) error {
	for _, f := range p.Filters {
		if f.Kind != translate.OnColumn || f.Column.Kind != pgschema.Clustering {
			continue
		}
		switch {
		case f.Op == translate.OpEQ:
			if _, err := e.conditionValue(f.Values[0], f.Column); err != nil {
				return err
			}
		case f.Op == translate.OpIN:
			if _, err := e.listValues(f.Values, f.ListMarker, f.Column); err != nil {
				return err
			}
		}
	}
	return nil
}

// sqlLimit is the row limit a shard statement can apply itself, 0 for
// none: the rows of one partition are capped by what LIMIT and the page
// still take (and one row more, which tells whether another page follows)
// and by PER PARTITION LIMIT, those of a token range by LIMIT and the page
// unless PER PARTITION LIMIT must first drop rows.
func (w *rowWriter) sqlLimit(partition bool) int {
	if w.plan.Aggregate || !partition && w.perPartition > 0 {
		return 0
	}
	n := w.limit
	if n >= 0 {
		n -= w.rows
	}
	if w.page > 0 && (n < 0 || n > w.page-w.rows) {
		n = w.page - w.rows + 1
	}
	if partition && w.perPartition > 0 && (n < 0 || n > w.perPartition) {
		n = w.perPartition
	}
	if n < 0 {
		return 0
	}
	return n
}

// partitionRead returns the shard statement reading one partition, and
// its parameters: capped by a row limit when the query is paged, and
// reading only the rows after a page's position when resume is set.
func (w *rowWriter) partitionRead(resume bool) (*sharding.Statement, []translate.Param) {
	switch {
	case resume:
		return w.st.resumeRead, w.plan.ResumeParams
	case w.page > 0:
		return w.st.pageRead, w.plan.PageParams
	}
	return w.st.read, w.plan.Params
}

// rangeRead is partitionRead for the statement reading one token range.
func (w *rowWriter) rangeRead(resume bool) (*sharding.Statement, []translate.Param) {
	switch {
	case resume:
		return w.st.resumeScan, w.plan.ResumeScanParams
	case w.page > 0:
		return w.st.pageScan, w.plan.PageScanParams
	}
	return w.st.scan, w.plan.ScanParams
}

// placement returns the replica sets of a keyspace's partitions.
func (e *Execution) placement(keyspace string) (*sharding.Placement, error) {
	var memo *placedMemo
	if e.St != nil {
		memo = e.St.placed.Load()
		if memo != nil && memo.topo == e.topo && memo.schema == e.schema && memo.keyspace == keyspace {
			return memo.placement, nil
		}
	}
	k := e.schema.Keyspace(keyspace)
	if k == nil {
		return nil, invalidf("keyspace %s does not exist", keyspace)
	}
	placement := e.topo.Placement(k.Replication)
	if k.ReplicationFrom != nil {
		placement = e.topo.ChangingPlacement(*k.ReplicationFrom, k.Replication)
	}
	if e.St != nil {
		e.St.placed.Store(&placedMemo{topo: e.topo, schema: e.schema, keyspace: keyspace, placement: placement})
	}
	return placement, nil
}

// partitionRows reads the partitions the WHERE clause names, in key order:
// after a paging state's position if there is one, which is the
// partition's rows after the position's clustering prefix, then the
// partitions after it.
func (e *Execution) partitionRows(ctx context.Context, p *translate.Select, w *rowWriter, from *pageState) error {
	keys, err := e.keyProduct(p.Keys)
	if err != nil {
		return err
	}
	placement, err := e.placement(p.Table.Keyspace)
	if err != nil {
		return err
	}
	var after [][]byte
	if from != nil {
		// Keys are sorted and distinct by their type's order, in which
		// the key read back from a row equals the key the client sent.
		types := make([]*pgschema.Type, len(p.Keys))
		for i, r := range p.Keys {
			types[i] = r.Column.Type
		}
		i, found := slices.BinarySearchFunc(keys, from.key, func(k, target [][]byte) int {
			return pgschema.CompareKeys(types, k, target)
		})
		if found {
			if len(from.clustering) == 0 {
				i++
			} else {
				after = from.clustering
			}
		}
		keys = keys[i:]
	}
	if len(keys) == 0 {
		return nil
	}
	if len(keys) == 1 {
		// One partition: rows go straight into the response.
		token := int64(sharding.KeyToken(keys[0]))
		e.env.Hot.note(p.Table, token)
		return e.readPartition(ctx, placement, keys[0], token, w, w, after, &e.scratch)
	}
	parts := make([]*rowBuffer, len(keys))
	errs := make(chan error, len(keys))
	for i, key := range keys {
		parts[i] = &rowBuffer{w: w}
		var resumeAfter [][]byte
		if i == 0 {
			resumeAfter = after
		}
		token := int64(sharding.KeyToken(key))
		e.env.Hot.note(p.Table, token)
		go func() {
			errs <- e.readPartition(ctx, placement, key, token, parts[i], w, resumeAfter, nil)
		}()
	}
	for n := range keys {
		if err := <-errs; err != nil {
			if n < len(keys)-1 {
				e.abandon() // reads still running use the execution
			}
			return err
		}
	}
	return w.replay(parts)
}

// readPartition reads the partition of key and token from one of its
// replicas into sink; when after is set, only its rows after that
// clustering prefix. rs is the read's scratch, nil for a new one.
func (e *Execution) readPartition(ctx context.Context, placement *sharding.Placement, key [][]byte, token int64,
	sink sharding.RowSink, w *rowWriter, after [][]byte, rs *readScratch) error {
	replicas := placement.Replicas(sharding.Token(token))
	if len(replicas) == 0 {
		return &sharding.UnavailableError{Consistency: sharding.Consistency(e.params.Consistency), Required: 1}
	}
	read, params := w.partitionRead(after != nil)
	if rs == nil {
		rs = new(readScratch)
	}
	rs.share = true
	ra := rowArgs{key: key, token: token, after: after, limit: w.sqlLimit(true)}
	if err := rs.args.build(e, params, &ra); err != nil {
		return err
	}
	repair := readRepair{table: w.plan.Table, start: token}
	return e.readReplicas(ctx, read, rs.args.args, replicas, sink, w, e.env.Config.ReadTimeout, repair, rs)
}

// scanRange is a run of token ranges, (start, end], with one list of
// replicas: the one to read first leads.
type scanRange struct {
	start, end int64
	replicas   []int
}

// scanRanges splits the tokens in (lo, hi] into ranges read from one
// replica set each, in token order. A read of one replica reads a range
// from the previous range's replica when that one holds it too and is up,
// so that runs of ranges merge into one query; a read of several merges
// runs of ranges with the same replicas.
func (e *Execution) scanRanges(placement *sharding.Placement, lo, hi int64, single bool) []scanRange {
	var out []scanRange
	add := func(start, end int64, rangeIndex int) {
		start, end = max(start, lo), min(end, hi)
		replicas := placement.RangeReplicas(rangeIndex)
		if start >= end || len(replicas) == 0 {
			return
		}
		n := len(out)
		if single {
			first := -1
			for _, r := range replicas {
				if e.topo.Shards[r].Pool.Alive() && (first < 0 || n > 0 && r == out[n-1].replicas[0]) {
					first = r
				}
			}
			if first >= 0 && first != replicas[0] {
				replicas = append([]int{first}, slices.DeleteFunc(slices.Clone(replicas), func(r int) bool { return r == first })...)
			}
			if n > 0 && out[n-1].end == start && out[n-1].replicas[0] == replicas[0] {
				out[n-1].end = end
				return
			}
		} else if n > 0 && out[n-1].end == start && sharding.SameReplicas(out[n-1].replicas, replicas) {
			out[n-1].end = end
			return
		}
		out = append(out, scanRange{start: start, end: end, replicas: replicas})
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
func (e *Execution) tokenBounds(p *translate.Select) (lo, hi int64, err error) {
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
// token order. A paged scan reads the ranges in waves of growing size
// until the page is full, an unpaged one all at once. After a paging
// state's position, it reads the rest of the position's partition and the
// partitions after it in the range holding the position's token (in one
// statement or two, see translate.Select.ResumeScanInside), then the
// ranges after that.
func (e *Execution) scanRows(ctx context.Context, p *translate.Select, w *rowWriter, from *pageState) error {
	placement, err := e.placement(p.Table.Keyspace)
	if err != nil {
		return err
	}
	lo, hi, err := e.tokenBounds(p)
	if err != nil {
		return err
	}
	if from != nil && from.token > lo {
		lo = from.token - 1 // ranges are (start, end]
	}
	level := sharding.Consistency(e.params.Consistency)
	single := level == sharding.One || level == sharding.LocalOne || placement.Factor() <= 1
	ranges := e.scanRanges(placement, lo, hi, single)
	if len(ranges) == 0 {
		if placement.Factor() == 0 {
			return &sharding.UnavailableError{Consistency: level, Required: 1}
		}
		return nil
	}
	wave := len(ranges)
	if w.page > 0 {
		wave = 8
	}
	fresh := func() *rowBuffer { return &rowBuffer{w: w} }
	for start := 0; start < len(ranges) && !w.done(); start += wave {
		if start > 0 && w.page > 0 {
			wave = min(wave*2, 32)
		}
		batch := ranges[start:min(start+wave, len(ranges))]
		parts := make([]*rowBuffer, len(batch))
		argsets := make([]argBuffer, len(batch))
		stmts := make([]*sharding.Statement, len(batch))
		for i, r := range batch {
			ra := rowArgs{rangeStart: r.start, rangeEnd: r.end, limit: w.sqlLimit(false)}
			// Only the first range holds the position; those after it
			// follow it whole.
			resume := start+i == 0 && from != nil
			if resume {
				ra.token, ra.key = from.token, from.key
				if p.ResumeScanInside {
					ra.after = from.clustering
				}
			}
			var params []translate.Param
			stmts[i], params = w.rangeRead(resume)
			parts[i] = fresh()
			if err := argsets[i].build(e, params, &ra); err != nil {
				return err
			}
		}
		// Unless the first range's statement reads it, the rest of the
		// position's partition comes first; it is read beside the first
		// wave.
		var head *rowBuffer
		errs := make([]error, len(batch)+1)
		var reads sync.WaitGroup
		if start == 0 && from != nil && len(from.clustering) > 0 && !p.ResumeScanInside {
			head = fresh()
			reads.Go(func() {
				errs[len(batch)] = e.readPartition(ctx, placement, from.key, from.token, head, w, from.clustering, nil)
			})
		}
		for i, r := range batch {
			repair := readRepair{table: p.Table, start: r.start, end: r.end, scan: true}
			reads.Go(func() {
				errs[i] = e.readReplicas(ctx, stmts[i], argsets[i].args, r.replicas, parts[i], w, e.env.Config.RangeTimeout, repair, nil)
			})
		}
		reads.Wait()
		if err := sharding.FirstError(errs); err != nil {
			return err
		}
		if head != nil {
			parts = append([]*rowBuffer{head}, parts...)
		}
		if err := w.replay(parts); err != nil {
			return err
		}
	}
	return nil
}
