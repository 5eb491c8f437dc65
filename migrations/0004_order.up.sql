-- Order functions: bytes that sort, as Postgres sorts bytea, the way
-- Cassandra sorts values of types Postgres orders otherwise. Clustering
-- columns of these types keep an order key computed by the gateway; these
-- functions serve range conditions on other columns (ALLOW FILTERING).

-- uuid_order: by version, then version 1 uuids by their timestamp and
-- others by their high eight bytes, then by the low eight bytes.
CREATE FUNCTION cqlpg.uuid_order(u uuid) RETURNS bytea
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT CASE WHEN get_byte(b, 6) >> 4 = 1
                THEN '\x01'::bytea || set_byte(substr(b, 7, 1), 0, get_byte(b, 6) & 15) || substr(b, 8, 1)
                     || substr(b, 5, 2) || substr(b, 1, 4) || substr(b, 9, 8)
                ELSE set_byte('\x00'::bytea, 0, get_byte(b, 6) >> 4) || b
           END
    FROM (SELECT uuid_send(u) AS b) AS s
$$;

-- timeuuid_order: by timestamp, then by the low eight bytes compared as
-- signed bytes.
CREATE FUNCTION cqlpg.timeuuid_order(u uuid) RETURNS bytea
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT set_byte(substr(b, 7, 1), 0, get_byte(b, 6) & 15) || substr(b, 8, 1) || substr(b, 5, 2) || substr(b, 1, 4)
           || int8send(('x' || encode(substr(b, 9, 8), 'hex'))::bit(64)::bigint # -9187201950435737472)
    FROM (SELECT uuid_send(u) AS b) AS s
$$;

-- inet_order: the address bytes (4 for IPv4, 16 for IPv6), as Cassandra
-- compares them.
CREATE FUNCTION cqlpg.inet_order(a inet) RETURNS bytea
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT substr(inet_send(a), 5)
$$;
