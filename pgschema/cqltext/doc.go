// Package cqltext reads and writes values in the text forms cqlsh prints
// and COPY ... TO writes: text as it is (quoted with ” escapes inside
// collections), booleans True/False, timestamps 2024-01-02
// 03:04:05.678000+0000, blobs 0x..., and collections, tuples and user
// types in CQL literal syntax ([1, 2], {'k': 1}, (1, 'x'), {f: 1}).
//
// Values go in and out as their CQL serialization (the native protocol's
// bytes), typed by pgschema.Type. Format followed by Parse gives back the
// same bytes for every value (sets and maps normalized as Cassandra stores
// them); the Table style formats with cqlsh's table conventions (floats
// to cqlsh's precision, control characters escaped), which are lossy.
package cqltext
