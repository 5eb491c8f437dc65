-- Changes to non-frozen collections and user types, as UPDATE and DELETE
-- make them: append, prepend, add, remove, put, set and delete by index,
-- key or field. Lists and sets of scalars are arrays; other collections and
-- user types are jsonb (arrays for lists and sets, objects keyed by the map
-- key's JSON text or the field's name for maps and user types).
--
-- Each function takes the stored live value first (null when there is
-- none) and returns the new value, null when it is empty: Cassandra has no
-- empty non-frozen collection. Failures are raised with Cassandra's text
-- and SQLSTATE 22023, which cqlpg returns to the client as Invalid.

-- change_applies reports whether a change written at new_wt applies to a
-- stored cell: unless the cell or its row was deleted at or after new_wt.
-- A null new_wt means the statement leaves the cell alone (an unset value).
CREATE FUNCTION cqlpg.change_applies(new_wt bigint, old_wt bigint, old_null boolean, deleted_wt bigint)
RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT new_wt IS NOT NULL
       AND (deleted_wt IS NULL OR new_wt > deleted_wt)
       AND NOT (old_null AND old_wt IS NOT NULL AND old_wt >= new_wt)
$$;

-- fail_if raises message when cond holds; it checks what a statement can
-- only know once it has written, such as setting an element of a list in a
-- row that did not exist.
CREATE FUNCTION cqlpg.fail_if(cond boolean, message text)
RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    IF cond THEN
        RAISE EXCEPTION '%', message USING ERRCODE = '22023';
    END IF;
    RETURN false;
END
$$;

-- Arrays: lists and sets of scalars.

CREATE FUNCTION cqlpg.list_append(list anycompatiblearray, items anycompatiblearray)
RETURNS anycompatiblearray LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT NULLIF(list || items, '{}')
$$;

CREATE FUNCTION cqlpg.list_prepend(list anycompatiblearray, items anycompatiblearray)
RETURNS anycompatiblearray LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT NULLIF(items || list, '{}')
$$;

-- collection_remove drops every element of list (or set) found in items,
-- keeping the order of the rest.
CREATE FUNCTION cqlpg.collection_remove(list anycompatiblearray, items anycompatiblearray)
RETURNS anycompatiblearray LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT NULLIF(ARRAY(SELECT e FROM unnest(list) WITH ORDINALITY AS u(e, n)
                        WHERE e <> ALL(coalesce(items, '{}')) ORDER BY n), '{}')
$$;

-- set_add returns the union of a set and items, sorted and without repeats.
CREATE FUNCTION cqlpg.set_add(set anycompatiblearray, items anycompatiblearray)
RETURNS anycompatiblearray LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT NULLIF(ARRAY(SELECT DISTINCT e FROM unnest(set || items) AS u(e) ORDER BY e), '{}')
$$;

CREATE FUNCTION cqlpg.list_set(list anycompatiblearray, idx integer, val anycompatible)
RETURNS anycompatiblearray LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    n integer := coalesce(cardinality(list), 0);
BEGIN
    IF idx IS NULL THEN
        RAISE EXCEPTION 'Invalid null value for list index' USING ERRCODE = '22023';
    END IF;
    IF n = 0 THEN
        RAISE EXCEPTION 'Attempted to set an element on a list which is null' USING ERRCODE = '22023';
    END IF;
    IF idx < 0 OR idx >= n THEN
        RAISE EXCEPTION 'List index % out of bound, list has size %', idx, n USING ERRCODE = '22023';
    END IF;
    IF val IS NULL THEN
        RETURN NULLIF(list[1:idx] || list[idx + 2:n], '{}');
    END IF;
    list[idx + 1] := val;
    RETURN list;
END
$$;

CREATE FUNCTION cqlpg.list_delete(list anycompatiblearray, idx integer)
RETURNS anycompatiblearray LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    n integer := coalesce(cardinality(list), 0);
BEGIN
    IF idx IS NULL THEN
        RAISE EXCEPTION 'Invalid null value for list index' USING ERRCODE = '22023';
    END IF;
    IF n = 0 THEN
        RAISE EXCEPTION 'Attempted to delete an element from a list which is null' USING ERRCODE = '22023';
    END IF;
    IF idx < 0 OR idx >= n THEN
        RAISE EXCEPTION 'List index % out of bound, list has size %', idx, n USING ERRCODE = '22023';
    END IF;
    RETURN NULLIF(list[1:idx] || list[idx + 2:n], '{}');
