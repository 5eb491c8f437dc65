package sharding

import (
	"errors"
	"maps"
	"reflect"
	"testing"
)

func TestParseReplication(t *testing.T) {
	valid := []struct {
		name string
		opts map[string]string
		want Replication
	}{
		{
			name: "SimpleStrategy short name",
			opts: map[string]string{"class": "SimpleStrategy", "replication_factor": "3"},
			want: Replication{Class: SimpleStrategyClass, Factor: 3},
		},
		{
			name: "SimpleStrategy full name",
			opts: map[string]string{"class": SimpleStrategyClass, "replication_factor": "1"},
			want: Replication{Class: SimpleStrategyClass, Factor: 1},
		},
		{
			name: "SimpleStrategy factor zero",
			opts: map[string]string{"class": "SimpleStrategy", "replication_factor": "0"},
			want: Replication{Class: SimpleStrategyClass},
		},
		{
			name: "NetworkTopologyStrategy per datacenter",
			opts: map[string]string{"class": "NetworkTopologyStrategy", "dc1": "3", "dc2": "2"},
			want: Replication{Class: NetworkTopologyStrategyClass, DCFactors: map[string]int{"dc1": 3, "dc2": 2}},
		},
		{
			name: "NetworkTopologyStrategy replication_factor applies to every DC",
			opts: map[string]string{"class": NetworkTopologyStrategyClass, "replication_factor": "2", "dc2": "1"},
			want: Replication{Class: NetworkTopologyStrategyClass, Factor: 2, DCFactors: map[string]int{"dc2": 1}},
		},
		{
			name: "NetworkTopologyStrategy without datacenters",
			opts: map[string]string{"class": "NetworkTopologyStrategy"},
			want: Replication{Class: NetworkTopologyStrategyClass, DCFactors: map[string]int{}},
		},
	}
	for _, tc := range valid {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseReplication("ks", tc.opts)
			if err != nil {
				t.Fatalf("ParseReplication(%v) error: %v", tc.opts, err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ParseReplication(%v) = %+v, want %+v", tc.opts, got, tc.want)
			}
		})
	}

	invalid := []struct {
		name    string
		opts    map[string]string
		wantMsg string
	}{
		{"missing class", map[string]string{"replication_factor": "1"}, "Missing replication strategy class"},
		{"nil map", nil, "Missing replication strategy class"},
		{"unknown short class", map[string]string{"class": "Foo"}, "Unable to find replication strategy class 'org.apache.cassandra.locator.Foo'"},
		{"unknown full class", map[string]string{"class": "com.example.Foo"}, "Unable to find replication strategy class 'com.example.Foo'"},
		{"SimpleStrategy without factor", map[string]string{"class": "SimpleStrategy"}, "SimpleStrategy requires a replication_factor strategy option."},
		{"non-numeric factor", map[string]string{"class": "SimpleStrategy", "replication_factor": "abc"}, "Replication factor must be numeric; found abc"},
		{"factor beyond int32", map[string]string{"class": "SimpleStrategy", "replication_factor": "3000000000"}, "Replication factor must be numeric; found 3000000000"},
		{"negative factor", map[string]string{"class": "SimpleStrategy", "replication_factor": "-1"}, "Replication factor must be non-negative; found -1"},
		{"unknown SimpleStrategy option", map[string]string{"class": "SimpleStrategy", "replication_factor": "1", "foo": "x"}, "Unrecognized strategy option {foo} passed to SimpleStrategy for keyspace ks"},
		{"unknown option reported before missing factor", map[string]string{"class": "SimpleStrategy", "dc1": "1"}, "Unrecognized strategy option {dc1} passed to SimpleStrategy for keyspace ks"},
		{"non-numeric DC factor", map[string]string{"class": "NetworkTopologyStrategy", "dc1": "three"}, "Replication factor must be numeric; found three"},
		{"negative DC factor", map[string]string{"class": "NetworkTopologyStrategy", "dc1": "-2"}, "Replication factor must be non-negative; found -2"},
		{"bad NTS replication_factor", map[string]string{"class": "NetworkTopologyStrategy", "replication_factor": ""}, "Replication factor must be numeric; found "},
	}
	for _, tc := range invalid {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseReplication("ks", tc.opts)
			if err == nil {
				t.Fatalf("ParseReplication(%v) = %+v, want error", tc.opts, got)
			}
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("error %v is %T, want *ConfigError", err, err)
			}
			if ce.Message != tc.wantMsg || err.Error() != tc.wantMsg {
				t.Errorf("error = %q, want %q", ce.Message, tc.wantMsg)
			}
		})
	}
}

