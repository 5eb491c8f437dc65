package gateway

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/datastax/go-cassandra-native-protocol/frame"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/cqlpg/cqlpg/gateway/auth"
	"github.com/cqlpg/cqlpg/gateway/cqlwire"
	"github.com/cqlpg/cqlpg/gateway/exec"
	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/sharding"
	"github.com/cqlpg/cqlpg/translate"
	"github.com/cqlpg/cqlpg/translate/cqlfunc"
)

// errorMessage turns an error into the CQL error message sent to the
// client. It is the one place where that happens: errors are classified by
// type, never by their text, and Postgres errors by SQLSTATE. Details that
// could leak connection strings or SQL (anything not classified) stay in
// the log.
func (c *conn) errorMessage(err error) message.Error {
	var (
		syntax      *translate.SyntaxError
		invalid     *translate.InvalidError
		config      *translate.ConfigError
		shardConfig *sharding.ConfigError
		exists      *translate.AlreadyExistsError
		unauth      *translate.UnauthorizedError
		unprepared  *exec.UnpreparedError
		protocol    *cqlwire.ProtocolError
		unavailable *sharding.UnavailableError
		writeTO     *exec.WriteTimeoutError
		readTO      *exec.ReadTimeoutError
		funcFailure *cqlfunc.FunctionFailureError
		authFailure *auth.Error
		pgErr       *pgconn.PgError
		overloaded  *overloadedError
		replicaFull *exec.OverloadedError
		unloadable  *pgschema.Unloadable
		originErr   *originError
	)
	switch {
	case errors.As(err, &originErr):
		// The origin of dual writes, unreachable or silent: what a driver
		// talking to it directly would have met instead of an answer.
		return &message.ServerError{ErrorMessage: originErr.Error()}
	case errors.As(err, &unloadable):
		// A catalog object the schema's load left out: first, as it wraps
		// the error that left it out. The text names the object and why,
		// and holds nothing of the shards'.
		return &message.ServerError{ErrorMessage: unloadable.Error()}
	case errors.As(err, &syntax):
		return &message.SyntaxError{ErrorMessage: syntax.Error()}
	case errors.As(err, &invalid):
		return &message.Invalid{ErrorMessage: invalid.Msg}
	case errors.As(err, &config):
		return &message.ConfigError{ErrorMessage: config.Msg}
	case errors.As(err, &shardConfig):
		return &message.ConfigError{ErrorMessage: shardConfig.Message}
	case errors.As(err, &exists):
		return &message.AlreadyExists{ErrorMessage: exists.Error(), Keyspace: exists.Keyspace, Table: exists.Table}
	case errors.As(err, &unauth):
		return &message.Unauthorized{ErrorMessage: unauth.Msg}
	case errors.As(err, &unprepared):
		return &message.Unprepared{ErrorMessage: unprepared.Error(), Id: unprepared.Id}
	case errors.As(err, &protocol):
		return &message.ProtocolError{ErrorMessage: protocol.Msg}
	case errors.As(err, &unavailable):
		return &message.Unavailable{ErrorMessage: unavailable.Error(),
			Consistency: primitive.ConsistencyLevel(unavailable.Consistency),
			Required:    int32(unavailable.Required), Alive: int32(unavailable.Alive)}
	case errors.As(err, &writeTO):
		return &message.WriteTimeout{ErrorMessage: writeTO.Error(), Consistency: primitive.ConsistencyLevel(writeTO.Consistency),
			Received: int32(writeTO.Received), BlockFor: int32(writeTO.BlockFor), WriteType: writeTO.WriteType,
			Contentions: uint16(min(writeTO.Contentions, 0xffff))}
	case errors.As(err, &readTO):
		return &message.ReadTimeout{ErrorMessage: readTO.Error(), Consistency: primitive.ConsistencyLevel(readTO.Consistency),
			Received: int32(readTO.Received), BlockFor: int32(readTO.BlockFor), DataPresent: readTO.DataPresent}
	case errors.As(err, &funcFailure):
		return &message.FunctionFailure{ErrorMessage: funcFailure.Msg, Keyspace: funcFailure.Keyspace,
			Function: funcFailure.Function, Arguments: funcFailure.ArgTypes}
	case errors.As(err, &authFailure):
		return &message.AuthenticationError{ErrorMessage: authFailure.Error()}
	case errors.As(err, &pgErr):
		return c.postgresError(pgErr)
	case errors.As(err, &overloaded):
		return &message.Overloaded{ErrorMessage: overloaded.msg}
	case errors.As(err, &replicaFull):
		return &message.Overloaded{ErrorMessage: replicaFull.Error()}
	}
	c.log.Error("request failed", "err", err)
	return &message.ServerError{ErrorMessage: "internal error; see the gateway's log"}
}

// postgresError classifies an error a shard returned, by SQLSTATE class.
// Postgres's own text never reaches the client (the catalog's functions'
// texts, Cassandra's, do): a value the gateway accepted and a shard
// refused (a data exception, class 22) is the gateway's failure to store
// what Cassandra would, not the client's mistake, and is answered as a
// server error like the others.
func (c *conn) postgresError(e *pgconn.PgError) message.Error {
	switch {
	case e.Code == "22023" && strings.HasPrefix(e.Where, "PL/pgSQL function cqlpg."):
		// The catalog's own functions refuse what Cassandra refuses, in
		// Cassandra's words (setting an element of a null list, say).
		return &message.Invalid{ErrorMessage: e.Message}
	case len(e.Code) == 5 && e.Code[:2] == "53": // insufficient resources
		// Postgres's text may name the shard's roles or settings: it goes
		// to the log only.
		c.log.Warn("shard overloaded", "sqlstate", e.Code, "err", e.Message, "detail", e.Detail)
		return &message.Overloaded{ErrorMessage: fmt.Sprintf("shard overloaded (SQLSTATE %s); see the gateway's log", e.Code)}
	}
	c.log.Error("shard statement failed", "sqlstate", e.Code, "err", e.Message, "detail", e.Detail)
	return &message.ServerError{ErrorMessage: fmt.Sprintf("shard error (SQLSTATE %s); see the gateway's log", e.Code)}
}

// frameCodec encodes the messages of the cold paths (errors, SUPPORTED,
// events); the hot path writes its frames by hand.
var frameCodec = frame.NewCodec()

// appendMessage appends a whole frame carrying msg.
func appendMessage(b *[]byte, version byte, stream int16, msg message.Message) {
	var buf bytes.Buffer
	if err := frameCodec.EncodeFrame(frame.NewFrame(primitive.ProtocolVersion(version), stream, msg), &buf); err != nil {
		// Every message built here encodes; failing means a bug.
		panic(fmt.Sprintf("encode %T: %v", msg, err))
	}
	*b = append(*b, buf.Bytes()...)
}

// appendError appends an ERROR frame for err.
func (c *conn) appendError(b *[]byte, version byte, stream int16, err error) {
	msg := c.errorMessage(err)
	c.srv.metrics.errors.WithLabelValues(errorLabel(msg.GetErrorCode())).Inc()
	appendMessage(b, version, stream, msg)
}

// errorLabel labels an error code in the errors metric.
func errorLabel(code primitive.ErrorCode) string { return fmt.Sprintf("0x%04x", uint32(code)) }
