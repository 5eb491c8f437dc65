-- Writes made with plain SQL. Every table cqlpg creates has a trigger
-- (generated per table by pgschema, see docs/sql-writes.md) that fills in
-- what an INSERT or UPDATE written in psql leaves out: the partition's
-- token, order keys, write times. These are the functions it uses, and
-- that operators may use themselves.

-- now_micros: the Postgres clock in microseconds since 1970, the write
-- time of cells written through SQL (Cassandra's timestamps count
-- microseconds too).
CREATE FUNCTION cqlpg.now_micros() RETURNS bigint
LANGUAGE sql VOLATILE PARALLEL SAFE AS $$
    SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint
$$;

-- Murmur3 works on unsigned 64-bit words with wrapping arithmetic;
-- bigint arithmetic raises on overflow, so products and sums are taken
-- modulo 2^64 in numeric and brought back into bigint's signed range.
CREATE FUNCTION cqlpg.wrap_mul(a bigint, b bigint) RETURNS bigint
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT (mod(mod(a::numeric * b, 18446744073709551616) + 27670116110564327424, 18446744073709551616)
            - 9223372036854775808)::bigint
$$;

CREATE FUNCTION cqlpg.wrap_add(a bigint, b bigint) RETURNS bigint
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT (mod(a::numeric + b + 27670116110564327424, 18446744073709551616) - 9223372036854775808)::bigint
$$;

-- rotl64 rotates a 64-bit word left by r bits (0 < r < 64); >> on bigint
-- copies the sign bit, hence the mask.
CREATE FUNCTION cqlpg.rotl64(x bigint, r integer) RETURNS bigint
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT (x << r) | ((x >> (64 - r)) & ((1::bigint << r) - 1))
$$;

-- fmix64 is MurmurHash3's finalization mix; x >> 33 & (2^31 - 1) is the
-- unsigned shift.
CREATE FUNCTION cqlpg.fmix64(k bigint) RETURNS bigint
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
BEGIN
    k := k # ((k >> 33) & 2147483647);
    k := cqlpg.wrap_mul(k, -49064778989728563);    -- 0xff51afd7ed558ccd
    k := k # ((k >> 33) & 2147483647);
    k := cqlpg.wrap_mul(k, -4265267296055464877);  -- 0xc4ceb9fe1a85ec53
    RETURN k # ((k >> 33) & 2147483647);
END
$$;

-- token: the token Cassandra's Murmur3Partitioner gives a serialized
-- partition key, as CQL's token() shows it: the first half of MurmurHash3
-- x64_128 with seed 0, except that the bytes of the last partial block are
-- sign-extended before they are mixed in, as Cassandra does. The empty key
-- has the minimum token; a hash equal to it becomes the maximum.
CREATE FUNCTION cqlpg.token(key bytea) RETURNS bigint
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
    c1 CONSTANT bigint := -8663945395140668459;  -- 0x87c37b91114253d5
    c2 CONSTANT bigint := 5545529020109919103;   -- 0x4cf5ad432745937f
    n CONSTANT integer := length(key);
    blocks CONSTANT integer := n / 16;
    h1 bigint := 0;
    h2 bigint := 0;
    k1 bigint;
    k2 bigint;
    b bigint;
    o integer;
