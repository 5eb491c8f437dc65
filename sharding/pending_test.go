package sharding

import (
	"fmt"
	"slices"
	"testing"
)

// movingTopology returns the topology of shards a, b, c (dc1) and d (dc2)
// while d joins (join) or c leaves (!join): the ring reads use and the one
// writes also go to.
func movingTopology(t *testing.T, join bool) *Topology {
	t.Helper()
	a := shard("a", "dc1", "r1", -300, 100)
	b := shard("b", "dc1", "r1", -100, 300)
	c := shard("c", "dc1", "r1", 0, 400)
	d := shard("d", "dc2", "r1", -200, 200)
	before, after := []ShardInfo{a, b, c, d}, []ShardInfo{a, b, c, d}
	if join {
		before[3].Tokens = nil
	} else {
		after[2].Tokens = nil
	}
	shards := make([]*Shard, 4)
	for i, in := range before {
		shards[i] = &Shard{Info: in, Pool: NewFuncPool(in.Name, func(*Op) error { return nil })}
	}
	return NewMovingTopology(mustRing(t, before...), mustRing(t, after...), shards)
}

// TestWriteReplicasPending checks the shards a write goes to while ranges
// move: the replicas reads use, then those the ring after the movement
// adds, for a shard joining and for one leaving.
func TestWriteReplicasPending(t *testing.T) {
	for _, join := range []bool{true, false} {
		topo := movingTopology(t, join)
		for _, rf := range []int{1, 2, 3} {
			rep := Replication{Class: SimpleStrategyClass, Factor: rf}
			p := topo.Placement(rep)
			next := topo.Next.Placement(rep)
			for tok := Token(-450); tok <= 450; tok += 50 {
				name := fmt.Sprintf("join %v rf %d token %d", join, rf, tok)
				got, pending := p.WriteReplicas(tok)
				natural, future := p.Replicas(tok), next.Replicas(tok)
				if !slices.Equal(got[:len(got)-pending], natural) {
					t.Errorf("%s: %v, want the replicas reads use, %v, first", name, got, natural)
				}
				want := 0
				for _, s := range future {
					if !slices.Contains(natural, s) {
						want++
						if !slices.Contains(got[len(got)-pending:], s) {
							t.Errorf("%s: %v (%d pending) leaves out %d, a replica after the movement", name, got, pending, s)
						}
					}
				}
				if pending != want {
					t.Errorf("%s: %d pending, want %d (%v, then %v)", name, pending, want, natural, future)
				}
			}
		}
	}
	// Whatever joins, reads never go to the joining shard.
	topo := movingTopology(t, true)
	for tok := Token(-450); tok <= 450; tok += 50 {
		if slices.Contains(topo.Placement(Replication{Class: SimpleStrategyClass, Factor: 3}).Replicas(tok), 3) {
			t.Errorf("token %d: the joining shard is a read replica", tok)
		}
	}
}

// TestRequireWritePending checks Cassandra's blockFor with pending
// replicas: the level counted on the replicas before the movement, plus
// every pending replica, or the local datacenter's for the LOCAL_ levels,
// or none for ANY.
func TestRequireWritePending(t *testing.T) {
	topo := movingTopology(t, true)
	rep := Replication{Class: SimpleStrategyClass, Factor: 2}
	// Token 150: replicas b (300) and c (400) before; d (200) joins in
	// front of b.
	replicas, pending := topo.Placement(rep).WriteReplicas(150)
	if !slices.Equal(replicas, []int{1, 2, 3}) || pending != 1 {
		t.Fatalf("token 150 at RF 2: %v, %d pending; want [1 2 3], 1", replicas, pending)
	}
	for _, tc := range []struct {
		level Consistency
		local string
		need  int
	}{
		{Any, "dc1", 1},
		{One, "dc1", 2},
		{Two, "dc1", 3},
		// Quorum of two is two, and the pending replica makes three, as
		// in Cassandra; a quorum of three would be two.
		{Quorum, "dc1", 3},
		{All, "dc1", 3},
		// The pending replica is in dc2: a dc1 level does not need it.
		{LocalQuorum, "dc1", 2},
		{LocalOne, "dc1", 1},
		{LocalQuorum, "dc2", 3}, // no dc2 replica before: every replica counts
		{EachQuorum, "dc1", 3},
	} {
		a := topo.RequireWrite(tc.level, replicas, pending, tc.local)
		if a.Need() != tc.need {
			t.Errorf("%v from %s: need %d, want %d", tc.level, tc.local, a.Need(), tc.need)
		}
		if err := topo.Available(&a, replicas); err != nil {
			t.Errorf("%v: %v with every replica up", tc.level, err)
		}
		// Acknowledgements from the replicas before the movement alone
		// meet no level that needs the pending one.
		for _, r := range replicas[:len(replicas)-pending] {
			a.Ack(topo.Shards[r].Info.DC)
		}
		if met := a.Got() >= a.Need(); met != (tc.need <= 2) {
			t.Errorf("%v from %s: met %v by the two replicas before the movement", tc.level, tc.local, met)
		}
	}
}

