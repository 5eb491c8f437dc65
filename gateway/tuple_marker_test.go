package gateway_test

import (
	"net"
	"strings"
	"testing"
)

// TestTupleMarkers binds whole tuples to the markers of a write's
// multi-column relations, (c1, c2) = ? and (c1, c2) IN ?, through the
// Python driver (gocql cannot bind a tuple to such a marker), and checks
// the rows written and deleted and Cassandra's texts for null elements.
func TestTupleMarkers(t *testing.T) {
	if err := installPythonDriver(); err != nil {
		t.Fatal(err)
	}
	waitAlone(t)
	sess := sessionAll(t, "")
	exec(t, sess,
		"DROP KEYSPACE IF EXISTS tuple_markers",
		"CREATE KEYSPACE tuple_markers WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE tuple_markers.t (k int, c1 int, c2 int, v int, PRIMARY KEY (k, c1, c2))")
	t.Cleanup(func() { exec(t, sess, "DROP KEYSPACE IF EXISTS tuple_markers") })
	host, port, _ := net.SplitHostPort(gw.Addr().String())
	var r struct{ Errors map[string]*string }
	runPython(t, &r, "testdata/python/tuple_marker.py", host, port, "tuple_markers")
	wantRows(t, sess.Query("SELECT c1, c2, v FROM tuple_markers.t WHERE k = 0"), "", "1 | 1 | 11", "2 | 2 | 22")
	for name, want := range map[string]string{
		"eq_null_element": "Invalid null value for column c2",
		"in_null_element": "Invalid null value in condition for columns: [c1, c2]",
	} {
		// The driver's text: Error from server: code=2200 [Invalid query] message="...".
		if got := r.Errors[name]; got == nil || !strings.Contains(*got, "code=2200") || !strings.Contains(*got, `message="`+want+`"`) {
			t.Errorf("%s: error %v, want %q", name, got, want)
		}
	}
}