BEGIN
    IF n = 0 THEN
        RETURN -9223372036854775808;
    END IF;
    FOR i IN 0 .. blocks - 1 LOOP
        o := i * 16;
        k1 := 0;
        k2 := 0;
        FOR j IN 0 .. 7 LOOP  -- little-endian words
            k1 := k1 | (get_byte(key, o + j)::bigint << (8 * j));
            k2 := k2 | (get_byte(key, o + 8 + j)::bigint << (8 * j));
        END LOOP;
        h1 := h1 # cqlpg.wrap_mul(cqlpg.rotl64(cqlpg.wrap_mul(k1, c1), 31), c2);
        h1 := cqlpg.wrap_add(cqlpg.wrap_mul(cqlpg.wrap_add(cqlpg.rotl64(h1, 27), h2), 5), 1390208809);  -- 0x52dce729
        h2 := h2 # cqlpg.wrap_mul(cqlpg.rotl64(cqlpg.wrap_mul(k2, c2), 33), c1);
        h2 := cqlpg.wrap_add(cqlpg.wrap_mul(cqlpg.wrap_add(cqlpg.rotl64(h2, 31), h1), 5), 944331445);   -- 0x38495ab5
    END LOOP;
    k1 := 0;
    k2 := 0;
    FOR j IN 0 .. n - blocks * 16 - 1 LOOP
        b := get_byte(key, blocks * 16 + j);
        IF b >= 128 THEN
            b := b - 256;  -- Java's (long) of a signed byte
        END IF;
        IF j < 8 THEN
            k1 := k1 # (b << (8 * j));
        ELSE
            k2 := k2 # (b << (8 * (j - 8)));
        END IF;
    END LOOP;
    IF n % 16 > 8 THEN
        h2 := h2 # cqlpg.wrap_mul(cqlpg.rotl64(cqlpg.wrap_mul(k2, c2), 33), c1);
    END IF;
    IF n % 16 > 0 THEN
        h1 := h1 # cqlpg.wrap_mul(cqlpg.rotl64(cqlpg.wrap_mul(k1, c1), 31), c2);
    END IF;
    h1 := h1 # n;
    h2 := h2 # n;
    h1 := cqlpg.wrap_add(h1, h2);
    h2 := cqlpg.wrap_add(h2, h1);
    h1 := cqlpg.fmix64(h1);
    h2 := cqlpg.fmix64(h2);
    h1 := cqlpg.wrap_add(h1, h2);
    IF h1 = -9223372036854775808 THEN
        RETURN 9223372036854775807;
    END IF;
    RETURN h1;
END
$$;

-- partition_key serializes a partition key from its columns' CQL bytes,
-- in key order: one column is its bytes; several are Cassandra's
-- composite, each as a 2-byte length, the bytes and a 0x00.
CREATE FUNCTION cqlpg.partition_key(VARIADIC parts bytea[]) RETURNS bytea
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
    key bytea := '';
    part bytea;
BEGIN
    IF cardinality(parts) = 1 THEN
        RETURN parts[1];
    END IF;
    FOREACH part IN ARRAY parts LOOP
        IF length(part) > 65535 THEN
            RAISE EXCEPTION 'Key length of % is longer than maximum of 65535', length(part)
                USING ERRCODE = '22023';
        END IF;
        key := key || substr(int4send(length(part)), 3) || part || '\x00'::bytea;
    END LOOP;
    RETURN key;
END
$$;

-- CQL serializations of the Postgres types that hold CQL values in
-- another form. The others are their binary send forms: int4send (int),
-- int8send (bigint, counter, time), int2send (smallint), boolsend,
-- float4send, float8send, uuid_send (uuid, timeuuid), convert_to(x,
-- 'UTF8') (text, ascii) and the bytea itself (blob).

-- tinyint_bytes: the one byte of a tinyint, stored as smallint.
CREATE FUNCTION cqlpg.tinyint_bytes(v smallint) RETURNS bytea
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT substr(int2send(v), 2)
$$;

-- timestamp_bytes: milliseconds since 1970 as 8 bytes; microseconds are
-- dropped, rounding down as the gateway reads them.
CREATE FUNCTION cqlpg.timestamp_bytes(v timestamptz) RETURNS bytea
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT int8send(floor(extract(epoch FROM v) * 1000)::bigint)
$$;

-- date_bytes: days since 1970 plus 2^31, as 4 unsigned bytes.
CREATE FUNCTION cqlpg.date_bytes(v date) RETURNS bytea
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT substr(int8send((v - date '1970-01-01') + 2147483648), 5)
$$;