// TestWriteReplicasNoMovement checks that without a movement a write's
// replicas are the read replicas, found without allocating, and that a
// shard holding no tokens yet is nobody's replica.
func TestWriteReplicasNoMovement(t *testing.T) {
	joining := shard("d", "dc1", "r1")
	r := mustRing(t, shard("a", "dc1", "r1", 0), shard("b", "dc1", "r2", 100), joining)
	for _, class := range []string{SimpleStrategyClass, NetworkTopologyStrategyClass} {
		rep := Replication{Class: class, Factor: 3, DCFactors: map[string]int{"dc1": 3}}
		p := NewTopology(r, nil).Placement(rep)
		if p.Factor() != 2 {
			t.Errorf("%s: factor %d with two shards holding tokens, want 2", class, p.Factor())
		}
		var got []int
		var pending int
		if n := testing.AllocsPerRun(100, func() { got, pending = p.WriteReplicas(50) }); n != 0 {
			t.Errorf("%s: WriteReplicas allocates %v times without a movement", class, n)
		}
		if !slices.Equal(got, []int{1, 0}) || pending != 0 {
			t.Errorf("%s: token 50 goes to %v (%d pending), want [1 0]", class, got, pending)
		}
	}
}

// TestMovements checks the ranges a movement streams: every token whose
// replicas after the movement include a shard that does not hold it now
// lies in exactly one movement, naming those replicas, and no other token
// does.
func TestMovements(t *testing.T) {
	for _, join := range []bool{true, false} {
		topo := movingTopology(t, join)
		for _, rf := range []int{1, 2, 3} {
			rep := Replication{Class: SimpleStrategyClass, Factor: rf}
			moves := topo.Movements(rep)
			now, next := topo.Placement(rep), topo.Next.Placement(rep)
			for tok := Token(-450); tok <= 450; tok += 25 {
				name := fmt.Sprintf("join %v rf %d token %d", join, rf, tok)
				var gained []int
				for _, s := range next.Replicas(tok) {
					if !slices.Contains(now.Replicas(tok), s) {
						gained = append(gained, s)
					}
				}
				var in []Movement
				for _, m := range moves {
					if m.Range.Contains(tok) {
						in = append(in, m)
					}
				}
				switch {
				case len(gained) == 0 && len(in) > 0:
					t.Errorf("%s: moves in %v, but its replicas stay %v", name, in, now.Replicas(tok))
				case len(gained) > 0 && len(in) != 1:
					t.Errorf("%s: in %d movements (%v), want one giving it to %v", name, len(in), in, gained)
				case len(gained) > 0 && (!slices.Equal(in[0].To, gained) || !slices.Equal(in[0].From, now.Replicas(tok))):
					t.Errorf("%s: %v, want from %v to %v", name, in[0], now.Replicas(tok), gained)
				case len(gained) > 0:
					var losing []int
					for _, s := range now.Replicas(tok) {
						if !slices.Contains(next.Replicas(tok), s) {
							losing = append(losing, s)
						}
					}
					if want := -1; len(losing) == 1 && in[0].Losing != losing[0] || len(losing) != 1 && in[0].Losing != want {
						t.Errorf("%s: losing %d, want the one of %v", name, in[0].Losing, losing)
					}
				}
			}
		}
	}
	if m := NewTopology(mustRing(t, shard("a", "dc1", "r1", 0)), nil).Movements(Replication{Class: SimpleStrategyClass, Factor: 1}); m != nil {
		t.Errorf("a ring at rest moves %v", m)
	}
}

// TestChangingPlacement checks a replication change: reads keep the
// replicas of the replication before, writes also reach those the new one
// adds, as pending, and the movements stream exactly what they gain.
func TestChangingPlacement(t *testing.T) {
	topo := movingTopology(t, true)
	topo = NewTopology(topo.Next, topo.Shards) // all four shards, at rest
	from := Replication{Class: SimpleStrategyClass, Factor: 1}
	to := Replication{Class: SimpleStrategyClass, Factor: 3}
	p := topo.ChangingPlacement(from, to)
	old, next := topo.Placement(from), topo.Placement(to)
	moves := topo.ReplicationMovements(from, to)
	for tok := Token(-450); tok <= 450; tok += 25 {
		if !slices.Equal(p.Replicas(tok), old.Replicas(tok)) {
			t.Errorf("token %d: reads use %v, want %v", tok, p.Replicas(tok), old.Replicas(tok))
		}
		got, pending := p.WriteReplicas(tok)
		if pending != 2 || !slices.Equal(got[:1], old.Replicas(tok)) {
			t.Errorf("token %d: writes reach %v (%d pending), want %v then two of %v", tok, got, pending, old.Replicas(tok), next.Replicas(tok))
		}
		for _, s := range next.Replicas(tok) {
			if !slices.Contains(got, s) {
				t.Errorf("token %d: writes reach %v, not %d", tok, got, s)
			}
		}
		n := 0
		for _, m := range moves {
			if m.Range.Contains(tok) {
				n++
				if len(m.To) != 2 || !slices.Equal(m.From, old.Replicas(tok)) {
					t.Errorf("token %d: movement %+v", tok, m)
				}
			}
		}
		if n != 1 {
			t.Errorf("token %d is in %d movements", tok, n)
		}
	}
}
