package gateway_test

import (
	"encoding/binary"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
	"github.com/gocql/gocql"

	"github.com/cqlpg/cqlpg/sharding"
)

// The rule tests check Cassandra's statement validation (reference §1)
// end to end: every refusal with its code and exact text, and next to each
// rule the nearby statements Cassandra accepts, with the rows they return.

// filtering is Cassandra's ALLOW FILTERING refusal.
const filtering = "Cannot execute this query as it might involve data filtering and thus may have " +
	"unpredictable performance. If you want to execute this query despite the performance " +
	"unpredictability, use ALLOW FILTERING"

var (
	rulesOnce sync.Once
	rulesErr  error
)

// rulesSession returns a session on the keyspace the rule tests share,
// creating its tables and rows on first use.
func rulesSession(t *testing.T) *gocql.Session {
	t.Helper()
	rulesOnce.Do(func() {
		sess, err := clusterConfig(gw, "").CreateSession()
		if err != nil {
			rulesErr = err
			return
		}
		defer sess.Close()
		stmts := []string{
			"CREATE KEYSPACE rules WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
			`CREATE KEYSPACE "Rules" WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`,
			"CREATE TABLE rules.t (k int, c1 int, c2 int, v int, s int static, PRIMARY KEY (k, c1, c2))",
			"CREATE TABLE rules.w (k int, c1 int, c2 int, v int, s int static, PRIMARY KEY (k, c1, c2))",
			"CREATE TABLE rules.pk2 (a int, b int, c int, v int, PRIMARY KEY ((a, b), c))",
			"CREATE TABLE rules.t3 (k int, c1 int, c2 int, c3 int, PRIMARY KEY (k, c1, c2, c3))",
			"CREATE TABLE rules.ctr (k int, c int, n counter, PRIMARY KEY (k, c))",
			"CREATE TABLE rules.idx (k int, c int, v int, w int, PRIMARY KEY (k, c))",
			"CREATE INDEX ON rules.idx (v)",
			"CREATE TABLE rules.rev (k int, c1 int, c2 int, PRIMARY KEY (k, c1, c2)) WITH CLUSTERING ORDER BY (c1 ASC, c2 DESC)",
			"CREATE TABLE rules.lits (k int PRIMARY KEY, i int, b bigint, f float, u uuid, bo boolean, bl blob, du duration, " +
				"tx text, l list<int>, st set<int>, m map<int, text>)",
			"CREATE TABLE rules.tk (k text PRIMARY KEY, v int)",
			"CREATE TABLE rules.longttl (k int PRIMARY KEY, v int) WITH default_time_to_live = 500000000",
			`CREATE TABLE rules."Mixed" ("Key" int PRIMARY KEY, "odd col" int)`,
			`CREATE TABLE "Rules".t (k int PRIMARY KEY)`,
			"INSERT INTO rules.pk2 (a, b, c, v) VALUES (1, 1, 1, 11)",
			"INSERT INTO rules.pk2 (a, b, c, v) VALUES (1, 2, 1, 12)",
			"INSERT INTO rules.pk2 (a, b, c, v) VALUES (2, 1, 1, 21)",
			"INSERT INTO rules.idx (k, c, v, w) VALUES (1, 1, 7, 1)",
			"INSERT INTO rules.idx (k, c, v, w) VALUES (1, 2, 8, 1)",
			"INSERT INTO rules.idx (k, c, v, w) VALUES (2, 1, 7, 2)",
			"INSERT INTO rules.rev (k, c1, c2) VALUES (1, 1, 1)",
			"INSERT INTO rules.rev (k, c1, c2) VALUES (1, 1, 2)",
			"INSERT INTO rules.rev (k, c1, c2) VALUES (1, 2, 1)",
			`INSERT INTO rules."Mixed" ("Key", "odd col") VALUES (1, 2)`,
		}
		// rules.t holds k, c1, c2 in {1, 2}, v = 100k + 10c1 + c2, s = k.
		for k := 1; k <= 2; k++ {
			for c1 := 1; c1 <= 2; c1++ {
				for c2 := 1; c2 <= 2; c2++ {
					stmts = append(stmts, fmt.Sprintf("INSERT INTO rules.t (k, c1, c2, v, s) VALUES (%d, %d, %d, %d, %d)",
						k, c1, c2, 100*k+10*c1+c2, k))
				}
			}
		}
		for _, s := range stmts {
			if err := sess.Query(s).Exec(); err != nil {
				rulesErr = fmt.Errorf("%s: %w", s, err)
				return
			}
		}
	})
	if rulesErr != nil {
		t.Fatal(rulesErr)
	}
	// Conditional writes answer with columns their prepared metadata does
	// not list; gocql reads them only when it asks for metadata.
	cfg := clusterConfig(gw, "rules")
	cfg.DisableSkipMetadata = true
	sess, err := cfg.CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sess.Close)
	return sess
}

// rawValue is a bound value sent as exactly these bytes, whatever the type
// of its marker.
type rawValue []byte

func (r rawValue) MarshalCQL(gocql.TypeInfo) ([]byte, error) { return r, nil }

// refusal is a statement Cassandra refuses, with the error it answers.
type refusal struct {
	stmt string
	args []any
	code int
	msg  string
	// noPaging sends the statement with paging off.
	noPaging bool
}

func runRefusals(t *testing.T, sess *gocql.Session, cases []refusal) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.stmt, func(t *testing.T) {
			_, err := queryRows(caseQuery(sess, tc.stmt, tc.args, tc.noPaging))
			requireCQLError(t, err, tc.code, tc.msg)
		})
	}
}

// acceptance is a statement Cassandra runs, with the rows it returns, each
// as its values separated by spaces; sorted compares them in any order.
type acceptance struct {
	stmt   string
	args   []any
	want   []string
	sorted bool
	// noPaging sends the statement with paging off.
	noPaging bool
}

func runAcceptances(t *testing.T, sess *gocql.Session, cases []acceptance) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.stmt, func(t *testing.T) {
			got, err := queryRows(caseQuery(sess, tc.stmt, tc.args, tc.noPaging))
			if err != nil {
				t.Fatal(err)
			}
			want := tc.want
			if tc.sorted {
				slices.Sort(got)
				want = slices.Sorted(slices.Values(want))
			}
			if !slices.Equal(got, want) {
				t.Fatalf("rows %q, want %q", got, want)
			}
		})
	}
}

// caseQuery is a case's statement with its values, paging off if noPaging.
func caseQuery(sess *gocql.Session, stmt string, args []any, noPaging bool) *gocql.Query {
	q := sess.Query(stmt, args...)
	if noPaging {
		q = q.PageSize(0)
	}
	return q
}

// queryRows runs a statement and renders its rows.
func queryRows(q *gocql.Query) ([]string, error) {
	iter := q.Iter()
	var out []string
	for {
		rd, err := iter.RowData()
		if err != nil {
			iter.Close()
			return nil, err
		}
		// Scanning into pointers to pointers tells nulls from zeros.
		ptrs := make([]reflect.Value, len(rd.Values))
		dest := make([]any, len(rd.Values))
		for i, v := range rd.Values {
			ptrs[i] = reflect.New(reflect.TypeOf(v))
			dest[i] = ptrs[i].Interface()
		}
		if !iter.Scan(dest...) {
			break
		}
		vals := make([]string, len(ptrs))
		for i, p := range ptrs {
			if v := p.Elem(); v.IsNil() {
				vals[i] = "null"
			} else {
				vals[i] = fmt.Sprint(v.Elem().Interface())
			}
		}
		out = append(out, strings.Join(vals, " "))
	}
	return out, iter.Close()
}

func intKey(k int32) []byte { return binary.BigEndian.AppendUint32(nil, uint32(k)) }

// TestRulesFiltering covers §1.1: the ALLOW FILTERING refusal.
func TestRulesFiltering(t *testing.T) {
	sess := rulesSession(t)
	runRefusals(t, sess, []refusal{
		{stmt: "SELECT * FROM pk2 WHERE a = 1", code: 0x2200, msg: filtering},
		{stmt: "SELECT * FROM pk2 WHERE a = 1 AND b > 1", code: 0x2200, msg: filtering},
		{stmt: "SELECT * FROM t WHERE k > 1", code: 0x2200, msg: filtering},
		{stmt: "SELECT * FROM t WHERE k = 1 AND v = 111", code: 0x2200, msg: filtering},
		{stmt: "SELECT * FROM t WHERE k = 1 AND s = 1", code: 0x2200, msg: filtering},
		{stmt: "SELECT * FROM t WHERE v = 111", code: 0x2200, msg: filtering},
		{stmt: "SELECT * FROM t WHERE c1 = 1", code: 0x2200, msg: filtering},
		{stmt: "SELECT * FROM t WHERE c1 = 1 AND c2 = 1", code: 0x2200, msg: filtering},
		{stmt: "SELECT * FROM t WHERE token(k) > 0 AND c1 = 1", code: 0x2200, msg: filtering},
		{stmt: "SELECT * FROM idx WHERE v = 7 AND w = 1", code: 0x2200, msg: filtering},
		{stmt: "SELECT * FROM idx WHERE v = 7 AND c = 1", code: 0x2200, msg: filtering},
	})
	runAcceptances(t, sess, []acceptance{
		{stmt: "SELECT a, b, c FROM pk2 WHERE a = 1 ALLOW FILTERING", want: []string{"1 1 1", "1 2 1"}, sorted: true},
		{stmt: "SELECT a, b FROM pk2 WHERE a = 1 AND b > 1 ALLOW FILTERING", want: []string{"1 2"}},
		{stmt: "SELECT k, c1, c2 FROM t WHERE k > 1 ALLOW FILTERING", want: []string{"2 1 1", "2 1 2", "2 2 1", "2 2 2"}},
		{stmt: "SELECT c1, c2 FROM t WHERE k = 1 AND v = 112 ALLOW FILTERING", want: []string{"1 2"}},
		{stmt: "SELECT c1, c2 FROM t WHERE k = 2 AND s = 2 ALLOW FILTERING", want: []string{"1 1", "1 2", "2 1", "2 2"}},
		{stmt: "SELECT k FROM t WHERE s = 5 ALLOW FILTERING"},
		{stmt: "SELECT k, c2 FROM t WHERE c1 = 2 AND c2 = 1 ALLOW FILTERING", want: []string{"1 1", "2 1"}, sorted: true},
		{stmt: "SELECT k, c1, c2 FROM t WHERE v = 221 ALLOW FILTERING", want: []string{"2 2 1"}},
		// A secondary index answers an = restriction without filtering.
		{stmt: "SELECT k, c FROM idx WHERE v = 7", want: []string{"1 1", "2 1"}, sorted: true},
		{stmt: "SELECT c FROM idx WHERE k = 1 AND v = 7", want: []string{"1"}},
		{stmt: "SELECT k, c FROM idx WHERE v = 7 AND w = 2 ALLOW FILTERING", want: []string{"2 1"}},
	})
}

