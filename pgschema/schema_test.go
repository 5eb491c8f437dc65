package pgschema

import (
	"errors"
	"testing"
)

// TestUnloadableObject checks that a lookup reports the object of its own
// kind, or its keyspace, and never an object of another kind that has the
// same name.
func TestUnloadableObject(t *testing.T) {
	s := &Schema{}
	bad := errors.New("bad")
	s.unloadable.add("type", "ks", "x", bad)
	s.unloadable.add("table", "ks", "y", bad)
	s.unloadable.add("keyspace", "gone", "", bad)
	tests := []struct {
		kind, keyspace, name string
		want                 string // the kind reported, "" for none
	}{
		{"type", "ks", "x", "type"},
		{"table", "ks", "x", ""},
		{"table", "ks", "y", "table"},
		{"type", "ks", "y", ""},
		{"keyspace", "ks", "", ""},
		{"keyspace", "gone", "", "keyspace"},
		{"table", "gone", "t", "keyspace"},
		{"type", "gone", "u", "keyspace"},
	}
	for _, tt := range tests {
		got := ""
		if u := s.UnloadableObject(tt.kind, tt.keyspace, tt.name); u != nil {
			got = u.Kind
		}
		if got != tt.want {
			t.Errorf("UnloadableObject(%s, %s, %s) reports %q, want %q", tt.kind, tt.keyspace, tt.name, got, tt.want)
		}
	}
}
