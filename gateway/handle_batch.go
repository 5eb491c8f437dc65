package gateway

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/cqlpg/cqlpg/gateway/cqlwire"
	"github.com/cqlpg/cqlpg/translate"
)

// handleBatch runs a BATCH message: each statement, given as text or as a
// prepared id, with its own values and the batch's one timestamp, applied
// as applyBatch (or, with conditions, conditionalBatch) describes.
func (c *conn) handleBatch(ctx context.Context, d *cqlwire.Decoder, resp *[]byte) error {
	var b cqlwire.BatchParams
	d.Batch(&b, c.version)
	if err := cqlwire.DecodeError(d, "BATCH"); err != nil {
		return err
	}
	if b.Kind > byte(translate.CounterBatch) {
		return &cqlwire.ProtocolError{Msg: fmt.Sprintf("Invalid BATCH message: unknown batch type %d", b.Kind)}
	}
	runs(ctx, batchKind(translate.BatchKind(b.Kind), false))
	// Cassandra binds every statement before it checks their kinds, then
	// checks the batch as a whole.
	keyspace := c.keyspaceFor(b.Keyspace)
	items := make([]batchWrite, 0, len(b.Items))
	for _, it := range b.Items {
		var st *statement
		var err error
		if it.Id != nil {
			st, err = c.srv.lookup(it.Id)
		} else {
			st, err = c.srv.env.prepare(keyspace, it.Query)
		}
		if err != nil {
			return err
		}
		q := b.QueryParams
		q.Values, q.Unset, q.Names = it.Values, it.Unset, nil
		e, err := c.srv.env.newExecution(c, arrival(ctx), st, &q, fromBatch)
		if err != nil {
			return err
		}
		items = append(items, batchWrite{e: e, stmt: st.write})
		if w, ok := st.plan.(*translate.Write); ok {
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
		runs(ctx, kindLWT)
		return c.srv.env.casBatch(ctx, items, ts, resp)
	}
	warnings, err := c.srv.batchWarnings(translate.BatchKind(b.Kind), items)
	if err != nil {
		return err
	}
	if err := c.srv.env.applyBatch(ctx, translate.BatchKind(b.Kind), items, ts, resp); err != nil {
		return err
	}
	cqlwire.AddWarnings(resp, c.version, warnings)
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
func (s *Server) batchWarnings(kind translate.BatchKind, items []batchWrite) ([]string, error) {
	size := 0
	for _, it := range items {
		for _, v := range it.e.bound.Values {
			size += len(v)
		}
	}
	warn := int(s.cfg.BatchSizeWarn)
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
		if fail := int(s.cfg.BatchSizeFail); size > fail {
			s.log.Error("batch refused: past batch_size_fail_threshold", "tables", list, "size", size, "threshold", fail)
			return nil, errBatchTooLarge
		}
		warnings = append(warnings, fmt.Sprintf("Batch for %s is of size %d, exceeding specified threshold of %d by %d.",
			list, size, warn, size-warn))
	}
	if checkUnlogged && len(partitions) > unloggedBatchPartitionsToWarn {
		s := "s"
		if len(names) == 1 {
			s = ""
		}
		warnings = append(warnings, fmt.Sprintf("Unlogged batch covering %d partitions detected against table%s %s. "+
			"You should use a logged batch for atomicity, or asynchronous writes for performance.", len(partitions), s, list))
	}
	return warnings, nil
}
