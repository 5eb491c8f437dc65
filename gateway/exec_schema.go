package gateway

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/translate"
)

// schemaChange applies DDL to every shard and answers SCHEMA_CHANGE, or
// VOID when IF [NOT] EXISTS made it a no-op.
func (e *execution) schemaChange(ctx context.Context, p *translate.SchemaChange, resp *[]byte) error {
	var (
		change         func(ctx context.Context, tx pgx.Tx) (bool, error)
		kind, target   string
		keyspace, name = p.Keyspace, p.Table
	)
	switch s := p.Statement.(type) {
	case *translate.CreateKeyspaceStmt:
		kind, target = "CREATED", "KEYSPACE"
		change = func(ctx context.Context, tx pgx.Tx) (bool, error) {
			return pgschema.CreateKeyspace(ctx, tx, p.NewKeyspace, s.IfNotExists)
		}
	case *translate.CreateTableStmt:
		kind, target = "CREATED", "TABLE"
		table := *p.NewTable
		table.ID = newUUID(1)
		change = func(ctx context.Context, tx pgx.Tx) (bool, error) {
			return pgschema.CreateTable(ctx, tx, &table, s.IfNotExists)
		}
	case *translate.DropStmt:
		kind, target = "DROPPED", "TABLE"
		change = func(ctx context.Context, tx pgx.Tx) (bool, error) {
			return pgschema.DropTable(ctx, tx, keyspace, name, s.IfExists)
		}
		if s.Kind == translate.DropKeyspace {
			target = "KEYSPACE"
			change = func(ctx context.Context, tx pgx.Tx) (bool, error) {
				return pgschema.DropKeyspace(ctx, tx, keyspace, s.IfExists)
			}
		}
	default:
		return invalidf("unsupported schema change")
	}
	applied, err := e.c.srv.cluster.applySchema(ctx, newUUID(4), change)
	if err != nil {
		return schemaError(err)
	}
	if !applied {
		*resp = appendInt(*resp, resultVoid)
		return nil
	}
	e.c.srv.broadcastSchemaChange(kind, target, keyspace, name)
	*resp = appendSchemaChange(appendInt(*resp, resultSchemaChange), kind, target, keyspace, name)
	return nil
}

// schemaError gives catalog errors Cassandra's wording.
func schemaError(err error) error {
	var exists *pgschema.ExistsError
	var missing *pgschema.MissingError
	switch {
	case errors.As(err, &exists):
		return &translate.AlreadyExistsError{Keyspace: exists.Keyspace, Table: exists.Table}
	case errors.As(err, &missing) && missing.Table == "":
		return invalidf("Keyspace '%s' doesn't exist", missing.Keyspace)
	case errors.As(err, &missing):
		return invalidf("Table '%s.%s' doesn't exist", missing.Keyspace, missing.Table)
	}
	return err
}
