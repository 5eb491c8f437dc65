package exec

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cqlpg/cqlpg/gateway/cluster"
	"github.com/cqlpg/cqlpg/gateway/cqlwire"
	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/sharding"
	"github.com/cqlpg/cqlpg/translate"
)

// schemaChange applies DDL to every shard and answers SCHEMA_CHANGE, or
// VOID when IF [NOT] EXISTS made it a no-op.
func (e *Execution) schemaChange(ctx context.Context, p *translate.SchemaChange, resp *[]byte) error {
	if _, ok := p.Statement.(*translate.AlterKeyspaceStmt); ok && e.topo.Next != nil && p.NewKeyspace != nil {
		if k := e.schema.Keyspace(p.Keyspace); k != nil && k.Replication.String() != p.NewKeyspace.Replication.String() {
			return &translate.ConfigError{Msg: "Cannot alter RF while some endpoints are not in normal state (no range movements)."}
		}
	}
	now := e.Now
	creator := e.env.Auth.RoleOf(e.c)
	version := cluster.NewUUID(4)
	applied, err := e.env.Cluster.ApplySchema(ctx, version, func(ctx context.Context, tx pgx.Tx) (bool, error) {
		ok, err := applyChange(ctx, tx, p, now)
		if err != nil || !ok {
			return ok, err
		}
		// Grants to the creator, revokes on what is dropped (auth.go).
		return true, authSchemaChange(ctx, tx, p, creator)
	})
	if applied {
		e.env.Auth.Changed()
	}
	if err != nil {
		return schemaError(err)
	}
	if !applied {
		*resp = cqlwire.AppendInt(*resp, cqlwire.ResultVoid)
		return nil
	}
	e.env.BroadcastSchemaChange(p.Change, p.Target, p.Keyspace, p.Name, p.Args...)
	// Drivers check schema agreement right after the answer, and sleep a
	// while when they find none: the answer waits, briefly, for the other
	// gateways to serve the new schema.
	e.env.Gateways().AwaitSchema(ctx, version, cluster.SchemaAgreementWait)
	*resp = cqlwire.AppendSchemaChange(cqlwire.AppendInt(*resp, cqlwire.ResultSchemaChange), p.Change, p.Target, p.Keyspace, p.Name, p.Args...)
	cqlwire.AddWarnings(resp, e.version, append(emptyDatacenters(p, e.topo), p.Warnings...))
	if _, ok := p.Statement.(*translate.CreateViewStmt); ok {
		e.env.StartViewBuilds()
	}
	return nil
}

// emptyDatacenters warns of the datacenters a keyspace's new replication
// names that no shard is in. Cassandra 4.1 refuses such a keyspace; the
// seeds create keyspaces for 'us-east' and 'eu-west' on any cluster, so
// cqlpg accepts it and says what it means: no replica there until a
// shard of that datacenter joins.
func emptyDatacenters(p *translate.SchemaChange, topo *sharding.Topology) []string {
	if p.NewKeyspace == nil || len(p.NewKeyspace.Replication.DCFactors) == 0 {
		return nil
	}
	known := map[string]bool{}
	for _, sh := range topo.Shards {
		known[sh.Info.DC] = true
	}
	var warnings []string
	for _, dc := range slices.Sorted(maps.Keys(p.NewKeyspace.Replication.DCFactors)) {
		if !known[dc] && p.NewKeyspace.Replication.DCFactors[dc] > 0 {
			warnings = append(warnings, fmt.Sprintf("Datacenter %s of the replication of keyspace %s has no shard: "+
				"its replicas there are not written until a shard of datacenter %s joins the ring", dc, p.Keyspace, dc))
		}
	}
	return warnings
}

