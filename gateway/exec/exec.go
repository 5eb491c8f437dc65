package exec

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cqlpg/cqlpg/gateway/cqlwire"
	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/sharding"
	"github.com/cqlpg/cqlpg/translate"
)

// Execution is one run of a planned statement: the bound values, the
// request's options and time, and the snapshots it resolves against.
type Execution struct {
	// c is the session the request came on, and version its protocol
	// version.
	c       Session
	version byte
	// env is the gateway as executions see it (env.go).
	env        *Env
	params     *cqlwire.QueryParams
	bound      translate.Bound
	Now        time.Time
	nowSeconds int32
	topo       *sharding.Topology
	schema     *pgschema.Schema
	// mutations, when set, collects the writes instead of sending them:
	// a batch applies them together.
	mutations *mutations
	// St is the statement run, for what it memoizes (placement).
	St *Statement
	// ResultChanged is set on the EXECUTE of a statement whose v5 result
	// metadata id the client holds is not the statement's any more.
	ResultChanged bool
	// collected, when set, takes a SELECT's rows instead of the result
	// (ReadReplica).
	collected *[][][]byte
	// pinned, when set, is the one replica a read asks, whatever its
	// consistency level: the web view reads each replica on its own.
	pinned []int

	// What follows is reused from one execution to the next, so that a
	// single-partition request allocates nothing of its own: see release
	// for when an execution may be reused.

	// refs counts the holders of the execution: the request, and any
	// goroutine still using it after the request is answered (a write's
	// drain). An op given up on at its timeout may still touch the
	// execution's buffers whenever it finishes, so it takes a reference it
	// never gives back, and the execution is left to the collector.
	refs atomic.Int32
	// keyVals and keys hold the one key of a single-partition request;
	// keyTaken is set once they do, as callers keep keys for as long as
	// the execution (a batch keys each of its writes on one execution).
	keyVals  [][]byte
	Keys     [1][][]byte
	KeyTaken bool
	// HandedOver holds, for a request the reader keyed and could not
	// start, the restrictions it keyed: the handler's run takes those
	// keys instead of keying again.
	HandedOver []translate.Restriction
	// rw writes the rows of a SELECT; scratch serves its one partition
	// read; writes are the replica writes of a write.
	rw      rowWriter
	scratch readScratch
	writes  replicaWrites
	args    argBuffer
	// Query holds the parameters of an EXECUTE the reader decodes
	// (async.go), params then pointing to it: one pooled object per
	// request instead of two.
	Query cqlwire.QueryParams
	// async runs the request from the pools' goroutines (async.go), and
	// due is its place among the requests the clock expires.
	async asyncState
	due   dueLink
}

// readScratch is what one partition read needs, kept so that a read that
// is alone in its request reuses it. Reads running side by side (IN
// lists, scans) get their own.
type readScratch struct {
	args  argBuffer
	guard guardSink
	op    sharding.Op
	order []int
	// share lets the read's ops share their pipelines' transactions
	// (sharding.Op.Order): reads of one partition, short, unlike scans.
	share bool
	// count counts the rows of an asynchronous read (async.go).
	count rowCounter
	// asks serves a read that asks several replicas (replica_reads.go).
	asks replicaAsks
	// deadline is when the read's ops are cancelled (opDeadline).
	deadline time.Time
}

// executionPool recycles executions (release).
var executionPool = sync.Pool{New: func() any { return new(Execution) }}

// Release returns the execution to the pool once its last holder is done
// with it. A holder that may never be done (an op abandoned at its
// timeout) keeps it out for good, and the collector takes it.
func (e *Execution) Release() {
	if e.refs.Add(-1) != 0 {
		return
	}
	e.async.reset()
	e.c, e.params, e.bound, e.topo, e.schema, e.mutations, e.St, e.ResultChanged, e.pinned, e.collected = nil, nil, translate.Bound{}, nil, nil, nil, nil, false, nil, nil
	clear(e.keyVals)
	e.Keys[0], e.KeyTaken, e.HandedOver = nil, false, nil
	e.rw.clear()
	e.scratch.guard.inner, e.scratch.share, e.scratch.count = nil, false, rowCounter{}
	clear(e.scratch.asks.sinks) // rows they hold
	clear(e.scratch.asks.data)
	clear(e.scratch.asks.ops)
	e.scratch.op.Reset(nil, nil, nil, nil) // keeps its done channel
	e.writes.clear()
	executionPool.Put(e)
}

