-- The gateways serving CQL on these shards. A gateway writes its row on
-- every shard when it starts and again at every heartbeat, and deletes it
-- when it shuts down; one whose heartbeat is recent on any shard counts as
-- alive. Each gateway lists the other alive ones in system.peers and splits
-- the ring's tokens with them, so that a driver connected to one gateway
-- finds and uses all of them. Heartbeats are stamped with the shard's
-- clock and aged by it too, so the gateways' clocks need not agree.
CREATE TABLE cqlpg.gateways (
    host_id          uuid PRIMARY KEY,
    -- Random for each run of a gateway: a row whose instance changes under
    -- a running gateway means two gateways claim one host id.
    instance         uuid NOT NULL,
    -- Where clients reach the gateway's CQL listener.
    rpc_address      inet NOT NULL,
    rpc_port         integer NOT NULL,
    datacenter       text NOT NULL,
    rack             text NOT NULL,
    release_version  text NOT NULL,
    -- The schema version the gateway serves, for the drivers' schema
    -- agreement.
    schema_version   uuid NOT NULL,
    started_at       timestamptz NOT NULL,
    heartbeat        timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE cqlpg.gateways IS 'The gateways on these shards, with their CQL addresses and last heartbeats; system.peers lists the alive ones.';
