-- Materialized views. A view is a table of cqlpg.tables whose rows a
-- trigger on its base table derives: every change of a base row is
-- logged in cqlpg.view_log, in the transaction of the change, with the
-- view partition's token; gateways apply the log to the view's replicas
-- and delete it, as Cassandra's base replicas do with their batch log.
CREATE TABLE cqlpg.views (
    keyspace_name       text NOT NULL,
    view_name           text NOT NULL,
    base_table_name     text NOT NULL,
    include_all_columns boolean NOT NULL,
    where_clause        text NOT NULL,
    key_column          text,
    filters             jsonb NOT NULL DEFAULT '[]',
    PRIMARY KEY (keyspace_name, view_name),
    FOREIGN KEY (keyspace_name, view_name) REFERENCES cqlpg.tables ON DELETE CASCADE,
    FOREIGN KEY (keyspace_name, base_table_name) REFERENCES cqlpg.tables
);
COMMENT ON TABLE cqlpg.views IS 'Materialized views: the table view_name holds the rows of base_table_name that where_clause selects, keyed by the view''s primary key.';
COMMENT ON COLUMN cqlpg.views.key_column IS 'The base table''s regular column in the view''s primary key, if any: a view row lives while that cell does.';
COMMENT ON COLUMN cqlpg.views.filters IS 'The WHERE clause''s restrictions other than IS NOT NULL, on base key columns: [{"column", "op", "value" (hex of the CQL value)}].';

CREATE TABLE cqlpg.view_log (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    xid           xid8 NOT NULL DEFAULT pg_current_xact_id(),
    written_at    timestamptz NOT NULL DEFAULT now(),
    keyspace_name text NOT NULL,
    view_name     text NOT NULL,
    token         bigint NOT NULL,
    base_row      json NOT NULL,
    shadow        bigint
);
CREATE INDEX view_log_xid ON cqlpg.view_log (xid);
COMMENT ON TABLE cqlpg.view_log IS 'View updates of base rows changed on this shard, waiting to reach the view''s replicas: the base row as it now is, or, with shadow set, as it was before its view key changed at time shadow.';

CREATE TABLE cqlpg.view_builds (
    keyspace_name text NOT NULL,
    view_name     text NOT NULL,
    status        text NOT NULL CHECK (status IN ('STARTED', 'SUCCESS')),
    next_token    bigint,
    rows_done     bigint NOT NULL DEFAULT 0,
    started_at    timestamptz NOT NULL DEFAULT now(),
    finished_at   timestamptz,
    PRIMARY KEY (keyspace_name, view_name),
    FOREIGN KEY (keyspace_name, view_name) REFERENCES cqlpg.tables ON DELETE CASCADE
);
COMMENT ON TABLE cqlpg.view_builds IS 'The build of each view from this shard''s base rows: STARTED with the next token to read, or SUCCESS.';

-- A view that leaves base columns out keeps their cells' write time,
-- expiry and whether they hold a value, in _base_cells ({column: [wt,
-- exp, holds]}), for its rows' liveness alone: a base row that only such
-- a cell keeps alive has its view row alive too. view_cells_merge merges
-- two such sets cell by cell by the rules of cqlpg.cell_wins, dropping
-- the cells no newer than the row's deletion (del); view_cells_live
-- tells whether one of them is live at time now.
CREATE FUNCTION cqlpg.view_cells_merge(a jsonb, b jsonb, del bigint) RETURNS jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT coalesce(jsonb_object_agg(k, v), '{}'::jsonb) FROM (
        SELECT k, (array_agg(v ORDER BY (v->>0)::bigint DESC, (v->>2)::boolean, (v->>1) IS NULL, (v->>1)::bigint DESC))[1] AS v
        FROM (SELECT * FROM jsonb_each(coalesce(a, '{}')) UNION ALL SELECT * FROM jsonb_each(coalesce(b, '{}'))) AS e(k, v)
        WHERE (v->>0) IS NOT NULL
        GROUP BY k) AS w
    WHERE del IS NULL OR (v->>0)::bigint > del
$$;
CREATE FUNCTION cqlpg.view_cells_live(c jsonb, now integer) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT EXISTS (SELECT FROM jsonb_each(coalesce(c, '{}')) AS e(k, v)
        WHERE (v->>2)::boolean AND ((v->>1) IS NULL OR (v->>1)::integer > now))
$$;