// hold records one more holder of the execution, which calls release
// when done.
func (e *Execution) hold() { e.refs.Add(1) }

// abandon records that an op given up on may still touch the execution.
func (e *Execution) abandon() { e.refs.Add(1) }

func invalidf(format string, args ...any) error {
	return &translate.InvalidError{Msg: fmt.Sprintf(format, args...)}
}

// request says which message a statement came in, for the errors that
// differ between them.
type request uint8

const (
	fromQuery request = iota
	fromExecute
	fromBatch
)

// newExecution binds a request's values to a statement's variables.
// now is the request's arrival.
func (v *Env) newExecution(s Session, now time.Time, st *Statement, q *cqlwire.QueryParams, from request) (*Execution, error) {
	e := executionPool.Get().(*Execution)
	if err := v.bind(e, s, now, st, q, from); err != nil {
		e.Release()
		return nil, err
	}
	return e, nil
}

// bind is newExecution on an execution taken from executionPool, which
// the caller releases should it fail.
func (v *Env) bind(e *Execution, s Session, now time.Time, st *Statement, q *cqlwire.QueryParams, from request) error {
	md := st.Plan.Meta()
	e.refs.Store(1)
	e.c, e.version, e.env, e.params, e.Now, e.topo, e.schema, e.St = s, s.ProtocolVersion(), v, q, now, v.Cluster.Topology(), v.Cluster.Schema(), st
	e.nowSeconds = int32(e.Now.Unix())
	if q.HasNow {
		// v5's now_in_seconds: TTLs count from it and expiry is judged by
		// it; write timestamps still come from the clock, as in Cassandra.
		e.nowSeconds = q.NowInSeconds
	}
	values, unset := q.Values, q.Unset
	if len(q.Names) > 0 {
		var err error
		if values, unset, err = byName(md.Variables, q); err != nil {
			return err
		}
	}
	if len(values) != len(md.Variables) {
		switch from {
		case fromQuery:
			return invalidf("Invalid amount of bind variables")
		case fromBatch:
			return invalidf("There were %d markers(?) in CQL but %d bound variables", len(md.Variables), len(values))
		}
		return invalidf("there were %d markers(?) in CQL but %d bound variables", len(md.Variables), len(values))
	}
	e.bound = translate.Bound{Values: values, Unset: unset}
	if len(unset) > 0 && len(unset) < len(values) {
		e.bound.Unset = append(unset, make([]bool, len(values)-len(unset))...)
	}
	if len(md.Computed) > 0 {
		if err := e.compute(md.Computed); err != nil {
			return err
		}
	}
	// May the session's role run it? (package auth)
	if err := v.Auth.Authorize(s, st.Plan, e.Now); err != nil {
		return err
	}
	return nil
}

// compute appends the statement's computed values after the bound ones,
// in order, each seeing those before it.
func (e *Execution) compute(cs []translate.Computation) error {
	n := len(e.bound.Values)
	e.bound.Values = append(e.bound.Values[:n:n], make([][]byte, len(cs))...)
	unset := make([]bool, n+len(cs))
	copy(unset, e.bound.Unset)
	e.bound.Unset = unset
	ctx := translate.NewEvalContext(e.Now)
	for i, c := range cs {
		v, u, err := c.Compute(&e.bound, &ctx)
		if err != nil {
			return err
		}
		e.bound.Values[n+i], e.bound.Unset[n+i] = v, u
	}
	return nil
}

