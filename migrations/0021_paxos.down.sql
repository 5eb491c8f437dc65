DROP FUNCTION IF EXISTS cqlpg.paxos_accept(uuid, bytea, bigint, bigint, bigint, bytea, bigint);
DROP FUNCTION IF EXISTS cqlpg.paxos_commit(uuid, bytea, bigint, bigint, bytea, bigint);
DROP FUNCTION IF EXISTS cqlpg.paxos_propose(uuid, bytea, bigint, bigint, bigint, bytea, bigint);
DROP FUNCTION IF EXISTS cqlpg.paxos_prepare(uuid, bytea, bigint, bigint, bigint, bigint);
DROP TABLE IF EXISTS cqlpg.paxos;
CREATE TABLE IF NOT EXISTS cqlpg.lwt_ballot (
    lock_key  bigint PRIMARY KEY,
    ballot    bigint NOT NULL
);
