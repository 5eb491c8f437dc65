// Package shellquote quotes words for a POSIX shell, for the commands
// cqlpg shows an operator to paste (psql on a shard, for one). It has no
// dependencies, so that the gateway's web view and the local Postgres
// launcher share it without importing each other.
//
// Invariant: a POSIX shell reads Quote's output back as the one word it
// was given.
package shellquote
