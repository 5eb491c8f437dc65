-- A storage-attached index with 'ascii': 'true' matches text folded to
-- ASCII, as Cassandra's ASCIIFoldingFilter folds it ('café' matches
-- 'cafe'): cqlpg.ascii_fold, through the unaccent extension. unaccent is a
-- trusted extension, which a database owner may create; when it cannot be,
-- the function says so, and only such indexes need it.
DO $$
BEGIN
    CREATE EXTENSION IF NOT EXISTS unaccent WITH SCHEMA cqlpg;
EXCEPTION WHEN insufficient_privilege OR undefined_file OR feature_not_supported THEN
    RAISE WARNING 'unaccent is not installed (%); storage-attached indexes with ascii folding need it: CREATE EXTENSION unaccent', SQLERRM;
END $$;

DO $$
DECLARE
    s text;
BEGIN
    SELECT n.nspname INTO s FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'unaccent';
    IF s IS NULL THEN
        CREATE FUNCTION cqlpg.ascii_fold(t text) RETURNS text LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $f$
        BEGIN
            RAISE EXCEPTION 'the unaccent extension is not installed in this database; ascii folding needs it'
                USING ERRCODE = 'undefined_object', HINT = 'CREATE EXTENSION unaccent';
        END $f$;
    ELSE
        EXECUTE format('CREATE FUNCTION cqlpg.ascii_fold(t text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT AS %L',
            format('SELECT %1$I.unaccent(%2$L::regdictionary, t)', s, s || '.unaccent'));
    END IF;
END $$;
COMMENT ON FUNCTION cqlpg.ascii_fold(text) IS 'Text folded to ASCII (unaccent), as a storage-attached index with ''ascii'': ''true'' matches it.';