// TestRulesPartitionKey covers §1.2: restrictions on the partition key,
// and null, unset and empty key values.
func TestRulesPartitionKey(t *testing.T) {
	sess := rulesSession(t)
	runRefusals(t, sess, []refusal{
		{stmt: "INSERT INTO pk2 (a, c, v) VALUES (1, 1, 1)", code: 0x2200, msg: "Some partition key parts are missing: b"},
		{stmt: "UPDATE pk2 SET v = 1 WHERE c = 1", code: 0x2200, msg: "Some partition key parts are missing: a, b"},
		{stmt: "DELETE FROM pk2 WHERE b = 1", code: 0x2200, msg: "Some partition key parts are missing: a"},
		{stmt: "UPDATE pk2 SET v = 1 WHERE a > 1 AND c = 1", code: 0x2200, msg: "Some partition key parts are missing: b"},
		{stmt: "UPDATE t SET v = 1 WHERE k > 1 AND c1 = 1 AND c2 = 1", code: 0x2200,
			msg: "Only EQ and IN relation are supported on the partition key (unless you use the token() function) for UPDATE statements"},
		{stmt: "DELETE FROM t WHERE k >= 1", code: 0x2200,
			msg: "Only EQ and IN relation are supported on the partition key (unless you use the token() function) for DELETE statements"},
		{stmt: "UPDATE t SET v = 1 WHERE token(k) = 1 AND c1 = 1 AND c2 = 1", code: 0x2200,
			msg: "The token function cannot be used in WHERE clauses for UPDATE statements"},
		{stmt: "DELETE FROM t WHERE token(k) > 0", code: 0x2200,
			msg: "The token function cannot be used in WHERE clauses for DELETE statements"},
		{stmt: "UPDATE t SET v = 1 WHERE k = 1 AND c1 = 1 AND c2 = 1 AND v = 1", code: 0x2200,
			msg: "Non PRIMARY KEY columns found in where clause: v "},
		{stmt: "DELETE FROM t WHERE k = 1 AND s = 1", code: 0x2200, msg: "Non PRIMARY KEY columns found in where clause: s "},
		{stmt: "SELECT * FROM t WHERE k != 1", code: 0x2200, msg: `Unsupported "!=" relation: k != 1`},
		{stmt: "SELECT * FROM t WHERE k = 1 AND c1 != ?", args: []any{1}, code: 0x2200, msg: `Unsupported "!=" relation: c1 != ?`},
		{stmt: "SELECT * FROM tk WHERE k != 'a'", code: 0x2200, msg: `Unsupported "!=" relation: k != 'a'`},

		// Null and unset key values, in SELECT, INSERT, UPDATE and DELETE.
		{stmt: "SELECT * FROM t WHERE k = null", code: 0x2200, msg: "Invalid null value in condition for column k"},
		{stmt: "SELECT * FROM t WHERE k = ?", args: []any{nil}, code: 0x2200, msg: "Invalid null value in condition for column k"},
		{stmt: "SELECT * FROM t WHERE k = ?", args: []any{gocql.UnsetValue}, code: 0x2200, msg: "Invalid unset value for column k"},
		{stmt: "SELECT * FROM t WHERE k IN (1, null)", code: 0x2200, msg: "Invalid null value in condition for column k"},
		{stmt: "SELECT * FROM t WHERE k IN (1, ?)", args: []any{nil}, code: 0x2200, msg: "Invalid null value in condition for column k"},
		{stmt: "SELECT * FROM t WHERE k IN ?", args: []any{nil}, code: 0x2200, msg: "Invalid null value for column k"},
		{stmt: "SELECT * FROM t WHERE k IN ?", args: []any{gocql.UnsetValue}, code: 0x2200, msg: "Invalid unset value for column k"},
		{stmt: "SELECT * FROM t WHERE k = 1 AND c1 = ?", args: []any{nil}, code: 0x2200,
			msg: "Invalid null value in condition for column c1"},
		{stmt: "SELECT * FROM t WHERE k = 1 AND c1 = ?", args: []any{gocql.UnsetValue}, code: 0x2200,
			msg: "Invalid unset value for column c1"},
		{stmt: "SELECT * FROM pk2 WHERE a = 1 AND b = ?", args: []any{nil}, code: 0x2200,
			msg: "Invalid null value in condition for column b"},
		{stmt: "INSERT INTO t (k, c1, c2, v) VALUES (null, 1, 1, 1)", code: 0x2200, msg: "Invalid null value in condition for column k"},
		{stmt: "INSERT INTO t (k, c1, c2, v) VALUES (1, null, 1, 1)", code: 0x2200, msg: "Invalid null value in condition for column c1"},
		{stmt: "INSERT INTO t (k, c1, c2, v) VALUES (?, 1, 1, 1)", args: []any{nil}, code: 0x2200,
			msg: "Invalid null value in condition for column k"},
		{stmt: "INSERT INTO t (k, c1, c2, v) VALUES (1, 1, ?, 1)", args: []any{nil}, code: 0x2200,
			msg: "Invalid null value in condition for column c2"},
		{stmt: "INSERT INTO t (k, c1, c2, v) VALUES (?, 1, 1, 1)", args: []any{gocql.UnsetValue}, code: 0x2200,
			msg: "Invalid unset value for column k"},
		{stmt: "UPDATE t SET v = 1 WHERE k = ? AND c1 = 1 AND c2 = 1", args: []any{nil}, code: 0x2200,
			msg: "Invalid null value in condition for column k"},
		{stmt: "UPDATE t SET v = 1 WHERE k = 1 AND c1 = ? AND c2 = 1", args: []any{nil}, code: 0x2200,
			msg: "Invalid null value in condition for column c1"},
		{stmt: "DELETE FROM t WHERE k = ?", args: []any{gocql.UnsetValue}, code: 0x2200, msg: "Invalid unset value for column k"},
		{stmt: "DELETE FROM t WHERE k = 1 AND c1 = ?", args: []any{nil}, code: 0x2200,
			msg: "Invalid null value in condition for column c1"},

		// An empty partition key.
		{stmt: "INSERT INTO tk (k, v) VALUES ('', 1)", code: 0x2200, msg: "Key may not be empty"},
		{stmt: "INSERT INTO tk (k, v) VALUES (?, 1)", args: []any{""}, code: 0x2200, msg: "Key may not be empty"},
		{stmt: "UPDATE tk SET v = 1 WHERE k = ''", code: 0x2200, msg: "Key may not be empty"},
		{stmt: "DELETE FROM tk WHERE k = ?", args: []any{""}, code: 0x2200, msg: "Key may not be empty"},
		{stmt: "SELECT * FROM tk WHERE k = ''", code: 0x2200, msg: "Key may not be empty"},
		{stmt: "SELECT * FROM tk WHERE k IN ('a', ?)", args: []any{""}, code: 0x2200, msg: "Key may not be empty"},
	})
	runAcceptances(t, sess, []acceptance{
		// IN on any partition key column, not only the last.
		{stmt: "SELECT a, b, c FROM pk2 WHERE a IN (1, 2) AND b = 1", want: []string{"1 1 1", "2 1 1"}, sorted: true},
		{stmt: "SELECT a, b, v FROM pk2 WHERE a = 1 AND b IN (1, 2)", want: []string{"1 1 11", "1 2 12"}, sorted: true},
		{stmt: "SELECT v FROM pk2 WHERE a IN ? AND b IN ?", args: []any{[]int{1, 2}, []int{2}}, want: []string{"12"}},
		{stmt: "UPDATE pk2 SET v = 13 WHERE a IN (1, 2) AND b = 3 AND c = 1"},
		{stmt: "SELECT a, v FROM pk2 WHERE a IN (1, 2) AND b = 3", want: []string{"1 13", "2 13"}, sorted: true},
		{stmt: "DELETE FROM pk2 WHERE a IN (1, 2) AND b = 3"},
		{stmt: "SELECT a FROM pk2 WHERE a IN (1, 2) AND b = 3"},
		// A non-empty text key, and a null regular value.
		{stmt: "INSERT INTO tk (k, v) VALUES (' ', null)"},
		{stmt: "SELECT k FROM tk WHERE k = ' '", want: []string{" "}},
	})
}

// TestRulesToken covers §1.3: token() restrictions.
func TestRulesToken(t *testing.T) {
	sess := rulesSession(t)
	runRefusals(t, sess, []refusal{
		{stmt: "SELECT * FROM pk2 WHERE token(a) > 0", code: 0x2200,
			msg: "The token() function must be applied to all partition key components or none of them"},
		{stmt: "SELECT * FROM pk2 WHERE token(a, a) > 0", code: 0x2200,
			msg: "The token() function must be applied to all partition key components or none of them"},
		{stmt: "SELECT * FROM pk2 WHERE token(a, c) > 0", code: 0x2200,
			msg: "The token() function must be applied to all partition key components or none of them"},
		{stmt: "SELECT * FROM pk2 WHERE token(a, b, a) > 0", code: 0x2200,
			msg: "The token() function contains duplicate partition key components"},
		{stmt: "SELECT * FROM pk2 WHERE token(a, b, c) > 0", code: 0x2200,
			msg: "The token() function must contains only partition key components"},
		{stmt: "SELECT * FROM pk2 WHERE token(b, a) > 0", code: 0x2200,
			msg: "The token function arguments must be in the partition key order: a, b"},
		{stmt: "SELECT * FROM t WHERE token(k) = 1 AND token(k) > 0", code: 0x2200,
			msg: "k cannot be restricted by more than one relation if it includes an Equal"},
		{stmt: "SELECT * FROM pk2 WHERE token(a, b) = 1 AND token(a, b) = 2", code: 0x2200,
			msg: "a, b cannot be restricted by more than one relation if it includes an Equal"},
		{stmt: "SELECT * FROM t WHERE token(k) > 0 AND token(k) = 1", code: 0x2200,
			msg: `Columns "k" cannot be restricted by both an equality and an inequality relation`},
		{stmt: "SELECT * FROM t WHERE token(k) > 0 AND token(k) >= 1", code: 0x2200,
			msg: "More than one restriction was found for the start bound on k"},
		{stmt: "SELECT * FROM t WHERE token(k) < 0 AND token(k) <= 1", code: 0x2200,
			msg: "More than one restriction was found for the end bound on k"},
		{stmt: "SELECT * FROM t WHERE token(k) != 0", code: 0x2200, msg: `Unsupported "!=" relation: token(k) != 0`},
		// The grammar gives token() only the comparisons, so IN on it is a
		// syntax error, before Cassandra's own check could refuse it.
		{stmt: "SELECT * FROM t WHERE token(k) IN (1, 2)", code: 0x2000, msg: "line 1:31 no viable alternative at input 'IN'"},
		{stmt: "SELECT * FROM t WHERE token(k) > null", code: 0x2200, msg: "Invalid null token value"},
		{stmt: "SELECT * FROM t WHERE token(k) > ?", args: []any{nil}, code: 0x2200, msg: "Invalid null token value"},
		{stmt: "SELECT * FROM t WHERE token(k) = ?", args: []any{nil}, code: 0x2200, msg: "Invalid null token value"},
	})
	tok1, tok2 := int64(sharding.KeyToken([][]byte{intKey(1)})), int64(sharding.KeyToken([][]byte{intKey(2)}))
	first, second := "1", "2" // the keys in token order
	if tok2 < tok1 {
		first, second = "2", "1"
	}
	runAcceptances(t, sess, []acceptance{
		// token() combined with = or IN on the key filters the keys.
		{stmt: "SELECT c1, c2 FROM t WHERE k = 1 AND token(k) >= token(1)", want: []string{"1 1", "1 2", "2 1", "2 2"}},
		{stmt: "SELECT c1 FROM t WHERE k = 1 AND token(k) > token(1)"},
		{stmt: "SELECT c1 FROM t WHERE token(k) < ? AND k = 1", args: []any{tok1}},
		{stmt: "SELECT DISTINCT k FROM t WHERE k IN (1, 2) AND token(k) > ?", args: []any{min(tok1, tok2)}, want: []string{second}},
		{stmt: "SELECT DISTINCT k FROM t WHERE k IN (1, 2) AND token(k) <= ?", args: []any{min(tok1, tok2)}, want: []string{first}},
		{stmt: "SELECT DISTINCT k FROM t WHERE token(k) = ?", args: []any{tok1}, want: []string{"1"}},
		{stmt: "SELECT DISTINCT k FROM t WHERE token(k) >= ? AND token(k) <= ?", args: []any{min(tok1, tok2), max(tok1, tok2)},
			want: []string{first, second}},
		{stmt: "SELECT DISTINCT a, b FROM pk2 WHERE token(a, b) >= token(1, 1) AND token(a, b) <= token(1, 1)", want: []string{"1 1"}},
		// A start above the end reads nothing: the range does not wrap.
		{stmt: "SELECT k FROM t WHERE token(k) > 100 AND token(k) < -100"},
		{stmt: "SELECT k FROM t WHERE token(k) > ? AND token(k) <= ?", args: []any{max(tok1, tok2), min(tok1, tok2)}},
	})
}

