// Package cluster is the gateway's view of its shards: their control
// pools for the catalog and schema changes, their data pools, the token
// ring and the schema, the last two as snapshots swapped atomically.
//
// Open migrates each shard's catalog, takes the ring from the members the
// shards record (members.go: the cluster's first start records the shards
// given; later, members not given are reached at their recorded
// addresses, and shards given that are not members are left out) and
// loads the schema. ApplySchema runs a schema change on every shard under
// the shard's schema lock and notifies the other gateways once it has
// committed everywhere (SchemaChannel); Reload and SwapSchema replace the
// schema snapshot from the first shard that answers.
//
// The Registry is the gateway's entry in cqlpg.gateways: it registers the
// gateway on every shard, keeps the set of live gateways system.peers
// lists, and follows the schema changes other gateways make (LISTEN on
// one shard, with a periodic version check), telling the gateway through
// its hooks.
//
// It imports pgschema, sharding and migrations, never the gateway or its
// other packages; the gateway, repair and the tools import it. Readers
// take Topology and Schema once per request and keep what they took: a
// snapshot never changes once published.
package cluster
