-- The tables' triggers and their functions (pgschema/sqlwrites.go).
DO $$
DECLARE
    f regprocedure;
BEGIN
    FOR f IN SELECT DISTINCT tgfoid::regprocedure FROM pg_trigger WHERE tgname = 'cqlpg_sql_write' LOOP
        EXECUTE 'DROP FUNCTION ' || f || ' CASCADE';
    END LOOP;
END
$$;

DROP FUNCTION cqlpg.now_micros, cqlpg.wrap_mul, cqlpg.wrap_add, cqlpg.rotl64, cqlpg.fmix64, cqlpg.token,
    cqlpg.partition_key, cqlpg.tinyint_bytes, cqlpg.timestamp_bytes, cqlpg.date_bytes, cqlpg.inet_bytes,
    cqlpg.varint_bytes, cqlpg.decimal_bytes, cqlpg.uuid_order_key, cqlpg.timeuuid_order_key,
    cqlpg.inet_order_key, cqlpg.float_order_key, cqlpg.double_order_key;
