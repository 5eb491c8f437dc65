// Package localpg creates, starts and stops local PostgreSQL clusters with the
// machine's PostgreSQL server binaries.
//
// cqlpg uses it for the managed local shards of `cqlpg serve` (clusters kept
// under --data-dir and reused across restarts) and for throwaway clusters in
// test suites. A cluster listens only on 127.0.0.1 and on a unix socket in a
// directory only its owner can reach, which is why trust authentication is
// acceptable.
//
// PostgreSQL refuses to run as root, so when the calling process is root every
// PostgreSQL process runs as the OS user "postgres" and data directories are
// owned by that user.
//
// The package is Unix-only; Pause, Resume and Kill find the postmaster's
// children through /proc and therefore need Linux.
package localpg
