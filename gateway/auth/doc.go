// Package auth logs clients in and authorizes their statements, as a
// Cassandra 4.1 node does with PasswordAuthenticator and
// CassandraAuthorizer: SASL PLAIN logins checked against the roles in the
// shards' catalog, and a permission check of every statement from a
// cached copy of the role's grants.
//
// It owns the login state of each session (keyed by any comparable value
// its caller chooses: a client connection, or a web view request acting
// for a logged-in user), the remembered logins (keyed digests, never a
// password), the per-host limit on failed logins, and the cache of each
// role's access. It imports cqlwire for the messages it answers, cluster
// to read and change roles on the shards, and pgschema and translate for
// the catalog and the plans it checks; it never imports the gateway.
//
// Invariants: a nil *Authenticator means authentication is off and
// allows everything; a role or permission change through this gateway
// (Apply, Changed) invalidates every cached access at once, and the other
// gateways' within PermissionsValidity; error texts are Cassandra's.
package auth
