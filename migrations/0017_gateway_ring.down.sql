ALTER TABLE cqlpg.gateways DROP COLUMN IF EXISTS ring_version;
