package gateway_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/gocql/gocql"
)

// orderCase lists CQL literals of a type in Cassandra's order; their
// Postgres or byte order differs.
type orderCase struct {
	name, typ string
	values    []string
}

var clusteringOrders = []orderCase{
	{"text", "text", []string{"''", "'B'", "'Z'", "'a'", "'ab'", "'b'", "'é'", "'日本'"}},
	{"ascii", "ascii", []string{"''", "' '", "'A'", "'a'"}},
	{"blob", "blob", []string{"0x", "0x00", "0x0000", "0x01", "0x7f", "0x80", "0xff"}},
	{"int", "int", []string{"-2147483648", "-256", "-1", "0", "1", "255", "2147483647"}},
	{"bigint", "bigint", []string{"-9223372036854775808", "-1", "0", "9223372036854775807"}},
	{"smallint", "smallint", []string{"-32768", "-1", "0", "32767"}},
	{"tinyint", "tinyint", []string{"-128", "-1", "0", "127"}},
	{"varint", "varint", []string{"-123456789012345678901234567890", "-129", "-1", "0", "128", "123456789012345678901234567890"}},
	{"decimal", "decimal", []string{"-1E+10", "-1.5", "-0.0001", "0", "1E-10", "1.0", "1.5", "1E+10"}},
	// Beyond numeric's exponents, in the exact companion and order key.
	{"decimal exponents", "decimal", []string{"-1E+1000000", "-1E+131072", "-1.5", "-2.5E-20000", "0",
		"1E-1000000", "1E-16384", "1E-16383", "1.5", "1E+3", "1E+131072", "1E+1000000", "2E+1000000", "1.5E+2000000"}},
	{"double", "double", []string{"-Infinity", "-1.5", "-0.0", "0.0", "4.9E-324", "1.5", "Infinity", "NaN"}},
	{"float", "float", []string{"-Infinity", "-1.5", "-0.0", "0.0", "1.5", "Infinity", "NaN"}},
	{"boolean", "boolean", []string{"false", "true"}},
	{"timestamp", "timestamp", []string{"'0001-01-01 00:00:00+0000'", "'1969-12-31 23:59:59.999+0000'", "'1970-01-01 00:00:00+0000'", "'9999-12-31 23:59:59.999+0000'"}},
	{"date", "date", []string{"'0001-01-01'", "'1969-12-31'", "'1970-01-01'", "'9999-12-31'"}},
	// CQL's whole range: beyond Postgres's dates at both ends.
	{"date range", "date", []string{"'-5877641-06-23'", "1", "'-4713-11-23'", "'-4713-11-24'", "'1970-01-01'",
		"'+5874897-12-31'", "'+5874898-01-01'", "4294967294", "'+5881580-07-11'"}},
	{"time", "time", []string{"'00:00:00'", "'00:00:00.000000001'", "'12:00:00'", "'23:59:59.999999999'"}},
	// timeuuid: by time (here the same 60-bit time written in different
	// byte positions), then by the low bytes compared signed.
	{"timeuuid", "timeuuid", []string{
		"ffffffff-0000-1000-8000-000000000000", // time 0x000_0000_ffffffff
		"00000000-0001-1000-8000-000000000000", // time 0x000_0001_00000000
		"00000000-0000-1001-8000-000000000000", // time 0x001_0000_00000000
		"00000000-0000-1001-ff00-000000000000", // same time, low bytes signed: 0xff is -1
		"00000000-0000-1001-0000-000000000000",
		"00000000-0000-1001-7f00-000000000000",
	}},
	// uuid: by version first, then version 1 by time, others by bytes.
	{"uuid", "uuid", []string{
		"ffffffff-ffff-0fff-ffff-ffffffffffff",
		"ffffffff-0000-1000-8000-000000000000",
		"00000000-0001-1000-8000-000000000000",
		"00000000-0000-4000-8000-000000000000",
		"00000000-0000-4000-8000-000000000001",
		"10000000-0000-4000-8000-000000000000",
	}},
	// inet: by bytes, so IPv6 addresses can come before IPv4 ones.
	{"inet", "inet", []string{"'::'", "'::1'", "'10.0.0.1'", "'127.0.0.1'", "'fe80::1'", "'ff00::'"}},
	{"list", "frozen<list<int>>", []string{"[]", "[-1]", "[1]", "[1, 2]", "[1, 3]", "[2]"}},
	{"set of uuid", "frozen<set<timeuuid>>", []string{"{}", "{ffffffff-0000-1000-8000-000000000000}",
		"{ffffffff-0000-1000-8000-000000000000, 00000000-0001-1000-8000-000000000000}", "{00000000-0001-1000-8000-000000000000}"}},
	{"map", "frozen<map<text, int>>", []string{"{}", "{'a': 2}", "{'a': 10}", "{'a': 10, 'b': 0}", "{'b': -1}"}},
	{"tuple", "tuple<int, text>", []string{"(null, null)", "(null, 'a')", "(-5, 'z')", "(1, '')", "(1, 'a')", "(2, null)"}},
	{"nested", "frozen<list<frozen<list<double>>>>", []string{"[]", "[[]]", "[[-0.0]]", "[[0.0]]", "[[0.0], []]", "[[1.0]]"}},
}

