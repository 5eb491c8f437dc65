ALTER TABLE cqlpg.ring_version DROP COLUMN IF EXISTS counters_frozen;
