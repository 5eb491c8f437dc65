package gateway

import (
	"bytes"
	"context"
	"slices"

	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/sharding"
	"github.com/cqlpg/cqlpg/translate"
)

// batchWrite is one statement of a batch, with the execution that holds
// its bound values.
type batchWrite struct {
	e    *execution
	stmt *sharding.Statement
	w    *translate.Write
}

// conditionalBatch reports whether a batch has a conditional write, which
// makes the whole batch one lightweight transaction.
func conditionalBatch(writes []*translate.Write) bool {
	for _, w := range writes {
		if w.Conditions != nil {
			return true
		}
	}
	return false
}

// conditionalBatch runs a BATCH statement with conditions.
func (e *execution) conditionalBatch(ctx context.Context, st *statement, p *translate.Batch, resp *[]byte) error {
	items := make([]batchWrite, len(p.Writes))
	for i, w := range p.Writes {
		items[i] = batchWrite{e: e, stmt: st.batch[i], w: w}
	}
	ts, err := e.timestamp(nil, nil)
	if err != nil {
		return err
	}
	return e.c.conditionalBatch(ctx, items, ts, resp)
}

// batchRow is a write's row (or, for static columns only, partition) and
// the values its conditions saw.
type batchRow struct {
	args    rowArgs
	current [][]byte
}

// conditionalBatch runs a batch with conditions as one lightweight
// transaction: its writes name rows of one partition of one table; under
// the locks of those rows, every condition is checked against the rows as
// they were before the batch, and the writes are applied, all of them,
// only when every condition holds. It answers [applied] and, when
// refused, the rows the conditions saw.
func (c *conn) conditionalBatch(ctx context.Context, items []batchWrite, ts int64, resp *[]byte) error {
	t := items[0].w.Table
	npk := len(t.PartitionKey)
	rows := make([]batchRow, len(items))
	var partition [][]byte
	for i, it := range items {
		r := &rows[i].args
		var err error
		if r.timestamp, err = it.e.timestamp(it.w.Timestamp, &ts); err != nil {
			return err
		}
		if r.expiry, err = it.e.expiry(it.w); err != nil {
			return err
		}
		keys, err := it.e.keyProduct(it.w.Keys)
		if err != nil {
			return err
		}
		for _, k := range it.w.Keys {
			if k.Op == translate.OpIN && k.Column.Kind == pgschema.PartitionKey {
				return invalidf("Batch with conditions cannot span multiple partitions (you cannot use IN on the partition key)")
			}
		}
		if partition == nil {
			partition = keys[0][:npk]
		} else if !slices.EqualFunc(partition, keys[0][:npk], bytes.Equal) {
			return invalidf("Batch with conditions cannot span multiple partitions")
		}
		for _, k := range it.w.Keys {
			if k.Op == translate.OpIN {
				verb := "updates"
				if it.w.Deletion {
					verb = "deletions"
				}
				return invalidf("IN on the clustering key columns is not supported with conditional %s", verb)
			}
		}
		r.key, r.token = keys[0], int64(sharding.KeyToken(partition))
	}
	first := items[0].e
	placement, err := first.placement(t.Keyspace)
	if err != nil {
		return err
	}
	replicas := placement.Replicas(sharding.Token(rows[0].args.token))
	if len(replicas) == 0 {
		return &sharding.UnavailableError{Consistency: sharding.Consistency(first.params.serialConsistency), Required: 1}
	}
	tx, err := c.srv.cluster.control[replicas[0]].Begin(ctx)
	if err != nil {
		return &sharding.ShardError{Shard: first.topo.Shards[replicas[0]].Info.Name, Err: err}
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	// Lock every row the batch names, in one order, so that batches and
	// single conditional writes on these rows take effect one at a time.
	var locks []int64
	for _, r := range rows {
		locks = append(locks, lockKey(t, r.args.key))
	}
	slices.Sort(locks)
	for _, l := range slices.Compact(locks) {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", l); err != nil {
			return err
		}
	}
	applied := true
	for i, it := range items {
		if it.w.Conditions == nil {
			continue
		}
		if rows[i].current, err = it.e.readCurrent(ctx, tx, it.w.Conditions.Read, &rows[i].args); err != nil {
			return err
		}
		ok, err := it.e.conditionsHold(it.w.Conditions, rows[i].current)
		if err != nil {
			return err
		}
		applied = applied && ok
	}
	if applied {
		for i, it := range items {
			if err := it.e.applyConditional(ctx, tx, it.stmt, it.w, &rows[i].args, replicas); err != nil {
				return err
			}
		}
		if err := tx.Commit(ctx); err != nil {
			return err
		}
	}
	*resp = appendBatchCASResult(*resp, t, items, rows, applied)
	return nil
}

