package gateway

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/cqlpg/cqlpg/gateway/cluster"
	"github.com/cqlpg/cqlpg/sharding"
)

// newLargeRingServer is a gateway on a ring of 64 fake shards with 16
// vnodes each, in two datacenters of four racks, whose shards answer
// every read with no rows: the web view's pages there cost only the
// gateway's own work.
func newLargeRingServer(tb testing.TB) (*Server, http.Handler) {
	tb.Helper()
	infos := fakeShardInfos(64, 16, func(i int) (string, string, string) {
		return fmt.Sprintf("pg%02d", i), fmt.Sprintf("dc%d", i%2+1), fmt.Sprintf("rack%d", i/2%4+1)
	})
	s := newFakeServer(tb, infos, func(i int) *sharding.Pool {
		return sharding.NewFuncPool(infos[i].Name, func(*sharding.Op) error { return nil })
	})
	s.ready.Store(true)
	mux := http.NewServeMux()
	s.ui.Route(mux)
	return s, mux
}

// uiPages are the pages measured on the large ring.
var uiPages = []struct{ name, path string }{
	{"ring", "/ui"},
	{"ring-keyspace", "/ui?ks=rf3&range=100"},
	{"key", "/ui/key?ks=rf3&table=t&k=42"},
	{"whatif", "/ui/whatif?strategy=NetworkTopologyStrategy&rf.dc1=3&rf.dc2=3&down=pg00&down=pg02"},
	{"whatif-add", "/ui/whatif?strategy=SimpleStrategy&rf=3&down=pg00&add=1&adddc=dc1&addrack=rack1"},
}

// TestUILargeRing checks the pages of a 64-shard ring: one arc per vnode,
// the legend grouped by datacenter and rack, a key's three replicas.
func TestUILargeRing(t *testing.T) {
	_, mux := newLargeRingServer(t)
	for _, p := range uiPages {
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest("GET", p.path, nil))
		if rec.Code != http.StatusOK {
			t.Fatalf("%s: %d\n%s", p.path, rec.Code, rec.Body)
		}
		body := rec.Body.String()
		if p.name == "key" {
			if n := strings.Count(body, "<tr data-replica="); n != 3 {
				t.Errorf("key page: %d replicas, want 3", n)
			}
			continue
		}
		if n := strings.Count(body, "<path id=\"arc-"); n != 64*16 {
			t.Errorf("%s: %d arcs, want %d", p.name, n, 64*16)
		}
		if n := strings.Count(body, "<tr data-shard="); p.name != "whatif" && p.name != "whatif-add" && n != 64 {
			t.Errorf("%s: %d shards in the legend, want 64", p.name, n)
		}
	}
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest("GET", "/ui", nil))
	body := rec.Body.String()
	// Two datacenters, four racks each, eight shards per rack.
	for _, want := range []string{"></span>dc1 / rack1</td>", "></span>dc2 / rack4</td>"} {
		if n := strings.Count(body, want); n != 8 {
			t.Errorf("%q appears %d times, want 8", want, n)
		}
	}
	if strings.Index(body, "dc1 / rack4</td>") > strings.Index(body, "dc2 / rack1</td>") {
		t.Error("the legend does not group shards by datacenter")
	}
}

// BenchmarkUIPages measures the server time of each page on the 64-shard
// ring: building its view and rendering it.
func BenchmarkUIPages(b *testing.B) {
	_, mux := newLargeRingServer(b)
	for _, p := range uiPages {
		b.Run(p.name, func(b *testing.B) {
			req := httptest.NewRequest("GET", p.path, nil)
			var size int
			for b.Loop() {
				rec := httptest.NewRecorder()
				mux.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					b.Fatalf("%d: %s", rec.Code, rec.Body)
				}
				size = rec.Body.Len()
			}
			b.ReportMetric(float64(size)/1024, "KiB/page")
		})
	}
}

// TestUIEscapesShardNames gives shards, datacenters and racks names that
// are markup: the ring, drawn outside html/template, and every other page
// must show them as text.
func TestUIEscapesShardNames(t *testing.T) {
	const hostile = `"><script>alert(1)</script><img src=x>`
	infos := fakeShardInfos(3, 4, func(i int) (string, string, string) {
		return fmt.Sprintf("%s%d", hostile, i), hostile + "dc", hostile + "rack"
	})
	s := newFakeServer(t, infos, func(i int) *sharding.Pool {
		return sharding.NewFuncPool(infos[i].Name, func(*sharding.Op) error { return nil })
	})
	s.ready.Store(true)
	mux := http.NewServeMux()
	s.ui.Route(mux)
	for _, path := range []string{"/ui?ks=rf3&range=2", "/ui/key?ks=rf3&table=t&k=1", "/ui/table?ks=rf3&table=t", "/ui/whatif?ks=rf3&add=1"} {
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		body := rec.Body.String()
		if rec.Code != http.StatusOK {
			t.Fatalf("%s: %d\n%s", path, rec.Code, body)
		}
		if strings.Contains(body, "<script>") || strings.Contains(body, "<img") {
			t.Errorf("%s: a shard's name is markup on the page", path)
		}
		if !strings.Contains(body, "&lt;script&gt;alert(1)&lt;/script&gt;") {
			t.Errorf("%s: the shard names are not shown", path)
		}
	}
}

// TestUIRingMoving checks the ring page while a shard joins: the legend
// marks it joining, the keyspace's moving ranges are counted, and a range
// it takes names it as a pending replica.
func TestUIRingMoving(t *testing.T) {
	infos := fakeShardInfos(4, 8, func(i int) (string, string, string) { return fmt.Sprintf("pg%d", i), "dc1", "rack1" })
	s := newFakeServer(t, infos, func(i int) *sharding.Pool {
		return sharding.NewFuncPool(infos[i].Name, func(*sharding.Op) error { return nil })
	})
	before := slices.Clone(infos)
	before[3].Tokens = nil
	ring, _ := sharding.NewRing(before)
	next, _ := sharding.NewRing(infos)
	topo := s.cluster.Topology()
	moving := sharding.NewMovingTopology(ring, next, topo.Shards)
	s.cluster = cluster.NewStatic(s.log, moving, s.cluster.Schema())
	s.env.Cluster = s.cluster
	s.ready.Store(true)
	mux := http.NewServeMux()
	s.ui.Route(mux)
	get := func(path string) string {
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		if rec.Code != http.StatusOK {
			t.Fatalf("%s: %d\n%s", path, rec.Code, rec.Body)
		}
		return rec.Body.String()
	}
	page := get("/ui?ks=rf3")
	if !strings.Contains(page, `data-state="joining">joining</b>`) || strings.Count(page, `data-state=`) != 1 {
		t.Errorf("the legend does not mark pg3 alone as joining")
	}
	moves := moving.Movements(sharding.Replication{Class: sharding.SimpleStrategyClass, Factor: 3})
	if want := fmt.Sprintf("moves <b>%d</b> ranges", len(moves)); len(moves) == 0 || !strings.Contains(page, want) {
		t.Errorf("the page does not say %q", want)
	}
	// A range pg3 takes: pending there.
	i := ring.RangeIndex(moves[0].Range.End)
	page = get(fmt.Sprintf("/ui?ks=rf3&range=%d", i))
	if !regexp.MustCompile(`id="range-pending">[^<]*<b>pg3</b>`).MatchString(page) {
		t.Errorf("range %d does not name pg3 as a pending replica", i)
	}
}