// byName orders named values as the statement's variables.
func byName(vars []translate.ColumnSpec, q *cqlwire.QueryParams) ([][]byte, []bool, error) {
	values := make([][]byte, len(vars))
	unset := make([]bool, len(vars))
	for i := range unset {
		unset[i] = true
	}
	for i, name := range q.Names {
		found := false
		for j, v := range vars {
			if v.Name == string(name) {
				values[j], unset[j], found = q.Values[i], q.UnsetAt(i), true
			}
		}
		if !found {
			return nil, nil, invalidf("Invalid bind variable name: %s", name)
		}
	}
	return values, unset, nil
}

// run executes a statement and appends its RESULT body to resp.
func (e *Execution) run(ctx context.Context, st *Statement, resp *[]byte) error {
	switch p := st.Plan.(type) {
	case *translate.Select:
		return e.selectRows(ctx, st, p, resp)
	case *translate.Write:
		return e.write(ctx, st.write, p, nil, resp)
	case *translate.Batch:
		if isConditionalBatch(p.Writes) {
			return e.conditionalBatch(ctx, st, p, resp)
		}
		return e.batch(ctx, st, p, resp)
	case *translate.Use:
		return e.use(p, resp)
	case *translate.SchemaChange:
		return e.schemaChange(ctx, p, resp)
	case *translate.Describe:
		return e.describe(p, resp)
	case *translate.Truncate:
		return e.truncate(ctx, p, resp)
	case *translate.Noop:
		*resp = cqlwire.AppendInt(*resp, cqlwire.ResultVoid)
		return nil
	case *translate.Auth:
		return e.authStatement(ctx, p, resp)
	}
	return fmt.Errorf("no executor for %T", st.Plan)
}

// use switches the connection's keyspace.
func (e *Execution) use(p *translate.Use, resp *[]byte) error {
	if e.schema.Keyspace(p.Keyspace) == nil {
		return invalidf("Keyspace '%s' does not exist", p.Keyspace)
	}
	ks := p.Keyspace
	e.c.SetKeyspace(ks)
	*resp = cqlwire.AppendString(cqlwire.AppendInt(*resp, cqlwire.ResultSetKeyspace), ks)
	return nil
}

// keyValues returns the values a key restriction allows.
func (e *Execution) keyValues(r translate.Restriction) ([][]byte, error) {
	if r.Op == translate.OpEQ {
		v, err := e.eqValue(r)
		return [][]byte{v}, err
	}
	values, err := e.listValues(r.Values, r.ListMarker, r.Column)
	if err != nil {
		return nil, err
	}
	for i, v := range values {
		if values[i], err = normalize(r.Column.Type, v); err != nil {
			return nil, err
		}
	}
	return values, nil
}

// eqValue returns the value a key restriction by = allows.
func (e *Execution) eqValue(r translate.Restriction) ([]byte, error) {
	v, err := e.conditionValue(r.Values[0], r.Column)
	if err != nil {
		return nil, err
	}
	return normalize(r.Column.Type, v)
}

// conditionValue returns the value bound for a restriction of column c,
// refusing unset and null as Cassandra does.
func (e *Execution) conditionValue(v translate.Value, c *pgschema.Column) ([]byte, error) {
	b, unset := e.bound.Get(v)
	if unset {
		return nil, invalidf("Invalid unset value for column %s", c.Name)
	}
	if b == nil {
		return nil, invalidf("Invalid null value in condition for column %s", c.Name)
	}
	return b, nil
}

// normalize sorts the sets and map keys inside a key value, as Cassandra
// does to bound values: the token is computed from normalized bytes.
func normalize(t *pgschema.Type, v []byte) ([]byte, error) {
	if t.Kind < pgschema.List {
		return v, nil
	}
	n, err := pgschema.Normalize(t, v)
	if err != nil {
		return nil, &translate.InvalidError{Msg: err.Error()}
	}
	return n, nil
}