// TestRulesClustering covers §1.4: restrictions on clustering columns.
func TestRulesClustering(t *testing.T) {
	sess := rulesSession(t)
	runRefusals(t, sess, []refusal{
		{stmt: "SELECT * FROM t WHERE k = 1 AND c2 = 1", code: 0x2200,
			msg: `PRIMARY KEY column "c2" cannot be restricted as preceding column "c1" is not restricted`},
		{stmt: "SELECT * FROM t WHERE k = 1 AND c2 > 1", code: 0x2200,
			msg: `PRIMARY KEY column "c2" cannot be restricted as preceding column "c1" is not restricted`},
		{stmt: "DELETE FROM t WHERE k = 1 AND c2 = 1", code: 0x2200,
			msg: `PRIMARY KEY column "c2" cannot be restricted as preceding column "c1" is not restricted`},
		// The slice on c1 written before the restriction on c2, then after.
		{stmt: "SELECT * FROM t WHERE k = 1 AND c1 > 0 AND c2 = 1", code: 0x2200,
			msg: `Clustering column "c2" cannot be restricted (preceding column "c1" is restricted by a non-EQ relation)`},
		{stmt: "SELECT * FROM t WHERE k = 1 AND c1 < 2 AND c2 > 0", code: 0x2200,
			msg: `Clustering column "c2" cannot be restricted (preceding column "c1" is restricted by a non-EQ relation)`},
		{stmt: "SELECT * FROM t WHERE k = 1 AND c2 = 1 AND c1 > 0", code: 0x2200,
			msg: `PRIMARY KEY column "c2" cannot be restricted (preceding column "c1" is restricted by a non-EQ relation)`},
		{stmt: "SELECT * FROM t WHERE c2 IN (1, 2) AND c1 <= 2 AND k = 1", code: 0x2200,
			msg: `PRIMARY KEY column "c2" cannot be restricted (preceding column "c1" is restricted by a non-EQ relation)`},
		{stmt: "DELETE FROM t WHERE k = 1 AND c1 > 0 AND c2 = 1", code: 0x2200,
			msg: `Clustering column "c2" cannot be restricted (preceding column "c1" is restricted by a non-EQ relation)`},
		// With three clustering columns: the first relation written after
		// the slice is named, or the first column restricted after it.
		{stmt: "SELECT * FROM t3 WHERE k = 1 AND c1 > 0 AND c3 = 1 AND c2 = 1", code: 0x2200,
			msg: `Clustering column "c3" cannot be restricted (preceding column "c1" is restricted by a non-EQ relation)`},
		{stmt: "SELECT * FROM t3 WHERE k = 1 AND c3 = 1 AND c2 = 1 AND c1 > 0", code: 0x2200,
			msg: `PRIMARY KEY column "c2" cannot be restricted (preceding column "c1" is restricted by a non-EQ relation)`},
		{stmt: "SELECT * FROM t3 WHERE k = 1 AND (c1, c2) > (0, 0) AND c3 = 1", code: 0x2200,
			msg: `Clustering column "c3" cannot be restricted (preceding column "c1" is restricted by a non-EQ relation)`},
		{stmt: "SELECT * FROM t3 WHERE k = 1 AND c1 = 1 AND c3 = 1", code: 0x2200,
			msg: `PRIMARY KEY column "c3" cannot be restricted as preceding column "c2" is not restricted`},
		{stmt: "UPDATE t SET v = 1 WHERE k = 1 AND c1 > 0 AND c2 = 1", code: 0x2200,
			msg: `Clustering column "c2" cannot be restricted (preceding column "c1" is restricted by a non-EQ relation)`},
		{stmt: "INSERT INTO t (k, c1, v) VALUES (1, 1, 1)", code: 0x2200, msg: "Some clustering keys are missing: c2"},
		{stmt: "INSERT INTO t (k, v) VALUES (1, 1)", code: 0x2200, msg: "Some clustering keys are missing: c1, c2"},
		{stmt: "UPDATE t SET v = 1 WHERE k = 1", code: 0x2200, msg: "Some clustering keys are missing: c1, c2"},
		{stmt: "UPDATE t SET v = 1 WHERE k = 1 AND c1 = 1", code: 0x2200, msg: "Some clustering keys are missing: c2"},
		{stmt: "UPDATE t SET v = 1 WHERE k = 1 AND c1 = 1 AND c2 > 1", code: 0x2200,
			msg: "Slice restrictions are not supported on the clustering columns in UPDATE statements"},
		{stmt: "UPDATE t SET v = 1 WHERE k = 1 AND c1 > 1", code: 0x2200,
			msg: "Slice restrictions are not supported on the clustering columns in UPDATE statements"},

		// One column restricted twice.
		{stmt: "SELECT * FROM t WHERE k = 1 AND k = 2", code: 0x2200,
			msg: "k cannot be restricted by more than one relation if it includes an Equal"},
		{stmt: "SELECT * FROM t WHERE k = 1 AND c1 = 1 AND c1 = 2", code: 0x2200,
			msg: "c1 cannot be restricted by more than one relation if it includes an Equal"},
		{stmt: "SELECT * FROM t WHERE k = 1 AND c1 = 1 AND c1 > 0", code: 0x2200,
			msg: "c1 cannot be restricted by more than one relation if it includes an Equal"},
		{stmt: "SELECT * FROM t WHERE k = 1 AND c1 IN (1, 2) AND c1 = 1", code: 0x2200,
			msg: "c1 cannot be restricted by more than one relation if it includes a IN"},
		{stmt: "SELECT * FROM t WHERE k IN (1, 2) AND k IN (2)", code: 0x2200,
			msg: "k cannot be restricted by more than one relation if it includes a IN"},
		{stmt: "SELECT * FROM t WHERE k = 1 AND c1 > 1 AND c1 = 1", code: 0x2200,
			msg: `Column "c1" cannot be restricted by both an equality and an inequality relation`},
		{stmt: "SELECT * FROM t WHERE k = 1 AND c1 > 1 AND c1 IN (1, 2)", code: 0x2200,
			msg: `Column "c1" cannot be restricted by both an equality and an inequality relation`},
		{stmt: "SELECT * FROM t WHERE k = 1 AND c1 > 1 AND c1 >= 2", code: 0x2200,
			msg: "More than one restriction was found for the start bound on c1"},
		{stmt: "SELECT * FROM t WHERE k = 1 AND c1 < 1 AND c1 <= 2", code: 0x2200,
			msg: "More than one restriction was found for the end bound on c1"},
	})
	runAcceptances(t, sess, []acceptance{
		// ALLOW FILTERING lifts the preceding-column rules.
		{stmt: "SELECT c1, c2 FROM t WHERE k = 1 AND c2 = 1 ALLOW FILTERING", want: []string{"1 1", "2 1"}},
		{stmt: "SELECT c1, c2 FROM t WHERE k = 1 AND c1 > 1 AND c2 = 1 ALLOW FILTERING", want: []string{"2 1"}},
		{stmt: "SELECT c1, c2 FROM t WHERE k = 1 AND c2 = 2 AND c1 > 1 ALLOW FILTERING", want: []string{"2 2"}},
		// IN on an earlier clustering column, then more restrictions.
		{stmt: "SELECT c1, c2 FROM t WHERE k = 1 AND c1 IN (1, 2) AND c2 = 2", want: []string{"1 2", "2 2"}},
		{stmt: "SELECT c1, c2 FROM t WHERE k = 1 AND c1 IN (2, 1) AND c2 > 1", want: []string{"1 2", "2 2"}},
		{stmt: "SELECT c1, c2 FROM t WHERE k = 1 AND c1 IN (1, 2) AND c2 IN (1)", want: []string{"1 1", "2 1"}},
		{stmt: "SELECT * FROM t3 WHERE k = 1 AND c1 > 0 AND c3 = 1 AND c2 = 1 ALLOW FILTERING"},
		{stmt: "SELECT * FROM t3 WHERE k = 1 AND c1 IN (1, 2) AND c2 = 1 AND c3 > 1"},
		{stmt: "SELECT c1, c2 FROM t WHERE k = 1 AND c1 = 2 AND c2 >= 2", want: []string{"2 2"}},
		{stmt: "SELECT c1, c2 FROM t WHERE k = 1 AND c1 > 0 AND c1 < 2", want: []string{"1 1", "1 2"}},
		{stmt: "SELECT c1, c2 FROM t WHERE k = 1 AND c1 >= 2 AND c1 <= 2", want: []string{"2 1", "2 2"}},
		{stmt: "SELECT c1, c2 FROM t WHERE k = 1 AND (c1, c2) > (1, 1)", want: []string{"1 2", "2 1", "2 2"}},
		// DELETE takes a slice of the last restricted clustering column.
		{stmt: "INSERT INTO w (k, c1, c2, v) VALUES (1, 1, 1, 1)"},
		{stmt: "INSERT INTO w (k, c1, c2, v) VALUES (1, 1, 2, 1)"},
		{stmt: "INSERT INTO w (k, c1, c2, v) VALUES (1, 2, 1, 1)"},
		{stmt: "DELETE FROM w WHERE k = 1 AND c1 = 1 AND c2 > 1"},
		{stmt: "SELECT c1, c2 FROM w WHERE k = 1", want: []string{"1 1", "2 1"}},
		{stmt: "DELETE FROM w WHERE k = 1 AND c1 >= 2"},
		{stmt: "SELECT c1, c2 FROM w WHERE k = 1", want: []string{"1 1"}},
	})
}

