package gateway

import (
	"crypto/md5"
	"sync"
	"sync/atomic"

	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/sharding"
	"github.com/cqlpg/cqlpg/translate"
)

// statement is a planned statement and what the executor derives from it
// once: the shard statements and the conversions of result slots. It is
// immutable and shared by every execution.
type statement struct {
	id       [16]byte
	keyspace string
	query    string
	plan     translate.Plan
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
	// slotConv converts each slot of a SELECT's rows from Postgres's
	// binary form to CQL's; nil entries need no conversion.
	slotConv []pgschema.Converter
	// resultID digests the result metadata (v5's result_metadata_id).
	resultID [16]byte
	// kind is the statement's kind, for the requests' metrics.
	kind stmtKind
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

// statementID is a statement's prepared id: a digest of the keyspace and
// the query text, so it is the same on every gateway and after a restart.
func statementID(keyspace string, query []byte) [16]byte {
	h := md5.New()
	h.Write([]byte(keyspace))
	h.Write(query)
	var id [16]byte
	h.Sum(id[:0])
	return id
}

// compile derives a statement's shard statements from its plan.
func compile(st *statement) {
	switch p := st.plan.(type) {
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
	case *translate.Batch:
		for _, w := range p.Writes {
			st.batch = append(st.batch, sharding.NewStatement(w.SQL, paramOIDs(w.Params)))
		}
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

// stmtCache holds planned statements by id, for EXECUTE and for QUERY
// texts seen before.
type stmtCache struct {
	mu sync.RWMutex
	m  map[[16]byte]*statement
}

func newStmtCache() *stmtCache { return &stmtCache{m: map[[16]byte]*statement{}} }

func (c *stmtCache) get(id [16]byte) *statement {
	c.mu.RLock()
	st := c.m[id]
	c.mu.RUnlock()
	return st
}

// find returns the statement of an id a client sent, nil when it is not
// cached or is not an id.
func (c *stmtCache) find(id []byte) *statement {
	if len(id) != 16 {
		return nil
	}
	return c.get([16]byte(id))
}

func (c *stmtCache) put(st *statement) {
	c.mu.Lock()
	if len(c.m) >= maxCachedStatements {
		// Evict about half; a driver re-prepares an evicted statement when
		// it gets UNPREPARED.
		n := 0
		for id := range c.m {
			if n++; n%2 == 0 {
				delete(c.m, id)
			}
		}
	}
	c.m[st.id] = st
	c.mu.Unlock()
}

func (c *stmtCache) len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.m)
}

// prepare returns the planned statement for a query in a keyspace,
// planning it unless a plan for the current schema is cached.
func (s *Server) prepare(keyspace string, query []byte) (*statement, error) {
	id := statementID(keyspace, query)
	schema := s.cluster.schema()
	if st := s.cache.get(id); st != nil && st.version == schema.Version {
		return st, nil
	}
	return s.plan(id, keyspace, string(query), schema)
}

// plan plans a statement and caches it when it can be reused.
func (s *Server) plan(id [16]byte, keyspace, query string, schema *pgschema.Schema) (*statement, error) {
	parsed, err := translate.Parse(query)
	if err != nil {
		return nil, err
	}
	plan, err := translate.Prepare(parsed, keyspace, schema)
	if err != nil {
		return nil, err
	}
	st := &statement{id: id, keyspace: keyspace, query: query, plan: plan, version: schema.Version,
		resultID: resultMetadataID(plan.Meta().Result), kind: kindOf(parsed.Statement, plan)}
	compile(st)
	if cacheable(plan) {
		s.cache.put(st)
	}
	return st, nil
}

// replan refreshes a cached statement whose schema has changed since it
// was planned. When the change reshaped the statement's bound variables
// or result columns, which the client holds from PREPARE, it answers
// UNPREPARED instead, as Cassandra does when a schema change drops the
// statements of a table: the driver prepares again and learns the new
// shape, rather than decoding rows by the old one.
func (s *Server) replan(st *statement) (*statement, error) {
	schema := s.cluster.schema()
	if st.version == schema.Version {
		return st, nil
	}
	fresh, err := s.plan(st.id, st.keyspace, st.query, schema)
	if err != nil {
		return nil, err
	}
	if !sameShape(st.plan.Meta(), fresh.plan.Meta()) {
		return nil, &unpreparedError{id: st.id[:]}
	}
	return fresh, nil
}

// sameShape reports whether two plans bind and return the same columns,
// by name and type.
func sameShape(a, b *translate.Metadata) bool {
	same := func(x, y []translate.ColumnSpec) bool {
		if len(x) != len(y) {
			return false
		}
		for i := range x {
			if x[i].Name != y[i].Name || x[i].Type.String() != y[i].Type.String() {
				return false
			}
		}
		return true
	}
	return same(a.Variables, b.Variables) && same(a.Result, b.Result)
}
