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
// compilation failed" message. Compile is for CALLED ON NULL INPUT
// functions, CompileStrict for RETURNS NULL ON NULL INPUT ones, whose
// arguments Cassandra declares as primitives.
//
// The subset is what user function bodies use in practice: locals of the
// primitive types and of the classes Cassandra maps CQL types to
// (Integer, String, BigDecimal, List, Map, TupleValue, UDTValue...),
// Java's operators with its promotions and boxing, if, loops, switch,
// break and continue, try/catch/finally and throw, arrays, and the methods
// of String, StringBuilder, Math, the boxes, BigDecimal, BigInteger, the
// collections, UUID, Date, SimpleDateFormat, Random, ByteBuffer and the
// driver's value classes. Names resolve as in Cassandra's generated source, which
// imports java.util.* and the driver's classes but not java.math: a body
// writes java.math.BigDecimal. Class declarations, lambdas, method
// references, threads, reflection, I/O, System but for its clock, and the
// classes the library lacks are refused by name.
//
// Invariants: Compile parses and checks once, and resolves every variable
// to a slot, every method to its implementation; Call never parses. A
// Func is immutable and safe for concurrent calls. A call cannot run past
// its steps (methods that loop over collections spend a step per
// element) or time, allocate past its memory budget, compute with numbers
// of more than 300,000 digits, or recurse deeper than the body's nesting,
// which Compile bounds: a hostile body can fail, but not take the process
// down.
//
// Where the interpreter departs from Java (HotSpot 11, which Cassandra
// 4.1 runs on):
//
//   - == on two boxed numbers, UUIDs or Dates compares their values;
//     Java compares identities, which agree for small cached boxes only.
//     == on strings compares identities, with string constants interned.
//   - Map.keySet, values and entrySet, List.subList and Arrays.asList
//     return copies; the views refuse changes (Entry.setValue writes
//     through, as in Java). Set.of and Map.of iterate in insertion order.
//   - HashMap and HashSet iterate in Java's order, worked out from the
//     keys' Java hash codes; keys whose classes hash by identity in Java
//     (tuples, user types) keep insertion order.
//   - Math's sin, cos, tan, exp, log, log10 and pow are correctly rounded,
//     as HotSpot's intrinsics are but for rare ties; its other functions
//     are Go's, within an ulp of Java's. Double.toString prints the
//     shortest digits, as Java 19 does; Java 11 prints one more in rare
//     cases. Date.toString and SimpleDateFormat work in UTC, the only
//     zone TimeZone.getTimeZone gives. toUpperCase and toLowerCase map
//     characters one to one (no "ß" to "SS").
//   - Regular expressions are Go's (RE2): a back reference or lookaround
//     fails the call with UnsupportedOperationException.
//   - A compile error reports the first problem only; a missing return is
//     reported at the body's last line, where Cassandra reports it in the
//     generated source. Definite assignment ignores assignments in the
//     right operands of &&, || and ?:, refusing a few bodies Java accepts.
//   - Exceptions keep no cause; assert statements never run, as
//     assertions are disabled in Cassandra's JVM.
package udf