func TestReplicationOptionsAndString(t *testing.T) {
	tests := []struct {
		name     string
		rep      Replication
		wantOpts map[string]string
		wantStr  string
	}{
		{
			name:     "SimpleStrategy",
			rep:      Replication{Class: SimpleStrategyClass, Factor: 1},
			wantOpts: map[string]string{"class": SimpleStrategyClass, "replication_factor": "1"},
			wantStr:  "{'class': 'org.apache.cassandra.locator.SimpleStrategy', 'replication_factor': '1'}",
		},
		{
			name:     "short class name is expanded",
			rep:      Replication{Class: "SimpleStrategy", Factor: 2},
			wantOpts: map[string]string{"class": SimpleStrategyClass, "replication_factor": "2"},
			wantStr:  "{'class': 'org.apache.cassandra.locator.SimpleStrategy', 'replication_factor': '2'}",
		},
		{
			name:     "NetworkTopologyStrategy sorted datacenters",
			rep:      Replication{Class: NetworkTopologyStrategyClass, DCFactors: map[string]int{"dc2": 1, "dc1": 3}},
			wantOpts: map[string]string{"class": NetworkTopologyStrategyClass, "dc1": "3", "dc2": "1"},
			wantStr:  "{'class': 'org.apache.cassandra.locator.NetworkTopologyStrategy', 'dc1': '3', 'dc2': '1'}",
		},
		{
			name:     "NetworkTopologyStrategy factor for every DC",
			rep:      Replication{Class: NetworkTopologyStrategyClass, Factor: 2, DCFactors: map[string]int{"dc'x": 1}},
			wantOpts: map[string]string{"class": NetworkTopologyStrategyClass, "dc'x": "1", "replication_factor": "2"},
			wantStr:  "{'class': 'org.apache.cassandra.locator.NetworkTopologyStrategy', 'dc''x': '1', 'replication_factor': '2'}",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.rep.Options(); !maps.Equal(got, tc.wantOpts) {
				t.Errorf("Options() = %v, want %v", got, tc.wantOpts)
			}
			if got := tc.rep.String(); got != tc.wantStr {
				t.Errorf("String() = %s, want %s", got, tc.wantStr)
			}
		})
	}
}

// TestReplicationRoundTrip checks that parsing Options() gives back the
// same setting, so what system_schema shows can be fed to CREATE KEYSPACE.
func TestReplicationRoundTrip(t *testing.T) {
	for _, rep := range []Replication{
		{Class: SimpleStrategyClass, Factor: 3},
		{Class: NetworkTopologyStrategyClass, Factor: 1, DCFactors: map[string]int{"east": 2, "west": 0}},
	} {
		got, err := ParseReplication("ks", rep.Options())
		if err != nil {
			t.Fatalf("ParseReplication(%v): %v", rep.Options(), err)
		}
		if !reflect.DeepEqual(got, rep) {
			t.Errorf("round trip of %+v gave %+v", rep, got)
		}
	}
}

func TestReplicationExpand(t *testing.T) {
	rep := Replication{Class: NetworkTopologyStrategyClass, Factor: 2, DCFactors: map[string]int{"dc2": 1}}
	got := rep.Expand([]string{"dc1", "dc2", "dc3"})
	want := Replication{Class: NetworkTopologyStrategyClass, DCFactors: map[string]int{"dc1": 2, "dc2": 1, "dc3": 2}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Expand = %+v, want %+v", got, want)
	}
	if len(rep.DCFactors) != 1 || rep.Factor != 2 {
		t.Errorf("Expand modified its receiver: %+v", rep)
	}
	simple := Replication{Class: SimpleStrategyClass, Factor: 3}
	if got := simple.Expand([]string{"dc1"}); !reflect.DeepEqual(got, simple) {
		t.Errorf("Expand of SimpleStrategy = %+v, want it unchanged", got)
	}
}
