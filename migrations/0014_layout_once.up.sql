-- cqlpg's own DDL records the layout it leaves once per schema, when its
-- transaction commits, instead of after each of its commands: a schema
-- change runs several commands, and recording a keyspace's layout reads
-- every relation of it, all while the change holds its table locks.
-- The guard notes a changed schema in cqlpg.layout_pending; a deferred
-- trigger records it and clears the note.

CREATE TABLE cqlpg.layout_pending (pg_schema text PRIMARY KEY);
COMMENT ON TABLE cqlpg.layout_pending IS
    'Keyspace schemas whose layout cqlpg''s DDL changed in a transaction still open; recorded in cqlpg.layout at its commit.';

CREATE FUNCTION cqlpg.record_pending_layout() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM cqlpg.record_layout(NEW.pg_schema);
    DELETE FROM cqlpg.layout_pending WHERE pg_schema = NEW.pg_schema;
    RETURN NULL;
END
$$;

CREATE CONSTRAINT TRIGGER layout_pending_record AFTER INSERT ON cqlpg.layout_pending
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION cqlpg.record_pending_layout();

CREATE OR REPLACE FUNCTION cqlpg.ddl_guard() RETURNS event_trigger
LANGUAGE plpgsql AS $$
DECLARE
    s   text;
    own boolean := coalesce(current_setting('cqlpg.ddl', true), '') = 'on';
BEGIN
    -- The schemas a command changed; an ALTER of a table, index or schema
    -- run outside cqlpg may have moved or renamed one away from its
    -- schema, so those check every keyspace's. cqlpg's own DDL notes the
    -- schemas it changed, recorded once when the transaction commits.
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
            INSERT INTO cqlpg.layout_pending VALUES (s) ON CONFLICT DO NOTHING;
        ELSE
            PERFORM cqlpg.check_layout(s, TG_TAG);
        END IF;
    END LOOP;
END
$$;
