-- The ring version each gateway serves, so that a topology operation can
-- wait until every live gateway has switched before its next step.
ALTER TABLE cqlpg.gateways ADD COLUMN ring_version bigint NOT NULL DEFAULT 0;
COMMENT ON COLUMN cqlpg.gateways.ring_version IS 'The ring version (cqlpg.ring_version) the gateway serves.';
