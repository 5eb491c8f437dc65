-- Lightweight transactions run Cassandra's Paxos on a quorum of each
-- partition's replicas: the gateway proposes, and every replica is an
-- acceptor whose state for the partition is its row here, changed only by
-- the three statements below, each atomic under the row's lock and
-- committed before it answers.
--
-- A ballot is a time in microseconds and a random id. Ballots are ordered
-- by their time alone, as Cassandra orders them: two of one time are not
-- after each other, so a replica promises one of them at most. The id
-- tells the ballot a replica promised from another of the same time.
--
--   promised           the highest ballot promised or accepted
--   accepted, proposal the accepted proposal: its ballot, and its writes
--                      (NULL for an empty proposal, as a failed condition
--                      or a SERIAL read makes)
--   committed, commit  the most recent commit (its ballot and writes)
--   expires            when the state may be purged: the last ballot's
--                      time plus max(3 h, the table's gc_grace_seconds)
--
-- Writes are kept in the gateway's batch record format, so any gateway can
-- finish a proposal another left half done, without the parser or the
-- schema.
CREATE TABLE cqlpg.paxos (
    table_id    uuid   NOT NULL,
    key         bytea  NOT NULL,
    -- Partition keys run to 64 KiB, past what a B-tree entry holds: the
    -- state is keyed by the key's digest.
    digest      bytea  GENERATED ALWAYS AS (sha256(key)) STORED,
    token       bigint NOT NULL,
    promised    bigint NOT NULL DEFAULT 0,
    promised_id bigint NOT NULL DEFAULT 0,
    accepted    bigint,
    proposal    bytea,
    committed   bigint,
    commit      bytea,
    expires     bigint NOT NULL,
    PRIMARY KEY (table_id, digest)
);
CREATE INDEX paxos_token ON cqlpg.paxos (token);
CREATE INDEX paxos_expires ON cqlpg.paxos (expires);
COMMENT ON TABLE cqlpg.paxos IS 'Paxos acceptor state of the lightweight transactions of each partition this shard is a replica of.';

-- paxos_prepare promises ballot (p_ballot, p_id) unless the replica has
-- promised, accepted or committed one of the same time or later. It
-- answers whether it promised, the highest ballot time it had seen, and
-- its accepted proposal and most recent commit.
CREATE FUNCTION cqlpg.paxos_prepare(p_table uuid, p_key bytea, p_token bigint, p_ballot bigint, p_id bigint,
        p_expires bigint, OUT promised boolean, OUT seen bigint, OUT accepted bigint, OUT proposal bytea,
        OUT committed bigint, OUT commit bytea)
LANGUAGE plpgsql AS $$
DECLARE
    s cqlpg.paxos;
BEGIN
    INSERT INTO cqlpg.paxos (table_id, key, token, promised, promised_id, expires)
    VALUES (p_table, p_key, p_token, p_ballot, p_id, p_expires)
    ON CONFLICT (table_id, digest) DO NOTHING;
    IF FOUND THEN
        promised := true;
        seen := 0;
        RETURN;
    END IF;
    SELECT * INTO s FROM cqlpg.paxos WHERE table_id = p_table AND digest = sha256(p_key) FOR UPDATE;
    seen := GREATEST(s.promised, s.committed);
    promised := p_ballot > seen;
    IF promised THEN
        UPDATE cqlpg.paxos SET promised = p_ballot, promised_id = p_id, expires = GREATEST(expires, p_expires)
        WHERE table_id = p_table AND digest = sha256(p_key);
    END IF;
    accepted := s.accepted;
    proposal := s.proposal;
    committed := s.committed;
    commit := s.commit;
END $$;

-- paxos_propose accepts a proposal at ballot (p_ballot, p_id) if that is
-- the ballot the replica promised, or one later than any it has seen; it
-- answers whether it accepted.
CREATE FUNCTION cqlpg.paxos_propose(p_table uuid, p_key bytea, p_token bigint, p_ballot bigint, p_id bigint,
        p_proposal bytea, p_expires bigint) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
    s cqlpg.paxos;
BEGIN
    INSERT INTO cqlpg.paxos (table_id, key, token, promised, promised_id, accepted, proposal, expires)
    VALUES (p_table, p_key, p_token, p_ballot, p_id, p_ballot, p_proposal, p_expires)
    ON CONFLICT (table_id, digest) DO NOTHING;
    IF FOUND THEN
        RETURN true;
    END IF;
    SELECT * INTO s FROM cqlpg.paxos WHERE table_id = p_table AND digest = sha256(p_key) FOR UPDATE;
    IF (p_ballot = s.promised AND p_id = s.promised_id AND p_ballot > COALESCE(s.committed, 0))
            OR p_ballot > GREATEST(s.promised, s.committed) THEN
        UPDATE cqlpg.paxos SET promised = p_ballot, promised_id = p_id, accepted = p_ballot, proposal = p_proposal,
            expires = GREATEST(expires, p_expires)
        WHERE table_id = p_table AND digest = sha256(p_key);
        RETURN true;
    END IF;
    RETURN false;
END $$;

-- paxos_accept is paxos_propose for a partition this shard is the only
-- replica of, whose acceptance decides the proposal: it runs in one
-- transaction with the commit, and a refusal raises (SQLSTATE CQ001) so
-- that the commit does not apply.
CREATE FUNCTION cqlpg.paxos_accept(p_table uuid, p_key bytea, p_token bigint, p_ballot bigint, p_id bigint,
        p_proposal bytea, p_expires bigint) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF NOT cqlpg.paxos_propose(p_table, p_key, p_token, p_ballot, p_id, p_proposal, p_expires) THEN
        RAISE EXCEPTION 'Paxos proposal refused' USING ERRCODE = 'CQ001';
    END IF;
END $$;

-- paxos_commit records a commit, the replica's most recent unless it
-- knows a later one, and drops an accepted proposal it supersedes. The
-- commit's writes run beside it, in the same transaction; they are
-- timestamped, so applying an old commit again changes nothing.
CREATE FUNCTION cqlpg.paxos_commit(p_table uuid, p_key bytea, p_token bigint, p_ballot bigint, p_commit bytea,
        p_expires bigint) RETURNS void
LANGUAGE sql AS $$
    INSERT INTO cqlpg.paxos AS s (table_id, key, token, committed, commit, expires)
    VALUES (p_table, p_key, p_token, p_ballot, p_commit, p_expires)
    ON CONFLICT (table_id, digest) DO UPDATE SET
        committed = excluded.committed, commit = excluded.commit,
        accepted = CASE WHEN s.accepted <= excluded.committed THEN NULL ELSE s.accepted END,
        proposal = CASE WHEN s.accepted <= excluded.committed THEN NULL ELSE s.proposal END,
        expires = GREATEST(s.expires, excluded.expires)
    WHERE s.committed IS NULL OR s.committed < excluded.committed
$$;

-- The ballots of cqlpg.lwt_ballot, which serialized a partition's
-- conditional writes on its first replica, are the Paxos state's now.
DROP TABLE cqlpg.lwt_ballot;
