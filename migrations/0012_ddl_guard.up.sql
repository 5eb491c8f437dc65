-- A guard against DDL run outside cqlpg that would break its picture of
-- a CQL table: renaming, dropping or retyping a column, dropping or
-- changing the key index or a companion table, renaming or dropping the
-- table or its schema. Postgres refuses such a statement itself, with a
-- hint naming the CQL statement to use instead. What leaves cqlpg's
-- relations as they were stays allowed: indexes of one's own, comments,
-- grants, statistics, VACUUM, storage parameters.
--
-- cqlpg.layout records, for every keyspace schema, the relations cqlpg
-- made (each CQL table, its companions and indexes, whose names hold '$',
-- and its secondary indexes), with their columns' types and their index
-- definitions. The gateway's own DDL runs with cqlpg.ddl set to 'on' and
-- records the layout it leaves; other DDL is checked against it.

CREATE TABLE cqlpg.layout (
    pg_schema text NOT NULL,
    relname   text NOT NULL,
    relkind   "char" NOT NULL,
    columns   jsonb NOT NULL,
    indexdef  text,
    PRIMARY KEY (pg_schema, relname)
);
COMMENT ON TABLE cqlpg.layout IS
    'The relations cqlpg made in each keyspace schema, as its last DDL left them: columns and their types, index definitions. DDL run outside cqlpg that would change them is refused.';

-- cqlpg.layout_now returns the relations of schema s that cqlpg owns, as
-- they are now.
CREATE FUNCTION cqlpg.layout_now(s text)
RETURNS TABLE (relname text, relkind "char", columns jsonb, indexdef text)
LANGUAGE sql STABLE AS $$
    SELECT c.relname::text, c.relkind,
           coalesce((SELECT jsonb_object_agg(a.attname, format_type(a.atttypid, a.atttypmod))
                     FROM pg_attribute a
                     WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped), '{}'),
           CASE WHEN c.relkind = 'i' THEN pg_get_indexdef(c.oid) END
    FROM pg_class c
    JOIN pg_namespace n ON n.oid = c.relnamespace
    JOIN cqlpg.keyspaces k ON k.pg_schema = n.nspname
    WHERE n.nspname = s AND c.relkind IN ('r', 'p', 'i')
      AND (position('$' in c.relname) > 0
           OR EXISTS (SELECT FROM cqlpg.tables t WHERE t.keyspace_name = k.keyspace_name AND t.table_name = c.relname)
           OR EXISTS (SELECT FROM cqlpg.indexes i WHERE i.keyspace_name = k.keyspace_name AND i.index_name = c.relname))
$$;

-- cqlpg.record_layout records schema s as it is now.
CREATE FUNCTION cqlpg.record_layout(s text) RETURNS void
LANGUAGE sql AS $$
    DELETE FROM cqlpg.layout WHERE pg_schema = s;
    INSERT INTO cqlpg.layout (pg_schema, relname, relkind, columns, indexdef)
    SELECT s, l.relname, l.relkind, l.columns, l.indexdef FROM cqlpg.layout_now(s) l;
$$;

