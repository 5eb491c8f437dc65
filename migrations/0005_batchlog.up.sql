-- The batch log. A LOGGED batch whose writes span several partitions and
-- shards is recorded here, on two of the shards it writes to, before any of
-- its writes applies, and deleted once all of them have. A gateway that dies
-- in between leaves the record behind; every gateway replays the records
-- older than its batch log timeout, then deletes them, so that the batch
-- applies in full. Replaying is harmless: each cell keeps its write time and
-- replicas reconcile by Cassandra's rules, so a write applied twice at the
-- same timestamp changes nothing the second time. Counter batches, whose
-- writes are not idempotent, are never logged.
CREATE TABLE cqlpg.batchlog (
    id            uuid PRIMARY KEY,
    written_at    timestamptz NOT NULL DEFAULT now(),
    -- The host id of the gateway that wrote the record.
    gateway       uuid NOT NULL,
    -- After this time a replay could revive data whose tombstones have
    -- been purged (the smallest gc_grace_seconds of the batch's tables),
    -- so the record is dropped instead.
    replay_until  timestamptz NOT NULL,
    -- The writes, grouped by the shard (host id) that applies them, as the
    -- SQL statements and binary parameters the gateway sent; see the
    -- gateway's batchlog record format.
    mutations     bytea NOT NULL
);
COMMENT ON TABLE cqlpg.batchlog IS 'LOGGED batches being applied, replayed by any gateway when their writer does not finish them.';
