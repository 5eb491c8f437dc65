-- Roles and permissions, as Cassandra keeps them in system_auth: a gateway
-- started with authentication on checks logins against roles and
-- statements against role_permissions. Every shard holds a full copy,
-- written by the gateway on all shards at each role or permission change.

CREATE TABLE cqlpg.roles (
    role          text PRIMARY KEY,
    is_superuser  boolean NOT NULL DEFAULT false,
    can_login     boolean NOT NULL DEFAULT false,
    -- A bcrypt hash in the $2a$ form Cassandra's hashes take, so that
    -- hashes copied from Cassandra (CREATE ROLE ... WITH HASHED PASSWORD)
    -- work here and the other way round; null for a role without password.
    salted_hash   text,
    -- The roles granted to this one (GRANT r TO this), directly.
    member_of     text[] NOT NULL DEFAULT '{}'
);
COMMENT ON TABLE cqlpg.roles IS 'CQL roles: login, superuser status, bcrypt password hash and the roles granted to each.';

CREATE TABLE cqlpg.role_permissions (
    role         text NOT NULL,
    -- Cassandra's resource names: data, data/KS, data/KS/TABLE, roles,
    -- roles/ROLE, functions, functions/KS, mbean.
    resource     text NOT NULL,
    -- Permission names (SELECT, MODIFY, ...); a row is removed when its
    -- last permission is revoked.
    permissions  text[] NOT NULL,
    PRIMARY KEY (role, resource)
);
CREATE INDEX role_permissions_resource ON cqlpg.role_permissions (resource);
COMMENT ON TABLE cqlpg.role_permissions IS 'Permissions granted to CQL roles on keyspaces, tables, roles and functions.';

-- Passwords are hashed and checked by pgcrypto's crypt(), bcrypt with
-- Cassandra's cost of 10, so the gateway never needs a hashing library of
-- its own and a hash is computed once, on one shard, for all of them.
-- pgcrypto goes into the catalog's schema when it is not there yet; a
-- database may already have it in another schema, or get it only later
-- (a gateway without authentication does not need it, and its user may not
-- be allowed to create extensions), so the two functions below find it at
-- each call instead of naming its schema once.
DO $$
BEGIN
    CREATE EXTENSION IF NOT EXISTS pgcrypto WITH SCHEMA cqlpg;
EXCEPTION WHEN insufficient_privilege OR undefined_file OR feature_not_supported THEN
    RAISE WARNING 'pgcrypto is not installed (%); CQL authentication needs it: CREATE EXTENSION pgcrypto', SQLERRM;
END $$;

-- cqlpg.pgcrypto_schema is the schema pgcrypto is installed in, or an
-- error saying it is not installed.
CREATE FUNCTION cqlpg.pgcrypto_schema() RETURNS text LANGUAGE plpgsql STABLE AS $$
DECLARE
    s text;
BEGIN
    SELECT n.nspname INTO s FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
    WHERE e.extname = 'pgcrypto';
    IF s IS NULL THEN
        RAISE EXCEPTION 'the pgcrypto extension is not installed in this database; CQL authentication needs it'
            USING ERRCODE = 'undefined_object', HINT = 'CREATE EXTENSION pgcrypto';
    END IF;
    RETURN s;
END $$;

-- cqlpg.password_hash hashes a password with a new salt.
CREATE FUNCTION cqlpg.password_hash(password text) RETURNS text LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    h text;
BEGIN
    EXECUTE format('SELECT %1$I.crypt($1, %1$I.gen_salt(''bf'', 10))', cqlpg.pgcrypto_schema()) INTO h USING password;
    RETURN h;
END $$;

-- cqlpg.password_matches checks a password against a hash; a malformed
-- hash matches nothing, as in Cassandra.
CREATE FUNCTION cqlpg.password_matches(password text, hash text) RETURNS boolean LANGUAGE plpgsql STABLE AS $$
DECLARE
    s text := cqlpg.pgcrypto_schema();
    h text;
BEGIN
    IF hash IS NULL THEN
        RETURN false;
    END IF;
    BEGIN
        EXECUTE format('SELECT %I.crypt($1, $2)', s) INTO h USING password, hash;
    EXCEPTION WHEN invalid_parameter_value OR data_exception THEN
        RETURN false;
    END;
    RETURN h = hash;
END $$;
