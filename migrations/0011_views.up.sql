-- Views for operators: the catalog as a Postgres user reads it in psql,
-- without knowing how cqlpg lays it out. Names end in _list (or say what
-- they show) so that they never collide with the catalog's own tables.
-- Each shard answers for itself: its own tokens, the hints it holds, its
-- copy of the schema and roles.

CREATE VIEW cqlpg.keyspace_list AS
SELECT k.keyspace_name,
       regexp_replace(k.replication->>'class', '^org\.apache\.cassandra\.locator\.', '') AS replication_class,
       k.replication - 'class' AS replication_options,
       k.durable_writes,
       k.pg_schema,
       (SELECT count(*) FROM cqlpg.tables t WHERE t.keyspace_name = k.keyspace_name) AS tables
FROM cqlpg.keyspaces k;
COMMENT ON VIEW cqlpg.keyspace_list IS
    'CQL keyspaces: replication strategy and options, durable_writes, the Postgres schema holding the keyspace''s tables, and how many tables it has.';

CREATE VIEW cqlpg.table_list AS
SELECT t.keyspace_name,
       t.table_name,
       format('%I.%I', k.pg_schema, t.table_name) AS pg_table,
       -- Postgres's estimate, from the last ANALYZE or VACUUM; null before
       -- the first. Rows are CQL rows this shard holds as a replica.
       CASE WHEN c.reltuples >= 0 THEN c.reltuples::bigint END AS row_estimate,
       pg_total_relation_size(c.oid) AS total_bytes,
       obj_description(c.oid, 'pg_class') AS cql_definition,
       t.id
FROM cqlpg.tables t
JOIN cqlpg.keyspaces k USING (keyspace_name)
LEFT JOIN pg_namespace n ON n.nspname = k.pg_schema
LEFT JOIN pg_class c ON c.relnamespace = n.oid AND c.relname = t.table_name AND c.relkind IN ('r', 'p');
COMMENT ON VIEW cqlpg.table_list IS
    'CQL tables: the Postgres table holding each (pg_table), its estimated row count and size on this shard, and its CQL definition, as DESCRIBE TABLE prints it.';

CREATE VIEW cqlpg.column_list AS
SELECT c.keyspace_name,
       c.table_name,
       c.column_name,
       c.kind,
       c.position,
       c.type AS cql_type,
       c.clustering_order,
       -- Static columns live in the companion table of one row per
       -- partition.
       format('%I.%I', k.pg_schema, CASE WHEN c.kind = 'static' THEN c.table_name || '$static' ELSE c.table_name END) AS pg_table,
       c.pg_column,
       format_type(a.atttypid, a.atttypmod) AS pg_type
FROM cqlpg.columns c
JOIN cqlpg.keyspaces k USING (keyspace_name)
LEFT JOIN pg_namespace n ON n.nspname = k.pg_schema
LEFT JOIN pg_class r ON r.relnamespace = n.oid
    AND r.relname = CASE WHEN c.kind = 'static' THEN c.table_name || '$static' ELSE c.table_name END
LEFT JOIN pg_attribute a ON a.attrelid = r.oid AND a.attname = c.pg_column AND NOT a.attisdropped;
COMMENT ON VIEW cqlpg.column_list IS
    'CQL columns: kind (partition_key, clustering, static, regular), position in the key, CQL type, and the Postgres table, column and type holding each.';

-- A shard knows only its own tokens. Each range ends at one of them and
-- starts at the shard's previous token (the first wraps round to the
-- last); on a ring of several shards the tokens of the others fall inside
-- these ranges and narrow them: "cqlpg ring" shows the whole ring.
CREATE VIEW cqlpg.ring AS
SELECT n.name AS shard,
       n.host_id,
       n.datacenter,
       n.rack,
       coalesce(lag(t.token) OVER w, last_value(t.token) OVER (w ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)) AS start_token,
       t.token AS end_token
FROM cqlpg.node n, unnest(n.tokens) AS t(token)
WINDOW w AS (ORDER BY t.token);
COMMENT ON VIEW cqlpg.ring IS
    'This shard''s tokens as (start_token, end_token] ranges between its own tokens, with its name, host id, datacenter and rack; with several shards, the others'' tokens split these ranges further.';

-- Which table a hint is for is inside its mutation, which only a gateway
-- reads, so hints are counted per target shard.
CREATE VIEW cqlpg.hints_pending AS
SELECT h.target AS target_host_id,
       count(*) AS hints,
       min(h.written_at) AS oldest,
       max(h.written_at) AS newest,
       min(h.replay_until) AS first_expiry,
       count(*) FILTER (WHERE h.replay_until < now()) AS expired,
       sum(length(h.mutation)) AS bytes
FROM cqlpg.hints h
GROUP BY h.target;
COMMENT ON VIEW cqlpg.hints_pending IS
    'Hints this shard holds for each shard that missed writes (by host id): how many, the oldest and newest, the first to expire and how many expired (dropped at replay: run repair then).';

CREATE VIEW cqlpg.role_list AS
SELECT r.role,
       r.is_superuser,
       r.can_login,
       r.salted_hash IS NOT NULL AS has_password,
       r.member_of,
       coalesce((SELECT jsonb_object_agg(p.resource, to_jsonb(p.permissions) ORDER BY p.resource)
                 FROM cqlpg.role_permissions p WHERE p.role = r.role), '{}') AS permissions
FROM cqlpg.roles r;
COMMENT ON VIEW cqlpg.role_list IS
    'CQL roles without their password hashes: superuser and login status, whether a password is set, the roles granted to each, and its permissions by resource.';
