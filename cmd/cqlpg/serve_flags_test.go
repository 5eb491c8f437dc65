package main

import (
	"testing"

	"github.com/cqlpg/cqlpg/gateway/cluster"
)

func TestParseShard(t *testing.T) {
	for spec, want := range map[string]cluster.ShardConfig{
		"postgres://u@h:5432/db":             {URL: "postgres://u@h:5432/db"},
		"host=/tmp port=5432 dbname=x":       {URL: "host=/tmp port=5432 dbname=x"},
		"dc2:r1=postgres://u@h/db":           {Datacenter: "dc2", Rack: "r1", URL: "postgres://u@h/db"},
		"east:rack-2=host=/tmp dbname=cqlpg": {Datacenter: "east", Rack: "rack-2", URL: "host=/tmp dbname=cqlpg"},
	} {
		if got := parseShard(spec); got != want {
			t.Errorf("parseShard(%q) = %+v, want %+v", spec, got, want)
		}
	}
}
