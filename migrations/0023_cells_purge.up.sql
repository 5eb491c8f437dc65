-- cells_purge returns a collection's cells less the element removals
-- ("d") and the collection's deletion ("c") written before cutoff (µs),
-- which the table's gc_grace_seconds has passed: the sweeper purges them
-- as Cassandra's compaction purges tombstones. Null when nothing is
-- left, which with no live element is the same as an empty collection.
CREATE FUNCTION cqlpg.cells_purge(cells jsonb, cutoff bigint)
RETURNS jsonb LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT NULLIF(jsonb_strip_nulls(jsonb_build_object(
        'l', cells->'l',
        'k', cells->'k',
        'd', (SELECT jsonb_object_agg(key, value) FROM jsonb_each(cells->'d') WHERE value::bigint >= cutoff),
        'c', CASE WHEN (cells->>'c')::bigint >= cutoff THEN cells->'c' END)), '{}')
$$;

-- cells_purgeable reports whether cells_purge would drop something.
CREATE FUNCTION cqlpg.cells_purgeable(cells jsonb, cutoff bigint)
RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT coalesce((cells->>'c')::bigint < cutoff, false)
        OR EXISTS (SELECT FROM jsonb_each_text(cells->'d') AS e(k, w) WHERE w::bigint < cutoff)
$$;
