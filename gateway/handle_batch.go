package gateway

import (
	"context"
	"fmt"

	"github.com/cqlpg/cqlpg/translate"
)

// handleBatch runs a BATCH message: each statement, given as text or as a
// prepared id, with its own values and the batch's one timestamp, applied
// as applyBatch (or, with conditions, conditionalBatch) describes.
func (c *conn) handleBatch(ctx context.Context, d *decoder, resp *[]byte) error {
	var b batchParams
	d.batch(&b)
	if err := decodeError(d, "BATCH"); err != nil {
		return err
	}
	if b.kind > byte(translate.CounterBatch) {
		return &protocolError{msg: fmt.Sprintf("Invalid BATCH message: unknown batch type %d", b.kind)}
	}
	// Cassandra binds every statement before it checks their kinds, then
	// checks the batch as a whole.
	items := make([]batchWrite, 0, len(b.items))
	for _, it := range b.items {
		var st *statement
		var err error
		if it.id != nil {
			st, err = c.srv.lookup(it.id)
		} else {
			st, err = c.srv.prepare(*c.keyspace.Load(), it.query)
		}
		if err != nil {
			return err
		}
		q := b.queryParams
		q.values, q.unset, q.names = it.values, it.unset, nil
		e, err := c.newExecution(st, &q, fromBatch)
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
	if err := translate.CheckBatch(translate.BatchKind(b.kind), false, false, writes); err != nil {
		return err
	}
	if len(items) == 0 {
		*resp = appendInt(*resp, resultVoid)
		return nil
	}
	ts, err := items[0].e.timestamp(nil, nil)
	if err != nil {
		return err
	}
	if conditionalBatch(writes) {
		return c.conditionalBatch(ctx, items, ts, resp)
	}
	return c.applyBatch(ctx, translate.BatchKind(b.kind), items, ts, resp)
}