-- cqlpg.check_layout refuses the DDL being run if it changed what
-- cqlpg.layout recorded of schema s.
CREATE FUNCTION cqlpg.check_layout(s text, tag text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    ks   text;
    rec  record;
    tbl  text;
    col  text;
    typ  text;
BEGIN
    SELECT keyspace_name INTO ks FROM cqlpg.keyspaces WHERE pg_schema = s;
    IF ks IS NULL THEN
        IF EXISTS (SELECT FROM cqlpg.layout WHERE pg_schema = s) THEN
            RAISE EXCEPTION USING ERRCODE = 'object_in_use',
                MESSAGE = format('%s would change schema %I, which holds a CQL keyspace', tag, s),
                HINT = 'Drop or rename a keyspace through cqlpg, in CQL: DROP KEYSPACE. docs/operators.md lists what may be changed in psql.';
        END IF;
        RETURN;
    END IF;
    IF NOT EXISTS (SELECT FROM pg_namespace WHERE nspname = s) THEN
        RAISE EXCEPTION USING ERRCODE = 'object_in_use',
            MESSAGE = format('%s would drop or rename schema %I, which holds CQL keyspace %s', tag, s, ks),
            HINT = format('Drop a keyspace in CQL: DROP KEYSPACE %s. docs/operators.md lists what may be changed in psql.', ks);
    END IF;
    FOR rec IN
        SELECT l.relname, l.relkind, l.columns, l.indexdef,
               n.relname AS now_relname, n.columns AS now_columns, n.indexdef AS now_indexdef
        FROM cqlpg.layout l
        LEFT JOIN cqlpg.layout_now(s) n ON n.relname = l.relname
        WHERE l.pg_schema = s
        -- Tables first: a renamed table also changes its indexes'
        -- definitions, and the table is what to name.
        ORDER BY l.relkind = 'i', l.relname
    LOOP
        tbl := split_part(rec.relname, '$', 1);
        IF rec.relkind = 'i' AND rec.relname = tbl THEN
            SELECT table_name INTO tbl FROM cqlpg.indexes WHERE keyspace_name = ks AND index_name = rec.relname;
        END IF;
        IF rec.now_relname IS NULL THEN
            IF rec.relname = tbl THEN
                RAISE EXCEPTION USING ERRCODE = 'object_in_use',
                    MESSAGE = format('%s would drop or rename table %I.%I, which holds CQL table %s.%s', tag, s, rec.relname, ks, tbl),
                    HINT = format('Drop a table in CQL: DROP TABLE %s.%s; CQL tables cannot be renamed. docs/operators.md lists what may be changed in psql.', ks, tbl);
            END IF;
            RAISE EXCEPTION USING ERRCODE = 'object_in_use',
                MESSAGE = format('%s would drop or rename %I.%I, which cqlpg keeps for CQL table %s.%s', tag, s, rec.relname, ks, tbl),
                HINT = format('Drop a secondary index in CQL (DROP INDEX %s.name); the key index and companion tables go with the table (DROP TABLE %s.%s). Indexes of your own may be added beside them. docs/operators.md lists what may be changed in psql.', ks, ks, tbl);
        END IF;
        IF rec.relkind = 'i' AND rec.now_indexdef IS DISTINCT FROM rec.indexdef THEN
            RAISE EXCEPTION USING ERRCODE = 'object_in_use',
                MESSAGE = format('%s would change index %I.%I, which cqlpg keeps for CQL table %s.%s', tag, s, rec.relname, ks, tbl),
                HINT = 'Create indexes of your own beside it. docs/operators.md lists what may be changed in psql.';
        END IF;
        FOR col, typ IN SELECT key, value #>> '{}' FROM jsonb_each(rec.columns) LOOP
            IF NOT rec.now_columns ? col THEN
                RAISE EXCEPTION USING ERRCODE = 'object_in_use',
                    MESSAGE = format('%s would drop or rename column %I of %I.%I, which holds CQL table %s.%s', tag, col, s, rec.relname, ks, tbl),
                    HINT = format('Change columns in CQL: ALTER TABLE %s.%s DROP column, or ALTER TABLE %s.%s RENAME a key column. docs/operators.md lists what may be changed in psql.', ks, tbl, ks, tbl);
            END IF;
            IF rec.now_columns ->> col IS DISTINCT FROM typ THEN
                RAISE EXCEPTION USING ERRCODE = 'object_in_use',
                    MESSAGE = format('%s would change the type of column %I of %I.%I, which holds CQL table %s.%s, from %s to %s', tag, col, s, rec.relname, ks, tbl, typ, rec.now_columns ->> col),
                    HINT = 'A CQL column''s type cannot change, as in Cassandra; add a column of the new type in CQL (ALTER TABLE ... ADD). docs/operators.md lists what may be changed in psql.';
            END IF;
        END LOOP;
    END LOOP;
END
$$;

-- cqlpg.ddl_guard runs after every DDL command and every drop: the
-- gateway's own DDL records the layout it leaves, other DDL is checked.
CREATE FUNCTION cqlpg.ddl_guard() RETURNS event_trigger
LANGUAGE plpgsql AS $$
DECLARE
    s   text;
    own boolean := coalesce(current_setting('cqlpg.ddl', true), '') = 'on';
BEGIN
    -- The schemas a command changed; an ALTER of a table, index or schema
    -- run outside cqlpg may have moved or renamed one away from its
    -- schema, so those check every keyspace's. cqlpg's own DDL records
    -- only the schemas it changed, which keeps its table locks short.
    FOR s IN
        SELECT DISTINCT x.s FROM (
            SELECT schema_name AS s FROM pg_event_trigger_ddl_commands() WHERE TG_EVENT = 'ddl_command_end'
            UNION ALL
            SELECT k.pg_schema FROM cqlpg.keyspaces k
            WHERE NOT own AND TG_EVENT = 'ddl_command_end' AND TG_TAG IN ('ALTER TABLE', 'ALTER INDEX', 'ALTER SCHEMA')
            UNION ALL
            SELECT l.pg_schema FROM cqlpg.layout l
            WHERE NOT own AND TG_EVENT = 'ddl_command_end' AND TG_TAG = 'ALTER SCHEMA'
            UNION ALL
            SELECT CASE WHEN object_type = 'schema' THEN object_name ELSE schema_name END
            FROM pg_event_trigger_dropped_objects() WHERE TG_EVENT = 'sql_drop'
        ) x
        WHERE x.s IS NOT NULL
          AND (EXISTS (SELECT FROM cqlpg.keyspaces WHERE pg_schema = x.s)
               OR EXISTS (SELECT FROM cqlpg.layout WHERE pg_schema = x.s))
    LOOP
        IF own THEN
            PERFORM cqlpg.record_layout(s);
        ELSE
            PERFORM cqlpg.check_layout(s, TG_TAG);
        END IF;
    END LOOP;
END
$$;

-- Event triggers need a superuser: a shard whose cqlpg role is not one
-- goes without the guard (docs/operators.md).
DO $$
BEGIN
    IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
        CREATE EVENT TRIGGER cqlpg_ddl_guard_end ON ddl_command_end EXECUTE FUNCTION cqlpg.ddl_guard();
        CREATE EVENT TRIGGER cqlpg_ddl_guard_drop ON sql_drop EXECUTE FUNCTION cqlpg.ddl_guard();
    ELSE
        RAISE NOTICE 'cqlpg: not a superuser, so DDL run outside cqlpg is not guarded';
    END IF;
END
$$;

SELECT cqlpg.record_layout(pg_schema) FROM cqlpg.keyspaces;
