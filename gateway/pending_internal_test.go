package gateway

import (
	"encoding/binary"
	"fmt"
	"slices"
	"testing"

	"github.com/cqlpg/cqlpg/gateway/cluster"
	"github.com/cqlpg/cqlpg/gateway/cqlwire"
	"github.com/cqlpg/cqlpg/sharding"
)

// TestPendingReplicaWrites runs writes and reads on four fake shards while
// the fourth joins the ring: a write whose token the joiner will own goes
// to it too, and its level needs its acknowledgement (ONE at RF 1 needs
// two), so that with the joiner failing exactly those writes fail; and reads
// never ask the joiner.
func TestPendingReplicaWrites(t *testing.T) {
	f := &fakeShards{}
	infos := fakeShardInfos(4, 16, func(i int) (string, string, string) { return fmt.Sprintf("pg%d", i), "datacenter1", "rack1" })
	s := newFakeServer(t, infos, func(i int) *sharding.Pool { return sharding.NewFuncPool(infos[i].Name, f.on(i)) })
	const joiner = 3
	before := slices.Clone(infos)
	before[joiner].Tokens = nil
	ring, err := sharding.NewRing(before)
	if err != nil {
		t.Fatal(err)
	}
	full := s.cluster.Topology()
	topo := sharding.NewMovingTopology(ring, full.Ring, full.Shards)
	s.cluster = cluster.NewStatic(s.log, topo, s.cluster.Schema())
	s.env.Cluster = s.cluster
	h := &hotServer{s: s, c: newFakeConn(s), shards: f}
	insert := h.prepare(t, "INSERT INTO rf1.t (k, v) VALUES (?, ?)")
	sel := h.prepare(t, "SELECT v FROM rf1.t WHERE k = ?")
	placement := topo.Placement(s.cluster.Schema().Keyspace("rf1").Replication)

	pendingKeys := 0
	for k := range 200 {
		key := binary.BigEndian.AppendUint32(nil, uint32(k))
		replicas, pending := placement.WriteReplicas(sharding.KeyToken([][]byte{key}))
		if pending > 0 {
			pendingKeys++
		}
		for _, failing := range []bool{false, true} {
			f.mu.Lock()
			f.failing, f.perShard = map[int]bool{joiner: failing}, [4]int{}
			f.mu.Unlock()
			resp := h.roundTrip(atLevel(executeFrame(insert.Id, key, value), sharding.One))
			failed := (*resp)[4] == cqlwire.OpError
			cqlwire.PutBuffer(resp)
			f.mu.Lock()
			sent := f.perShard
			f.mu.Unlock()
			if want := failing && pending > 0; failed != want {
				t.Fatalf("key %d (replicas %v, %d pending), joiner failing %v: write failed %v, want %v",
					k, replicas, pending, failing, failed, want)
			}
			if got := sent[joiner] > 0; got != (pending > 0) {
				t.Fatalf("key %d (replicas %v, %d pending): the joiner was sent %d ops", k, replicas, pending, sent[joiner])
			}
		}
		f.mu.Lock()
		f.failing, f.perShard = nil, [4]int{}
		f.mu.Unlock()
		cqlwire.PutBuffer(h.roundTrip(atLevel(executeFrame(sel.Id, key), sharding.One)))
		f.mu.Lock()
		asked := f.perShard[joiner]
		f.mu.Unlock()
		if asked != 0 {
			t.Fatalf("key %d: a read asked the joining shard", k)
		}
	}
	if pendingKeys == 0 || pendingKeys == 200 {
		t.Fatalf("%d of 200 keys have a pending replica: the test would prove nothing", pendingKeys)
	}
}
