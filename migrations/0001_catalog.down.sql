DROP FUNCTION cqlpg.cell_wins;
DROP TABLE cqlpg.types, cqlpg.columns, cqlpg.tables, cqlpg.keyspaces, cqlpg.schema_version, cqlpg.node;
