-- Secondary indexes and dropped columns, as system_schema shows them.

CREATE TABLE cqlpg.indexes (
    keyspace_name   text NOT NULL,
    table_name      text NOT NULL,
    index_name      text NOT NULL,
    kind            text NOT NULL CHECK (kind IN ('COMPOSITES', 'KEYS', 'CUSTOM')),
    options         jsonb NOT NULL,
    PRIMARY KEY (keyspace_name, index_name),
    FOREIGN KEY (keyspace_name, table_name) REFERENCES cqlpg.tables ON DELETE CASCADE
);
COMMENT ON TABLE cqlpg.indexes IS 'CQL secondary indexes; each is the Postgres index of the same name in its keyspace''s schema.';

CREATE TABLE cqlpg.dropped_columns (
    keyspace_name   text NOT NULL,
    table_name      text NOT NULL,
    column_name     text NOT NULL,
    dropped_time    timestamptz NOT NULL,
    kind            text NOT NULL,
    type            text NOT NULL,
    PRIMARY KEY (keyspace_name, table_name, column_name),
    FOREIGN KEY (keyspace_name, table_name) REFERENCES cqlpg.tables ON DELETE CASCADE
);
COMMENT ON TABLE cqlpg.dropped_columns IS 'Columns dropped from CQL tables, kept so that a column is not re-added with another type.';
