package cqlfunc

import (
	"strings"
	"testing"
)

// Every native name Cassandra 4.1 declares for these families resolves to
// overloads of one return type per argument list, and no two overloads of a
// name share their parameters.
func TestNativeRegistry(t *testing.T) {
	for name, fns := range natives {
		seen := map[string]bool{}
		for _, f := range fns {
			if f.Name != name || f.Eval == nil || f.Returns == nil {
				t.Errorf("%s: malformed %+v", name, f)
			}
			var params []string
			for _, a := range f.Args {
				params = append(params, TypeString(a))
			}
			key := strings.Join(params, ",")
			if seen[key] {
				t.Errorf("%s declared twice for (%s)", name, key)
			}
			seen[key] = true
		}
	}
	for _, name := range []string{"now", "currenttimeuuid", "currenttimestamp", "currentdate", "currenttime",
		"mintimeuuid", "maxtimeuuid", "dateof", "unixtimestampof", "todate", "totimestamp", "tounixtimestamp",
		"floor", "uuid", "intasblob", "blobasint", "varcharasblob", "blobasvarchar", "textasblob", "blobastext",
		"castAsInt", "castAsText", "castAsAscii", "castAsDate", "castAsTimestamp", "castAsVarint"} {
		if len(Natives(name)) == 0 {
			t.Errorf("%s is missing", name)
		}
	}
	for name, n := range map[string]int{"floor": 7, "todate": 2, "totimestamp": 2, "tounixtimestamp": 3,
		"castAsInt": 8, "castAsText": 17, "castAsAscii": 16, "castAsDate": 2, "castAsTimestamp": 2} {
		if got := len(Natives(name)); got != n {
			t.Errorf("%s has %d overloads, want %d", name, got, n)
		}
	}
	for name, det := range map[string]bool{"now": false, "uuid": false, "currentdate": false, "todate": true,
		"castAsInt": true, "blobasint": true} {
		if got := Natives(name)[0].Deterministic; got != det {
			t.Errorf("%s deterministic: %v", name, got)
		}
	}
}