// TestRulesOrderAndLimit covers §1.5: ORDER BY, paging and limits.
func TestRulesOrderAndLimit(t *testing.T) {
	sess := rulesSession(t)
	const pagingIN = "Cannot page queries with both ORDER BY and a IN restriction on the partition key; " +
		"you must either remove the ORDER BY or the IN and sort client side, or disable paging for this query"
	runRefusals(t, sess, []refusal{
		// ORDER BY checks, in Cassandra's order.
		{stmt: "SELECT * FROM t WHERE k = 1 ORDER BY nope", code: 0x2200, msg: "Undefined column name nope in table rules.t"},
		{stmt: "SELECT * FROM idx WHERE v = 7 ORDER BY nope", code: 0x2200, msg: "Undefined column name nope in table rules.idx"},
		{stmt: "SELECT * FROM idx WHERE v = 7 ORDER BY c", code: 0x2200, msg: "ORDER BY with 2ndary indexes is not supported."},
		{stmt: "SELECT * FROM idx WHERE k = 1 AND v = 7 ORDER BY v", code: 0x2200, msg: "ORDER BY with 2ndary indexes is not supported."},
		{stmt: "SELECT * FROM t ORDER BY c1", code: 0x2200,
			msg: "ORDER BY is only supported when the partition key is restricted by an EQ or an IN."},
		{stmt: "SELECT * FROM t ORDER BY v", code: 0x2200,
			msg: "ORDER BY is only supported when the partition key is restricted by an EQ or an IN."},
		{stmt: "SELECT * FROM t WHERE token(k) > 0 ORDER BY c1", code: 0x2200,
			msg: "ORDER BY is only supported when the partition key is restricted by an EQ or an IN."},
		{stmt: "SELECT * FROM t WHERE k > 0 ORDER BY c1 ALLOW FILTERING", code: 0x2200,
			msg: "ORDER BY is only supported when the partition key is restricted by an EQ or an IN."},
		{stmt: "SELECT * FROM t WHERE c1 = 1 ORDER BY c1", code: 0x2200,
			msg: "ORDER BY is only supported when the partition key is restricted by an EQ or an IN."},
		{stmt: "SELECT * FROM t WHERE k = 1 ORDER BY v", code: 0x2200,
			msg: "Order by is currently only supported on the clustered columns of the PRIMARY KEY, got v"},
		{stmt: "SELECT * FROM t WHERE k = 1 ORDER BY k", code: 0x2200,
			msg: "Order by is currently only supported on the clustered columns of the PRIMARY KEY, got k"},
		{stmt: "SELECT * FROM t WHERE k = 1 ORDER BY c1, s", code: 0x2200,
			msg: "Order by is currently only supported on the clustered columns of the PRIMARY KEY, got s"},
		{stmt: "SELECT * FROM t WHERE k = 1 ORDER BY c2", code: 0x2200,
			msg: "Order by currently only supports the ordering of columns following their declared order in the PRIMARY KEY"},
		{stmt: "SELECT * FROM t WHERE k = 1 AND c1 > 1 ORDER BY c2", code: 0x2200,
			msg: "Order by currently only supports the ordering of columns following their declared order in the PRIMARY KEY"},
		// An IN of several values is no EQ: ORDER BY may not skip its column.
		{stmt: "SELECT * FROM t WHERE k = 1 AND c1 IN (1, 2) ORDER BY c2 DESC", code: 0x2200,
			msg: "Order by currently only supports the ordering of columns following their declared order in the PRIMARY KEY"},
		{stmt: "SELECT * FROM t WHERE k = 1 ORDER BY c2, c1", code: 0x2200,
			msg: "Order by currently only supports the ordering of columns following their declared order in the PRIMARY KEY"},
		{stmt: "SELECT * FROM t WHERE k = 1 ORDER BY c1 ASC, c2 DESC", code: 0x2200, msg: "Unsupported order by relation"},
		{stmt: "SELECT * FROM rev WHERE k = 1 ORDER BY c1, c2", code: 0x2200, msg: "Unsupported order by relation"},
		{stmt: "SELECT * FROM rev WHERE k = 1 ORDER BY c2 DESC, c1 ASC", code: 0x2200,
			msg: "Order by currently only supports the ordering of columns following their declared order in the PRIMARY KEY"},
		// IN on the partition key with ORDER BY cannot be paged; gocql
		// pages by default.
		{stmt: "SELECT * FROM t WHERE k IN (1, 2) ORDER BY c1", code: 0x2200, msg: pagingIN},
		{stmt: "SELECT * FROM t WHERE k IN (1, 3) ORDER BY c1 DESC", code: 0x2200, msg: pagingIN},
		{stmt: "SELECT * FROM t WHERE k IN ? ORDER BY c1", args: []any{[]int{1}}, code: 0x2200, msg: pagingIN},
		{stmt: "SELECT * FROM pk2 WHERE a = 1 AND b IN (1, 2) ORDER BY c", code: 0x2200, msg: pagingIN},
		// A limit does not help: the rows must all be read to be sorted.
		{stmt: "SELECT * FROM t WHERE k IN (1, 2) ORDER BY c1 LIMIT 3", code: 0x2200, msg: pagingIN},
		{stmt: "SELECT * FROM t WHERE k IN (1, 2) ORDER BY c1 LIMIT 5001", code: 0x2200, msg: pagingIN},
		// Aggregates are paged internally even with paging off.
		{stmt: "SELECT count(*) FROM t WHERE k IN (1, 2) ORDER BY c1", noPaging: true, code: 0x2200, msg: pagingIN},
		// Keys are checked before paging.
		{stmt: "SELECT * FROM t WHERE k IN (1, ?) ORDER BY c1", args: []any{nil}, code: 0x2200,
			msg: "Invalid null value in condition for column k"},

		// LIMIT and PER PARTITION LIMIT, literal and bound.
		{stmt: "SELECT * FROM t WHERE k = 1 LIMIT 0", code: 0x2200, msg: "LIMIT must be strictly positive"},
		{stmt: "SELECT * FROM t LIMIT -1", code: 0x2200, msg: "LIMIT must be strictly positive"},
		{stmt: "SELECT * FROM t WHERE k = 1 PER PARTITION LIMIT 0", code: 0x2200, msg: "LIMIT must be strictly positive"},
		{stmt: "SELECT * FROM t PER PARTITION LIMIT -2 LIMIT 3", code: 0x2200, msg: "LIMIT must be strictly positive"},
		{stmt: "SELECT * FROM t WHERE k = 1 LIMIT ?", args: []any{0}, code: 0x2200, msg: "LIMIT must be strictly positive"},
		{stmt: "SELECT * FROM t WHERE k = 1 LIMIT ?", args: []any{-3}, code: 0x2200, msg: "LIMIT must be strictly positive"},
		{stmt: "SELECT * FROM t WHERE k = 1 PER PARTITION LIMIT ?", args: []any{0}, code: 0x2200, msg: "LIMIT must be strictly positive"},
		{stmt: "SELECT * FROM t WHERE k = 1 LIMIT ?", args: []any{nil}, code: 0x2200, msg: "Invalid null value of limit"},
		{stmt: "SELECT * FROM t WHERE k = 1 PER PARTITION LIMIT ?", args: []any{nil}, code: 0x2200, msg: "Invalid null value of limit"},
		{stmt: "SELECT * FROM t WHERE k = 1 LIMIT ?", args: []any{rawValue{0, 0, 1}}, code: 0x2200, msg: "Expected 4 or 0 byte int (3)"},
		{stmt: "SELECT * FROM t WHERE k = 1 PER PARTITION LIMIT ?", args: []any{rawValue{0, 0, 0, 0, 1}}, code: 0x2200,
			msg: "Expected 4 or 0 byte int (5)"},
		{stmt: "SELECT DISTINCT k FROM t PER PARTITION LIMIT 1", code: 0x2200,
			msg: "PER PARTITION LIMIT is not allowed with SELECT DISTINCT queries"},
		{stmt: "SELECT count(*) FROM t WHERE k = 1 PER PARTITION LIMIT 1", code: 0x2200,
			msg: "PER PARTITION LIMIT is not allowed with aggregate queries."},
		{stmt: "SELECT max(v) FROM t PER PARTITION LIMIT ?", args: []any{1}, code: 0x2200,
			msg: "PER PARTITION LIMIT is not allowed with aggregate queries."},
	})
	runAcceptances(t, sess, []acceptance{
		{stmt: "SELECT c1, c2 FROM t WHERE k = 1 ORDER BY c1 DESC", want: []string{"2 2", "2 1", "1 2", "1 1"}},
		{stmt: "SELECT c1, c2 FROM t WHERE k = 1 ORDER BY c1 DESC, c2 DESC", want: []string{"2 2", "2 1", "1 2", "1 1"}},
		{stmt: "SELECT c1, c2 FROM t WHERE k = 1 ORDER BY c1 ASC, c2 ASC", want: []string{"1 1", "1 2", "2 1", "2 2"}},
		// Skipping a clustering column restricted by =.
		{stmt: "SELECT c2 FROM t WHERE k = 1 AND c1 = 1 ORDER BY c2 DESC", want: []string{"2", "1"}},
		// ORDER BY a column restricted by =, with IN on the next: reversed.
		{stmt: "SELECT c1, c2 FROM t WHERE k = 1 AND c1 = 1 AND c2 IN (1, 2) ORDER BY c1 DESC", want: []string{"1 2", "1 1"}},
		// An IN of one value is an EQ, as Cassandra plans it: it pages,
		// and ORDER BY may skip its column.
		{stmt: "SELECT c1, c2 FROM t WHERE k IN (1) ORDER BY c1 DESC", want: []string{"2 2", "2 1", "1 2", "1 1"}},
		{stmt: "SELECT c2 FROM t WHERE k = 1 AND c1 IN (1) ORDER BY c2 DESC", want: []string{"2", "1"}},
		{stmt: "SELECT c2 FROM t WHERE k IN (1) AND c1 IN (1) ORDER BY c2 DESC", want: []string{"2", "1"}},
		{stmt: "SELECT c1, c2 FROM rev WHERE k = 1 ORDER BY c1 DESC, c2 ASC", want: []string{"2 1", "1 1", "1 2"}},
		// IN with ORDER BY runs with paging off, or with a limit within
		// one page.
		{stmt: "SELECT c1, c2 FROM t WHERE k IN (1, 2) ORDER BY c1 DESC, c2 DESC", noPaging: true,
			want: []string{"2 2", "2 2", "2 1", "2 1", "1 2", "1 2", "1 1", "1 1"}},
		{stmt: "SELECT c1, v FROM t WHERE k IN (2, 1) ORDER BY c1", noPaging: true, sorted: true,
			want: []string{"1 111", "1 112", "1 211", "1 212", "2 121", "2 122", "2 221", "2 222"}},
		{stmt: "SELECT c1 FROM t WHERE k IN (1, 2) ORDER BY c1 LIMIT 3", noPaging: true, want: []string{"1", "1", "1"}},
		// Limits: an unset bound value means none.
		{stmt: "SELECT c1, c2 FROM t WHERE k = 1 LIMIT ?", args: []any{2}, want: []string{"1 1", "1 2"}},
		{stmt: "SELECT c1, c2 FROM t WHERE k = 1 LIMIT ?", args: []any{gocql.UnsetValue}, want: []string{"1 1", "1 2", "2 1", "2 2"}},
		{stmt: "SELECT c1, c2 FROM t WHERE k = 1 PER PARTITION LIMIT ?", args: []any{gocql.UnsetValue},
			want: []string{"1 1", "1 2", "2 1", "2 2"}},
		{stmt: "SELECT k, c1, c2 FROM t PER PARTITION LIMIT 1", want: []string{"1 1 1", "2 1 1"}, sorted: true},
		{stmt: "SELECT k, c2 FROM t WHERE k IN (1, 2) PER PARTITION LIMIT ? LIMIT 3", args: []any{2},
			want: []string{"1 1", "1 2", "2 1"}},
		{stmt: "SELECT k, c1, count(*) FROM t WHERE k = 1 GROUP BY k, c1 PER PARTITION LIMIT 1", want: []string{"1 1 2"}},
	})
}

