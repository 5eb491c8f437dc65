-- Dates beyond Postgres's range and decimals whose exponent numeric cannot
-- hold keep their CQL bytes in an exact companion column (c$exact) beside
-- the natural one, and date and decimal clustering columns sort by an
-- order key (pgschema/exact.go). Columns created before this migration
-- have neither: exact is false for them, and they refuse such values as
-- they always did; columns created after it have both.
ALTER TABLE cqlpg.columns ADD COLUMN exact boolean NOT NULL DEFAULT false;
ALTER TABLE cqlpg.columns ALTER COLUMN exact SET DEFAULT true;
COMMENT ON COLUMN cqlpg.columns.exact IS
    'true when a date or decimal column has an exact companion (pg_column$exact) for values its Postgres type cannot hold, and, as a clustering column, an order key (pg_column$ord)';

-- Order keys (pgschema.OrderKey) of date and decimal clustering columns,
-- for rows written in SQL: a date's CQL bytes with each 0x00 followed by
-- 0xff, ended by 0x00 0x01; a decimal's sign class (0x01 zero, 0x02
-- positive, 0x00 negative), then the power of ten just above its first
-- digit as a biased 64-bit number, its digits without trailing zeros and
-- 0x00, all inverted for a negative number so that larger magnitudes sort
-- first. 1.5 and 1.50 have one key, as they are one clustering.
CREATE FUNCTION cqlpg.date_order_key(v date) RETURNS bytea
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT '\x01'::bytea
           || decode(replace(replace(regexp_replace(encode(cqlpg.date_bytes(v), 'hex'), '(..)', '\1,', 'g'),
                                     '00,', '00ff'), ',', ''), 'hex')
           || '\x0001'::bytea
$$;

-- decimal_digits_key is the order key of the decimal whose absolute
-- value has the digits given (no leading zeros; '' for zero), scaled by
-- 10^-scale.
CREATE FUNCTION cqlpg.decimal_digits_key(digits text, negative boolean, scale bigint) RETURNS bytea
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
    k bytea;
BEGIN
    IF digits = '' THEN
        RETURN '\x0101'::bytea;
    END IF;
    k := int8send(length(digits) - scale);
    k := set_byte(k, 0, get_byte(k, 0) # 128);
    k := k || convert_to(rtrim(digits, '0'), 'UTF8') || '\x00'::bytea;
    IF NOT negative THEN
        RETURN '\x0102'::bytea || k;
    END IF;
    FOR i IN 0 .. length(k) - 1 LOOP
        k := set_byte(k, i, 255 - get_byte(k, i));
    END LOOP;
    RETURN '\x0100'::bytea || k;
END
$$;

CREATE FUNCTION cqlpg.decimal_order_key(v numeric) RETURNS bytea
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT cqlpg.decimal_digits_key(ltrim(replace(abs(v)::text, '.', ''), '0'), v < 0, scale(v))
$$;

-- decimal_bytes_order_key is the order key of a decimal's CQL bytes: a
-- 4-byte scale, then the unscaled value in two's complement.
CREATE FUNCTION cqlpg.decimal_bytes_order_key(b bytea) RETURNS bytea
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
    scale bigint := ((get_byte(b, 0)::bigint << 24) | (get_byte(b, 1) << 16) | (get_byte(b, 2) << 8) | get_byte(b, 3))::bit(32)::int;
    n     numeric := 0;
BEGIN
    FOR i IN 4 .. length(b) - 1 LOOP
        n := n * 256 + get_byte(b, i);
    END LOOP;
    IF length(b) > 4 AND get_byte(b, 4) >= 128 THEN
        n := n - 256::numeric ^ (length(b) - 4);
    END IF;
    RETURN cqlpg.decimal_digits_key(ltrim(abs(n)::text, '0'), n < 0, scale);
END
$$;

-- date_key and decimal_key are the order key of a column's value, which
-- its exact companion x holds when it is not null: filters compare them,
-- as Cassandra compares the values.
CREATE FUNCTION cqlpg.date_key(v date, x bytea) RETURNS bytea
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN x IS NULL THEN cqlpg.date_order_key(v)
        ELSE '\x01'::bytea || decode(replace(replace(regexp_replace(encode(x, 'hex'), '(..)', '\1,', 'g'),
                                     '00,', '00ff'), ',', ''), 'hex') || '\x0001'::bytea END
$$;

CREATE FUNCTION cqlpg.decimal_key(v numeric, x bytea) RETURNS bytea
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN x IS NULL THEN cqlpg.decimal_order_key(v) ELSE cqlpg.decimal_bytes_order_key(x) END
$$;
