-- Hints. A write that a replica missed, because the replica was down or
-- did not answer in time, is kept here, on a shard that is up, until the
-- replica is back; then any gateway replays it there and deletes it.
-- Replaying is harmless when the write did arrive after all: each cell
-- keeps its write time and the replica reconciles by Cassandra's rules.
CREATE TABLE cqlpg.hints (
    -- The host id of the shard the write is for.
    target        uuid NOT NULL,
    id            bigint GENERATED ALWAYS AS IDENTITY,
    written_at    timestamptz NOT NULL DEFAULT now(),
    -- After this time a replay could revive data whose tombstones have
    -- been purged (the table's gc_grace_seconds), so the hint is dropped
    -- instead, and only a repair brings the replica up to date.
    replay_until  timestamptz NOT NULL,
    -- The write, as the SQL statements and binary parameters the gateway
    -- sent, in the batch log's record format.
    mutation      bytea NOT NULL,
    PRIMARY KEY (target, id)
);
COMMENT ON TABLE cqlpg.hints IS 'Writes a replica missed, replayed to it by any gateway once it is back.';
