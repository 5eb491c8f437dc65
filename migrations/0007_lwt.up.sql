-- Lightweight transactions. A conditional write runs under a transaction
-- lock on its partition's first replica, and writes with a timestamp taken
-- there: the greater of that server's clock and one more than the last
-- timestamp a conditional write of the partition used, which this table
-- keeps, by the partition's lock key. Timestamps of one partition's
-- conditional writes therefore grow in the order the writes apply, whatever
-- the gateways' and clients' clocks say, as Cassandra's Paxos ballots do;
-- without that a write could apply and yet lose to the one before it.
CREATE TABLE cqlpg.lwt_ballot (
    lock_key  bigint PRIMARY KEY,
    ballot    bigint NOT NULL
);
COMMENT ON TABLE cqlpg.lwt_ballot IS 'The last write timestamp of the conditional writes of each partition, on its first replica.';
