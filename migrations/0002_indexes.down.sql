DROP TABLE cqlpg.dropped_columns, cqlpg.indexes;
