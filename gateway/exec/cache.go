package exec

import (
	"context"
	"crypto/md5"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/cqlpg/cqlpg/gateway/cqlwire"
	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/sharding"
	"github.com/cqlpg/cqlpg/translate"
)

// Statement is a planned statement and what the executor derives from it
// once: the shard statements and the conversions of result slots. It is
// immutable and shared by every execution.
type Statement struct {
	// Id is what clients execute it by (preparedID), text what a QUERY
	// finds it by (statementID).
	Id, text [16]byte
	Keyspace string
	Query    string
	Plan     translate.Plan
	// version is the schema version the plan was made against.
	version [16]byte
	// read reads one partition and scan one token range (SELECT), and
	// pageRead and pageScan do with a row limit, for paged queries, and
	// resumeRead and resumeScan after a page's position; write writes one
	// row; batch holds each write of a BATCH.
	read, scan, write      *sharding.Statement
	pageRead, pageScan     *sharding.Statement
	resumeRead, resumeScan *sharding.Statement
	batch                  []*sharding.Statement
	// condReads are the statements of the reads the conditions of a
	// conditional write, or of a batch's writes, make (Conditions.Read
	// and PartitionRead), by plan.
	condReads map[*translate.Select]*sharding.Statement
	// slotConv converts each slot of a SELECT's rows from Postgres's
	// binary form to CQL's; nil entries need no conversion.
	slotConv []pgschema.Converter
	// filtered counts the executions and rows of a SELECT that filters or
	// reads through an index, for the advisor (FilterStats).
	filtered filterCounts
	// resultID digests the result metadata (v5's result_metadata_id).
	resultID [16]byte
	// Kind is the statement's kind, for the requests' metrics.
	Kind Kind
	// reusable is set when QUERY finds the plan by its text (cacheable);
	// sealed when planning replaced the password the statement sets with
	// its hash (sealPassword): Query then has the password masked, and
	// the plan is never made again from it.
	reusable, sealed bool
	// prepared is set once a client has prepared the statement: a v5
	// client executing the id of an older shape of it is then told of its
	// result metadata instead of UNPREPARED (bindExecute).
	prepared atomic.Bool
	// placed memoizes the placement the statement's last execution
	// resolved: finding it in the topology builds a key string, which
	// costs more than the rest of a read.
	placed atomic.Pointer[placedMemo]
}

// placedMemo is the placement of a keyspace under one topology and
// schema snapshot; both are immutable, so it holds as long as they are
// the ones an execution resolves against.
type placedMemo struct {
	topo      *sharding.Topology
	schema    *pgschema.Schema
	keyspace  string
	placement *sharding.Placement
}

// statementID digests the keyspace and the query text, by which QUERY
// finds a statement planned before.
func statementID(keyspace string, query []byte) [16]byte {
	h := md5.New()
	h.Write([]byte(keyspace))
	h.Write(query)
	var id [16]byte
	h.Sum(id[:0])
	return id
}

// preparedID is a statement's prepared id: the digest of its keyspace and
// text with the shape PREPARE tells the client (its bound variables and
// result columns, user types' fields included). It is the same on every
// gateway and after a restart, and a schema change that reshapes the
// statement gives it a new id: a client holding the old shape then gets
// UNPREPARED for the old id, whoever prepared it again first, and learns
// the new shape by preparing, rather than decoding rows by the old one.
// (Protocol v3 and v4 have no other way to say that a shape changed;
// gocql executes on any connection what it prepared on one.)
func preparedID(text [16]byte, m *translate.Metadata) [16]byte {
	h := md5.New()
	h.Write(text[:])
	h.Write(cqlwire.AppendColumnSpecs(nil, m.Variables, false))
	h.Write(cqlwire.AppendColumnSpecs(nil, m.Result, false))
	var id [16]byte
	h.Sum(id[:0])
	return id
}

