ALTER TABLE cqlpg.gateways DROP COLUMN IF EXISTS dual_writes_from;
