DROP VIEW cqlpg.role_list;
DROP VIEW cqlpg.hints_pending;
DROP VIEW cqlpg.ring;
DROP VIEW cqlpg.column_list;
DROP VIEW cqlpg.table_list;
DROP VIEW cqlpg.keyspace_list;