// listValues returns an IN list's values: the terms, or the elements of
// the list bound to one marker.
func (e *Execution) listValues(values []translate.Value, listMarker bool, c *pgschema.Column) ([][]byte, error) {
	if !listMarker {
		out := make([][]byte, 0, len(values))
		for _, v := range values {
			b, err := e.conditionValue(v, c)
			if err != nil {
				return nil, err
			}
			out = append(out, b)
		}
		return out, nil
	}
	list, unset := e.bound.Get(values[0])
	if unset {
		return nil, invalidf("Invalid unset value for column %s", c.Name)
	}
	if list == nil {
		return nil, invalidf("Invalid null value for column %s", c.Name)
	}
	d := cqlwire.Decoder{B: list}
	n := int(d.Int())
	if n < 0 || n > len(list) {
		return nil, invalidf("Not enough bytes to read a list")
	}
	out := make([][]byte, 0, n)
	for i := 0; i < n && d.Err == nil; i++ {
		v, _ := d.Value()
		if v == nil {
			return nil, invalidf("null is not supported inside collections")
		}
		out = append(out, v)
	}
	if d.Err != nil || len(d.B) > 0 {
		return nil, invalidf("Not enough bytes to read a list")
	}
	return out, nil
}

// keyProduct returns the cartesian product of the allowed values of each
// key column, sorted in Cassandra's key order with duplicates removed.
func (e *Execution) keyProduct(rs []translate.Restriction) ([][][]byte, error) {
	if keys, ok, err := e.SingleKey(rs); ok || err != nil {
		return keys, err
	}
	keys := [][][]byte{nil}
	multi := false
	partitionColumns := 0
	for _, r := range rs {
		if r.Column.Kind == pgschema.PartitionKey {
			partitionColumns++
		}
	}
	for _, r := range rs {
		if r.Kind == translate.OnTuple {
			// A write's (c1, c2) IN (...): its tuples give c1 and the
			// columns after it together; those are marked, and skipped.
			if r.Columns == nil {
				continue
			}
			tuples, err := e.tupleKeys(r)
			if err != nil {
				return nil, err
			}
			multi = true
			next := make([][][]byte, 0, len(keys)*len(tuples))
			for _, k := range keys {
				for _, tup := range tuples {
					next = append(next, append(k[:len(k):len(k)], tup...))
				}
			}
			keys = next
			continue
		}
		values, err := e.keyValues(r)
		if err != nil {
			return nil, err
		}
		// A partition key of one column may not be empty; a composite
		// one never is, holding each part's length.
		if partitionColumns == 1 && r.Column.Kind == pgschema.PartitionKey {
			for _, v := range values {
				if len(v) == 0 {
					return nil, invalidf("Key may not be empty")
				}
			}
		}
		multi = multi || len(values) != 1
		next := make([][][]byte, 0, len(keys)*len(values))
		for _, k := range keys {
			for _, v := range values {
				next = append(next, append(k[:len(k):len(k)], v))
			}
		}
		keys = next
	}
	for _, k := range keys {
		if err := checkKeyLength(k[:min(partitionColumns, len(k))]); err != nil {
			return nil, err
		}
	}
	if !multi {
		return keys, nil
	}
	types := make([]*pgschema.Type, len(rs))
	for i, r := range rs {
		types[i] = r.Column.Type
	}
	slices.SortStableFunc(keys, func(a, b [][]byte) int { return pgschema.CompareKeys(types, a, b) })
	return slices.CompactFunc(keys, func(a, b [][]byte) bool { return pgschema.CompareKeys(types, a, b) == 0 }), nil
}