-- inet_bytes: the address, 4 or 16 bytes; a netmask is dropped.
CREATE FUNCTION cqlpg.inet_bytes(v inet) RETURNS bytea
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT substr(inet_send(v), 5)
$$;

-- varint_bytes: an integral numeric as the shortest big-endian two's
-- complement bytes (a negative n is the complement of -n - 1).
CREATE FUNCTION cqlpg.varint_bytes(v numeric) RETURNS bytea
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
    neg CONSTANT boolean := v < 0;
    m numeric := CASE WHEN v < 0 THEN -v - 1 ELSE v END;
    out bytea := '';
    b integer;
BEGIN
    IF v <> trunc(v) THEN
        RAISE EXCEPTION 'varint % is not an integer', v USING ERRCODE = '22023';
    END IF;
    LOOP
        b := mod(m, 256)::integer;
        IF neg THEN
            b := 255 - b;
        END IF;
        out := set_byte('\x00'::bytea, 0, b) || out;
        m := div(m, 256);
        EXIT WHEN m = 0;
    END LOOP;
    IF neg AND b < 128 THEN
        out := '\xff'::bytea || out;
    ELSIF NOT neg AND b >= 128 THEN
        out := '\x00'::bytea || out;
    END IF;
    RETURN out;
END
$$;

-- decimal_bytes: the scale as 4 bytes, then the unscaled value as a
-- varint; 1.50 keeps its scale of 2.
CREATE FUNCTION cqlpg.decimal_bytes(v numeric) RETURNS bytea
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT int4send(scale(v)) || cqlpg.varint_bytes(replace(v::text, '.', '')::numeric)
$$;

-- Order keys (pgschema.OrderKey) of clustering columns whose Postgres
-- order is not Cassandra's: bytes that sort, as bytea, the way Cassandra
-- sorts the values, led by the 0x01 of a present value.

CREATE FUNCTION cqlpg.uuid_order_key(v uuid) RETURNS bytea
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT '\x01'::bytea || cqlpg.uuid_order(v)
$$;

CREATE FUNCTION cqlpg.timeuuid_order_key(v uuid) RETURNS bytea
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT '\x01'::bytea || cqlpg.timeuuid_order(v)
$$;

-- inet_order_key: the address bytes with each 0x00 followed by 0xff,
-- ended by 0x00 0x01, so that a shorter address sorts first. The hex
-- digits are split in pairs first, so that only whole 0x00 bytes match.
CREATE FUNCTION cqlpg.inet_order_key(v inet) RETURNS bytea
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT '\x01'::bytea
           || decode(replace(replace(regexp_replace(encode(substr(inet_send(v), 5), 'hex'), '(..)', '\1,', 'g'),
                                     '00,', '00ff'), ',', ''), 'hex')
           || '\x0001'::bytea
$$;

-- float_order_key and double_order_key: the IEEE bits with the sign bit
-- set for positive numbers and all bits inverted for negative ones, so
-- that -0.0 sorts before 0.0; every NaN is all ones, last.
CREATE FUNCTION cqlpg.float_order_key(v real) RETURNS bytea
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT '\x01'::bytea || int4send(CASE WHEN v = 'NaN'::real THEN -1
                                          WHEN bits < 0 THEN ~bits
                                          ELSE bits # -2147483648 END)
    FROM (SELECT ('x' || encode(float4send(v), 'hex'))::bit(32)::integer AS bits) AS s
$$;

CREATE FUNCTION cqlpg.double_order_key(v double precision) RETURNS bytea
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT '\x01'::bytea || int8send(CASE WHEN v = 'NaN'::double precision THEN -1
                                          WHEN bits < 0 THEN ~bits
                                          ELSE bits # -9223372036854775808 END)
    FROM (SELECT ('x' || encode(float8send(v), 'hex'))::bit(64)::bigint AS bits) AS s
$$;
