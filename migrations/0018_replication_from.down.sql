ALTER TABLE cqlpg.keyspaces DROP COLUMN IF EXISTS replication_from;
