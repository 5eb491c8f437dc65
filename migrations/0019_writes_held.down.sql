ALTER TABLE cqlpg.ring_version DROP COLUMN IF EXISTS writes_held;
