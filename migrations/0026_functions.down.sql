DROP TABLE IF EXISTS cqlpg.aggregates;
DROP TABLE IF EXISTS cqlpg.functions;
