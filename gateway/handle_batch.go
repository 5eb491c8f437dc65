package gateway

import (
	"context"
	"fmt"

	"github.com/cqlpg/cqlpg/translate"
)

// handleBatch runs a BATCH message: each statement, given as text or as a
// prepared id, with its own values and the batch's one timestamp.
func (c *conn) handleBatch(ctx context.Context, d *decoder, resp *[]byte) error {
	var b batchParams
	d.batch(&b)
	if err := decodeError(d, "BATCH"); err != nil {
		return err
	}
	if b.kind > byte(translate.CounterBatch) {
		return &protocolError{msg: fmt.Sprintf("Invalid BATCH message: unknown batch type %d", b.kind)}
	}
	type item struct {
		st *statement
		e  *execution
	}
	items := make([]item, 0, len(b.items))
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
		if _, ok := st.plan.(*translate.Write); !ok {
			return invalidf("Invalid statement in batch: only UPDATE, INSERT and DELETE statements are allowed.")
		}
		q := b.queryParams
		q.values, q.unset, q.names = it.values, it.unset, nil
		e, err := c.newExecution(st, &q, it.id != nil)
		if err != nil {
			return err
		}
		items = append(items, item{st, e})
	}
	if len(items) > 0 {
		ts, err := items[0].e.timestamp(nil, nil)
		if err != nil {
			return err
		}
		for _, it := range items {
			if err := it.e.write(ctx, it.st.write, it.st.plan.(*translate.Write), &ts, nil); err != nil {
				return err
			}
		}
	}
	*resp = appendInt(*resp, resultVoid)
	return nil
}
