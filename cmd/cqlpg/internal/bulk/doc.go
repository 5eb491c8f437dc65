// Package bulk loads CSV files into cqlpg tables and unloads tables into
// CSV files, in the format cqlsh's COPY writes, straight on the shards.
//
// A load stages rows with COPY in a temporary table on every replica of
// their partitions and applies each batch with one statement per table
// part that reconciles cells exactly as a gateway INSERT naming the file's
// columns does (cqlpg.cell_wins, the row marker, recorded deletions), so
// a load at a timestamp equals those INSERTs at it, and applying a batch
// twice changes nothing. An unload reads each token range once, from one
// live replica, with the visibility rules of a gateway read.
package bulk