// TestRulesStatic covers §1.6: static columns, DISTINCT, and indexes with
// IN.
func TestRulesStatic(t *testing.T) {
	sess := rulesSession(t)
	runRefusals(t, sess, []refusal{
		{stmt: "SELECT s FROM t WHERE k = 1 AND c1 = 1", code: 0x2200,
			msg: "Cannot restrict clustering columns when selecting only static columns"},
		{stmt: "SELECT k, s FROM t WHERE k = 1 AND c1 = 1 AND c2 = 1", code: 0x2200,
			msg: "Cannot restrict clustering columns when selecting only static columns"},
		{stmt: "SELECT DISTINCT s FROM t WHERE k = 1 AND c1 = 1", code: 0x2200,
			msg: "Cannot restrict clustering columns when selecting only static columns"},
		{stmt: "UPDATE t SET s = 1 WHERE k = 1 AND c1 = 1 AND c2 = 1", code: 0x2200,
			msg: "Invalid restrictions on clustering columns since the UPDATE statement modifies only static columns"},
		{stmt: "UPDATE t SET s = 1 WHERE k = 1 AND c1 = 1", code: 0x2200,
			msg: "Invalid restrictions on clustering columns since the UPDATE statement modifies only static columns"},
		{stmt: "DELETE s FROM t WHERE k = 1 AND c1 = 1", code: 0x2200,
			msg: "Invalid restrictions on clustering columns since the DELETE statement modifies only static columns"},
		{stmt: "DELETE s FROM t WHERE k = 1 AND c1 = 1 AND c2 = 1", code: 0x2200,
			msg: "Invalid restrictions on clustering columns since the DELETE statement modifies only static columns"},
		{stmt: "UPDATE t SET s = 1, v = 1 WHERE k = 1", code: 0x2200, msg: "Some clustering keys are missing: c1, c2"},
		{stmt: "SELECT DISTINCT k FROM t WHERE k = 1 AND c1 = 1", code: 0x2200,
			msg: "SELECT DISTINCT with WHERE clause only supports restriction by partition key and/or static columns."},
		{stmt: "SELECT DISTINCT k FROM t WHERE v = 111 ALLOW FILTERING", code: 0x2200,
			msg: "SELECT DISTINCT with WHERE clause only supports restriction by partition key and/or static columns."},
		{stmt: "SELECT DISTINCT k, v FROM t WHERE k = 1 AND c1 = 1", code: 0x2200,
			msg: "SELECT DISTINCT with WHERE clause only supports restriction by partition key and/or static columns."},
		{stmt: "SELECT DISTINCT k, v FROM t", code: 0x2200,
			msg: "SELECT DISTINCT queries must only request partition key columns and/or static columns (not v)"},
		{stmt: "SELECT DISTINCT c1, k FROM t WHERE k = 1", code: 0x2200,
			msg: "SELECT DISTINCT queries must only request partition key columns and/or static columns (not c1)"},
		{stmt: "SELECT DISTINCT a FROM pk2", code: 0x2200, msg: "SELECT DISTINCT queries must request all the partition key columns (missing b)"},
		{stmt: "SELECT DISTINCT b FROM pk2 WHERE token(a, b) > 0", code: 0x2200,
			msg: "SELECT DISTINCT queries must request all the partition key columns (missing a)"},
		{stmt: "SELECT DISTINCT s FROM t", code: 0x2200, msg: "SELECT DISTINCT queries must request all the partition key columns (missing k)"},
		{stmt: "SELECT * FROM idx WHERE k IN (1, 2) AND v = 7", code: 0x2200,
			msg: "Select on indexed columns and with IN clause for the PRIMARY KEY are not supported"},
	})
	runAcceptances(t, sess, []acceptance{
		// A selection of static columns only still returns a row per
		// clustering row; DISTINCT returns one per partition.
		{stmt: "SELECT k, s FROM t WHERE k = 1", want: []string{"1 1", "1 1", "1 1", "1 1"}},
		{stmt: "SELECT s FROM t WHERE k IN (1, 2)", want: []string{"1", "1", "1", "1", "2", "2", "2", "2"}, sorted: true},
		{stmt: "SELECT DISTINCT s FROM t WHERE k = 1", want: []string{"1"}},
		// Selecting only key columns is not selecting static ones.
		{stmt: "SELECT k FROM t WHERE k = 1 AND c1 = 1", want: []string{"1", "1"}},
		{stmt: "SELECT k, s, c1 FROM t WHERE k = 2 AND c1 = 1", want: []string{"2 2 1", "2 2 1"}},
		{stmt: "SELECT DISTINCT k, s FROM t", want: []string{"1 1", "2 2"}, sorted: true},
		{stmt: "SELECT DISTINCT k FROM t WHERE s = 2 ALLOW FILTERING", want: []string{"2"}},
		{stmt: "SELECT DISTINCT a, b FROM pk2", want: []string{"1 1", "1 2", "2 1"}, sorted: true},
		{stmt: "SELECT DISTINCT a FROM pk2 WHERE a = 1 AND b = 2", want: []string{"1"}},
		{stmt: "SELECT DISTINCT b FROM pk2 WHERE a IN (1, 2) AND b = 1", want: []string{"1", "1"}},
		// Static columns: INSERT with the full key, UPDATE and DELETE with
		// the partition key.
		{stmt: "INSERT INTO w (k, c1, c2, s) VALUES (2, 1, 1, 5)"},
		{stmt: "SELECT c1, s FROM w WHERE k = 2", want: []string{"1 5"}},
		{stmt: "UPDATE w SET s = 6 WHERE k = 2"},
		{stmt: "SELECT s FROM w WHERE k = 2", want: []string{"6"}},
		{stmt: "DELETE s FROM w WHERE k = 2"},
		{stmt: "SELECT c1, s FROM w WHERE k = 2", want: []string{"1 null"}},
	})
}

// TestRulesNames covers §1.7: unknown columns, tables and keyspaces, and
// the quoting of the names in the messages.
func TestRulesNames(t *testing.T) {
	sess := rulesSession(t)
	undefined := "Undefined column name nope in table rules.t"
	runRefusals(t, sess, []refusal{
		{stmt: "SELECT nope FROM t", code: 0x2200, msg: undefined},
		{stmt: "SELECT k, writetime(nope) FROM t", code: 0x2200, msg: undefined},
		{stmt: "SELECT * FROM t WHERE nope = 1", code: 0x2200, msg: undefined},
		{stmt: "SELECT * FROM t WHERE k = 1 AND nope > 1 ALLOW FILTERING", code: 0x2200, msg: undefined},
		{stmt: "INSERT INTO t (k, c1, c2, nope) VALUES (1, 1, 1, 1)", code: 0x2200, msg: undefined},
		{stmt: "UPDATE t SET nope = 1 WHERE k = 1 AND c1 = 1 AND c2 = 1", code: 0x2200, msg: undefined},
		{stmt: "UPDATE t SET v = 1 WHERE k = 1 AND c1 = 1 AND nope = 1", code: 0x2200, msg: undefined},
		{stmt: "DELETE nope FROM t WHERE k = 1", code: 0x2200, msg: undefined},
		{stmt: "SELECT * FROM t WHERE k = 1 ORDER BY nope DESC", code: 0x2200, msg: undefined},
		{stmt: "SELECT nope FROM system.local", code: 0x2200, msg: "Undefined column name nope in table system.local"},
		// Names are double-quoted when they need it.
		{stmt: `SELECT "Nope" FROM t`, code: 0x2200, msg: `Undefined column name "Nope" in table rules.t`},
		{stmt: `SELECT "select" FROM t`, code: 0x2200, msg: `Undefined column name "select" in table rules.t`},
		{stmt: `SELECT "no pe" FROM t`, code: 0x2200, msg: `Undefined column name "no pe" in table rules.t`},
		{stmt: `SELECT "no""pe" FROM t`, code: 0x2200, msg: `Undefined column name "no""pe" in table rules.t`},
		{stmt: `SELECT "1st" FROM t`, code: 0x2200, msg: `Undefined column name "1st" in table rules.t`},
		{stmt: `SELECT "key" FROM "Mixed"`, code: 0x2200, msg: `Undefined column name key in table rules."Mixed"`},
		{stmt: `SELECT nope FROM "Rules".t`, code: 0x2200, msg: `Undefined column name nope in table "Rules".t`},
		{stmt: "SELECT * FROM nope", code: 0x2200, msg: "table nope does not exist"},
		{stmt: "SELECT * FROM system.nope", code: 0x2200, msg: "table nope does not exist"},
		{stmt: `SELECT * FROM "Nope"`, code: 0x2200, msg: "table Nope does not exist"},
		{stmt: "INSERT INTO rules.nope (k) VALUES (1)", code: 0x2200, msg: "table nope does not exist"},
		{stmt: "SELECT * FROM nope.t", code: 0x2200, msg: "keyspace nope does not exist"},
		{stmt: `SELECT * FROM "NoPe".t`, code: 0x2200, msg: "keyspace NoPe does not exist"},
		{stmt: "UPDATE nope.t SET v = 1 WHERE k = 1", code: 0x2200, msg: "keyspace nope does not exist"},
		// gocql refuses statements that start with USE, not with a space.
		{stmt: " USE missing_ks", code: 0x2200, msg: "Keyspace 'missing_ks' does not exist"},
		{stmt: ` USE "Missing"`, code: 0x2200, msg: "Keyspace 'Missing' does not exist"},
	})
	runRefusals(t, session(t, ""), []refusal{
		{stmt: "SELECT * FROM t", code: 0x2200,
			msg: "No keyspace has been specified. USE a keyspace, or explicitly specify keyspace.tablename"},
		{stmt: "INSERT INTO t (k) VALUES (1)", code: 0x2200,
			msg: "No keyspace has been specified. USE a keyspace, or explicitly specify keyspace.tablename"},
		{stmt: "BEGIN BATCH DELETE FROM t WHERE k = 1 APPLY BATCH", code: 0x2200,
			msg: "No keyspace has been specified. USE a keyspace, or explicitly specify keyspace.tablename"},
	})
	runAcceptances(t, sess, []acceptance{
		{stmt: `SELECT "Key", "odd col" FROM "Mixed" WHERE "Key" = 1`, want: []string{"1 2"}},
		{stmt: `SELECT k FROM "Rules".t`},
		{stmt: `SELECT "Key" FROM rules."Mixed"`, want: []string{"1"}},
	})
}