// tupleKeys returns the tuples a write's (c1, c2) = (...) or IN (...)
// allows, each split into its columns' values.
func (e *Execution) tupleKeys(r translate.Restriction) ([][][]byte, error) {
	var whole [][]byte // tuples bound as one value each
	if r.ListMarker {
		var err error
		if whole, err = e.listValues(r.Values, true, r.Column); err != nil {
			return nil, err
		}
	}
	out := make([][][]byte, 0, len(r.Tuples)+len(whole))
	for _, tuple := range r.Tuples {
		if r.TupleMarker || len(tuple) != len(r.Columns) {
			v, unset := e.bound.Get(tuple[0])
			if unset {
				return nil, invalidf("Invalid unset value for column %s", r.Column.Name)
			}
			if v == nil {
				return nil, invalidf("Invalid null value for column %s", r.Column.Name)
			}
			whole = append(whole, v)
			continue
		}
		values := make([][]byte, len(tuple))
		for i, v := range tuple {
			b, unset := e.bound.Get(v)
			if unset {
				return nil, invalidf("Invalid unset value for column %s", r.Columns[i].Name)
			}
			values[i] = b
		}
		out = append(out, values)
	}
	for _, v := range whole {
		values, err := splitTuple(v)
		if err != nil || len(values) != len(r.Columns) {
			return nil, invalidf("Invalid tuple value for column %s", r.Column.Name)
		}
		out = append(out, values)
	}
	for _, values := range out {
		for i, b := range values {
			var err error
			if b == nil {
				return nil, nullInTuple(r, i)
			}
			if values[i], err = normalize(r.Columns[i].Type, b); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// nullInTuple is Cassandra's refusal of a null element i of a
// multi-column relation: an = names the column, an IN all of them.
func nullInTuple(r translate.Restriction, i int) error {
	if r.Op == translate.OpEQ {
		return invalidf("Invalid null value for column %s", r.Columns[i].Name)
	}
	names := make([]string, len(r.Columns))
	for j, c := range r.Columns {
		names[j] = c.Name
	}
	return invalidf("Invalid null value in condition for columns: [%s]", strings.Join(names, ", "))
}

// maxKeyLength is Cassandra's limit on a partition key's serialized size.
const maxKeyLength = 65535

// checkKeyLength refuses a partition key longer than Cassandra takes: one
// column's value, or a composite key's parts each with its 2-byte length
// and end-of-component byte.
func checkKeyLength(parts [][]byte) error {
	n := 0
	if len(parts) == 1 {
		n = len(parts[0])
	} else {
		for _, p := range parts {
			n += 3 + len(p)
		}
	}
	if n > maxKeyLength {
		return invalidf("Key length of %d is longer than maximum of %d", n, maxKeyLength)
	}
	return nil
}

// int32Value reads a bound int (LIMIT, TTL).
func int32Value(b []byte) (int32, bool) {
	if len(b) != 4 {
		return 0, false
	}
	return int32(binary.BigEndian.Uint32(b)), true
}

// SingleKey is keyProduct for the common case of one value per key column
// (all restricted by =), built in the execution's own buffers: ok is false
// when some column has several values.
func (e *Execution) SingleKey(rs []translate.Restriction) (keys [][][]byte, ok bool, err error) {
	if e.KeyTaken {
		if h := e.HandedOver; len(h) > 0 && len(h) == len(rs) && &h[0] == &rs[0] {
			e.HandedOver = nil // the reader's keys, for the handler's run
			return e.Keys[:], true, nil
		}
		return nil, false, nil
	}
	partitionColumns := 0
	for _, r := range rs {
		if r.Op != translate.OpEQ || r.Kind == translate.OnTuple {
			return nil, false, nil
		}
		if r.Column.Kind == pgschema.PartitionKey {
			partitionColumns++
		}
	}
	key := e.keyVals[:0]
	for _, r := range rs {
		v, err := e.eqValue(r)
		if err != nil {
			return nil, false, err
		}
		if partitionColumns == 1 && r.Column.Kind == pgschema.PartitionKey && len(v) == 0 {
			return nil, false, invalidf("Key may not be empty")
		}
		key = append(key, v)
	}
	if err := checkKeyLength(key[:partitionColumns]); err != nil {
		return nil, false, err
	}
	e.keyVals, e.KeyTaken = key, true
	e.Keys[0] = key
	return e.Keys[:], true, nil
}
