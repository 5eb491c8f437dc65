DROP FUNCTION IF EXISTS cqlpg.cells_purgeable(jsonb, bigint);
DROP FUNCTION IF EXISTS cqlpg.cells_purge(jsonb, bigint);
