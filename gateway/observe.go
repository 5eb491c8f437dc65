package gateway

import (
	"context"
	"encoding/hex"
	"strings"
	"time"

	"github.com/cqlpg/cqlpg/gateway/cqlwire"
	"github.com/cqlpg/cqlpg/translate"
)

// Requests are timed by the kind of statement they run, and those slower
// than Config.SlowQuery are logged. A request's latency runs from its
// arrival (the reader's stamp, job.at or execution.now) to the moment its
// answer is queued for the writer, on whichever goroutine answers it: the
// handler (conn.handle) or a shard pool's (execution.answer).

// stmtKind is the kind of statement a request runs, a small fixed set:
// the label of the requests' latency histograms.
type stmtKind uint8

const (
	// kindNone is a request that runs no statement (STARTUP, OPTIONS,
	// REGISTER, PREPARE, AUTH_RESPONSE), or one refused before its
	// statement was known.
	kindNone stmtKind = iota
	kindSelect
	kindInsert
	kindUpdate
	kindDelete
	// kindBatch is a BATCH, message or statement, without conditions
	// and not of counters.
	kindBatch
	// kindLWT is a conditional write or batch (IF ...).
	kindLWT
	// kindCounter is a counter update or a counter batch.
	kindCounter
	// kindDDL changes the schema: CREATE, ALTER, DROP, TRUNCATE.
	kindDDL
	kindUse
	// kindOther is every other statement: roles and permissions,
	// DESCRIBE.
	kindOther
	numKinds
)

var kindNames = [numKinds]string{"none", "select", "insert", "update", "delete", "batch", "lwt", "counter", "ddl", "use", "other"}

func (k stmtKind) String() string { return kindNames[k] }

// kindOf classifies a statement by its parsed form and its plan.
func kindOf(parsed translate.Statement, plan translate.Plan) stmtKind {
	switch p := plan.(type) {
	case *translate.Select:
		return kindSelect
	case *translate.Write:
		switch {
		case p.Conditions != nil:
			return kindLWT
		case p.Counter:
			return kindCounter
		case p.Deletion:
			return kindDelete
		}
		if _, ok := parsed.(*translate.UpdateStmt); ok {
			return kindUpdate
		}
		return kindInsert
	case *translate.Batch:
		return batchKind(translate.BatchKind(p.Kind), isConditionalBatch(p.Writes))
	case *translate.Use:
		return kindUse
	case *translate.SchemaChange, *translate.Truncate, *translate.Noop:
		return kindDDL
	}
	return kindOther
}

// batchKind is the kind of a batch of kind k, with conditions or not.
func batchKind(k translate.BatchKind, conditional bool) stmtKind {
	switch {
	case conditional:
		return kindLWT
	case k == translate.CounterBatch:
		return kindCounter
	}
	return kindBatch
}

// runs records, in a handler's request context, the kind of statement
// the request runs.
func runs(ctx context.Context, k stmtKind) {
	if r, ok := ctx.(*requestContext); ok {
		r.kind = k
	}
}

// observe records the end of a request that arrived at at: its latency
// by kind and, past the slow-request threshold, a log line. st is the
// statement it ran when known; otherwise the log recovers the text from
// body, the request's body, decompressed.
func (c *conn) observe(h cqlwire.Header, kind stmtKind, at time.Time, st *statement, body []byte) {
	d := time.Since(at)
	m := c.srv.metrics
	m.latency[kind].Observe(d)
	if d > m.slow {
		c.logSlow(h, kind, d, st, body)
	}
}

// logSlow logs a slow request: its opcode, kind, keyspace and CQL text,
// never its values; the connection's logger adds the client's address.
func (c *conn) logSlow(h cqlwire.Header, kind stmtKind, d time.Duration, st *statement, body []byte) {
	keyspace, text := *c.keyspace.Load(), ""
	switch {
	case st != nil:
		keyspace, text = stmtKeyspace(st), st.query
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
func stmtKeyspace(st *statement) string {
	switch p := st.plan.(type) {
	case *translate.Select:
		return p.Table.Keyspace
	case *translate.Write:
		return p.Table.Keyspace
	}
	return st.keyspace
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
		if st := c.srv.cache.find(id); st != nil {
			return st.query
		}
		return "prepared statement " + hex.EncodeToString(id)
	}
	switch op {
	case cqlwire.OpQuery, cqlwire.OpPrepare:
		text = string(d.LongString())
		if op == cqlwire.OpQuery {
			var q cqlwire.QueryParams
			d.QueryParams(&q, c.version)
			keyspace = c.keyspaceFor(q.Keyspace)
		}
	case cqlwire.OpExecute:
		text = named(d.ShortBytes())
	case cqlwire.OpBatch:
		var b cqlwire.BatchParams
		d.Batch(&b, c.version)
		keyspace = c.keyspaceFor(b.Keyspace)
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
