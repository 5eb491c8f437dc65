package sharding

import (
	"errors"
	"testing"
)

// testTopology returns shards in the given datacenters, none connected;
// down lists those to mark down.
func testTopology(t *testing.T, dcs []string, down ...int) *Topology {
	t.Helper()
	shards := make([]*Shard, len(dcs))
	for i, dc := range dcs {
		p, err := NewPool(PoolConfig{Name: dc, URL: "postgres://127.0.0.1:1/none?connect_timeout=1"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.Close)
		shards[i] = &Shard{Info: ShardInfo{DC: dc}, Pool: p}
	}
	for _, i := range down {
		shards[i].Pool.markDown(errors.New("test"))
	}
	return &Topology{Shards: shards}
}

func TestRequire(t *testing.T) {
	one := []string{"dc1", "dc1", "dc1"}
	two := []string{"dc1", "dc1", "dc1", "dc2", "dc2", "dc2"}
	all3, all6 := []int{0, 1, 2}, []int{0, 1, 2, 3, 4, 5}
	for _, tc := range []struct {
		name     string
		dcs      []string
		replicas []int
		level    Consistency
		need     int
	}{
		{"ONE", one, all3, One, 1},
		{"ANY", one, all3, Any, 1},
		{"TWO", one, all3, Two, 2},
		{"THREE", one, all3, Three, 3},
		{"QUORUM of 3", one, all3, Quorum, 2},
		{"QUORUM of 6", two, all6, Quorum, 4},
		{"ALL", two, all6, All, 6},
		{"LOCAL_QUORUM", two, all6, LocalQuorum, 2},
		{"LOCAL_ONE", two, all6, LocalOne, 1},
		{"EACH_QUORUM", two, all6, EachQuorum, 4},
		{"QUORUM of the one replica RF=3 gets on one shard", one[:1], []int{0}, Quorum, 1},
	} {
		topo := testTopology(t, tc.dcs)
		a := topo.Require(tc.level, tc.replicas, "dc1")
		if a.Need() != tc.need {
			t.Errorf("%s: need %d, want %d", tc.name, a.Need(), tc.need)
		}
		if err := topo.Available(&a, tc.replicas); err != nil {
			t.Errorf("%s: %v with every replica up", tc.name, err)
		}
	}
}

func TestAcks(t *testing.T) {
	topo := testTopology(t, []string{"dc1", "dc1", "dc1", "dc2", "dc2", "dc2"})
	all := []int{0, 1, 2, 3, 4, 5}

	// LOCAL_QUORUM counts only the gateway's datacenter.
	a := topo.Require(LocalQuorum, all, "dc1")
	for _, dc := range []string{"dc2", "dc2", "dc2", "dc1"} {
		if a.Ack(dc) {
			t.Fatalf("LOCAL_QUORUM met after an ack from %s", dc)
		}
	}
	if !a.Ack("dc1") {
		t.Error("LOCAL_QUORUM not met by two local acks")
	}

	// EACH_QUORUM needs a quorum in every datacenter.
	a = topo.Require(EachQuorum, all, "dc1")
	for _, dc := range []string{"dc1", "dc1", "dc1", "dc2"} {
		if a.Ack(dc) {
			t.Fatalf("EACH_QUORUM met early, at an ack from %s", dc)
		}
	}
	if !a.Ack("dc2") || a.Got() != 4 {
		t.Errorf("EACH_QUORUM after two acks per datacenter: met %v, got %d", a.Met(), a.Got())
	}
}

func TestAvailable(t *testing.T) {
	all := []int{0, 1, 2, 3, 4, 5}
	dcs := []string{"dc1", "dc1", "dc1", "dc2", "dc2", "dc2"}
	topo := testTopology(t, dcs, 0, 1, 5)
	var u *UnavailableError
	for _, tc := range []struct {
		level           Consistency
		required, alive int
		dc, message     string
	}{
		{Quorum, 0, 0, "", ""}, // 3 of 6 up, 4 needed
		{All, 6, 3, "", "Cannot achieve consistency level ALL"},
		{LocalQuorum, 2, 1, "", "Cannot achieve consistency level LOCAL_QUORUM"},
		{EachQuorum, 2, 1, "dc1", "Cannot achieve consistency level EACH_QUORUM in DC dc1"},
	} {
		a := topo.Require(tc.level, all, "dc1")
		err := topo.Available(&a, all)
		if tc.level == Quorum {
			if !errors.As(err, &u) || u.Required != 4 || u.Alive != 3 {
				t.Errorf("QUORUM: %v", err)
			}
			continue
		}
		if !errors.As(err, &u) || u.Required != tc.required || u.Alive != tc.alive || u.DC != tc.dc || err.Error() != tc.message {
			t.Errorf("%s: %v (%+v)", tc.level, err, u)
		}
	}
	a := topo.Require(LocalOne, all, "dc1")
	if err := topo.Available(&a, all); err != nil {
		t.Errorf("LOCAL_ONE with one local replica up: %v", err)
	}
	a = topo.Require(Any, all, "dc1")
	if err := testTopology(t, dcs, 0, 1, 2, 3, 4, 5).Available(&a, all); err != nil {
		t.Errorf("ANY with every replica down: %v", err)
	}
}

// TestPaxosQuorum checks the quorum of a lightweight transaction's Paxos,
// as Cassandra's Paxos v2 counts it: a majority of the natural replicas
// plus every pending one, for SERIAL over all datacenters and for
// LOCAL_SERIAL over the gateway's; and that too few live ones are
// Unavailable at the serial level, with the quorum required and the live
// replicas counted.
func TestPaxosQuorum(t *testing.T) {
	one := []string{"dc1", "dc1", "dc1", "dc1", "dc1", "dc1"}
	for rf, want := range []int{0, 1, 2, 2, 3, 3} {
		if rf == 0 {
			continue
		}
		topo := testTopology(t, one[:rf])
		replicas := []int{0, 1, 2, 3, 4}[:rf]
		if a := topo.RequireWrite(Serial, replicas, 0, "dc1"); a.Need() != want {
			t.Errorf("SERIAL at RF=%d: quorum %d, want %d", rf, a.Need(), want)
		}
		// One pending replica on top: the quorum grows by one.
		topo = testTopology(t, one[:rf+1])
		if a := topo.RequireWrite(Serial, []int{0, 1, 2, 3, 4, 5}[:rf+1], 1, "dc1"); a.Need() != want+1 {
			t.Errorf("SERIAL at RF=%d with a pending replica: quorum %d, want %d", rf, a.Need(), want+1)
		}
	}
	two := []string{"dc1", "dc1", "dc1", "dc2", "dc2", "dc2"}
	all := []int{0, 1, 2, 3, 4, 5}
	topo := testTopology(t, two, 1, 2)
	if a := topo.RequireWrite(Serial, all, 0, "dc1"); a.Need() != 4 || topo.Available(&a, all) != nil {
		t.Errorf("SERIAL over two datacenters with two replicas down: quorum %d, %v; want 4, available", a.Need(),
			topo.Available(&a, all))
	}
	a := topo.RequireWrite(LocalSerial, all, 0, "dc1")
	var u *UnavailableError
	if err := topo.Available(&a, all); a.Need() != 2 || !errors.As(err, &u) || u.Consistency != LocalSerial ||
		u.Required != 2 || u.Alive != 1 || u.Error() != "Cannot achieve consistency level LOCAL_SERIAL" {
		t.Errorf("LOCAL_SERIAL with two of dc1's three replicas down: quorum %d, %v; want 2, Unavailable 2 required, 1 alive",
			a.Need(), err)
	}
	for _, dc := range []string{"dc2", "dc2", "dc1"} {
		a.Ack(dc)
	}
	if a.Met() {
		t.Error("LOCAL_SERIAL met by acknowledgements from the other datacenter")
	}
}
