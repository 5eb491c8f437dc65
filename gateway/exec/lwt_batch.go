package exec

import (
	"bytes"
	"context"
	"slices"

	"github.com/cqlpg/cqlpg/gateway/cqlwire"
	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/sharding"
	"github.com/cqlpg/cqlpg/translate"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
)

// batchWrite is one statement of a batch, with the execution that holds
// its bound values.
type batchWrite struct {
	e    *Execution
	stmt *sharding.Statement
	w    *translate.Write
}

// isConditionalBatch reports whether a batch has a conditional write, which
// makes the whole batch one lightweight transaction.
func isConditionalBatch(writes []*translate.Write) bool {
	for _, w := range writes {
		if w.Conditions != nil {
			return true
		}
	}
	return false
}

// conditionalBatch runs a BATCH statement with conditions.
func (e *Execution) conditionalBatch(ctx context.Context, st *Statement, p *translate.Batch, resp *[]byte) error {
	done, err := e.holdGate(ctx, primitive.WriteTypeCas)
	if err != nil {
		return err
	}
	defer done()
	items := make([]batchWrite, len(p.Writes))
	for i, w := range p.Writes {
		items[i] = batchWrite{e: e, stmt: st.batch[i], w: w}
	}
	ts, err := e.timestamp(nil, nil)
	if err != nil {
		return err
	}
	return e.env.casBatch(ctx, items, ts, resp)
}

