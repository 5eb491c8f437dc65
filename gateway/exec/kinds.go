package exec

import (
	"context"

	"github.com/cqlpg/cqlpg/translate"
)

// Kind is the kind of statement a request runs, a small fixed set:
// the label of the requests' latency histograms.
type Kind uint8

const (
	// KindNone is a request that runs no statement (STARTUP, OPTIONS,
	// REGISTER, PREPARE, AUTH_RESPONSE), or one refused before its
	// statement was known.
	KindNone Kind = iota
	KindSelect
	KindInsert
	KindUpdate
	KindDelete
	// KindBatch is a BATCH, message or statement, without conditions
	// and not of counters.
	KindBatch
	// KindLWT is a conditional write or batch (IF ...).
	KindLWT
	// KindCounter is a counter update or a counter batch.
	KindCounter
	// KindDDL changes the schema: CREATE, ALTER, DROP, TRUNCATE.
	KindDDL
	KindUse
	// kindOther is every other statement: roles and permissions,
	// DESCRIBE.
	kindOther
	NumKinds
)

var KindNames = [NumKinds]string{"none", "select", "insert", "update", "delete", "batch", "lwt", "counter", "ddl", "use", "other"}

func (k Kind) String() string { return KindNames[k] }

// kindOf classifies a statement by its parsed form and its plan.
func kindOf(parsed translate.Statement, plan translate.Plan) Kind {
	switch p := plan.(type) {
	case *translate.Select:
		return KindSelect
	case *translate.Write:
		switch {
		case p.Conditions != nil:
			return KindLWT
		case p.Counter:
			return KindCounter
		case p.Deletion:
			return KindDelete
		}
		if _, ok := parsed.(*translate.UpdateStmt); ok {
			return KindUpdate
		}
		return KindInsert
	case *translate.Batch:
		return BatchKind(translate.BatchKind(p.Kind), isConditionalBatch(p.Writes))
	case *translate.Use:
		return KindUse
	case *translate.SchemaChange, *translate.Truncate, *translate.Noop:
		return KindDDL
	}
	return kindOther
}

// BatchKind is the kind of a batch of kind k, with conditions or not.
func BatchKind(k translate.BatchKind, conditional bool) Kind {
	switch {
	case conditional:
		return KindLWT
	case k == translate.CounterBatch:
		return KindCounter
	}
	return KindBatch
}

// runs records, in a handler's request context, the kind of statement
// the request runs.
func runs(ctx context.Context, k Kind) {
	if r, ok := ctx.(*requestContext); ok {
		r.Kind = k
	}
}
