DROP FUNCTION IF EXISTS cqlpg.text_bytes(text);
