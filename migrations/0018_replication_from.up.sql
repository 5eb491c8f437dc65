-- While a keyspace's replication changes and the replicas it gains
-- receive their data, the replication reads still use.
ALTER TABLE cqlpg.keyspaces ADD COLUMN replication_from jsonb;
COMMENT ON COLUMN cqlpg.keyspaces.replication_from IS 'Set while a replication change streams: reads use these replicas, writes also reach those of replication. Cleared once the new replicas hold the data.';
