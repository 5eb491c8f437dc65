package translate

import (
	"errors"
	"reflect"
	"sync"
	"testing"

	"github.com/cqlpg/cqlpg/translate/cqlfunc"
)

// The fuzz targets here feed the scanner, the parser and the planner any
// text a client could send as CQL. Their seed corpora, in testdata/fuzz,
// hold the statements of the golden files and of the documentation
// examples the gateway is checked against.

// FuzzParse checks that Parse returns a statement or a syntax or invalid
// request error, never panics, and that a statement that parses parses
// to the same statement with a comment and blanks after it.
func FuzzParse(f *testing.F) {
	f.Add("SELECT * FROM ks.t WHERE k = ? AND c > :c LIMIT 10;")
	f.Add("BEGIN UNLOGGED BATCH USING TIMESTAMP 5 INSERT INTO t (k) VALUES (0x01) APPLY BATCH")
	f.Fuzz(func(t *testing.T, cql string) {
		parsed, err := Parse(cql)
		if err != nil {
			var syntax *SyntaxError
			var invalid *InvalidError
			if !errors.As(err, &syntax) && !errors.As(err, &invalid) {
				t.Fatalf("%q: %T %v is neither a syntax error nor an invalid request", cql, err, err)
			}
			return
		}
		if parsed.Statement == nil {
			t.Fatalf("%q: no statement and no error", cql)
		}
		again, err := Parse(cql + " /* after */\n\t")
		if err != nil {
			t.Fatalf("%q parses, but not with a comment after it: %v", cql, err)
		}
		if !reflect.DeepEqual(parsed, again) {
			t.Fatalf("%q parses to %#v, with a comment after it to %#v", cql, parsed.Statement, again.Statement)
		}
	})
}

// fuzzSchema is the golden files' schema, built once: planning never
// changes a schema, it only describes changes.
var fuzzSchema = sync.OnceValues(goldenSchema)

// FuzzPrepare checks that a statement that parses is planned against the
// golden schema or refused with a typed error, never a panic.
func FuzzPrepare(f *testing.F) {
	f.Add("SELECT v FROM kv WHERE k IN (1, 2) ORDER BY c DESC", "testks")
	f.Fuzz(func(t *testing.T, cql, keyspace string) {
		schema, err := fuzzSchema()
		if err != nil {
			t.Fatal(err)
		}
		parsed, err := Parse(cql)
		if err != nil {
			return
		}
		plan, err := Prepare(parsed, keyspace, schema)
		if err != nil {
			if !typedError(err) {
				t.Fatalf("%q: %T %v is not a typed CQL error", cql, err, err)
			}
			return
		}
		if plan == nil {
			t.Fatalf("%q: no plan and no error", cql)
		}
	})
}

// typedError reports whether err is one of the errors the gateway answers
// with its own CQL error code.
func typedError(err error) bool {
	var (
		syntax  *SyntaxError
		invalid *InvalidError
		config  *ConfigError
		exists  *AlreadyExistsError
		unauth  *UnauthorizedError
		fn      *cqlfunc.FunctionFailureError
	)
	return errors.As(err, &syntax) || errors.As(err, &invalid) || errors.As(err, &config) ||
		errors.As(err, &exists) || errors.As(err, &unauth) || errors.As(err, &fn)
}
