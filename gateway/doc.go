// Package gateway speaks the Cassandra native protocol (v3 to v5, with
// LZ4 or Snappy compression as STARTUP negotiates): it owns the server,
// its listeners and HTTP port, the client connections and their limits,
// logins, events, metrics and the one place errors become CQL error
// messages, and hands each request's statement to the executor.
//
// In: client connections and the shards' connection strings. Out: CQL
// responses, with rows read from and writes applied to the shards.
//
// Packages below it: exec (the executor: statements run on the shards,
// the statement cache, hints and the batch log), cqlwire (the wire
// format: frames, segments, compression, request decoding, result
// encoding), cluster (the shards, the ring and schema snapshots, schema
// changes on every shard, the registry of gateways), repair
// (anti-entropy and read repair, the sweeper), auth (logins and the
// permission check of every statement), certs (the listeners' TLS
// certificates, reloaded from their files) and webui (the web view,
// reading the gateway through webui.Backend). The gateway imports them,
// and translate, pgschema and sharding; they never import the gateway
// (TestLayering).
//
// A request's way: the connection's reader decodes the frame header (on
// v5, once the segment that carries the frame has passed its CRCs) and
// keeps the body as bytes. An EXECUTE of a point read from one replica or
// of a plain one-row write the reader binds and starts itself
// (exec.Env.BindExecute, exec.Execution.Start), and the shard pool's
// goroutine that finishes its op answers it through the connection's
// Answer. Every other request goes to a goroutine of its own, which
// decompresses and decodes it and runs it through the executor's entry
// for its message (exec.Env.QueryMessage, PrepareMessage, ExecuteMessage,
// BatchMessage; an EXECUTE the reader bound but could not start is run as
// bound). One writer goroutine per connection coalesces responses (on v5,
// into shared segments).
//
// Beside requests, the sweeper (repair.Sweeper) removes expired data and
// old tombstones from the shards in the background, in bounded batches;
// the executor's replayers finish LOGGED batches that a gateway left
// half-applied and deliver hints to replicas that are back; the registry
// (cluster.Registry) keeps the list of live gateways for system.peers;
// and its schema follower reloads the schema when another gateway changes
// it. The HTTP port serves health, metrics and the read-only web view
// (gateway/webui), whose key page reads each replica alone through the
// executor (exec.Env.ReadReplica).
//
// Invariants: errorMessage is the only place an error becomes a CQL error
// message; a panic in a request is answered as a server error and never
// ends the process; a connection answers every request it admitted, once,
// and gives back its place in the limits when it does (limits.go).
package gateway
