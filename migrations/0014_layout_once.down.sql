DROP TABLE IF EXISTS cqlpg.layout_pending;
DROP FUNCTION IF EXISTS cqlpg.record_pending_layout();

CREATE OR REPLACE FUNCTION cqlpg.ddl_guard() RETURNS event_trigger
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