// TestRulesWrites covers §1.8: INSERT, UPDATE and DELETE, counters,
// conditional writes, TTL and timestamps.
func TestRulesWrites(t *testing.T) {
	sess := rulesSession(t)
	const counterSet = "Cannot set the value of counter column n (counters can only be incremented/decremented, not set)"
	runRefusals(t, sess, []refusal{
		// The grammar asks for column names, so these are syntax errors
		// before Cassandra's checks for them could run.
		{stmt: "INSERT INTO t VALUES (1, 1, 1)", code: 0x2000, msg: "line 1:14 no viable alternative at input 'VALUES'"},
		{stmt: "INSERT INTO t () VALUES ()", code: 0x2000, msg: "line 1:15 no viable alternative at input ')'"},
		{stmt: "INSERT INTO t (k, c1, c2) VALUES (1, 1)", code: 0x2200, msg: "Unmatched column names/values"},
		{stmt: "INSERT INTO t (k, c1) VALUES (1, 1, 1)", code: 0x2200, msg: "Unmatched column names/values"},
		{stmt: "INSERT INTO t (k, c1, c2, k) VALUES (1, 1, 1, 1)", code: 0x2200, msg: "The column names contains duplicates"},
		{stmt: "INSERT INTO t (k, c1, c2, nope, nope) VALUES (1, 1, 1, 1, 1)", code: 0x2200, msg: "The column names contains duplicates"},
		{stmt: "UPDATE t SET c1 = 1 WHERE k = 1 AND c1 = 1 AND c2 = 1", code: 0x2200, msg: "PRIMARY KEY part c1 found in SET part"},
		{stmt: "UPDATE t SET k = 1 WHERE k = 1 AND c1 = 1 AND c2 = 1", code: 0x2200, msg: "PRIMARY KEY part k found in SET part"},
		{stmt: "DELETE c1 FROM t WHERE k = 1", code: 0x2200, msg: "Invalid identifier c1 for deletion (should not be a PRIMARY KEY part)"},
		{stmt: "DELETE v, k FROM t WHERE k = 1 AND c1 = 1 AND c2 = 1", code: 0x2200,
			msg: "Invalid identifier k for deletion (should not be a PRIMARY KEY part)"},
		{stmt: "DELETE v FROM t WHERE k = 1", code: 0x2200, msg: "Range deletions are not supported for specific columns"},
		{stmt: "DELETE v FROM t WHERE k = 1 AND c1 = 1", code: 0x2200, msg: "Range deletions are not supported for specific columns"},
		{stmt: "DELETE v FROM t WHERE k = 1 AND c1 = 1 AND c2 > 1", code: 0x2200, msg: "Range deletions are not supported for specific columns"},
		{stmt: "DELETE v, s FROM t WHERE k = 1", code: 0x2200, msg: "Range deletions are not supported for specific columns"},

		// Counters.
		{stmt: "INSERT INTO ctr (k, c, n) VALUES (1, 1, 1)", code: 0x2200,
			msg: "INSERT statements are not allowed on counter tables, use UPDATE instead"},
		{stmt: "UPDATE ctr SET n = 1 WHERE k = 1 AND c = 1", code: 0x2200, msg: counterSet},
		{stmt: "UPDATE ctr SET n = ? WHERE k = 1 AND c = 1", args: []any{int64(1)}, code: 0x2200, msg: counterSet},
		{stmt: "UPDATE ctr USING TIMESTAMP 1 SET n = 1 WHERE k = 1 AND c = 1", code: 0x2200, msg: counterSet},
		{stmt: "UPDATE t SET v = v + 1 WHERE k = 1 AND c1 = 1 AND c2 = 1", code: 0x2200,
			msg: "Invalid operation (v = v + 1) for non counter column v"},
		{stmt: "UPDATE t SET v = v - ? WHERE k = 1 AND c1 = 1 AND c2 = 1", args: []any{1}, code: 0x2200,
			msg: "Invalid operation (v = v - ?) for non counter column v"},
		{stmt: "UPDATE ctr SET n = n + null WHERE k = 1 AND c = 1", code: 0x2200, msg: "Invalid null value for counter increment"},
		{stmt: "UPDATE ctr SET n = n - ? WHERE k = 1 AND c = 1", args: []any{nil}, code: 0x2200,
			msg: "Invalid null value for counter increment"},
		{stmt: "UPDATE ctr USING TIMESTAMP 1 SET n = n + 1 WHERE k = 1 AND c = 1", code: 0x2200,
			msg: "Cannot provide custom timestamp for counter updates"},
		{stmt: "UPDATE ctr USING TTL 1 SET n = n + 1 WHERE k = 1 AND c = 1", code: 0x2200,
			msg: "Cannot provide custom TTL for counter updates"},
		{stmt: "DELETE FROM ctr USING TIMESTAMP 1 WHERE k = 1", code: 0x2200,
			msg: "Cannot provide custom timestamp for counter updates"},

		// Conditional writes.
		{stmt: "INSERT INTO t (k, c1, c2, v) VALUES (1, 1, 1, 1) IF NOT EXISTS USING TIMESTAMP 1", code: 0x2200,
			msg: "Cannot provide custom timestamp for conditional updates"},
		{stmt: "UPDATE t USING TIMESTAMP 1 SET v = 1 WHERE k = 1 AND c1 = 1 AND c2 = 1 IF v = 1", code: 0x2200,
			msg: "Cannot provide custom timestamp for conditional updates"},
		{stmt: "DELETE FROM t USING TIMESTAMP 1 WHERE k = 1 AND c1 = 1 AND c2 = 1 IF EXISTS", code: 0x2200,
			msg: "Cannot provide custom timestamp for conditional updates"},
		{stmt: "UPDATE ctr SET n = n + 1 WHERE k = 1 AND c = 1 IF n = 1", code: 0x2200,
			msg: "Conditional updates are not supported on counter tables"},
		{stmt: "UPDATE ctr USING TIMESTAMP 1 SET n = n + 1 WHERE k = 1 AND c = 1 IF EXISTS", code: 0x2200,
			msg: "Conditional updates are not supported on counter tables"},
		{stmt: "UPDATE t SET v = 1 WHERE k IN (1, 2) AND c1 = 1 AND c2 = 1 IF v = 1", code: 0x2200,
			msg: "IN on the partition key is not supported with conditional updates"},
		{stmt: "DELETE FROM t WHERE k IN (1, 2) AND c1 = 1 AND c2 = 1 IF EXISTS", code: 0x2200,
			msg: "IN on the partition key is not supported with conditional deletions"},
		{stmt: "UPDATE t SET v = 1 WHERE k = 1 AND c1 IN (1, 2) AND c2 = 1 IF v = 1", code: 0x2200,
			msg: "IN on the clustering key columns is not supported with conditional updates"},
		{stmt: "DELETE FROM t WHERE k = 1 AND c1 = 1 AND c2 IN (1, 2) IF EXISTS", code: 0x2200,
			msg: "IN on the clustering key columns is not supported with conditional deletions"},
		{stmt: "UPDATE t SET v = 1 WHERE k = 1 AND c1 = 1 AND c2 = 1 IF k = 1", code: 0x2200,
			msg: "PRIMARY KEY column 'k' cannot have IF conditions"},
		{stmt: "DELETE FROM t WHERE k = 1 AND c1 = 1 AND c2 = 1 IF c2 = 1", code: 0x2200,
			msg: "PRIMARY KEY column 'c2' cannot have IF conditions"},
		{stmt: "DELETE FROM t WHERE k = 1 IF v = 1", code: 0x2200,
			msg: "DELETE statements must restrict all PRIMARY KEY columns with equality relations in order to delete non static columns"},
		{stmt: "DELETE FROM t WHERE k = 1 AND c1 = 1 IF EXISTS", code: 0x2200,
			msg: "DELETE statements must restrict all PRIMARY KEY columns with equality relations in order to delete non static columns"},
		{stmt: "DELETE FROM t WHERE k = 1 IF s = 1", code: 0x2200,
			msg: "DELETE statements must restrict all PRIMARY KEY columns with equality relations in order to delete non static columns"},
		{stmt: "DELETE s FROM t WHERE k = 1 IF v = 1", code: 0x2200,
			msg: "DELETE statements must restrict all PRIMARY KEY columns with equality relations in order to use IF condition on non static columns"},
		{stmt: "DELETE v FROM t WHERE k = 1 IF s = 1", code: 0x2200,
			msg: "DELETE statements must restrict all PRIMARY KEY columns with equality relations in order to delete non static columns"},

		// TTL and timestamps.
		{stmt: "INSERT INTO t (k, c1, c2, v) VALUES (1, 1, 1, 1) USING TTL -1", code: 0x2200,
			msg: "A TTL must be greater or equal to 0, but was -1"},
		{stmt: "UPDATE t USING TTL ? SET v = 1 WHERE k = 1 AND c1 = 1 AND c2 = 1", args: []any{-5}, code: 0x2200,
			msg: "A TTL must be greater or equal to 0, but was -5"},
		{stmt: "INSERT INTO t (k, c1, c2, v) VALUES (1, 1, 1, 1) USING TTL 630720001", code: 0x2200,
			msg: "ttl is too large. requested (630720001) maximum (630720000)"},
		{stmt: "INSERT INTO t (k, c1, c2, v) VALUES (1, 1, 1, 1) USING TIMESTAMP 1 AND TTL ?", args: []any{2147483647}, code: 0x2200,
			msg: "ttl is too large. requested (2147483647) maximum (630720000)"},
		{stmt: "INSERT INTO t (k, c1, c2, v) VALUES (1, 1, 1, 1) USING TIMESTAMP ?", args: []any{nil}, code: 0x2200,
			msg: "Invalid null value of timestamp"},
		{stmt: "INSERT INTO t (k, c1, c2, v) VALUES (1, 1, 1, 1) USING TIMESTAMP -9223372036854775808", code: 0x2200,
			msg: "Out of bound timestamp, must be in [-9223372036854775807, 9223372036854775807]"},
		{stmt: "DELETE FROM t USING TIMESTAMP -9223372036854775808 WHERE k = 1", code: 0x2200,
			msg: "Out of bound timestamp, must be in [-9223372036854775807, 9223372036854775807]"},
		{stmt: "DELETE FROM t USING TIMESTAMP ? WHERE k = 1", args: []any{int64(math.MinInt64)}, code: 0x2200,
			msg: "Out of bound timestamp, must be in [-9223372036854775807, 9223372036854775807]"},
		{stmt: "INSERT INTO t (k, c1, c2, v) VALUES (1, 1, 1, 1) USING TIMESTAMP ?", args: []any{rawValue{1, 2}}, code: 0x2200,
			msg: "Expected 8 or 0 byte long (2)"},
		{stmt: "INSERT INTO t (k, c1, c2, v) VALUES (1, 1, 1, 1) USING TTL ?", args: []any{rawValue{1, 2, 3}}, code: 0x2200,
			msg: "Expected 4 or 0 byte int (3)"},
		// Expiry times end in 2038, as in Cassandra 4.1.
		{stmt: "INSERT INTO t (k, c1, c2, v) VALUES (1, 1, 1, 1) USING TTL 630720000", code: 0x2200,
			msg: "Request on table rules.t with ttl of 630720000 seconds exceeds maximum supported expiration date of " +
				"2038-01-19T03:14:06+00:00. In order to avoid this use a lower TTL, change the expiration date overflow " +
				"policy or upgrade to a version where this limitation is fixed. See CASSANDRA-14092 for more details."},
		{stmt: "UPDATE longttl SET v = 1 WHERE k = 1", code: 0x2200,
			msg: "Request on table rules.longttl with default ttl of 500000000 seconds exceeds maximum supported expiration date of " +
				"2038-01-19T03:14:06+00:00. In order to avoid this use a lower TTL, change the expiration date overflow " +
				"policy or upgrade to a version where this limitation is fixed. See CASSANDRA-14092 for more details."},
	})
	runAcceptances(t, sess, []acceptance{
		{stmt: "UPDATE ctr SET n = n + 5 WHERE k = 1 AND c = 1"},
		{stmt: "UPDATE ctr SET n = n - ? WHERE k = 1 AND c = 1", args: []any{int64(2)}},
		{stmt: "UPDATE ctr SET n = n + ? WHERE k = 1 AND c = 1", args: []any{gocql.UnsetValue}},
		{stmt: "SELECT n FROM ctr WHERE k = 1 AND c = 1", want: []string{"3"}},
		// An unset increment writes nothing, so it creates no row.
		{stmt: "UPDATE ctr SET n = n + ? WHERE k = 1 AND c = 2", args: []any{gocql.UnsetValue}},
		{stmt: "SELECT c, n FROM ctr WHERE k = 1", want: []string{"1 3"}},
		{stmt: "DELETE FROM ctr WHERE k = 1"},
		{stmt: "SELECT n FROM ctr WHERE k = 1"},
		// Conditional writes on one row, and on static columns alone.
		{stmt: "INSERT INTO w (k, c1, c2, v) VALUES (5, 1, 1, 1) IF NOT EXISTS", want: []string{"true"}},
		{stmt: "UPDATE w SET v = 2 WHERE k = 5 AND c1 = 1 AND c2 = 1 IF v = 1", want: []string{"true"}},
		{stmt: "UPDATE w SET s = 3 WHERE k = 5 IF s = null", want: []string{"true"}},
		{stmt: "DELETE s FROM w WHERE k = 5 IF s = 3", want: []string{"true"}},
		{stmt: "UPDATE w SET s = 4 WHERE k = 5"},
		{stmt: "DELETE s FROM w WHERE k = 5 IF EXISTS", want: []string{"true"}},
		// Refused, it shows the partition's first row, which it reads to
		// tell an empty partition from one without static data; the
		// regular columns it does not fetch show as null.
		{stmt: "DELETE s FROM w WHERE k = 5 IF EXISTS", want: []string{"false 5 1 1 null null"}},
		{stmt: "DELETE FROM w WHERE k = 5 AND c1 = 1 AND c2 = 1 IF EXISTS", want: []string{"true"}},
		{stmt: "INSERT INTO w (k, c1, c2, v) VALUES (5, 1, 1, 4)"},
		{stmt: "UPDATE w SET v = 5 WHERE k = 5 AND c1 = 1 AND c2 = 1 IF v = 1", want: []string{"false 4"}},
		{stmt: "INSERT INTO w (k, c1, c2, v) VALUES (5, 1, 1, 6) IF NOT EXISTS", want: []string{"false 5 1 1 null 4"}},
		// TTL and timestamp bounds.
		{stmt: "INSERT INTO w (k, c1, c2, v) VALUES (6, 1, 1, 1) USING TTL 86400"},
		{stmt: "INSERT INTO w (k, c1, c2, v) VALUES (6, 1, 2, 1) USING TTL ?", args: []any{0}},
		{stmt: "INSERT INTO w (k, c1, c2, v) VALUES (6, 1, 3, 1) USING TTL ?", args: []any{nil}},
		{stmt: "INSERT INTO w (k, c1, c2, v) VALUES (6, 1, 4, 1) USING TTL ?", args: []any{gocql.UnsetValue}},
		{stmt: "INSERT INTO w (k, c1, c2, v) VALUES (6, 1, 5, 1) USING TIMESTAMP -9223372036854775807"},
		{stmt: "INSERT INTO w (k, c1, c2, v) VALUES (6, 1, 6, 1) USING TIMESTAMP ?", args: []any{gocql.UnsetValue}},
		{stmt: "SELECT c2 FROM w WHERE k = 6", want: []string{"1", "2", "3", "4", "5", "6"}},
		{stmt: "SELECT c2, ttl(v) FROM w WHERE k = 6 AND c1 = 1 AND c2 IN (2, 3, 4, 5)",
			want: []string{"2 null", "3 null", "4 null", "5 null"}},
	})
}

