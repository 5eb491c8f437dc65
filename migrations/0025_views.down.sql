DROP FUNCTION IF EXISTS cqlpg.view_cells_live(jsonb, integer);
DROP FUNCTION IF EXISTS cqlpg.view_cells_merge(jsonb, jsonb, bigint);
DROP TABLE IF EXISTS cqlpg.view_builds;
DROP TABLE IF EXISTS cqlpg.view_log;
DROP TABLE IF EXISTS cqlpg.views;
