package gateway

import (
	"encoding/hex"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/cqlpg/cqlpg/gateway/cqlwire"
	"github.com/cqlpg/cqlpg/gateway/exec"
	"github.com/cqlpg/cqlpg/sharding"
	"github.com/cqlpg/cqlpg/translate"
)

// Requests are timed by the kind of statement they run, and those slower
// than Config.SlowQuery are logged. A request's latency runs from its
// arrival (the reader's stamp, job.at or execution.now) to the moment its
// answer is queued for the writer, on whichever goroutine answers it: the
// handler (conn.handle) or a shard pool's (execution.answer).

// observe records the end of a request that arrived at at: its latency
// by kind and, past the slow-request threshold, a log line. st is the
// statement it ran when known; otherwise the log recovers the text from
// body, the request's body, decompressed.
func (c *conn) observe(h cqlwire.Header, kind exec.Kind, at time.Time, st *exec.Statement, body []byte) {
	d := time.Since(at)
	m := c.srv.metrics
	m.latency[kind].Observe(d)
	if d > m.slow {
		c.logSlow(h, kind, d, st, body)
	}
}

// logSlow logs a slow request: its opcode, kind, keyspace and CQL text,
// never its values; the connection's logger adds the client's address.
func (c *conn) logSlow(h cqlwire.Header, kind exec.Kind, d time.Duration, st *exec.Statement, body []byte) {
	keyspace, text := *c.keyspace.Load(), ""
	switch {
	case st != nil:
		keyspace, text = stmtKeyspace(st), st.Query
	case body != nil:
		dec := cqlwire.Decoder{B: body}
		if h.Flags&cqlwire.FlagCustomPayload != 0 {
			dec.SkipBytesMap()
		}
		keyspace, text = c.requestText(h.Opcode, &dec)
	}
	c.log.Warn("slow request", "opcode", cqlwire.OpNames[h.Opcode], "kind", kind.String(), "keyspace", keyspace,
		"cql", text, "duration", d)
}

// stmtKeyspace returns the keyspace a statement runs in: its table's, or
// the one it was prepared in.
func stmtKeyspace(st *exec.Statement) string {
	switch p := st.Plan.(type) {
	case *translate.Select:
		return p.Table.Keyspace
	case *translate.Write:
		return p.Table.Keyspace
	}
	return st.Keyspace
}

// maxSlowText bounds the CQL text a slow batch logs.
const maxSlowText = 4096

// requestText recovers the keyspace and CQL text of a request from its
// body, for the slow-request log: the text of a QUERY or PREPARE, of the
// prepared statement an EXECUTE names, or of a BATCH's statements joined
// by "; ".
func (c *conn) requestText(op byte, d *cqlwire.Decoder) (keyspace, text string) {
	keyspace = *c.keyspace.Load()
	named := func(id []byte) string {
		if st := c.srv.env.Cache.Find(id); st != nil {
			return st.Query
		}
		return "prepared statement " + hex.EncodeToString(id)
	}
	switch op {
	case cqlwire.OpQuery, cqlwire.OpPrepare:
		text = string(d.LongString())
		if op == cqlwire.OpQuery {
			var q cqlwire.QueryParams
			d.QueryParams(&q, c.version)
			keyspace = exec.KeyspaceFor(c, q.Keyspace)
		}
	case cqlwire.OpExecute:
		text = named(d.ShortBytes())
	case cqlwire.OpBatch:
		var b cqlwire.BatchParams
		d.Batch(&b, c.version)
		keyspace = exec.KeyspaceFor(c, b.Keyspace)
		var sb strings.Builder
		for i, it := range b.Items {
			if i > 0 {
				sb.WriteString("; ")
			}
			if it.Id != nil {
				sb.WriteString(named(it.Id))
			} else {
				sb.Write(it.Query)
			}
			if sb.Len() > maxSlowText {
				break
			}
		}
		text = sb.String()
	}
	return keyspace, text
}

// traceable reports whether a request kind can be traced: the ones that
// run statements, as in Cassandra.
func traceable(opcode byte) bool {
	switch opcode {
	case cqlwire.OpQuery, cqlwire.OpPrepare, cqlwire.OpExecute, cqlwire.OpBatch:
		return true
	}
	return false
}

// traceRequests names each traceable request as Cassandra's trace
// sessions do.
var traceRequests = map[byte]string{
	cqlwire.OpQuery:   "Execute CQL3 query",
	cqlwire.OpPrepare: "Preparing CQL3 query",
	cqlwire.OpExecute: "Execute CQL3 prepared query",
	cqlwire.OpBatch:   "Execute batch of CQL3 queries",
}

// beginTrace starts the trace session of a request.
func (c *conn) beginTrace(h cqlwire.Header, body []byte) *exec.TraceSession {
	now := time.Now()
	tr := &exec.TraceSession{Id: exec.NewTimeUUID(now), Request: traceRequests[h.Opcode], Started: now,
		Client: exec.AddrIP(c.nc.RemoteAddr()), Coordinator: exec.AddrIP(c.nc.LocalAddr()),
		Parameters: c.traceParameters(h, body)}
	if a, ok := c.nc.LocalAddr().(*net.TCPAddr); ok {
		tr.Port = int32(a.Port)
	}
	tr.Event(now, "Request received")
	return tr
}

// endTrace records how a traced request ended and keeps its session.
func (c *conn) endTrace(tr *exec.TraceSession, err error) {
	now := time.Now()
	if err != nil {
		tr.Event(now, "Request failed")
	} else {
		tr.Event(now, "Request complete")
	}
	tr.Duration = now.Sub(tr.Started)
	c.srv.env.Traces.Add(tr)
}

// traceParameters decodes what a session row shows of a request: the
// query, with any password masked, its consistency levels and page size. The body is decoded anew,
// as tracing is rare and the handlers decode without keeping anything.
func (c *conn) traceParameters(h cqlwire.Header, body []byte) map[string]string {
	d := cqlwire.Decoder{B: body}
	if h.Flags&cqlwire.FlagCustomPayload != 0 {
		d.SkipBytesMap()
	}
	params := map[string]string{}
	var q cqlwire.QueryParams
	switch h.Opcode {
	case cqlwire.OpQuery:
		params["query"] = sharding.Redact(string(d.LongString()))
		d.QueryParams(&q, c.version)
	case cqlwire.OpPrepare:
		params["query"] = sharding.Redact(string(d.LongString()))
		return params
	case cqlwire.OpExecute:
		id := d.ShortBytes()
		if c.version >= 5 {
			d.ShortBytes()
		}
		d.QueryParams(&q, c.version)
		if st := c.srv.env.Cache.Find(id); st != nil {
			params["query"] = st.Query
		}
	case cqlwire.OpBatch:
		var b cqlwire.BatchParams
		d.Batch(&b, c.version)
		q = b.QueryParams
		q.PageSize = -1
	}
	if d.Err != nil {
		return params
	}
	params["consistency_level"] = sharding.Consistency(q.Consistency).String()
	if q.SerialConsistency != 0 {
		params["serial_consistency_level"] = sharding.Consistency(q.SerialConsistency).String()
	}
	if q.PageSize > 0 {
		params["page_size"] = strconv.Itoa(int(q.PageSize))
	}
	return params
}
