DROP FUNCTION IF EXISTS cqlpg.date_key(date, bytea);
DROP FUNCTION IF EXISTS cqlpg.decimal_key(numeric, bytea);
DROP FUNCTION IF EXISTS cqlpg.decimal_bytes_order_key(bytea);
DROP FUNCTION IF EXISTS cqlpg.decimal_order_key(numeric);
DROP FUNCTION IF EXISTS cqlpg.decimal_digits_key(text, boolean, bigint);
DROP FUNCTION IF EXISTS cqlpg.date_order_key(date);
ALTER TABLE cqlpg.columns DROP COLUMN exact;
