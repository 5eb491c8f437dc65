DROP FUNCTION cqlpg.uuid_order, cqlpg.timeuuid_order, cqlpg.inet_order;