// TestClusteringOrder writes each type's values as clustering keys in a
// shuffled order and reads them back in Cassandra's order, ASC and DESC,
// through slices and IN as well.
func TestClusteringOrder(t *testing.T) {
	sess := session(t, "")
	exec(t, sess, "CREATE KEYSPACE corder WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 2}")
	r := rand.New(rand.NewPCG(7, 7))
	for i, oc := range clusteringOrders {
		t.Run(oc.name, func(t *testing.T) {
			asc, desc := fmt.Sprintf("corder.a%d", i), fmt.Sprintf("corder.d%d", i)
			exec(t, sess,
				fmt.Sprintf("CREATE TABLE %s (k int, c %s, v int, PRIMARY KEY (k, c))", asc, oc.typ),
				fmt.Sprintf("CREATE TABLE %s (k int, c %s, v int, PRIMARY KEY (k, c)) WITH CLUSTERING ORDER BY (c DESC)", desc, oc.typ))
			for _, j := range r.Perm(len(oc.values)) {
				for _, table := range []string{asc, desc} {
					exec(t, sess, fmt.Sprintf("INSERT INTO %s (k, c, v) VALUES (0, %s, %d)", table, oc.values[j], j))
				}
			}
			want := make([]int, len(oc.values))
			for j := range want {
				want[j] = j
			}
			reversed := slices.Clone(want)
			slices.Reverse(reversed)
			check := func(query string, want []int) {
				t.Helper()
				if got := ints(t, sess, query); !slices.Equal(got, want) {
					t.Errorf("%s: rows %v, want %v", query, got, want)
				}
			}
			check("SELECT v FROM "+asc+" WHERE k = 0", want)
			check("SELECT v FROM "+desc+" WHERE k = 0", reversed)
			check("SELECT v FROM "+asc+" WHERE k = 0 ORDER BY c DESC", reversed)
			check("SELECT v FROM "+desc+" WHERE k = 0 ORDER BY c ASC", want)
			for j, v := range oc.values {
				check(fmt.Sprintf("SELECT v FROM %s WHERE k = 0 AND c = %s", desc, v), []int{j})
			}
			if len(oc.values) < 4 {
				return
			}
			// Slices bound by Cassandra's order.
			lo, hi := 1, len(oc.values)-2
			bounds := fmt.Sprintf(" WHERE k = 0 AND c > %s AND c <= %s", oc.values[lo], oc.values[hi])
			check("SELECT v FROM "+asc+bounds, want[lo+1:hi+1])
			check("SELECT v FROM "+desc+bounds, reversed[len(oc.values)-1-hi:len(oc.values)-1-lo])
			// IN returns Cassandra's order.
			in := fmt.Sprintf(" WHERE k = 0 AND c IN (%s, %s, %s)", oc.values[hi], oc.values[0], oc.values[lo])
			check("SELECT v FROM "+asc+in, []int{0, lo, hi})
		})
	}
}

// TestOrderedFiltering checks ranges on columns that are not clustering
// columns, which Postgres compares through order functions.
func TestOrderedFiltering(t *testing.T) {
	sess := session(t, "")
	exec(t, sess,
		"CREATE KEYSPACE ofilter WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE ofilter.t (k int, c int, u uuid, tu timeuuid, ip inet, PRIMARY KEY (k, c))")
	uuids := clusteringOrders[slices.IndexFunc(clusteringOrders, func(o orderCase) bool { return o.name == "uuid" })].values
	tuuids := clusteringOrders[slices.IndexFunc(clusteringOrders, func(o orderCase) bool { return o.name == "timeuuid" })].values
	inets := clusteringOrders[slices.IndexFunc(clusteringOrders, func(o orderCase) bool { return o.name == "inet" })].values
	for i := range 6 {
		exec(t, sess, fmt.Sprintf("INSERT INTO ofilter.t (k, c, u, tu, ip) VALUES (0, %d, %s, %s, %s)", i, uuids[i], tuuids[i], inets[i]))
	}
	for _, col := range []struct{ name, bound string }{{"u", uuids[2]}, {"tu", tuuids[2]}, {"ip", inets[2]}} {
		q := fmt.Sprintf("SELECT c FROM ofilter.t WHERE k = 0 AND %s > %s ALLOW FILTERING", col.name, col.bound)
		if got := ints(t, sess, q); !slices.Equal(got, []int{3, 4, 5}) {
			t.Errorf("%s: %v, want [3 4 5]", q, got)
		}
	}
}

// TestOrderKeysInPostgres checks that the order key stays beside the
// value, which psql shows as it is.
func TestOrderKeysInPostgres(t *testing.T) {
	sess := session(t, "")
	exec(t, sess,
		"CREATE KEYSPACE okeys WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}",
		"CREATE TABLE okeys.t (k int, c timeuuid, PRIMARY KEY (k, c))")
	// At ALL, so that the shard read below holds the row before the
	// answer: at a quorum, it may still be on its way there.
	if err := sess.Query("INSERT INTO okeys.t (k, c) VALUES (1, 00000000-0001-1000-8000-000000000000)").Consistency(gocql.All).Exec(); err != nil {
		t.Fatal(err)
	}
	got := pgQuery(t, `SELECT c::text || ' ' || encode("c$ord", 'hex') FROM okeys.t`)
	if len(got) != 1 || !strings.HasPrefix(got[0], "00000000-0001-1000-8000-000000000000 01") {
		t.Errorf("Postgres holds %v", got)
	}
	var u gocql.UUID
	if err := sess.Query("SELECT c FROM okeys.t WHERE k = 1").Scan(&u); err != nil || u.String() != "00000000-0001-1000-8000-000000000000" {
		t.Errorf("read back %v %v", u, err)
	}
}
