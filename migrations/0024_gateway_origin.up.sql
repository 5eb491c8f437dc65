-- The origin cluster a gateway runs dual writes from (cqlpg serve
-- --origin), so that a copy of counter tables, which dual writes would
-- count twice, can refuse while any gateway runs them.
ALTER TABLE cqlpg.gateways ADD COLUMN dual_writes_from text;
COMMENT ON COLUMN cqlpg.gateways.dual_writes_from IS 'HOST:PORT of the origin the gateway writes to besides the shards (cqlpg serve --origin); NULL without dual writes.';
