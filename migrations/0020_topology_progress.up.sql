-- The progress of the streaming of the topology operation that ran last,
-- written by the command that runs it, for every gateway's /metrics.
CREATE TABLE cqlpg.topology_progress (
    only_row     boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    operation    text NOT NULL,
    ranges_total bigint NOT NULL,
    ranges_done  bigint NOT NULL,
    rows         bigint NOT NULL,
    bytes        bigint NOT NULL,
    started_at   timestamptz NOT NULL,
    updated_at   timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE cqlpg.topology_progress IS 'Streaming progress of the last topology operation (cqlpg shard ...), as its command reports it.';
