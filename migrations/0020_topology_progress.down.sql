DROP TABLE IF EXISTS cqlpg.topology_progress;
