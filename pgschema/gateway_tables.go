package pgschema

// SQL of the catalog tables the gateways keep for themselves beside the
// schema (migrations 0005, 0007, 0008, 0009): the batch log, hints, the
// lightweight transactions' ballots and the gateways' registry. The
// gateway runs these statements; their text lives here, with the tables'.

// Batch log (cqlpg.batchlog).
const (
	// BatchlogDurableSQL makes the record's transaction wait for its
	// commit to be durable, whatever the shard's synchronous_commit.
	BatchlogDurableSQL = "SELECT set_config('synchronous_commit', 'on', true)"
	// BatchlogInsertSQL records a batch: id, gateway, seconds to replay
	// it within, and its mutations.
	BatchlogInsertSQL = "INSERT INTO cqlpg.batchlog (id, gateway, replay_until, mutations) " +
		"VALUES ($1, $2, now() + $3 * interval '1 second', $4)"
	// BatchlogDeleteSQL deletes a record once its batch applied, leaving
	// one a replay holds: the replay deletes it, and deleting never waits
	// for the replay to end.
	BatchlogDeleteSQL = "DELETE FROM cqlpg.batchlog WHERE id = " +
		"(SELECT id FROM cqlpg.batchlog WHERE id = $1 FOR UPDATE SKIP LOCKED)"
	// BatchlogReplaySQL takes the records older than $1 milliseconds, at
	// most $2, that no other replay holds: id, gateway, written_at,
	// whether its replay window has passed, and its mutations.
	BatchlogReplaySQL = "SELECT id, gateway, written_at, replay_until < now(), mutations FROM cqlpg.batchlog " +
		"WHERE written_at < now() - $1 * interval '1 millisecond' ORDER BY written_at LIMIT $2 FOR UPDATE SKIP LOCKED"
	// BatchlogDoneSQL deletes replayed records, in the replay's
	// transaction.
	BatchlogDoneSQL = "DELETE FROM cqlpg.batchlog WHERE id = ANY($1::uuid[])"
	// BatchlogDoneElsewhereSQL deletes records replayed from another
	// shard's copy, leaving those a replay holds.
	BatchlogDoneElsewhereSQL = "DELETE FROM cqlpg.batchlog WHERE id IN " +
		"(SELECT id FROM cqlpg.batchlog WHERE id = ANY($1::uuid[]) FOR UPDATE SKIP LOCKED)"
)

// Hints (cqlpg.hints).
const (
	// HintInsertSQL stores a hint: the target's host id, seconds to
	// replay it within, and the mutation.
	HintInsertSQL = "INSERT INTO cqlpg.hints (target, replay_until, mutation) " +
		"VALUES ($1, now() + $2 * interval '1 second', $3)"
	// HintsPendingSQL counts the hints held, by target.
	HintsPendingSQL = "SELECT target, count(*) FROM cqlpg.hints GROUP BY target"
	// HintReplaySQL takes the oldest hints for target $1, at most $2, that
	// no other replay holds: id, whether its window has passed, mutation.
	HintReplaySQL = "SELECT id, replay_until < now(), mutation FROM cqlpg.hints " +
		"WHERE target = $1 ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED"
	// HintDoneSQL deletes replayed hints of target $1.
	HintDoneSQL = "DELETE FROM cqlpg.hints WHERE target = $1 AND id = ANY($2)"
)

// Lightweight transactions: each replica's Paxos acceptor state
// (cqlpg.paxos, whose migration states the rules). The arguments are the
// table's id, the partition key, its token, the ballot's time and id, and
// the time, in microseconds, after which the state may be purged.
const (
	// PaxosPrepareSQL promises a ballot: promised, seen, accepted,
	// proposal, committed, commit.
	PaxosPrepareSQL = "SELECT * FROM cqlpg.paxos_prepare($1, $2, $3, $4, $5, $6)"
	// PaxosProposeSQL offers a proposal ($6, NULL for an empty one) and
	// returns whether it was accepted.
	PaxosProposeSQL = "SELECT cqlpg.paxos_propose($1, $2, $3, $4, $5, $6, $7)"
	// PaxosAcceptSQL is PaxosProposeSQL for a partition's only replica,
	// run in one transaction with the commit: a refusal raises
	// PaxosRefused.
	PaxosAcceptSQL = "SELECT cqlpg.paxos_accept($1, $2, $3, $4, $5, $6, $7)"
	// PaxosRefused is the SQLSTATE of a proposal PaxosAcceptSQL refused.
	PaxosRefused = "CQ001"
	// PaxosCommitSQL records a commit at ballot time $4 whose writes are
	// $5; the writes themselves run beside it.
	PaxosCommitSQL = "SELECT cqlpg.paxos_commit($1, $2, $3, $4, $5, $6)"
)

// The gateways' registry (cqlpg.gateways). The heartbeat upsert reports
// the instance the row held before, to tell another gateway claiming the
// same host id.
const (
	GatewayRegisterSQL = `WITH prev AS (SELECT instance FROM cqlpg.gateways WHERE host_id = $1)
INSERT INTO cqlpg.gateways (host_id, instance, rpc_address, rpc_port, datacenter, rack,
	release_version, schema_version, started_at, ring_version, dual_writes_from, heartbeat)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, NULLIF($11, ''), now())
ON CONFLICT (host_id) DO UPDATE SET instance = excluded.instance, rpc_address = excluded.rpc_address,
	rpc_port = excluded.rpc_port, datacenter = excluded.datacenter, rack = excluded.rack,
	release_version = excluded.release_version, schema_version = excluded.schema_version,
	started_at = excluded.started_at, ring_version = excluded.ring_version,
	dual_writes_from = excluded.dual_writes_from, heartbeat = now()
RETURNING (SELECT instance FROM prev)`
	// GatewaysBehindSQL lists the gateways heard of within $1 seconds that
	// serve a ring version older than $2.
	GatewaysBehindSQL = `SELECT host(rpc_address) || ':' || rpc_port, ring_version FROM cqlpg.gateways
WHERE heartbeat > now() - make_interval(secs => $1) AND ring_version < $2 ORDER BY 1`
	// GatewaysAliveSQL lists the other gateways ($2 is this one) heard of
	// within $1 seconds, with the seconds since their heartbeat.
	GatewaysAliveSQL = `SELECT host_id, rpc_address, rpc_port, datacenter, rack, release_version, schema_version,
	extract(epoch FROM now() - heartbeat)::float8
FROM cqlpg.gateways WHERE heartbeat > now() - make_interval(secs => $1) AND host_id <> $2`
	// GatewaysDualWritingSQL lists the gateways heard of within $1
	// seconds that run dual writes, with their origins.
	GatewaysDualWritingSQL = `SELECT host(rpc_address) || ':' || rpc_port, dual_writes_from FROM cqlpg.gateways
WHERE heartbeat > now() - make_interval(secs => $1) AND dual_writes_from IS NOT NULL ORDER BY 1`
	// GatewaysForgetSQL drops gateways silent for $1 seconds.
	GatewaysForgetSQL = `DELETE FROM cqlpg.gateways WHERE heartbeat < now() - make_interval(secs => $1)`
	// GatewayDeregisterSQL removes this gateway's row, unless another
	// instance has claimed its host id since.
	GatewayDeregisterSQL = `DELETE FROM cqlpg.gateways WHERE host_id = $1 AND instance = $2`
)
