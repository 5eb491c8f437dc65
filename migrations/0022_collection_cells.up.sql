-- Cells of non-frozen sets, maps and user types, one per element, entry
-- or field, as Cassandra keeps them: each with its own write time, so
-- that replicas merge them one by one and no element a replica missed is
-- lost when another's newer change wins.
--
-- A column c of such a type keeps its live value in c, as before, and
-- its cells in c$cells (jsonb), keyed by each element's key (elem_keys:
-- the element's text for sets, the entry's key for maps, the field's name
-- for user types):
--
--   {"l": {key: write time of the live element, ...},
--    "d": {key: write time of the element's removal, ...},
--    "c": write time of the collection's deletion or overwrite}
--
-- An element is live when its write time is newer than its removal, the
-- collection's deletion and the row's; a removal wins a tie, as every
-- deletion does. "l", "d" and "c" are left out when empty, and the whole
-- of it is null when all three are: cells_merge returns that canonical
-- form, so that replicas holding the same cells hold the same jsonb.
-- A value stored before c$cells existed has null cells: cells_base reads
-- each of its elements as written at the collection's write time.

-- elem_keys returns the keys of an array's elements: their text, which
-- a few settings shape (TimeZone, DateStyle, IntervalStyle,
-- extra_float_digits, bytea_output); every gateway session sets them
-- alike (pgschema.GatewayConnString), so that every replica spells a
-- key the same way.
CREATE FUNCTION cqlpg.elem_keys(elems anycompatiblearray)
RETURNS text[] LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT elems::text[]
$$;

-- jelem_keys returns the keys of a jsonb collection: the text of each
-- element of an array (a set), the keys of an object (a map or user type).
CREATE FUNCTION cqlpg.jelem_keys(elems jsonb)
RETURNS text[] LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE jsonb_typeof(elems)
        WHEN 'array' THEN ARRAY(SELECT e::text FROM jsonb_array_elements(elems) AS u(e))
        WHEN 'object' THEN ARRAY(SELECT jsonb_object_keys(elems))
    END
$$;

-- cells_merge returns the union of two collections' cells: each key's
-- newest live write and newest removal, the newer deletion of the
-- collection; then drops what is no newer than a removal of its key, the
-- collection's deletion, or deleted (the row's deletion time, or null),
-- which also makes an older deletion of the collection moot.
-- It is commutative, associative and idempotent, as replicas need.
CREATE FUNCTION cqlpg.cells_merge(a jsonb, b jsonb, deleted bigint)
RETURNS jsonb LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
    big jsonb := a;
    small jsonb := b;
    l jsonb;
    d jsonb;
    c bigint := GREATEST((a->>'c')::bigint, (b->>'c')::bigint);
    f bigint;
    k text;
    w bigint;
    cur bigint;
BEGIN
    -- The larger side is taken whole and the smaller merged into it
    -- key by key: a write merges a few elements into many.
    IF big IS NULL OR (small IS NOT NULL AND pg_column_size(small) > pg_column_size(big)) THEN
        big := b;
        small := a;
    END IF;
    l := coalesce(big->'l', '{}');
    d := coalesce(big->'d', '{}');
    f := GREATEST(c, deleted);
    FOR k, w IN SELECT key, value::bigint FROM jsonb_each_text(small->'d') WHERE f IS NULL OR value::bigint > f LOOP
        cur := (d->>k)::bigint;
        IF cur IS NULL OR w > cur THEN
            d := d || jsonb_build_object(k, w);
        END IF;
        IF (l->>k)::bigint <= w THEN
            l := l - k;
        END IF;
    END LOOP;
    FOR k, w IN SELECT key, value::bigint FROM jsonb_each_text(small->'l') WHERE f IS NULL OR value::bigint > f LOOP
        cur := (l->>k)::bigint;
        IF (cur IS NULL OR w > cur) AND NOT coalesce((d->>k)::bigint >= w, false) THEN
            l := l || jsonb_build_object(k, w);
        END IF;
    END LOOP;
    -- What the collection's or the row's deletion shadows goes: the
    -- larger side holds nothing its own deletion shadows.
    IF f > coalesce((big->>'c')::bigint, f - 1) THEN
        SELECT coalesce(jsonb_object_agg(key, value), '{}') INTO l FROM jsonb_each(l) WHERE value::bigint > f;
        SELECT coalesce(jsonb_object_agg(key, value), '{}') INTO d FROM jsonb_each(d) WHERE value::bigint > f;
    END IF;
    IF deleted >= c THEN
        c := NULL;
    END IF;
    IF c IS NULL THEN
        IF d = '{}' THEN
            RETURN CASE WHEN l <> '{}' THEN jsonb_build_object('l', l) END;
        ELSIF l = '{}' THEN
            RETURN jsonb_build_object('d', d);
        END IF;
        RETURN jsonb_build_object('l', l, 'd', d);
    END IF;
    RETURN jsonb_build_object('c', c) || CASE WHEN l <> '{}' THEN jsonb_build_object('l', l) ELSE '{}' END
        || CASE WHEN d <> '{}' THEN jsonb_build_object('d', d) ELSE '{}' END;
END
$$;

-- cells_delta returns the cells one write makes: the elements of keys
-- live at wt, those of removed removed at wt, and, when cleared is not
-- null, the collection deleted at cleared (an overwrite clears at wt - 1,
-- a deletion at wt).
CREATE FUNCTION cqlpg.cells_delta(keys text[], removed text[], wt bigint, cleared bigint)
RETURNS jsonb LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN wt IS NOT NULL THEN cqlpg.cells_merge(jsonb_strip_nulls(jsonb_build_object(
        'l', (SELECT jsonb_object_agg(k, wt) FROM unnest(keys) AS u(k) WHERE k <> ALL(coalesce(removed, '{}'))),
        'd', (SELECT jsonb_object_agg(k, wt) FROM unnest(removed) AS u(k)),
        'c', cleared)), NULL, NULL) END
$$;

-- cells_base returns the cells of a stored collection: cells itself, or,
-- when it is null, the value written whole at wt: keys live at wt, the
-- collection deleted at wt - 1. A collection that expired is deleted at
-- its write time.
CREATE FUNCTION cqlpg.cells_base(cells jsonb, keys text[], wt bigint, expired boolean)
RETURNS jsonb LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE
        WHEN wt IS NULL THEN cells
        WHEN expired THEN cqlpg.cells_merge(cells, jsonb_build_object('c', wt), NULL)
        WHEN cells IS NOT NULL THEN cells
        ELSE jsonb_build_object('l', (SELECT coalesce(jsonb_object_agg(k, wt), '{}') FROM unnest(keys) AS u(k)), 'c', wt - 1)
    END
$$;

-- cells_pack returns the cells to store beside a value written at wt:
-- null when they say no more than that the value was written whole at
-- wt (what cells_base reads null cells as), which is what most
-- collections hold, else the cells themselves.
CREATE FUNCTION cqlpg.cells_pack(cells jsonb, wt bigint)
RETURNS jsonb LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN cells IS NULL
                  OR ((cells->>'c')::bigint = wt - 1 AND NOT cells ? 'd'
                      AND NOT EXISTS (SELECT FROM jsonb_each_text(cells->'l') AS e(k, w) WHERE w::bigint <> wt))
           THEN NULL ELSE cells END
$$;

-- set_live returns the elements of a and b live in cells, distinct and
-- sorted, or null when there are none: a set stored as an array.
CREATE FUNCTION cqlpg.set_live(a anycompatiblearray, b anycompatiblearray, cells jsonb)
RETURNS anycompatiblearray LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT NULLIF(ARRAY(SELECT DISTINCT u.e FROM unnest(a || b, cqlpg.elem_keys(a || b)) AS u(e, key)
                        WHERE u.key IN (SELECT jsonb_object_keys(cells->'l')) ORDER BY u.e), '{}')
$$;

-- jset_live is set_live for a set stored as a jsonb array.
CREATE FUNCTION cqlpg.jset_live(a jsonb, b jsonb, cells jsonb)
RETURNS jsonb LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT jsonb_agg(DISTINCT e ORDER BY e)
    FROM (SELECT jsonb_array_elements(a) UNION ALL SELECT jsonb_array_elements(b)) AS u(e)
    WHERE e::text IN (SELECT jsonb_object_keys(cells->'l'))
$$;

-- jmap_live returns the entries (or fields) live in cells, each from the
-- side, a or b, whose cells hold its live write time (the greater value
-- when both do), or null when there are none.
CREATE FUNCTION cqlpg.jmap_live(a jsonb, acells jsonb, b jsonb, bcells jsonb, cells jsonb)
RETURNS jsonb LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT jsonb_object_agg(m.key, CASE WHEN av.value IS NULL THEN bv.value WHEN bv.value IS NULL THEN av.value
                                        ELSE GREATEST(av.value, bv.value) END)
    FROM jsonb_each_text(cells->'l') AS m
    LEFT JOIN jsonb_each_text(acells->'l') AS aw ON aw.key = m.key AND aw.value = m.value
    LEFT JOIN jsonb_each(a) AS av ON av.key = m.key AND aw.key IS NOT NULL
    LEFT JOIN jsonb_each_text(bcells->'l') AS bw ON bw.key = m.key AND bw.value = m.value
    LEFT JOIN jsonb_each(b) AS bv ON bv.key = m.key AND bw.key IS NOT NULL
    WHERE av.value IS NOT NULL OR bv.value IS NOT NULL
$$;

-- jentry_removed returns the keys that setting key to val removes: key
-- when val is null. (What it adds is cqlpg.jmap_set(NULL, key, val).)
CREATE FUNCTION cqlpg.jentry_removed(key text, val jsonb)
RETURNS text[] LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    IF key IS NULL THEN
        RAISE EXCEPTION 'Invalid null map key' USING ERRCODE = '22023';
    END IF;
    IF val IS NULL THEN
        RETURN ARRAY[key];
    END IF;
    RETURN NULL;
END
$$;

-- Lists. Cassandra names each element of a list by a time-based UUID of
-- its coordinator's clock, which orders it, and keeps a write time per
-- element. cqlpg names an element by a key of text that sorts as the
-- list does (in the "C" collation), from the gateway's clock at the
-- write, k (for an overwrite, the write's time when older): an append or
-- overwrite gives its n items '1' || k || h || i,
-- a prepend '0' || (k reversed) || h || i, where h is a digest of the
-- items, so that two statements at one time name their elements apart
-- while a write applied twice (a hint of a write that had landed) names
-- the same ones. The list's cells are keyed by those keys, and its value
-- holds the live elements in key order: the i-th element is the one of
-- the i-th smallest live key. Cells that say the value was written
-- whole at its write time wt, named at k, are stored as {"k": k}, or as
-- null when k is wt, which is how a value stored without cells reads.

-- list_keys returns the keys of n items named at clock time wt, h their
-- digest.
CREATE FUNCTION cqlpg.list_keys(wt bigint, n integer, h text, prepend boolean)
RETURNS text[] LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT array_agg(CASE WHEN prepend THEN '0' || lpad(to_hex(~(wt # (-9223372036854775807 - 1))), 16, '0')
                          ELSE '1' || lpad(to_hex(wt # (-9223372036854775807 - 1)), 16, '0') END
                     || substr(h, 1, 8) || lpad(to_hex(i), 8, '0') ORDER BY i)
    FROM generate_series(0, n - 1) AS i
$$;

-- list_whole returns the cells of list v, stored with cells: v written
-- whole at wt, its elements named at the time cells->'k' holds, or at wt
-- when cells is null; or cells themselves.
CREATE FUNCTION cqlpg.list_whole(v anycompatiblearray, cells jsonb, wt bigint)
RETURNS jsonb LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN cells IS NULL OR cells ? 'k'
        THEN cqlpg.cells_base(NULL, cqlpg.list_keys(coalesce((cells->>'k')::bigint, wt), cardinality(v), md5(v::text), false), wt, false)
        ELSE cells END
$$;

CREATE FUNCTION cqlpg.jlist_whole(v jsonb, cells jsonb, wt bigint)
RETURNS jsonb LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN cells IS NULL OR cells ? 'k'
        THEN cqlpg.cells_base(NULL, cqlpg.list_keys(coalesce((cells->>'k')::bigint, wt), jsonb_array_length(v), md5(v::text), false), wt, false)
        ELSE cells END
$$;

-- list_delta returns a list change: items (keyed by keys, in any order)
-- written at wt, the keys of removed removed at wt, the list deleted at
-- cleared; the items come back in key order, less those removed.
CREATE FUNCTION cqlpg.list_delta(items anycompatiblearray, keys text[], removed text[], wt bigint, cleared bigint,
                                 OUT v anycompatiblearray, OUT cells jsonb)
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT (SELECT array_agg(u.e ORDER BY u.k COLLATE "C") FROM unnest(items, keys) AS u(e, k)
            WHERE u.k <> ALL(coalesce(removed, '{}'))),
           cqlpg.cells_delta(keys, removed, wt, cleared)
    WHERE wt IS NOT NULL
$$;

CREATE FUNCTION cqlpg.jlist_delta(items jsonb, keys text[], removed text[], wt bigint, cleared bigint,
                                  OUT v jsonb, OUT cells jsonb)
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT (SELECT jsonb_agg(u.e ORDER BY u.k COLLATE "C")
            FROM (SELECT e, keys[n] AS k FROM jsonb_array_elements(items) WITH ORDINALITY AS x(e, n)) AS u
            WHERE u.k <> ALL(coalesce(removed, '{}'))),
           cqlpg.cells_delta(keys, removed, wt, cleared)
    WHERE wt IS NOT NULL
$$;

-- list_pack is cells_pack for list v: cells that say v was written whole
-- at wt, its elements named at one time k by an append or overwrite, are
-- stored as {"k": k}, or as null when k is wt.
CREATE FUNCTION cqlpg.list_pack(cells jsonb, wt bigint, v text, n integer)
RETURNS jsonb LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
    first text;
    k bigint;
BEGIN
    IF cells IS NULL OR cqlpg.cells_pack(cells, wt) IS NOT NULL THEN
        RETURN cells;
    END IF;
    first := (SELECT min(x COLLATE "C") FROM jsonb_object_keys(cells->'l') AS x);
    IF first IS NULL THEN
        RETURN NULL;
    ELSIF left(first, 1) <> '1' THEN
        RETURN cells;
    END IF;
    k := ('x' || substr(first, 2, 16))::bit(64)::bigint # (-9223372036854775807 - 1);
    IF cqlpg.list_keys(k, n, md5(v), false) <> ARRAY(SELECT x FROM jsonb_object_keys(cells->'l') AS x ORDER BY x COLLATE "C") THEN
        RETURN cells;
    END IF;
    RETURN CASE WHEN k = wt THEN NULL ELSE jsonb_build_object('k', k) END;
END
$$;

-- list_merge merges list b, with its cells, into list a, with its cells,
-- given the row's deletion time: the union of the cells, and the value
-- of the elements they keep live, each from the side whose cells hold its
-- live write time (the greater on a tie), in key order; the cells come
-- back packed for write time wt.
CREATE FUNCTION cqlpg.list_merge(a anycompatiblearray, acells jsonb, b anycompatiblearray, bcells jsonb,
                                 deleted bigint, wt bigint, OUT v anycompatiblearray, OUT cells jsonb)
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
    cells := cqlpg.cells_merge(acells, bcells, deleted);
    SELECT array_agg(CASE WHEN x.av IS NULL THEN x.bv WHEN x.bv IS NULL THEN x.av ELSE GREATEST(x.av, x.bv) END
                     ORDER BY x.key COLLATE "C") INTO v
    FROM (SELECT m.key, a[al.pos] AS av, b[bl.pos] AS bv
          FROM jsonb_each_text(cells->'l') AS m
          LEFT JOIN (SELECT key, value, row_number() OVER (ORDER BY key COLLATE "C") AS pos
                     FROM jsonb_each_text(acells->'l')) AS al ON al.key = m.key AND al.value = m.value
          LEFT JOIN (SELECT key, value, row_number() OVER (ORDER BY key COLLATE "C") AS pos
                     FROM jsonb_each_text(bcells->'l')) AS bl ON bl.key = m.key AND bl.value = m.value) AS x
    WHERE x.av IS NOT NULL OR x.bv IS NOT NULL;
    cells := cqlpg.list_pack(cells, wt, v::text, coalesce(cardinality(v), 0));
END
$$;

CREATE FUNCTION cqlpg.jlist_merge(a jsonb, acells jsonb, b jsonb, bcells jsonb,
                                  deleted bigint, wt bigint, OUT v jsonb, OUT cells jsonb)
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
    cells := cqlpg.cells_merge(acells, bcells, deleted);
    SELECT jsonb_agg(CASE WHEN x.av IS NULL THEN x.bv WHEN x.bv IS NULL THEN x.av ELSE GREATEST(x.av, x.bv) END
                     ORDER BY x.key COLLATE "C") INTO v
    FROM (SELECT m.key, a->(al.pos::integer - 1) AS av, b->(bl.pos::integer - 1) AS bv
          FROM jsonb_each_text(cells->'l') AS m
          LEFT JOIN (SELECT key, value, row_number() OVER (ORDER BY key COLLATE "C") AS pos
                     FROM jsonb_each_text(acells->'l')) AS al ON al.key = m.key AND al.value = m.value
          LEFT JOIN (SELECT key, value, row_number() OVER (ORDER BY key COLLATE "C") AS pos
                     FROM jsonb_each_text(bcells->'l')) AS bl ON bl.key = m.key AND bl.value = m.value) AS x
    WHERE x.av IS NOT NULL OR x.bv IS NOT NULL;
    cells := cqlpg.list_pack(cells, wt, v::text, coalesce(jsonb_array_length(v), 0));
END
$$;

-- list_key_at returns the key of the element at idx of a list's live
-- cells, raising Cassandra's errors for a bad index: setting (or, when
-- setting is false, deleting) needs the element.
CREATE FUNCTION cqlpg.list_key_at(cells jsonb, idx integer, setting boolean)
RETURNS text LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    n integer := (SELECT count(*) FROM jsonb_object_keys(cells->'l'));
BEGIN
    IF idx IS NULL THEN
        RAISE EXCEPTION 'Invalid null value for list index' USING ERRCODE = '22023';
    END IF;
    IF n = 0 AND setting THEN
        RAISE EXCEPTION 'Attempted to set an element on a list which is null' USING ERRCODE = '22023';
    ELSIF n = 0 THEN
        RAISE EXCEPTION 'Attempted to delete an element from a list which is null' USING ERRCODE = '22023';
    END IF;
    IF idx < 0 OR idx >= n THEN
        RAISE EXCEPTION 'List index % out of bound, list has size %', idx, n USING ERRCODE = '22023';
    END IF;
    RETURN (SELECT k FROM jsonb_object_keys(cells->'l') AS k ORDER BY k COLLATE "C" OFFSET idx LIMIT 1);
END
$$;

-- list_keys_of returns the keys of the elements of list v (with its
-- cells) found in items.
CREATE FUNCTION cqlpg.list_keys_of(v anycompatiblearray, cells jsonb, items anycompatiblearray)
RETURNS text[] LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT array_agg(k.k) FROM (SELECT k, row_number() OVER (ORDER BY k COLLATE "C") AS pos
                                 FROM jsonb_object_keys(cells->'l') AS k) AS k
    WHERE v[k.pos] = ANY(items)
$$;

CREATE FUNCTION cqlpg.jlist_keys_of(v jsonb, cells jsonb, items jsonb)
RETURNS text[] LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT array_agg(k.k) FROM (SELECT k, row_number() OVER (ORDER BY k COLLATE "C") AS pos
                                 FROM jsonb_object_keys(cells->'l') AS k) AS k
    WHERE v->(k.pos::integer - 1) IN (SELECT jsonb_array_elements(items))
$$;

-- set_merge, jset_merge and jmap_merge are list_merge for sets stored as
-- arrays, sets stored as jsonb, and maps.
CREATE FUNCTION cqlpg.set_merge(a anycompatiblearray, acells jsonb, b anycompatiblearray, bcells jsonb,
                                deleted bigint, wt bigint, OUT v anycompatiblearray, OUT cells jsonb)
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
    cells := cqlpg.cells_merge(acells, bcells, deleted);
    v := cqlpg.set_live(a, b, cells);
    cells := cqlpg.cells_pack(cells, wt);
END
$$;

CREATE FUNCTION cqlpg.jset_merge(a jsonb, acells jsonb, b jsonb, bcells jsonb,
                                 deleted bigint, wt bigint, OUT v jsonb, OUT cells jsonb)
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
    cells := cqlpg.cells_merge(acells, bcells, deleted);
    v := cqlpg.jset_live(a, b, cells);
    cells := cqlpg.cells_pack(cells, wt);
END
$$;

CREATE FUNCTION cqlpg.jmap_merge(a jsonb, acells jsonb, b jsonb, bcells jsonb,
                                 deleted bigint, wt bigint, OUT v jsonb, OUT cells jsonb)
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
    cells := cqlpg.cells_merge(acells, bcells, deleted);
    v := cqlpg.jmap_live(a, acells, b, bcells, cells);
    cells := cqlpg.cells_pack(cells, wt);
END
$$;
