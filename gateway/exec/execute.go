package exec

import (
	"bytes"
	"context"
	"time"

	"github.com/cqlpg/cqlpg/gateway/cqlwire"
	"github.com/cqlpg/cqlpg/translate"
)

// BindExecute decodes an EXECUTE's body, which came on session s, finds
// its prepared statement and binds its values, on an execution of its own
// that holds its parameters; at is the request's arrival. It returns the
// statement when it found it, even when binding failed.
func (v *Env) BindExecute(s Session, d *cqlwire.Decoder, at time.Time) (*Execution, *Statement, error) {
	version := s.ProtocolVersion()
	id := d.ShortBytes()
	var resultID []byte
	if version >= 5 {
		resultID = d.ShortBytes()
	}
	e := executionPool.Get().(*Execution)
	q := &e.Query
	d.QueryParams(q, version)
	if err := cqlwire.DecodeError(d, "EXECUTE"); err != nil {
		executionPool.Put(e)
		return nil, nil, err
	}
	st, err := v.lookup(id)
	if err != nil && resultID != nil {
		// A v5 client says which result metadata it holds: the id of a
		// statement whose result a schema change reshaped goes on serving
		// once the statement has been prepared again (its new shape has
		// another id), with the new metadata below, as in Cassandra.
		if old := v.Cache.Find(id); old != nil {
			if fresh, ferr := v.latest(old); ferr == nil && fresh.prepared.Load() && sameVariables(old, fresh) {
				st, err = fresh, nil
			}
		}
	}
	if err != nil {
		executionPool.Put(e)
		return nil, nil, err
	}
	// On v5 the client says which result metadata it holds. When the
	// statement's has changed since (a column added to the table of a
	// SELECT *), the rows come with the new metadata and its id, whether
	// or not the client asked to skip it. Conditional writes always send
	// their metadata and are left alone, as in Cassandra.
	changed := false
	if resultID != nil {
		if _, ok := st.Plan.(*translate.Select); ok && !bytes.Equal(resultID, st.resultID[:]) {
			changed = true
			q.Flags &^= cqlwire.QfSkipMetadata
		}
	}
	if err := v.bind(e, s, at, st, q, fromExecute); err != nil {
		e.Release()
		return nil, st, err
	}
	e.ResultChanged = changed
	return e, st, nil
}

// RunExecute runs an EXECUTE's bound statement and appends its result,
// telling a v5 client of result metadata that changed since it prepared.
func (e *Execution) RunExecute(ctx context.Context, resp *[]byte) error {
	start := len(*resp)
	if err := e.run(ctx, e.St, resp); err != nil {
		return e.env.staleExecute(ctx, e.St, err)
	}
	if e.ResultChanged {
		cqlwire.MarkMetadataChanged(resp, start, e.St.resultID[:])
	}
	return nil
}

// lookup finds a prepared statement by id, planned for the current schema.
func (v *Env) lookup(id []byte) (*Statement, error) {
	st := v.Cache.Find(id)
	if st == nil {
		return nil, &UnpreparedError{Id: id}
	}
	return v.replan(st)
}
