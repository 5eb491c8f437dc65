package exec

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/cqlpg/cqlpg/gateway/cqlwire"
	"github.com/cqlpg/cqlpg/translate"
)

// The executor's ways in, one per request message: each decodes the
// message's body, plans or finds its statement, binds its values on a
// pooled execution and runs it, appending the RESULT body to resp. The
// EXECUTEs the connection's reader starts itself take BindExecute and
// then StartRead or StartWrite (async.go) instead of ExecuteMessage.

// QueryMessage runs a QUERY that came on session s.
func (v *Env) QueryMessage(ctx context.Context, s Session, d *cqlwire.Decoder, resp *[]byte) error {
	body, start := *d, len(*resp)
	st, err := v.runQuery(ctx, s, d, resp)
	if st != nil && v.schemaChanged(ctx, st, err) {
		// Planned against a schema a change has since replaced: planned
		// again, against the schema now, and run once more.
		*resp = (*resp)[:start]
		_, err = v.runQuery(ctx, s, &body, resp)
	}
	return err
}

// runQuery runs a QUERY and returns its statement when it found one.
func (v *Env) runQuery(ctx context.Context, s Session, d *cqlwire.Decoder, resp *[]byte) (*Statement, error) {
	query := d.LongString()
	// The execution holds the parameters, so that steady traffic decodes
	// without allocating.
	e := executionPool.Get().(*Execution)
	q := &e.Query
	d.QueryParams(q, s.ProtocolVersion())
	err := cqlwire.DecodeError(d, "QUERY")
	var st *Statement
	if err == nil {
		st, err = v.Prepare(KeyspaceFor(s, q.Keyspace), query)
	}
	if err != nil {
		executionPool.Put(e)
		return nil, err
	}
	runs(ctx, st.Kind)
	if err := v.bind(e, s, arrival(ctx), st, q, fromQuery); err != nil {
		e.Release()
		return nil, err
	}
	defer e.Release()
	return st, e.run(ctx, st, resp)
}

// Flags of a v5 PREPARE.
const prepareWithKeyspace = 0x01

// PrepareMessage plans a PREPARE's statement, or finds it planned, and
// appends the PREPARED result.
func (v *Env) PrepareMessage(s Session, d *cqlwire.Decoder, resp *[]byte) error {
	query := d.LongString()
	var keyspace []byte
	if s.ProtocolVersion() >= 5 {
		if d.Int()&prepareWithKeyspace != 0 {
			keyspace = d.StringBytes()
		}
	}
	if err := cqlwire.DecodeError(d, "PREPARE"); err != nil {
		return err
	}
	st, err := v.Prepare(KeyspaceFor(s, keyspace), query)
	if err != nil {
		return err
	}
	if !st.reusable {
		// EXECUTE must find it even though QUERY plans it afresh each time.
		v.Cache.put(st)
	}
	st.prepared.Store(true)
	*resp = cqlwire.AppendPrepared(*resp, s.ProtocolVersion(), st.Id[:], st.resultID[:], st.Plan.Meta())
	return nil
}

// ExecuteMessage runs an EXECUTE: BindExecute, then RunExecute.
func (v *Env) ExecuteMessage(ctx context.Context, s Session, d *cqlwire.Decoder, resp *[]byte) error {
	e, st, err := v.BindExecute(s, d, arrival(ctx))
	if st != nil {
		runs(ctx, st.Kind)
	}
	if err != nil {
		return err
	}
	defer e.Release()
	return e.RunExecute(ctx, resp)
}

