package migrations

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"

	"github.com/golang-migrate/migrate/v4"
	"github.com/golang-migrate/migrate/v4/database"
	migratepgx "github.com/golang-migrate/migrate/v4/database/pgx/v5"
	"github.com/golang-migrate/migrate/v4/source/iofs"
	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
)

// Schema is the Postgres schema that holds the catalog.
const Schema = "cqlpg"

//go:embed *.sql
var files embed.FS

// Up brings the catalog of the shard at connString to the newest version.
func Up(ctx context.Context, connString string) error {
	cfg, err := pgx.ParseConfig(connString)
	if err != nil {
		return fmt.Errorf("parse shard address: %w", err)
	}
	db := stdlib.OpenDB(*cfg)
	defer db.Close()
	if _, err := db.ExecContext(ctx, "CREATE SCHEMA IF NOT EXISTS "+Schema); err != nil {
		return privilegeError(fmt.Errorf("create catalog schema: %w", err), cfg)
	}
	return privilegeError(up(db), cfg)
}

// privilegeError explains a migration that a missing privilege stopped:
// which privileges the shard's role needs, and how an administrator
// grants them. Other errors pass unchanged.
func privilegeError(err error, cfg *pgx.ConnConfig) error {
	var dbErr database.Error
	cause := err
	if errors.As(err, &dbErr) && dbErr.OrigErr != nil {
		cause = dbErr.OrigErr // without the migration's whole text
	}
	var pgErr *pgconn.PgError
	if !errors.As(cause, &pgErr) || pgErr.Code != pgerrcode.InsufficientPrivilege {
		return err
	}
	return fmt.Errorf("the shard's role %s lacks a privilege the catalog needs: %s (SQLSTATE %s); "+
		"it needs CREATE on database %s (GRANT CREATE ON DATABASE %s TO %s) and to own the schemas it creates",
		pgx.Identifier{cfg.User}.Sanitize(), pgErr.Message, pgErr.Code, pgx.Identifier{cfg.Database}.Sanitize(),
		pgx.Identifier{cfg.Database}.Sanitize(), pgx.Identifier{cfg.User}.Sanitize())
}

func up(db *sql.DB) error {
	src, err := iofs.New(files, ".")
	if err != nil {
		return fmt.Errorf("read embedded migrations: %w", err)
	}
	driver, err := migratepgx.WithInstance(db, &migratepgx.Config{
		SchemaName:      Schema,
		MigrationsTable: "schema_migrations",
	})
	if err != nil {
		return fmt.Errorf("open catalog: %w", err)
	}
	m, err := migrate.NewWithInstance("iofs", src, "pgx5", driver)
	if err != nil {
		return fmt.Errorf("prepare catalog migration: %w", err)
	}
	defer m.Close()
	if err := m.Up(); err != nil && !errors.Is(err, migrate.ErrNoChange) {
		return fmt.Errorf("migrate catalog: %w", err)
	}
	return nil
}