// TestRulesBindVariables checks the refusals of a wrong number of bound
// values in each kind of request.
func TestRulesBindVariables(t *testing.T) {
	sess := rulesSession(t)
	// gocql prepares DML, and sends other statements, here one starting
	// with a comment, as QUERY with no values.
	runRefusals(t, sess, []refusal{
		{stmt: "/* query */ SELECT * FROM t WHERE k = ?", code: 0x2200, msg: "Invalid amount of bind variables"},
	})
	b := sess.NewBatch(gocql.UnloggedBatch)
	b.Query("INSERT INTO w (k, c1, c2) VALUES (?, 1, 1)")
	requireCQLError(t, sess.ExecuteBatch(b), 0x2200, "There were 1 markers(?) in CQL but 0 bound variables")

	// gocql checks the values of an EXECUTE itself; send one by hand.
	c := dialRaw(t)
	c.startup(primitive.ProtocolVersion4)
	c.sendMessage(primitive.ProtocolVersion4, 3, &message.Prepare{Query: "SELECT * FROM rules.t WHERE k = ? AND c1 = ?"})
	prepared, ok := c.receive().Body.Message.(*message.PreparedResult)
	if !ok {
		t.Fatal("PREPARE not answered by a prepared result")
	}
	c.sendMessage(primitive.ProtocolVersion4, 4, &message.Execute{QueryId: prepared.PreparedQueryId,
		Options: &message.QueryOptions{PositionalValues: []*primitive.Value{primitive.NewValue(intKey(1))}}})
	invalid, ok := c.receive().Body.Message.(*message.Invalid)
	if !ok || invalid.ErrorMessage != "there were 2 markers(?) in CQL but 1 bound variables" {
		t.Fatalf("EXECUTE with one value for two markers: %+v", invalid)
	}
}