// BatchMessage runs a BATCH message: each statement, given as text or as
// a prepared id, with its own values and the batch's one timestamp,
// applied as ApplyBatch (or, with conditions, casBatch) describes.
func (v *Env) BatchMessage(ctx context.Context, s Session, d *cqlwire.Decoder, resp *[]byte) error {
	var b cqlwire.BatchParams
	d.Batch(&b, s.ProtocolVersion())
	if err := cqlwire.DecodeError(d, "BATCH"); err != nil {
		return err
	}
	if b.Kind > byte(translate.CounterBatch) {
		return &cqlwire.ProtocolError{Msg: fmt.Sprintf("Invalid BATCH message: unknown batch type %d", b.Kind)}
	}
	runs(ctx, BatchKind(translate.BatchKind(b.Kind), false))
	// Cassandra binds every statement before it checks their kinds, then
	// checks the batch as a whole.
	keyspace := KeyspaceFor(s, b.Keyspace)
	items := make([]batchWrite, 0, len(b.Items))
	for _, it := range b.Items {
		var st *Statement
		var err error
		if it.Id != nil {
			st, err = v.lookup(it.Id)
		} else {
			st, err = v.Prepare(keyspace, it.Query)
		}
		if err != nil {
			return err
		}
		q := b.QueryParams
		q.Values, q.Unset, q.Names = it.Values, it.Unset, nil
		e, err := v.newExecution(s, arrival(ctx), st, &q, fromBatch)
		if err != nil {
			return err
		}
		items = append(items, batchWrite{e: e, stmt: st.write})
		if w, ok := st.Plan.(*translate.Write); ok {
			items[len(items)-1].w = w
		}
	}
	writes := make([]*translate.Write, len(items))
	for i, it := range items {
		if it.w == nil {
			return invalidf("Invalid statement in batch: only UPDATE, INSERT and DELETE statements are allowed.")
		}
		writes[i] = it.w
	}
	if err := translate.CheckBatch(translate.BatchKind(b.Kind), false, false, writes); err != nil {
		return err
	}
	if len(items) == 0 {
		*resp = cqlwire.AppendInt(*resp, cqlwire.ResultVoid)
		return nil
	}
	ts, err := items[0].e.timestamp(nil, nil)
	if err != nil {
		return err
	}
	if isConditionalBatch(writes) {
		runs(ctx, KindLWT)
		return v.casBatch(ctx, items, ts, resp)
	}
	warnings, err := v.batchWarnings(translate.BatchKind(b.Kind), items)
	if err != nil {
		return err
	}
	if err := v.applyBatch(ctx, translate.BatchKind(b.Kind), items, ts, resp); err != nil {
		return err
	}
	cqlwire.AddWarnings(resp, s.ProtocolVersion(), warnings)
	return nil
}

// Cassandra's default for unlogged_batch_across_partitions_warn_threshold.
const unloggedBatchPartitionsToWarn = 10

// errBatchTooLarge is Cassandra's refusal of a batch past
// batch_size_fail_threshold.
var errBatchTooLarge = &translate.InvalidError{Msg: "Batch too large"}

// batchWarnings returns the warnings Cassandra gives a batch without
// conditions: one that writes more than one partition and more than
// the warning threshold's bytes (past the failure threshold, it is
// refused instead), and an unlogged (or counter) one that writes more
// partitions than unloggedBatchPartitionsToWarn. The size is that of the
// values the batch binds, which stands for the size of Cassandra's
// mutations. A batch whose keys are invalid gets none: applying it fails.
func (v *Env) batchWarnings(kind translate.BatchKind, items []batchWrite) ([]string, error) {
	size := 0
	for _, it := range items {
		for _, v := range it.e.bound.Values {
			size += len(v)
		}
	}
	warn := int(v.Config.BatchSizeWarn)
	checkSize := size > warn
	checkUnlogged := kind != translate.LoggedBatch && len(items) > unloggedBatchPartitionsToWarn
	if !checkSize && !checkUnlogged {
		return nil, nil
	}
	partitions := map[string]bool{}
	tables := map[string]bool{}
	for _, it := range items {
		keys, err := it.e.keyProduct(it.w.Keys)
		if err != nil {
			return nil, nil
		}
		t := it.w.Table
		tables[t.Keyspace+"."+t.Name] = true
		npk := len(t.PartitionKey)
		for _, k := range keys {
			var id []byte
			id = cqlwire.AppendString(id, t.Keyspace)
			for _, part := range k[:min(npk, len(k))] {
				id = cqlwire.AppendBytes(id, part)
			}
			partitions[string(id)] = true
		}
	}
	names := slices.Sorted(maps.Keys(tables))
	list := "[" + strings.Join(names, ", ") + "]"
	var warnings []string
	if checkSize && len(partitions) > 1 {
		if fail := int(v.Config.BatchSizeFail); size > fail {
			v.Log.Error("batch refused: past batch_size_fail_threshold", "tables", list, "size", size, "threshold", fail)
			return nil, errBatchTooLarge
		}
		warnings = append(warnings, fmt.Sprintf("Batch for %s is of size %d, exceeding specified threshold of %d by %d.",
			list, size, warn, size-warn))
	}
	if checkUnlogged && len(partitions) > unloggedBatchPartitionsToWarn {
		plural := "s"
		if len(names) == 1 {
			plural = ""
		}
		warnings = append(warnings, fmt.Sprintf("Unlogged batch covering %d partitions detected against table%s %s. "+
			"You should use a logged batch for atomicity, or asynchronous writes for performance.", len(partitions), plural, list))
	}
	return warnings, nil
}

// KeyspaceFor returns the keyspace a request on s runs in: the one it
// names (v5), else the session's. Naming the session's own keyspace, as
// drivers do, costs no allocation.
func KeyspaceFor(s Session, named []byte) string {
	ks := s.Keyspace()
	if named == nil || string(named) == ks {
		return ks
	}
	return string(named)
}
