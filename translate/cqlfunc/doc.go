// Package cqlfunc is Cassandra 4.1's native function library as it runs
// at execution time: the scalar functions (time and uuid functions,
// blobAs/AsBlob conversions, toJson and fromJson, floor, casts) and the
// aggregates (count, min, max, sum, avg), each pure Go over CQL-serialized
// values with Cassandra's arithmetic and error texts.
//
// Which overload a call names is the planner's business (translate's
// overload resolution, which reads Natives and Aggregates); this package
// only declares the overloads and evaluates them. It imports pgschema for
// types and values, never translate, which imports it. Functions keep no
// state between calls; an aggregate keeps its group's in the
// AggregateState its New returns.
package cqlfunc
