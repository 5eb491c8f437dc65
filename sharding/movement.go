package sharding

import "slices"

// A Movement is a token range whose replicas change when a movement of
// ranges completes: the shards that hold it now, and those that hold it
// only once the movement completes, which must receive its data.
type Movement struct {
	Range Range
	// From are the range's replicas on the ring reads use, primary first;
	// To are the replicas it gains on the ring after the movement.
	From, To []int
	// Losing is the one replica of From that does not hold the range
	// after the movement, when there is exactly one: the consistent source
	// of the range (Cassandra's strict range movement). A copy of it, with
	// the writes that reach the new replica meanwhile, makes every quorum
	// of the old replicas a quorum of the new ones; -1 when there is none.
	Losing int
}

// Movements lists the ranges of rep whose replicas on t.Next include
// shards that do not hold them on t.Ring, in ring order: what a movement
// must stream before reads switch to the new ring. Each range is cut at
// the tokens of both rings, so that its replicas are the same throughout
// on each; neighbouring ranges with the same replicas are merged. A
// topology without a movement has none.
func (t *Topology) Movements(rep Replication) []Movement {
	if t.Next == nil {
		return nil
	}
	tokens := append(t.Ring.Tokens(), t.Next.Tokens()...)
	return movements(t.Ring.Placement(rep), t.Next.Placement(rep), tokens)
}

// ReplicationMovements lists the ranges whose replicas under to include
// shards that do not hold them under from, on the ring reads use: what a
// change of a keyspace's replication streams.
func (t *Topology) ReplicationMovements(from, to Replication) []Movement {
	return movements(t.Ring.Placement(from), t.Ring.Placement(to), t.Ring.Tokens())
}

// ChangingPlacement returns the replica sets of a keyspace whose
// replication changes from from to to: reads use from's replicas, and
// writes also reach the replicas to adds, as pending ones, whose
// acknowledgements the levels then need too (Placement.WriteReplicas).
// Replication changes are refused while ranges move, so the topology has
// no Next ring here.
func (t *Topology) ChangingPlacement(from, to Replication) *Placement {
	key := from.String() + " -> " + to.String()
	if p, ok := t.placements.Load(key); ok {
		return p.(*Placement)
	}
	p := t.Ring.Placement(from)
	p.next = t.Ring.Placement(to)
	stored, _ := t.placements.LoadOrStore(key, p)
	return stored.(*Placement)
}

// movements lists the ranges, cut at tokens, whose replicas under next
// include shards that they do not have under now.
func movements(now, next *Placement, tokens []Token) []Movement {
	slices.Sort(tokens)
	tokens = slices.Compact(tokens)
	var out []Movement
	for i, end := range tokens {
		start := tokens[(i+len(tokens)-1)%len(tokens)]
		from, after := now.Replicas(end), next.Replicas(end)
		var to []int
		for _, s := range after {
			if !slices.Contains(from, s) {
				to = append(to, s)
			}
		}
		if len(to) == 0 {
			continue
		}
		losing := -1
		for _, s := range from {
			if !slices.Contains(after, s) {
				if losing >= 0 {
					losing = -2
					break
				}
				losing = s
			}
		}
		losing = max(losing, -1)
		m := Movement{Range: Range{Start: start, End: end}, From: slices.Clone(from), To: to, Losing: losing}
		if n := len(out); n > 0 && out[n-1].Range.End == start && out[n-1].sameShards(m) {
			out[n-1].Range.End = end
			continue
		}
		out = append(out, m)
	}
	// The last range may continue the first across the wrap.
	if n := len(out); n > 1 && out[n-1].Range.End == out[0].Range.Start && out[n-1].sameShards(out[0]) {
		out[0].Range.Start = out[n-1].Range.Start
		out = out[:n-1]
	}
	return out
}

// sameShards reports whether m and o move between the same replicas.
func (m Movement) sameShards(o Movement) bool {
	return slices.Equal(m.From, o.From) && slices.Equal(m.To, o.To) && m.Losing == o.Losing
}