// applyChange makes one planned schema change inside a shard's
// transaction, reporting whether it changed anything.
func applyChange(ctx context.Context, tx pgx.Tx, p *translate.SchemaChange, now time.Time) (bool, error) {
	switch s := p.Statement.(type) {
	case *translate.CreateKeyspaceStmt:
		return pgschema.CreateKeyspace(ctx, tx, p.NewKeyspace, s.IfNotExists)
	case *translate.AlterKeyspaceStmt:
		return pgschema.AlterKeyspace(ctx, tx, p.NewKeyspace, s.IfExists)
	case *translate.CreateTableStmt:
		table := *p.NewTable
		table.ID = cluster.NewUUID(1)
		return pgschema.CreateTable(ctx, tx, &table, s.IfNotExists)
	case *translate.CreateViewStmt:
		view := *p.NewTable
		view.ID = cluster.NewUUID(1)
		return pgschema.CreateView(ctx, tx, &view, p.OldTable, p.Views, s.IfNotExists)
	case *translate.AlterViewStmt:
		return true, pgschema.SetOptions(ctx, tx, p.NewTable)
	case *translate.CreateFunctionStmt:
		return true, pgschema.CreateFunction(ctx, tx, p.NewFunction)
	case *translate.CreateAggregateStmt:
		return true, pgschema.CreateAggregate(ctx, tx, p.NewAggregate)
	case *translate.DropFunctionStmt:
		if s.Aggregate {
			return true, pgschema.DropAggregate(ctx, tx, p.NewAggregate)
		}
		return true, pgschema.DropFunction(ctx, tx, p.NewFunction)
	case *translate.AlterTableStmt:
		switch s.Op {
		case translate.AlterAdd:
			if err := pgschema.AddColumns(ctx, tx, p.NewTable, p.Columns); err != nil {
				return false, err
			}
			for _, v := range p.Views {
				var added []*pgschema.Column
				for _, c := range p.Columns {
					if vc := v.Column(c.Name); vc != nil {
						added = append(added, vc)
					}
				}
				if err := pgschema.AddColumns(ctx, tx, v, added); err != nil {
					return false, err
				}
			}
			return true, nil
		case translate.AlterDrop:
			when := now
			if p.DropTime != nil {
				when = time.UnixMicro(*p.DropTime)
			}
			return true, pgschema.DropColumns(ctx, tx, p.NewTable, p.Columns, when)
		case translate.AlterRename:
			if err := pgschema.RenameColumns(ctx, tx, p.NewTable, p.Renames); err != nil {
				return false, err
			}
			return true, pgschema.RenameInViews(ctx, tx, p.NewTable, p.Views, p.Renames)
		}
		return true, pgschema.SetOptions(ctx, tx, p.NewTable)
	case *translate.CreateTypeStmt:
		return pgschema.CreateType(ctx, tx, p.NewType, s.IfNotExists)
	case *translate.AlterTypeStmt:
		return true, pgschema.AlterType(ctx, tx, p.NewType, p.FieldRenames, p.TypeUsers, p.UserTables)
	case *translate.CreateIndexStmt:
		return pgschema.CreateIndex(ctx, tx, p.OldTable, p.Index, p.IndexColumn, s.IfNotExists)
	case *translate.DropStmt:
		switch s.Kind {
		case translate.DropKeyspace:
			return pgschema.DropKeyspace(ctx, tx, p.Keyspace, s.IfExists)
		case translate.DropType:
			return pgschema.DropType(ctx, tx, p.Keyspace, p.Name, s.IfExists)
		case translate.DropIndex:
			return pgschema.DropIndex(ctx, tx, p.Keyspace, p.Index.Name, s.IfExists)
		case translate.DropView:
			return pgschema.DropView(ctx, tx, p.Keyspace, p.Name, p.OldTable, p.Views, s.IfExists)
		}
		return pgschema.DropTable(ctx, tx, p.Keyspace, p.Name, s.IfExists)
	}
	return false, errors.New("unsupported schema change")
}

// truncate empties a table on every shard; Cassandra needs every replica
// for it too.
func (e *Execution) truncate(ctx context.Context, p *translate.Truncate, resp *[]byte) error {
	err := e.env.Cluster.OnEveryShard(ctx, func(ctx context.Context, tx pgx.Tx) error {
		for _, t := range append([]*pgschema.Table{p.Table}, p.Views...) {
			if err := pgschema.Truncate(ctx, tx, t); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return schemaError(err)
	}
	*resp = cqlwire.AppendInt(*resp, cqlwire.ResultVoid)
	return nil
}

// schemaError gives catalog errors Cassandra's wording.
func schemaError(err error) error {
	var exists *pgschema.ExistsError
	var missing *pgschema.MissingError
	switch {
	case errors.As(err, &exists) && exists.Type != "":
		return invalidf("A user type with name '%s' already exists", exists.Type)
	case errors.As(err, &exists) && exists.Index != "":
		return invalidf("Index '%s' already exists", exists.Index)
	case errors.As(err, &exists):
		return &translate.AlreadyExistsError{Keyspace: exists.Keyspace, Table: exists.Table}
	case errors.As(err, &missing) && missing.Type != "":
		return invalidf("Type '%s.%s' doesn't exist", missing.Keyspace, missing.Type)
	case errors.As(err, &missing) && missing.Index != "":
		return invalidf("Index '%s.%s' doesn't exist'", missing.Keyspace, missing.Index)
	case errors.As(err, &missing) && missing.Table == "":
		return invalidf("Keyspace '%s' doesn't exist", missing.Keyspace)
	case errors.As(err, &missing):
		return invalidf("Table '%s.%s' doesn't exist", missing.Keyspace, missing.Table)
	}
	return err
}
