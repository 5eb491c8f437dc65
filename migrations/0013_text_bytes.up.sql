-- cqlpg.text_bytes gives the CQL bytes of a stored text or ascii value:
-- its UTF-8 bytes, with the escape that lets Postgres text hold U+0000
-- undone (the gateway stores 0x00 as 0x01 0x01 and 0x01 as 0x01 0x02; a
-- 0x01 followed by anything else is itself). Tokens of keys written in SQL
-- and the reconciliation of equal write times read values through it.
CREATE FUNCTION cqlpg.text_bytes(v text) RETURNS bytea
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
    b   bytea := convert_to(v, 'UTF8');
    out bytea := '';
    n   int;
    i   int := 0;
    c   int;
BEGIN
    IF position('\x01'::bytea IN b) = 0 THEN
        RETURN b;
    END IF;
    n := length(b);
    WHILE i < n LOOP
        c := get_byte(b, i);
        IF c = 1 AND i + 1 < n AND get_byte(b, i + 1) IN (1, 2) THEN
            c := get_byte(b, i + 1) - 1;
            i := i + 1;
        END IF;
        out := out || set_byte('\x00'::bytea, 0, c);
        i := i + 1;
    END LOOP;
    RETURN out;
END
$$;
