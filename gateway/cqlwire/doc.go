// Package cqlwire is the CQL native protocol's wire format, versions 3 to
// 5: frame headers and opcodes, v5 segments with their CRCs and LZ4,
// v3/v4 body compression, decoding of request bodies (query parameters,
// batches, values) and encoding of result bodies (rows metadata, prepared
// results, warnings, schema changes), and the pooled buffers frames
// travel in.
//
// It owns bytes, not meaning: it never touches a connection, a statement
// or a shard. It imports the standard library, the compression codecs,
// and translate and pgschema for the column specifications and types a
// result describes; nothing in the gateway. The gateway's connections
// read and write through it.
//
// Invariants: decoding never allocates a length the input has not proved
// (Decoder fails with ErrTruncated first); a buffer from GetBuffer goes
// back through PutBuffer once, by whoever owns it last; a frame written
// with AppendHeader is complete only after FinishFrame.
package cqlwire
