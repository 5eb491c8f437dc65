// Package histories checks what clients observe of a cqlpg cluster under
// injected faults, as Jepsen does: concurrent clients record the
// operations they invoke and how each ended, a nemesis injects faults on a
// schedule, and checkers judge the histories afterwards.
//
// In: histories of events (invoke, then ok, fail or info) with times from
// one monotonic clock. Out: a verdict per workload, and on a violation the
// history as JSON lines and, for registers, Porcupine's visualization.
//
// The package's tests run it all: three throwaway PostgreSQL shards at
// RF 3, two gateways as processes of their own (the test binary run
// again) so that one can be killed with SIGKILL, each reaching each shard
// through a fault-injecting proxy of its own (toxiproxy used as a
// library), and clients through unmodified gocql. -histories.duration
// sets how long the workloads run (30 s in the suite), -histories.faults
// which faults the nemesis injects (every one by default), and
// -histories.artifacts where histories are kept. A long run:
//
//	go test ./gateway/histories -run 'TestHistories$' -v -timeout 1h \
//		-histories.duration=10m -histories.artifacts=DIR
//
// -histories.quorum-lwt (on by default) fails a history in which a
// lightweight transaction was answered Unavailable while a fault took one
// shard of three away (nemesis_test.go: oneShardDown), as Paxos on a
// quorum must never answer; -histories.bank-quorum (on by default) reads
// the bank at QUORUM too.
//
// Invariants of the histories: a process has at most one operation in
// flight; a process whose operation ended info (outcome unknown) never
// invokes again, its client goes on under a new process id; an info
// operation may have taken effect at any time after its invocation, so
// the register model lets it return at the end of the history and apply
// or not (register.go). A fail is an operation known to have had no
// effect: [applied]=false, Unavailable, a refusal before any replica was
// asked.
package histories