END
$$;

-- jsonb: lists and sets of anything else, maps, user types.

CREATE FUNCTION cqlpg.jlist_append(list jsonb, items jsonb)
RETURNS jsonb LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT NULLIF(coalesce(list, '[]') || coalesce(items, '[]'), '[]')
$$;

CREATE FUNCTION cqlpg.jlist_prepend(list jsonb, items jsonb)
RETURNS jsonb LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT NULLIF(coalesce(items, '[]') || coalesce(list, '[]'), '[]')
$$;

CREATE FUNCTION cqlpg.jcollection_remove(list jsonb, items jsonb)
RETURNS jsonb LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT jsonb_agg(e ORDER BY n) FROM jsonb_array_elements(list) WITH ORDINALITY AS u(e, n)
    WHERE e NOT IN (SELECT jsonb_array_elements(items))
$$;

CREATE FUNCTION cqlpg.jset_add(set jsonb, items jsonb)
RETURNS jsonb LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT jsonb_agg(DISTINCT e ORDER BY e)
    FROM (SELECT jsonb_array_elements(set) UNION ALL SELECT jsonb_array_elements(items)) AS u(e)
$$;

CREATE FUNCTION cqlpg.jlist_set(list jsonb, idx integer, val jsonb)
RETURNS jsonb LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    n integer := coalesce(jsonb_array_length(list), 0);
BEGIN
    IF idx IS NULL THEN
        RAISE EXCEPTION 'Invalid null value for list index' USING ERRCODE = '22023';
    END IF;
    IF n = 0 THEN
        RAISE EXCEPTION 'Attempted to set an element on a list which is null' USING ERRCODE = '22023';
    END IF;
    IF idx < 0 OR idx >= n THEN
        RAISE EXCEPTION 'List index % out of bound, list has size %', idx, n USING ERRCODE = '22023';
    END IF;
    IF val IS NULL THEN
        RETURN NULLIF(list - idx, '[]');
    END IF;
    RETURN jsonb_set(list, ARRAY[idx::text], val);
END
$$;

CREATE FUNCTION cqlpg.jlist_delete(list jsonb, idx integer)
RETURNS jsonb LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    n integer := coalesce(jsonb_array_length(list), 0);
BEGIN
    IF idx IS NULL THEN
        RAISE EXCEPTION 'Invalid null value for list index' USING ERRCODE = '22023';
    END IF;
    IF n = 0 THEN
        RAISE EXCEPTION 'Attempted to delete an element from a list which is null' USING ERRCODE = '22023';
    END IF;
    IF idx < 0 OR idx >= n THEN
        RAISE EXCEPTION 'List index % out of bound, list has size %', idx, n USING ERRCODE = '22023';
    END IF;
    RETURN NULLIF(list - idx, '[]');
END
$$;

-- jmap_put merges entries into a map (or fields into a user type).
CREATE FUNCTION cqlpg.jmap_put(map jsonb, entries jsonb)
RETURNS jsonb LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT NULLIF(coalesce(map, '{}') || coalesce(entries, '{}'), '{}')
$$;

-- jmap_remove drops the entries of the given keys.
CREATE FUNCTION cqlpg.jmap_remove(map jsonb, keys text[])
RETURNS jsonb LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT NULLIF(map - coalesce(keys, '{}'), '{}')
$$;

-- jmap_set sets one entry of a map or field of a user type, or removes it
-- when val is null.
CREATE FUNCTION cqlpg.jmap_set(map jsonb, key text, val jsonb)
RETURNS jsonb LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    IF key IS NULL THEN
        RAISE EXCEPTION 'Invalid null map key' USING ERRCODE = '22023';
    END IF;
    IF val IS NULL THEN
        RETURN NULLIF(map - key, '{}');
    END IF;
    RETURN coalesce(map, '{}') || jsonb_build_object(key, val);
END
$$;