// TestRulesLiterals covers §1.9: literals and bound values of the wrong
// type.
func TestRulesLiterals(t *testing.T) {
	sess := rulesSession(t)
	const uuid = "62c36092-82a1-3a00-93d1-46196ee77204"
	runRefusals(t, sess, []refusal{
		{stmt: "INSERT INTO lits (k, i) VALUES (1, 'abc')", code: 0x2200, msg: `Invalid STRING constant (abc) for "i" of type int`},
		{stmt: "INSERT INTO lits (k, tx) VALUES (1, 5)", code: 0x2200, msg: `Invalid INTEGER constant (5) for "tx" of type text`},
		{stmt: "INSERT INTO lits (k, bo) VALUES (1, 1)", code: 0x2200, msg: `Invalid INTEGER constant (1) for "bo" of type boolean`},
		{stmt: "INSERT INTO lits (k, i) VALUES (1, 1.5)", code: 0x2200, msg: `Invalid FLOAT constant (1.5) for "i" of type int`},
		{stmt: "INSERT INTO lits (k, i) VALUES (1, true)", code: 0x2200, msg: `Invalid BOOLEAN constant (true) for "i" of type int`},
		{stmt: "INSERT INTO lits (k, i) VALUES (1, 0xff)", code: 0x2200, msg: `Invalid HEX constant (0xff) for "i" of type int`},
		{stmt: "INSERT INTO lits (k, i) VALUES (1, 1h)", code: 0x2200, msg: `Invalid DURATION constant (1h) for "i" of type int`},
		{stmt: "INSERT INTO lits (k, i) VALUES (1, " + uuid + ")", code: 0x2200,
			msg: `Invalid UUID constant (` + uuid + `) for "i" of type int`},
		{stmt: "INSERT INTO lits (k, u) VALUES (1, 'x')", code: 0x2200, msg: `Invalid STRING constant (x) for "u" of type uuid`},
		{stmt: "INSERT INTO lits (k, bl) VALUES (1, 'x')", code: 0x2200, msg: `Invalid STRING constant (x) for "bl" of type blob`},
		{stmt: "SELECT * FROM lits WHERE k = 'a'", code: 0x2200, msg: `Invalid STRING constant (a) for "k" of type int`},
		{stmt: "UPDATE lits SET f = 'a' WHERE k = 1", code: 0x2200, msg: `Invalid STRING constant (a) for "f" of type float`},
		{stmt: `INSERT INTO "Mixed" ("Key", "odd col") VALUES (1, 'a')`, code: 0x2200,
			msg: `Invalid STRING constant (a) for "odd col" of type int`},
		// Literals of the right kind whose value does not parse.
		{stmt: "INSERT INTO lits (k, i) VALUES (1, 2147483648)", code: 0x2200, msg: "Unable to make int from '2147483648'"},
		{stmt: "INSERT INTO lits (k, b) VALUES (1, 9223372036854775808)", code: 0x2200,
			msg: "Unable to make long from '9223372036854775808'"},
		// Bound values whose bytes do not fit the type.
		{stmt: "INSERT INTO lits (k, i) VALUES (1, ?)", args: []any{rawValue{1, 2, 3}}, code: 0x2200, msg: "Expected 4 or 0 byte int (3)"},
		{stmt: "INSERT INTO lits (k, i) VALUES (?, 1)", args: []any{rawValue{1, 2}}, code: 0x2200, msg: "Expected 4 or 0 byte int (2)"},
		{stmt: "INSERT INTO lits (k, b) VALUES (1, ?)", args: []any{rawValue{1, 2, 3}}, code: 0x2200, msg: "Expected 8 or 0 byte long (3)"},
		{stmt: "INSERT INTO lits (k, tx) VALUES (1, ?)", args: []any{[]byte{0xff}}, code: 0x2200, msg: "String didn't validate."},
		{stmt: "SELECT * FROM lits WHERE k = ?", args: []any{rawValue{1}}, code: 0x2200, msg: "Expected 4 or 0 byte int (1)"},
		// Collection literals.
		{stmt: "INSERT INTO lits (k, l) VALUES (1, {1, 2})", code: 0x2200, msg: "Invalid set literal for l of type list<int>"},
		{stmt: "INSERT INTO lits (k, st) VALUES (1, [1])", code: 0x2200, msg: "Invalid list literal for st of type set<int>"},
		{stmt: "INSERT INTO lits (k, m) VALUES (1, [1])", code: 0x2200, msg: "Invalid list literal for m of type map<int, text>"},
		{stmt: "INSERT INTO lits (k, l) VALUES (1, {1: 'a'})", code: 0x2200, msg: "Invalid map literal for l of type list<int>"},
		{stmt: "INSERT INTO lits (k, i) VALUES (1, [1])", code: 0x2200, msg: "Invalid list literal for i of type int"},
		{stmt: "INSERT INTO lits (k, i) VALUES (1, {1})", code: 0x2200, msg: "Invalid set literal for i of type int"},
		{stmt: "INSERT INTO lits (k, l) VALUES (1, [1, null])", code: 0x2200, msg: "null is not supported inside collections"},
		{stmt: "INSERT INTO lits (k, st) VALUES (1, {null})", code: 0x2200, msg: "null is not supported inside collections"},
		{stmt: "INSERT INTO lits (k, m) VALUES (1, {1: null})", code: 0x2200, msg: "null is not supported inside collections"},
		{stmt: "INSERT INTO lits (k, l) VALUES (1, [1, ?])", args: []any{nil}, code: 0x2200, msg: "null is not supported inside collections"},
		{stmt: "INSERT INTO lits (k, l) VALUES (1, [1, 'a'])", code: 0x2200, msg: `Invalid STRING constant (a) for "value(l)" of type int`},
		{stmt: "INSERT INTO lits (k, m) VALUES (1, {'a': 'b'})", code: 0x2200, msg: `Invalid STRING constant (a) for "key(m)" of type int`},
		{stmt: "INSERT INTO lits (k, m) VALUES (1, {1: 2})", code: 0x2200, msg: `Invalid INTEGER constant (2) for "value(m)" of type text`},
	})
	runAcceptances(t, sess, []acceptance{
		{stmt: "INSERT INTO lits (k, i, b, f, u, bo, bl, du, tx, l, st, m) VALUES " +
			"(1, -2147483648, 9223372036854775807, 1.5, " + uuid + ", true, 0xff, 1h, 'x', [1, 1], {2, 1}, {3: 'c'})"},
		{stmt: "SELECT i, b, f, bo, bl, tx, l, st, m FROM lits WHERE k = 1",
			want: []string{"-2147483648 9223372036854775807 1.5 true [255] x [1 1] [1 2] map[3:c]"}},
		// An empty map is written as {}, which is a set literal.
		{stmt: "INSERT INTO lits (k, m, st, l) VALUES (2, {}, {}, [])"},
		{stmt: "INSERT INTO lits (k, tx) VALUES (?, ?)", args: []any{3, []byte("é")}},
		{stmt: "SELECT k, tx FROM lits WHERE k = 3", want: []string{"3 é"}},
	})
}

// TestRulesBatches covers the rules on what one batch may hold: counters,
// conditions, and timestamps, in BATCH statements and BATCH messages.
func TestRulesBatches(t *testing.T) {
	sess := rulesSession(t)
	const (
		ins     = "INSERT INTO w (k, c1, c2, v) VALUES (8, 1, 1, 1)"
		counter = "UPDATE ctr SET n = n + 1 WHERE k = 8 AND c = 1"
	)
	runRefusals(t, sess, []refusal{
		{stmt: "BEGIN BATCH USING TTL 1 " + ins + " APPLY BATCH", code: 0x2200, msg: "Global TTL on the BATCH statement is not supported."},
		{stmt: "BEGIN BATCH USING TIMESTAMP 1 " + ins + " USING TIMESTAMP 2 APPLY BATCH", code: 0x2200,
			msg: "Timestamp must be set either on BATCH or individual statements"},
		{stmt: "BEGIN BATCH USING TIMESTAMP 1 " + ins + " IF NOT EXISTS APPLY BATCH", code: 0x2200,
			msg: "Cannot provide custom timestamp for conditional BATCH"},
		{stmt: "BEGIN COUNTER BATCH USING TIMESTAMP 1 " + counter + " APPLY BATCH", code: 0x2200,
			msg: "Cannot provide custom timestamp for counter BATCH"},
		{stmt: "BEGIN UNLOGGED BATCH USING TIMESTAMP 1 " + counter + " APPLY BATCH", code: 0x2200,
			msg: "Cannot provide custom timestamp for a BATCH containing counters"},
		{stmt: "BEGIN COUNTER BATCH " + ins + " APPLY BATCH", code: 0x2200,
			msg: "Cannot include non-counter statement in a counter batch"},
		{stmt: "BEGIN UNLOGGED BATCH " + counter + "; " + ins + " APPLY BATCH", code: 0x2200,
			msg: "Counter and non-counter mutations cannot exist in the same batch"},
		{stmt: "BEGIN BATCH " + counter + " APPLY BATCH", code: 0x2200, msg: "Cannot include a counter statement in a logged batch"},
		{stmt: "BEGIN BATCH " + ins + " IF NOT EXISTS; INSERT INTO t (k, c1, c2) VALUES (8, 1, 1) APPLY BATCH", code: 0x2200,
			msg: "Batch with conditions cannot span multiple tables"},
		{stmt: "BEGIN BATCH " + ins + " IF NOT EXISTS; INSERT INTO w (k, c1, c2) VALUES (9, 1, 1) APPLY BATCH", code: 0x2200,
			msg: "Batch with conditions cannot span multiple partitions"},
		{stmt: "BEGIN BATCH " + ins + " IF NOT EXISTS; UPDATE w SET v = 1 WHERE k = 8 AND c1 IN (1, 2) AND c2 = 1 APPLY BATCH",
			code: 0x2200, msg: "IN on the clustering key columns is not supported with conditional updates"},
		{stmt: "BEGIN BATCH UPDATE ctr SET n = 1 WHERE k = 1 AND c = 1 APPLY BATCH", code: 0x2200,
			msg: "Cannot set the value of counter column n (counters can only be incremented/decremented, not set)"},
	})
	for _, tc := range []struct {
		kind  gocql.BatchType
		stmts []string
		msg   string
	}{
		{gocql.CounterBatch, []string{ins}, "Cannot include non-counter statement in a counter batch"},
		{gocql.LoggedBatch, []string{counter}, "Cannot include a counter statement in a logged batch"},
		{gocql.UnloggedBatch, []string{ins, counter}, "Counter and non-counter mutations cannot exist in the same batch"},
		{gocql.UnloggedBatch, []string{ins, "SELECT * FROM t"}, "Invalid statement in batch: only UPDATE, INSERT and DELETE statements are allowed."},
		{gocql.LoggedBatch, []string{ins + " IF NOT EXISTS", "INSERT INTO w (k, c1, c2) VALUES (9, 1, 1)"},
			"Batch with conditions cannot span multiple partitions"},
	} {
		t.Run(strings.Join(tc.stmts, "; "), func(t *testing.T) {
			b := sess.NewBatch(tc.kind)
			for _, s := range tc.stmts {
				b.Query(s)
			}
			requireCQLError(t, sess.ExecuteBatch(b), 0x2200, tc.msg)
		})
	}
	runAcceptances(t, sess, []acceptance{
		{stmt: "BEGIN COUNTER BATCH " + counter + "; " + counter + " APPLY BATCH"},
		{stmt: "BEGIN UNLOGGED BATCH " + counter + " APPLY BATCH"},
		{stmt: "SELECT n FROM ctr WHERE k = 8 AND c = 1", want: []string{"3"}},
		{stmt: "BEGIN BATCH USING TIMESTAMP 10 " + ins + "; DELETE FROM w WHERE k = 8 AND c1 = 2 APPLY BATCH"},
		{stmt: "SELECT c1, writetime(v) FROM w WHERE k = 8", want: []string{"1 10"}},
		// Conditions on one partition of one table.
		{stmt: "BEGIN BATCH INSERT INTO w (k, c1, c2, v) VALUES (8, 2, 1, 2) IF NOT EXISTS; " +
			"UPDATE w SET v = 3 WHERE k = 8 AND c1 = 1 AND c2 = 1 APPLY BATCH", want: []string{"true"}},
		{stmt: "SELECT c1, v FROM w WHERE k = 8", want: []string{"1 3", "2 2"}},
	})
	b := sess.NewBatch(gocql.CounterBatch)
	b.Query(counter)
	b.Query("UPDATE ctr SET n = n + ? WHERE k = ? AND c = 1", int64(2), 8)
	if err := sess.ExecuteBatch(b); err != nil {
		t.Fatal(err)
	}
	if got, err := queryRows(sess.Query("SELECT n FROM ctr WHERE k = 8 AND c = 1")); err != nil || !slices.Equal(got, []string{"6"}) {
		t.Fatalf("counter after counter batch: %q %v", got, err)
	}
}
