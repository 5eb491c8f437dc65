package translate

// DescribeKind says what a DESCRIBE statement describes.
type DescribeKind uint8

// DESCRIBE forms. The plural forms list names; the others give the CQL
// that creates the elements.
const (
	DescribeSchema     DescribeKind = iota // [FULL] SCHEMA
	DescribeKeyspaces                      // KEYSPACES
	DescribeKeyspace                       // [ONLY] KEYSPACE [ks]
	DescribeTables                         // TABLES
	DescribeTable                          // TABLE|COLUMNFAMILY [ks.]t
	DescribeTypes                          // TYPES
	DescribeType                           // TYPE [ks.]t
	DescribeFunctions                      // FUNCTIONS
	DescribeFunction                       // FUNCTION [ks.]f
	DescribeAggregates                     // AGGREGATES
	DescribeAggregate                      // AGGREGATE [ks.]a
	DescribeIndex                          // INDEX [ks.]i
	DescribeView                           // MATERIALIZED VIEW [ks.]v
	DescribeCluster                        // CLUSTER
	DescribeGeneric                        // [ks.]name: a keyspace, else a table, index or view
)

// IsListing reports whether the form lists names only (keyspace_name,
// type, name) rather than giving create statements.
func (k DescribeKind) IsListing() bool {
	switch k {
	case DescribeKeyspaces, DescribeTables, DescribeTypes, DescribeFunctions, DescribeAggregates:
		return true
	}
	return false
}

// DescribeStmt is DESCRIBE (or DESC). Keyspace and Name are the names the
// statement gives, either possibly empty.
type DescribeStmt struct {
	Kind           DescribeKind
	Keyspace, Name string
	// Full is DESCRIBE FULL SCHEMA, which includes the system keyspaces;
	// Only is DESCRIBE ONLY KEYSPACE, without the keyspace's elements.
	Full, Only bool
	// Internals is WITH INTERNALS: table ids and dropped columns.
	Internals bool
}

func (*DescribeStmt) statement() {}
