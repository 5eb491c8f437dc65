// Package webui is the gateway's read-only web view at /ui: the live
// ring, where a key's replicas are and what each holds, how a table is
// laid out in Postgres on each shard, and what an outage or a new shard
// would do. Pages are HTML rendered on the server from the templates in
// ui/, with inline SVG, and work without JavaScript.
//
// It reads the gateway through Backend (its shards, its logins, reads of
// one replica through the gateway's own path) and imports cluster,
// advise, pgschema, sharding and translate, never the gateway, which implements Backend and
// routes the pages. html/template escapes every name and value by the
// context it lands in, so hostile keyspace, table and value names are
// shown, never interpreted.
package webui
