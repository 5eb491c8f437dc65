-- The last step of a movement holds the writes that must not run on two
-- rings at once: counter updates (a counter holds its total only, which
-- cannot be merged with increments that reached a new replica meanwhile)
-- and lightweight transactions (which lock the partition on its first
-- replica, which the movement may change). Gateways hold them while the
-- ring version records it, until the ring after the movement.
ALTER TABLE cqlpg.ring_version ADD COLUMN writes_held boolean NOT NULL DEFAULT false;
COMMENT ON COLUMN cqlpg.ring_version.writes_held IS 'True in the last step of a topology operation: gateways hold counter updates and lightweight transactions until the ring after it.';
