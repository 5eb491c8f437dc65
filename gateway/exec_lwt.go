package gateway

import (
	"bytes"
	"context"
	"hash/fnv"

	"github.com/jackc/pgx/v5"

	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/sharding"
	"github.com/cqlpg/cqlpg/translate"
)

// conditional runs a lightweight transaction on one row: under a lock on
// the partition's first replica it reads the row, checks the conditions,
// and writes every replica before the lock is released, so that
// conditional writes to a partition take effect one at a time. It answers
// with [applied] and, when refused, the values the conditions saw.
func (e *execution) conditional(ctx context.Context, stmt *sharding.Statement, p *translate.Write, key [][]byte,
	r *rowArgs, placement *sharding.Placement, resp *[]byte) error {
	t := p.Table
	token := sharding.KeyToken(key[:len(t.PartitionKey)])
	r.key, r.token = key, int64(token)
	replicas := placement.Replicas(token)
	if len(replicas) == 0 {
		return &sharding.UnavailableError{Consistency: sharding.Consistency(e.params.serialConsistency), Required: 1}
	}
	tx, err := e.c.srv.cluster.control[replicas[0]].Begin(ctx)
	if err != nil {
		return &sharding.ShardError{Shard: e.topo.Shards[replicas[0]].Info.Name, Err: err}
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", lockKey(t, key)); err != nil {
		return err
	}
	current, err := e.readCurrent(ctx, tx, p.Conditions.Read, r)
	if err != nil {
		return err
	}
	applied, err := e.conditionsHold(p.Conditions, current)
	if err != nil {
		return err
	}
	if applied {
		if err := e.applyConditional(ctx, tx, stmt, p, r, replicas); err != nil {
			return err
		}
		if err := tx.Commit(ctx); err != nil {
			return err
		}
	}
	*resp = appendCASResult(*resp, t, p.Conditions, applied, current)
	return nil
}

// lockKey identifies a partition's LWT lock: a digest of the table id and
// the key. Two partitions sharing a digest only wait for each other.
func lockKey(t *pgschema.Table, key [][]byte) int64 {
	h := fnv.New64a()
	h.Write(t.ID[:])
	for _, k := range key {
		h.Write(k)
		h.Write([]byte{0})
	}
	return int64(h.Sum64())
}

// readCurrent reads the row the conditions test, in the lock's
// transaction; nil when there is none.
func (e *execution) readCurrent(ctx context.Context, tx pgx.Tx, read *translate.Select, r *rowArgs) ([][]byte, error) {
	var args argBuffer
	if err := args.build(e, read.Params, r); err != nil {
		return nil, err
	}
	rr := tx.Conn().PgConn().ExecParams(ctx, read.SQL, args.args, paramOIDs(read.Params), binaryParams, []int16{1})
	var row [][]byte
	for rr.NextRow() {
		if row != nil {
			continue
		}
		for i, v := range rr.Values() {
			st, _ := pgschema.StorageOf(read.Slots[i].Column.Type)
			if len(v) > 0 && st.FromPG != nil {
				var err error
				if v, err = st.FromPG(nil, v); err != nil {
					return nil, err
				}
			} else if v != nil {
				v = append([]byte{}, v...)
			}
			row = append(row, v)
		}
	}
	if _, err := rr.Close(); err != nil {
		return nil, err
	}
	if read.PerPartition && !staticRowLive(read, row) {
		// Conditions on static columns alone test the static row, which
		// exists only while one of its cells does.
		return nil, nil
	}
	return row, nil
}

// staticRowLive reports whether a row read for static conditions holds a
// static cell.
func staticRowLive(read *translate.Select, row [][]byte) bool {
	for i, v := range row {
		if v != nil && read.Slots[i].Column.Kind == pgschema.Static {
			return true
		}
	}
	return false
}

// applyConditional writes every replica: the lock holder inside the
// transaction, the others through their pools.
func (e *execution) applyConditional(ctx context.Context, tx pgx.Tx, stmt *sharding.Statement, p *translate.Write,
	r *rowArgs, replicas []int) error {
	var args argBuffer
	if err := args.build(e, p.Params, r); err != nil {
		return err
	}
	var ops []*sharding.Op
	for _, shard := range replicas[1:] {
		op := sharding.NewOp(stmt, args.args, binaryParams, nil)
		e.topo.Shards[shard].Pool.Submit(op)
		ops = append(ops, op)
	}
	rr := tx.Conn().PgConn().ExecParams(ctx, stmt.SQL, args.args, stmt.ParamOIDs, binaryParams, []int16{1})
	_, err := rr.Close()
	for _, op := range ops {
		if werr := op.Wait(ctx); werr != nil && err == nil {
			err = werr
		}
	}
	return err
}

