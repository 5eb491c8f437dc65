-- The cluster's members: the same rows on every shard, so that any one
-- shard tells a gateway where all the others are and which tokens each
-- holds. Only the topology operations change them, on every member at
-- once, each change raising the ring version.

CREATE TABLE cqlpg.members (
    host_id     uuid PRIMARY KEY,
    name        text NOT NULL UNIQUE,
    -- where gateways reach the shard: its connection string without a
    -- password, which gateways add from their own
    address     text NOT NULL,
    datacenter  text NOT NULL,
    rack        text NOT NULL,
    tokens      bigint[] NOT NULL,
    state       text NOT NULL CHECK (state IN ('normal', 'joining', 'leaving')),
    -- the order shards joined the ring in, which numbers them the same
    -- way on every gateway
    position    integer NOT NULL UNIQUE,
    joined_at   timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE cqlpg.members IS
    'The shards of the cluster, the same rows on every shard: name, where to reach it, datacenter, rack, ring tokens, and state (normal, joining, leaving). Changed by cqlpg shard commands only.';

CREATE TABLE cqlpg.ring_version (
    only_row    boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    version     bigint NOT NULL,
    changed_at  timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE cqlpg.ring_version IS
    'The version of cqlpg.members, raised by every change of membership; gateways switch rings when it moves.';

-- The whole ring, as the members say: each range ends at a member's token
-- and starts at the token before it on the ring (the first wraps round to
-- the last).
CREATE OR REPLACE VIEW cqlpg.ring AS
SELECT m.name AS shard,
       m.host_id,
       m.datacenter,
       m.rack,
       coalesce(lag(t.token) OVER w, last_value(t.token) OVER (w ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)) AS start_token,
       t.token AS end_token
FROM cqlpg.members m, unnest(m.tokens) AS t(token)
WINDOW w AS (ORDER BY t.token);
COMMENT ON VIEW cqlpg.ring IS
    'The ring''s token ranges, (start_token, end_token], each with the shard whose token ends it: its name, host id, datacenter and rack.';
