DROP FUNCTION cqlpg.password_matches(text, text);
DROP FUNCTION cqlpg.password_hash(text);
DROP FUNCTION cqlpg.pgcrypto_schema();
DROP TABLE cqlpg.role_permissions;
DROP TABLE cqlpg.roles;
-- pgcrypto goes only if cqlpg installed it, into its own schema.
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
               WHERE e.extname = 'pgcrypto' AND n.nspname = 'cqlpg') THEN
        DROP EXTENSION pgcrypto;
    END IF;
END $$;
