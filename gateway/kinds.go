package gateway

import (
	"context"

	"github.com/cqlpg/cqlpg/translate"
)

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