// casBatch runs a batch with conditions as one lightweight
// transaction (BatchStatement.executeWithConditions): its writes name rows
// of one partition of one table; under the partition's lock every
// condition is checked against the partition as it was before the batch,
// and the writes are applied, all of them at the partition's next ballot,
// only when every condition holds. It answers [applied] and, when refused,
// the rows the conditions read. ts, the batch's timestamp, is unused: a
// conditional batch writes at its ballot.
func (v *Env) casBatch(ctx context.Context, items []batchWrite, ts int64, resp *[]byte) error {
	first := items[0].e
	if err := first.checkCASConsistency(); err != nil {
		return err
	}
	t := items[0].w.Table
	npk := len(t.PartitionKey)
	rows := make([]rowArgs, len(items))
	var partition [][]byte
	for i, it := range items {
		r := &rows[i]
		var err error
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
	if err := checkBatchConditions(items, rows); err != nil {
		return err
	}
	for _, it := range items {
		if it.w.Conditions != nil {
			if err := it.e.checkConditionValues(it.w.Conditions); err != nil {
				return err
			}
		}
	}
	placement, err := first.placement(t.Keyspace)
	if err != nil {
		return err
	}
	px, err := first.newPaxos(t, placement, partition, first.serialLevel())
	if err != nil {
		return err
	}
	fetch := batchFetch(items)
	var rowReads int
	px.reads, rowReads = batchReads(items, rows, fetch)
	var seen batchSeen
	applied := false
	err = px.run(ctx, func(ts int64, found [][][]byte) ([]sharding.Step, error) {
		var static [][]byte
		var err error
		if seen, static, err = batchStateOf(t, px.reads, rowReads, found, fetch); err != nil {
			return nil, err
		}
		applied = true
		for i, it := range items {
			if it.w.Conditions == nil {
				continue
			}
			ok, err := it.e.conditionsHold(it.w.Conditions, seen.row(rows[i].key), static)
			if err != nil {
				return nil, err
			}
			if !ok {
				applied = false
				return nil, nil
			}
		}
		writes := make([]casWrite, len(items))
		for i, it := range items {
			rows[i].timestamp = ts
			writes[i] = casWrite{e: it.e, stmt: it.stmt, w: it.w, r: &rows[i]}
		}
		return casSteps(writes)
	})
	if err != nil {
		return err
	}
	*resp = appendBatchCASResult(*resp, t, items, applied, seen.shown)
	return nil
}

// casTarget is what a batch's condition tests: a row by its key, or the
// partition's static row.
type casTarget struct {
	static bool
	key    string
}

// checkBatchConditions refuses a batch that tests one row both for
// existence and otherwise (CQL3CasRequest.addExistsCondition and
// addConditions), in the order Cassandra adds the conditions.
func checkBatchConditions(items []batchWrite, rows []rowArgs) error {
	const (
		columns = iota + 1
		exists
		notExists
	)
	kinds := map[casTarget]int{}
	for i, it := range items {
		c := it.w.Conditions
		if c == nil {
			continue
		}
		row := casTarget{key: string(bytes.Join(rows[i].key, []byte{0}))}
		if c.IfExists || c.IfNotExists {
			target, kind := row, exists
			if c.OnStatic {
				target = casTarget{static: true}
			}
			if c.IfNotExists {
				kind = notExists
			}
			switch prev := kinds[target]; {
			case prev == columns && kind == notExists:
				return invalidf("Cannot mix IF conditions and IF NOT EXISTS for the same row")
			case prev == columns:
				return invalidf("Cannot mix IF conditions and IF EXISTS for the same row")
			case prev != 0 && prev != kind:
				return invalidf("Cannot mix IF EXISTS and IF NOT EXISTS conditions for the same row")
			}
			kinds[target] = kind
			continue
		}
		for _, target := range []casTarget{row, {static: true}} {
			tested := slices.ContainsFunc(c.Conds, func(cd translate.Cond) bool {
				return (cd.Column.Kind == pgschema.Static) == target.static
			})
			if !tested {
				continue
			}
			if kinds[target] == exists || kinds[target] == notExists {
				return invalidf("Cannot mix IF conditions and IF NOT EXISTS for the same row")
			}
			kinds[target] = columns
		}
	}
	return nil
}

// batchSeen is what a conditional batch read: the rows its conditions
// test by key (nil values for a missing row), and the rows a refused
// batch shows.
type batchSeen struct {
	keys  [][][]byte
	rows  [][][]byte
	shown [][][]byte
}

func (s *batchSeen) row(key [][]byte) [][]byte {
	for i, k := range s.keys {
		if slices.EqualFunc(k, key, bytes.Equal) {
			return s.rows[i]
		}
	}
	return nil
}

// batchReads returns the reads of what a conditional batch's conditions
// test, as one read of the partition (CQL3CasRequest.readCommand): each
// row a condition tests, and the static row in case they are all missing
// when static columns are fetched; or, when only the static row is tested,
// the partition's first live row joined with it. rowReads counts the reads
// of rows, which come first; with none, the one read is of the partition.
func batchReads(items []batchWrite, rows []rowArgs, fetch fetchFunc) (reads []casRead, rowReads int) {
	t := items[0].w.Table
	// The partition's read, with the execution of the write whose
	// conditions plan it, which holds its statement.
	var partition casRead
	for _, it := range items {
		if c := it.w.Conditions; c != nil && c.PartitionRead != nil {
			partition = casRead{e: it.e, read: c.PartitionRead, args: &rows[0]}
		}
	}
	for i, it := range items {
		c := it.w.Conditions
		if c == nil || !c.TestsRow() || slices.ContainsFunc(reads, func(rd casRead) bool {
			return slices.EqualFunc(rd.args.key, rows[i].key, bytes.Equal)
		}) {
			continue
		}
		reads = append(reads, casRead{e: it.e, read: c.Read, args: &rows[i]})
	}
	rowReads = len(reads)
	if partition.read != nil && (rowReads == 0 || fetchesStatic(t, fetch)) {
		reads = append(reads, partition)
	}
	return reads, rowReads
}

// batchStateOf makes what a conditional batch's reads found: the rows its
// conditions test, the rows a refused batch shows, in clustering order,
// and values holding the static row (nil when it is dead).
func batchStateOf(t *pgschema.Table, reads []casRead, rowReads int, found [][][]byte,
	fetch fetchFunc) (batchSeen, [][]byte, error) {
	var seen batchSeen
	if rowReads == 0 {
		p, err := stateRow(reads[0].read, found[0], fetch)
		s := partitionState(t, p)
		if s.shown != nil {
			seen.shown = [][][]byte{s.shown}
		}
		return seen, s.static, err
	}
	var static [][]byte
	for i, rd := range reads[:rowReads] {
		row, err := stateRow(rd.read, found[i], fetch)
		if err != nil {
			return seen, nil, err
		}
		seen.keys, seen.rows = append(seen.keys, rd.args.key), append(seen.rows, row)
		if row != nil {
			seen.shown = append(seen.shown, row)
			if staticLive(t, row) {
				static = row
			}
		}
	}
	if len(seen.shown) > 0 || rowReads == len(reads) {
		slices.SortStableFunc(seen.shown, func(a, b [][]byte) int { return compareRowKeys(t, a, b) })
		return seen, static, nil
	}
	p, err := stateRow(reads[rowReads].read, found[rowReads], fetch)
	s := staticState(t, p)
	if s.shown != nil {
		seen.shown = [][][]byte{s.shown}
	}
	return seen, s.static, err
}

// compareRowKeys orders two rows of a partition by their clustering.
func compareRowKeys(t *pgschema.Table, a, b [][]byte) int {
	for _, col := range t.Clustering {
		i := columnIndex(t, col)
		if c := pgschema.Compare(col.Type, a[i], b[i]); c != 0 {
			if col.Desc {
				return -c
			}
			return c
		}
	}
	return 0
}

// batchFetch returns the columns a conditional batch's read fetches: the
// static (regular) columns when a write changes the static row (a regular
// row), else those of the conditions.
func batchFetch(items []batchWrite) fetchFunc {
	var updatesStatic, updatesRegular bool
	var conds []*pgschema.Column
	for _, it := range items {
		updatesStatic = updatesStatic || it.w.UpdatesStatic()
		updatesRegular = updatesRegular || it.w.UpdatesRegular()
		if c := it.w.Conditions; c != nil {
			for _, cd := range c.Conds {
				conds = append(conds, cd.Column)
			}
		}
	}
	return func(col *pgschema.Column) bool {
		switch col.Kind {
		case pgschema.Static:
			return updatesStatic || slices.Contains(conds, col)
		case pgschema.Regular:
			return updatesRegular || slices.Contains(conds, col)
		}
		return true
	}
}

// appendBatchCASResult writes a conditional batch's Rows result:
// [applied], and for a refused batch one row per row its read found, in
// clustering order, with every column when a write is IF EXISTS or IF NOT
// EXISTS, else with the primary key and the columns of the conditions
// (ModificationStatement.buildCasFailureResultSet for batches).
func appendBatchCASResult(b []byte, t *pgschema.Table, items []batchWrite, applied bool, shown [][][]byte) []byte {
	specs := []translate.ColumnSpec{appliedSpec(t)}
	if applied || len(shown) == 0 {
		b = cqlwire.AppendInt(b, cqlwire.ResultRows)
		b = cqlwire.AppendRowsMetadata(b, specs, false, nil)
		b = cqlwire.AppendInt(b, 1)
		return cqlwire.AppendBytes(b, BoolValue(applied))
	}
	cols := t.KeyColumns()
	for _, it := range items {
		if c := it.w.Conditions; c != nil && (c.IfExists || c.IfNotExists) {
			cols = t.Columns
			break
		}
	}
	if len(cols) != len(t.Columns) {
		cols = slices.Clone(cols)
		for _, it := range items {
			if c := it.w.Conditions; c != nil {
				for _, col := range c.ConditionColumns() {
					if !slices.Contains(cols, col) {
						cols = append(cols, col)
					}
				}
			}
		}
	}
	for _, col := range cols {
		specs = append(specs, translate.ColumnSpec{Keyspace: t.Keyspace, Table: t.Name, Name: col.Name, Type: col.Type})
	}
	b = cqlwire.AppendInt(b, cqlwire.ResultRows)
	b = cqlwire.AppendRowsMetadata(b, specs, false, nil)
	b = cqlwire.AppendInt(b, int32(len(shown)))
	for _, row := range shown {
		b = cqlwire.AppendBytes(b, BoolValue(false))
		for _, col := range cols {
			b = cqlwire.AppendBytes(b, row[columnIndex(t, col)])
		}
	}
	return b
}
