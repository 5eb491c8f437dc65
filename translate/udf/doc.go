// Package udf runs the Java bodies of Cassandra user-defined functions
// (CREATE FUNCTION ... LANGUAGE java AS '<body>') without Java: it parses
// a body as the statements of the method Cassandra generates around it,
// checks its types as the Java compiler would, and interprets it.
//
// What goes in: a function's parameters (names and CQL types), its CQL
// return type and its body; then, per call, the arguments in their CQL
// serialization (native protocol v4, nil for null). What comes out: the
// result in the same serialization, or a *Failure carrying the Java
// exception the body threw, worded as Cassandra words it, or a *Timeout
// when the call ran out of its Budget. A body that does not compile, or
// that uses Java outside the subset the interpreter runs, fails at
// Compile with a *CompileError worded as Cassandra's "Java source
// compilation failed" message.
//
// The subset is what user function bodies use in practice: locals of the
// primitive types and of the classes Cassandra maps CQL types to
// (Integer, String, BigDecimal, List, Map, TupleValue, UDTValue...),
// Java's operators with its promotions and boxing, if, loops, switch,
// break and continue, try/catch/finally and throw, arrays, and the methods
// of String, StringBuilder, Math, the boxes, BigDecimal, BigInteger, the
// collections and the driver's value classes. Class declarations,
// lambdas, threads, reflection, I/O and the like are refused by name.
//
// Invariants: Compile parses and checks once, and resolves every variable
// to a slot, every method to its implementation; Call never parses. A
// Func is immutable and safe for concurrent calls. A call cannot run past
// its steps or time, allocate past its memory budget, or recurse deeper
// than the body's nesting, which Compile bounds: a hostile body can fail,
// but not take the process down.
package udf