// conditionsHold checks IF NOT EXISTS, IF EXISTS or the IF conditions
// against the current row (nil when there is none).
func (e *execution) conditionsHold(c *translate.Conditions, current [][]byte) (bool, error) {
	switch {
	case c.IfNotExists:
		return current == nil, nil
	case c.IfExists:
		return current != nil, nil
	}
	for _, cond := range c.Conds {
		var v []byte
		if current != nil {
			v = current[slotOf(c.Read, cond.Column)]
		}
		v, err := e.conditionOperand(cond, v)
		if err != nil {
			return false, err
		}
		ok, err := e.condition(cond, v)
		if err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

func slotOf(read *translate.Select, c *pgschema.Column) int {
	for i, sl := range read.Slots {
		if sl.Column == c {
			return i
		}
	}
	return -1
}

// conditionOperand narrows a column's value to the element or field a
// condition names.
func (e *execution) conditionOperand(cond translate.Cond, v []byte) ([]byte, error) {
	if v == nil {
		return nil, nil
	}
	switch {
	case cond.Key != nil:
		key, _ := e.bound.Get(*cond.Key)
		if key == nil {
			return nil, invalidf("Invalid null value for %s element access", cond.Column.Name)
		}
		return pgschema.Element(cond.Column.Type, v, key)
	case cond.Field >= 0:
		fields, err := pgschema.Elements(cond.Column.Type, v)
		if err != nil || cond.Field >= len(fields) {
			return nil, err
		}
		return fields[cond.Field], nil
	}
	return v, nil
}

// condition applies one condition's operator to the current value.
func (e *execution) condition(cond translate.Cond, current []byte) (bool, error) {
	if cond.Op == translate.OpIN {
		values, err := e.conditionList(cond)
		if err != nil {
			return false, err
		}
		for _, v := range values {
			if equalValues(cond.Type, current, v) {
				return true, nil
			}
		}
		return false, nil
	}
	v, _ := e.bound.Get(cond.Values[0])
	switch cond.Op {
	case translate.OpEQ:
		return equalValues(cond.Type, current, v), nil
	case translate.OpNEQ:
		return !equalValues(cond.Type, current, v), nil
	}
	if v == nil {
		return false, invalidf("Invalid comparison with null for operator \"%s\"", cond.Op)
	}
	if current == nil {
		return false, nil
	}
	c := pgschema.Compare(cond.Type, current, v)
	switch cond.Op {
	case translate.OpLT:
		return c < 0, nil
	case translate.OpLTE:
		return c <= 0, nil
	case translate.OpGT:
		return c > 0, nil
	}
	return c >= 0, nil
}

// conditionList returns the values of an IF ... IN condition; null is
// allowed among them.
func (e *execution) conditionList(cond translate.Cond) ([][]byte, error) {
	if !cond.ListMarker {
		out := make([][]byte, len(cond.Values))
		for i, v := range cond.Values {
			out[i], _ = e.bound.Get(v)
		}
		return out, nil
	}
	list, _ := e.bound.Get(cond.Values[0])
	if list == nil {
		return nil, invalidf("Invalid null list in IN condition")
	}
	d := decoder{b: list}
	n := int(d.int())
	out := make([][]byte, 0, n)
	for i := 0; i < n && d.err == nil; i++ {
		v, _ := d.value()
		out = append(out, v)
	}
	return out, d.err
}

func equalValues(t *pgschema.Type, a, b []byte) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return bytes.Equal(a, b) || pgschema.Compare(t, a, b) == 0
}

// appendCASResult writes an LWT's Rows result: [applied] first, then, for
// a refused write of a row that exists, the columns Cassandra shows: the
// row's for IF EXISTS and IF NOT EXISTS, else those of the conditions,
// regular columns before static ones.
func appendCASResult(b []byte, t *pgschema.Table, c *translate.Conditions, applied bool, current [][]byte) []byte {
	specs := []translate.ColumnSpec{{Keyspace: t.Keyspace, Table: t.Name, Name: "[applied]", Type: pgschema.Scalar(pgschema.Boolean)}}
	values := [][]byte{boolValue(applied)}
	if !applied && current != nil {
		cols := c.Result
		if !c.IfExists && !c.IfNotExists {
			cols = make([]*pgschema.Column, 0, len(c.Result))
			for _, static := range []bool{false, true} {
				for _, col := range c.Result {
					if (col.Kind == pgschema.Static) == static {
						cols = append(cols, col)
					}
				}
			}
		}
		for _, col := range cols {
			specs = append(specs, translate.ColumnSpec{Keyspace: t.Keyspace, Table: t.Name, Name: col.Name, Type: col.Type})
			values = append(values, current[slotOf(c.Read, col)])
		}
	}
	b = appendInt(b, resultRows)
	b = appendRowsMetadata(b, specs, false, nil)
	b = appendInt(b, 1)
	for _, v := range values {
		b = appendBytes(b, v)
	}
	return b
}