// compile derives a statement's shard statements from its plan.
func compile(st *Statement) {
	switch p := st.Plan.(type) {
	case *translate.Select:
		st.slotConv = make([]pgschema.Converter, len(p.Slots))
		for i, sl := range p.Slots {
			if sl.Kind == translate.SlotValue && !p.Table.Virtual {
				if s, err := pgschema.StorageOf(sl.Column.Type); err == nil {
					st.slotConv[i] = s.FromPG
				}
			}
		}
		if !p.Table.Virtual {
			st.read = sharding.NewStatement(p.SQL, paramOIDs(p.Params))
			st.scan = sharding.NewStatement(p.ScanSQL, paramOIDs(p.ScanParams))
			st.pageRead, st.pageScan = st.read, st.scan
			if p.PageSQL != p.SQL {
				st.pageRead = sharding.NewStatement(p.PageSQL, paramOIDs(p.PageParams))
			}
			if p.PageScanSQL != p.ScanSQL {
				st.pageScan = sharding.NewStatement(p.PageScanSQL, paramOIDs(p.PageScanParams))
			}
			if p.ResumeSQL != "" {
				st.resumeRead = sharding.NewStatement(p.ResumeSQL, paramOIDs(p.ResumeParams))
			}
			if p.ResumeScanSQL != "" {
				st.resumeScan = sharding.NewStatement(p.ResumeScanSQL, paramOIDs(p.ResumeScanParams))
			}
		}
	case *translate.Write:
		st.write = sharding.NewStatement(p.SQL, paramOIDs(p.Params))
		st.compileConditions(p.Conditions)
	case *translate.Batch:
		for _, w := range p.Writes {
			st.batch = append(st.batch, sharding.NewStatement(w.SQL, paramOIDs(w.Params)))
			st.compileConditions(w.Conditions)
		}
	}
}

// compileConditions derives the statements of a write's conditions' reads.
func (st *Statement) compileConditions(c *translate.Conditions) {
	if c == nil {
		return
	}
	for _, read := range []*translate.Select{c.Read, c.PartitionRead} {
		if read == nil {
			continue
		}
		if st.condReads == nil {
			st.condReads = map[*translate.Select]*sharding.Statement{}
		}
		st.condReads[read] = sharding.NewStatement(read.SQL, paramOIDs(read.Params))
	}
}

// cacheable reports whether a plan may be reused: schema changes and USE
// are planned afresh each time, since they depend on the moment.
func cacheable(p translate.Plan) bool {
	switch p.(type) {
	case *translate.SchemaChange, *translate.Use, *translate.Truncate, *translate.Noop:
		return false
	}
	return true
}

// maxCachedStatements bounds the cache; queries sent with literals instead
// of markers would otherwise fill it without end.
const maxCachedStatements = 20000

// Cache holds planned statements by id, for EXECUTE and for QUERY
// texts seen before.
type Cache struct {
	Mu     sync.RWMutex
	ByID   map[[16]byte]*Statement // by prepared id
	ByText map[[16]byte]*Statement // by statementID, the latest plan
}

func NewCache() *Cache {
	return &Cache{ByID: map[[16]byte]*Statement{}, ByText: map[[16]byte]*Statement{}}
}

// get returns the latest plan of a keyspace and text (statementID).
func (c *Cache) get(text [16]byte) *Statement {
	c.Mu.RLock()
	st := c.ByText[text]
	c.Mu.RUnlock()
	return st
}

// Find returns the statement of an id a client sent, nil when it is not
// cached or is not an id.
func (c *Cache) Find(id []byte) *Statement {
	if len(id) != 16 {
		return nil
	}
	c.Mu.RLock()
	st := c.ByID[[16]byte(id)]
	c.Mu.RUnlock()
	return st
}

func (c *Cache) put(st *Statement) {
	c.Mu.Lock()
	if len(c.ByID) >= maxCachedStatements {
		// Evict about half; a driver re-prepares an evicted statement when
		// it gets UNPREPARED.
		n := 0
		for id, old := range c.ByID {
			if n++; n%2 == 0 {
				delete(c.ByID, id)
				if c.ByText[old.text] == old {
					delete(c.ByText, old.text)
				}
			}
		}
	}
	c.ByID[st.Id] = st
	c.ByText[st.text] = st
	c.Mu.Unlock()
}

func (c *Cache) Len() int {
	c.Mu.RLock()
	defer c.Mu.RUnlock()
	return len(c.ByID)
}

// Prepare returns the planned statement for a query in a keyspace,
// planning it unless a plan for the current schema is cached.
func (v *Env) Prepare(keyspace string, query []byte) (*Statement, error) {
	text := statementID(keyspace, query)
	schema := v.Cluster.Schema()
	if st := v.Cache.get(text); st != nil && st.version == schema.Version {
		return st, nil
	}
	return v.plan(text, keyspace, string(query), schema)
}

