-- While a topology operation copies counter tables to the shards that gain
-- their ranges, counter writes to those ranges wait: a counter holds its
-- total only, which cannot be merged with increments that reached the new
-- shard meanwhile.
ALTER TABLE cqlpg.ring_version ADD COLUMN counters_frozen boolean NOT NULL DEFAULT false;
COMMENT ON COLUMN cqlpg.ring_version.counters_frozen IS 'True while a topology operation copies counters: gateways hold counter writes to the ranges that move.';