// appendBatchCASResult writes a conditional batch's Rows result: [applied],
// and for a refused batch the rows its conditions saw, in clustering
// order, each with the primary key and the columns of the conditions, or
// with every column when a write is IF EXISTS or IF NOT EXISTS.
func appendBatchCASResult(b []byte, t *pgschema.Table, items []batchWrite, rows []batchRow, applied bool) []byte {
	specs := []translate.ColumnSpec{{Keyspace: t.Keyspace, Table: t.Name, Name: "[applied]", Type: pgschema.Scalar(pgschema.Boolean)}}
	found := batchRowsSeen(t, items, rows)
	if applied || len(found) == 0 {
		b = appendInt(b, resultRows)
		b = appendRowsMetadata(b, specs, false, nil)
		b = appendInt(b, 1)
		return appendBytes(b, boolValue(applied))
	}
	cols := t.KeyColumns()
	for _, it := range items {
		if c := it.w.Conditions; c != nil && (c.IfExists || c.IfNotExists) {
			cols = t.Columns
			break
		}
	}
	if len(cols) != len(t.Columns) {
		for _, it := range items {
			if it.w.Conditions == nil {
				continue
			}
			for _, cond := range it.w.Conditions.Conds {
				if !slices.Contains(cols, cond.Column) {
					cols = append(cols, cond.Column)
				}
			}
		}
	}
	for _, col := range cols {
		specs = append(specs, translate.ColumnSpec{Keyspace: t.Keyspace, Table: t.Name, Name: col.Name, Type: col.Type})
	}
	b = appendInt(b, resultRows)
	b = appendRowsMetadata(b, specs, false, nil)
	b = appendInt(b, int32(len(found)))
	for _, f := range found {
		b = appendBytes(b, boolValue(false))
		for _, col := range cols {
			var v []byte
			if i := slotOf(f.read, col); i >= 0 {
				v = f.current[i]
			}
			b = appendBytes(b, v)
		}
	}
	return b
}

// seenRow is a row a conditional batch read.
type seenRow struct {
	key     [][]byte
	read    *translate.Select
	current [][]byte
}

// batchRowsSeen returns the rows a refused conditional batch read, once
// each and in clustering order, or, when it read none, the partition's
// static row if it read that.
func batchRowsSeen(t *pgschema.Table, items []batchWrite, rows []batchRow) []seenRow {
	var found, static []seenRow
	for i, it := range items {
		if rows[i].current == nil {
			continue
		}
		s := seenRow{key: rows[i].args.key, read: it.w.Conditions.Read, current: rows[i].current}
		if s.read.PerPartition {
			static = []seenRow{s}
			continue
		}
		if !slices.ContainsFunc(found, func(f seenRow) bool { return slices.EqualFunc(f.key, s.key, bytes.Equal) }) {
			found = append(found, s)
		}
	}
	if len(found) == 0 {
		return static
	}
	types := make([]*pgschema.Type, 0, len(t.KeyColumns()))
	for _, c := range t.KeyColumns() {
		types = append(types, c.Type)
	}
	slices.SortStableFunc(found, func(a, b seenRow) int { return pgschema.CompareKeys(types, a.key, b.key) })
	return found
}