// plan plans a statement and caches it when it can be reused.
func (v *Env) plan(text [16]byte, keyspace, query string, schema *pgschema.Schema) (*Statement, error) {
	parsed, err := translate.Parse(query)
	if err != nil {
		return nil, err
	}
	plan, err := translate.Prepare(parsed, keyspace, schema)
	if err != nil {
		return nil, err
	}
	sealed, err := v.sealPassword(plan)
	if err != nil {
		return nil, err
	}
	if sealed {
		query = sharding.Redact(query)
	}
	st := &Statement{Id: preparedID(text, plan.Meta()), text: text, Keyspace: keyspace, Query: query, Plan: plan,
		version: schema.Version, resultID: cqlwire.ResultMetadataID(plan.Meta().Result), Kind: kindOf(parsed.Statement, plan),
		reusable: cacheable(plan) && !sealed, sealed: sealed}
	compile(st)
	if st.reusable {
		v.Cache.put(st)
	}
	return st, nil
}

// replan refreshes a cached statement whose schema has changed since it
// was planned. When the change reshaped the statement's bound variables
// or result columns, which the client holds from PREPARE, the fresh plan
// has another id (preparedID) and the old one answers UNPREPARED, as
// Cassandra does when a schema change drops the statements of a table:
// the driver prepares again and learns the new shape.
func (v *Env) replan(st *Statement) (*Statement, error) {
	fresh, err := v.latest(st)
	if err == nil && fresh.Id != st.Id {
		err = &UnpreparedError{Id: st.Id[:]}
	}
	return fresh, err
}

// latest returns the plan of a statement's text against the schema now:
// the statement itself while its schema holds, else the latest plan
// cached for its text, planned if none is.
func (v *Env) latest(st *Statement) (*Statement, error) {
	schema := v.Cluster.Schema()
	if st.version == schema.Version || st.sealed {
		return st, nil
	}
	if fresh := v.Cache.get(st.text); fresh != nil && fresh.version == schema.Version {
		return fresh, nil
	}
	return v.plan(st.text, st.Keyspace, st.Query, schema)
}

// sameVariables reports whether two plans bind the same variables.
func sameVariables(a, b *Statement) bool {
	x, y := a.Plan.Meta().Variables, b.Plan.Meta().Variables
	return len(x) == len(y) && string(cqlwire.AppendColumnSpecs(nil, x, false)) == string(cqlwire.AppendColumnSpecs(nil, y, false))
}

// schemaChanged reports whether err is a shard's refusal of SQL planned
// against a schema that a change has replaced since: a column, table or
// type it names is gone or reshaped (a DROP or ALTER that another
// request's plan had not seen yet). The schema is reloaded first when the
// gateway has not seen the change itself yet; an error of that kind with
// no change behind it is a failure like any other.
func (v *Env) schemaChanged(ctx context.Context, st *Statement, err error) bool {
	if !staleSQL(err) || !rerunnable(st.Plan) {
		return false
	}
	// The change may still be applying on the shard the schema is read
	// from: look again for a while.
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	for wait := time.Duration(0); v.Cluster.Schema().Version == st.version; wait = 20 * time.Millisecond {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(wait):
		}
		v.Cluster.Reload(ctx)
	}
	return true
}

// rerunnable reports whether a statement may run again after a replica
// refused its stale SQL: its writes, which other replicas may have
// applied, land the same way twice. A counter update or a list append
// would not, and answers the error.
func rerunnable(p translate.Plan) bool {
	w, ok := p.(*translate.Write)
	return !ok || !w.Counter && !w.Accumulates
}

// staleSQL reports whether err is a shard's refusal of the kind a stale
// plan meets (schemaChanged).
func staleSQL(err error) bool {
	if err == nil {
		return false // before pgErr, which escapes: a success allocates nothing
	}
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return false
	}
	switch pgErr.Code {
	case "42703", // undefined_column
		"42P01", // undefined_table
		"0A000", // feature_not_supported: cached plan must not change result type
		"42804", // datatype_mismatch
		"3F000": // invalid_schema_name
		return true
	}
	return false
}

// staleExecute is what an EXECUTE that failed with err answers: when a
// schema change made its plan stale (schemaChanged), UNPREPARED, as
// Cassandra answers once a schema change has dropped a table's
// statements; the driver prepares the statement again, against the schema
// now, and runs it again.
func (v *Env) staleExecute(ctx context.Context, st *Statement, err error) error {
	if v.schemaChanged(ctx, st, err) {
		return &UnpreparedError{Id: st.Id[:]}
	}
	return err
}

// UnpreparedError reports an EXECUTE of an id this gateway does not know;
// drivers prepare the statement again and retry.
type UnpreparedError struct{ Id []byte }

func (e *UnpreparedError) Error() string {
	return fmt.Sprintf("Prepared query with ID %x not found (either the query was not prepared on this host (maybe the host has been restarted?) or you have prepared too many queries and it has been evicted from the internal cache)", e.Id)
}
