-- The cqlpg catalog. Every shard holds a full copy: the CQL schema, kept in
-- step with the shard's own tables by the gateway's DDL, and the shard's
-- identity and tokens, which place it on the ring.

CREATE TABLE cqlpg.node (
    only_row    boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    host_id     uuid NOT NULL,
    name        text NOT NULL,
    datacenter  text NOT NULL,
    rack        text NOT NULL,
    tokens      bigint[] NOT NULL,
    joined_at   timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE cqlpg.node IS 'This shard: its host id, datacenter, rack and ring tokens, chosen when it first joined.';

CREATE TABLE cqlpg.schema_version (
    only_row    boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    version     uuid NOT NULL,
    changed_at  timestamptz NOT NULL DEFAULT now()
);
INSERT INTO cqlpg.schema_version (version) VALUES ('00000000-0000-0000-0000-000000000000');
COMMENT ON TABLE cqlpg.schema_version IS 'Changes on every schema change; system.local.schema_version shows it.';

CREATE TABLE cqlpg.keyspaces (
    keyspace_name   text PRIMARY KEY,
    durable_writes  boolean NOT NULL DEFAULT true,
    replication     jsonb NOT NULL,
    pg_schema       text NOT NULL UNIQUE
);
COMMENT ON TABLE cqlpg.keyspaces IS 'CQL keyspaces; each is the Postgres schema pg_schema.';

CREATE TABLE cqlpg.tables (
    keyspace_name   text NOT NULL REFERENCES cqlpg.keyspaces ON DELETE CASCADE,
    table_name      text NOT NULL,
    id              uuid NOT NULL UNIQUE,
    options         jsonb NOT NULL DEFAULT '{}',
    PRIMARY KEY (keyspace_name, table_name)
);
COMMENT ON TABLE cqlpg.tables IS 'CQL tables; each is the Postgres table of the same name in its keyspace''s schema.';

CREATE TABLE cqlpg.columns (
    keyspace_name    text NOT NULL,
    table_name       text NOT NULL,
    column_name      text NOT NULL,
    kind             text NOT NULL CHECK (kind IN ('partition_key', 'clustering', 'static', 'regular')),
    position         integer NOT NULL,
    type             text NOT NULL,
    clustering_order text NOT NULL CHECK (clustering_order IN ('asc', 'desc', 'none')),
    pg_column        text NOT NULL,
    PRIMARY KEY (keyspace_name, table_name, column_name),
    UNIQUE (keyspace_name, table_name, pg_column),
    FOREIGN KEY (keyspace_name, table_name) REFERENCES cqlpg.tables ON DELETE CASCADE
);
COMMENT ON TABLE cqlpg.columns IS 'CQL columns and the Postgres column (pg_column) holding each.';

CREATE TABLE cqlpg.types (
    keyspace_name   text NOT NULL REFERENCES cqlpg.keyspaces ON DELETE CASCADE,
    type_name       text NOT NULL,
    field_names     text[] NOT NULL,
    field_types     text[] NOT NULL,
    PRIMARY KEY (keyspace_name, type_name)
);
COMMENT ON TABLE cqlpg.types IS 'CQL user-defined types.';

-- cell_wins reports whether a newly written cell replaces the stored one,
-- by Cassandra's rules: the newer write time wins; on a tie a tombstone
-- (null) beats a live cell, an expiring cell beats one that never expires,
-- the later expiry wins, and last the greater value, compared as serialized
-- bytes (new_key, old_key). A write no newer than the row's latest deletion
-- (deleted_wt) never applies. A null new_wt means the statement leaves the
-- cell alone (an unset value).
CREATE FUNCTION cqlpg.cell_wins(
    new_wt bigint, new_exp integer, new_null boolean, new_key bytea,
    old_wt bigint, old_exp integer, old_null boolean, old_key bytea,
    deleted_wt bigint)
RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT new_wt IS NOT NULL
       AND (deleted_wt IS NULL OR new_wt > deleted_wt)
       AND (old_wt IS NULL OR new_wt > old_wt OR (new_wt = old_wt AND
            CASE WHEN new_null OR old_null THEN new_null AND NOT old_null
                 WHEN (new_exp IS NULL) <> (old_exp IS NULL) THEN new_exp IS NOT NULL
                 WHEN new_exp <> old_exp THEN new_exp > old_exp
                 ELSE new_key > old_key END))
$$;
