package sharding

import "fmt"

// Consistency is a CQL consistency level, numbered as the protocol numbers
// them.
type Consistency uint16

// Consistency levels.
const (
	Any         Consistency = 0x0000
	One         Consistency = 0x0001
	Two         Consistency = 0x0002
	Three       Consistency = 0x0003
	Quorum      Consistency = 0x0004
	All         Consistency = 0x0005
	LocalQuorum Consistency = 0x0006
	EachQuorum  Consistency = 0x0007
	Serial      Consistency = 0x0008
	LocalSerial Consistency = 0x0009
	LocalOne    Consistency = 0x000A
)

var consistencyNames = map[Consistency]string{
	Any: "ANY", One: "ONE", Two: "TWO", Three: "THREE", Quorum: "QUORUM", All: "ALL",
	LocalQuorum: "LOCAL_QUORUM", EachQuorum: "EACH_QUORUM", Serial: "SERIAL",
	LocalSerial: "LOCAL_SERIAL", LocalOne: "LOCAL_ONE",
}

// String returns the level's CQL name.
func (c Consistency) String() string {
	if n, ok := consistencyNames[c]; ok {
		return n
	}
	return fmt.Sprintf("Consistency(%d)", uint16(c))
}

// UnavailableError reports that fewer replicas are alive than the
// consistency level needs, before anything was written (CQL Unavailable).
// DC names the datacenter that lacks them, for EACH_QUORUM.
type UnavailableError struct {
	Consistency     Consistency
	Required, Alive int
	DC              string
	// Msg, when set, is the error's text in place of the level's.
	Msg string
}

func (e *UnavailableError) Error() string {
	if e.Msg != "" {
		return e.Msg
	}
	if e.DC != "" {
		return fmt.Sprintf("Cannot achieve consistency level %s in DC %s", e.Consistency, e.DC)
	}
	return fmt.Sprintf("Cannot achieve consistency level %s", e.Consistency)
}

// maxDCs bounds how many datacenters EACH_QUORUM counts apart; a
// partition's replicas rarely span more than a few.
const maxDCs = 8

// Acks counts one partition's replica acknowledgements against what a
// consistency level needs of them. Counts come from the replicas the
// partition actually has: a keyspace whose replication factor exceeds the
// shards of a datacenter asks a quorum of the replicas that exist, so a
// small cluster serves any keyspace, and a full-size one behaves exactly as
// Cassandra does.
type Acks struct {
	level     Consistency
	need, got int
	// local, for the LOCAL_ levels, is the one datacenter whose replicas
	// count; "" counts every replica.
	local string
	// each counts datacenters apart, for EACH_QUORUM only: kept out of
	// line, so that the Acks of every other level stay small to copy. A
	// copy of an EACH_QUORUM Acks shares its counts.
	each *dcAcks
}

// dcAcks counts EACH_QUORUM's acknowledgements per datacenter.
type dcAcks struct {
	dcs       [maxDCs]string
	need, got [maxDCs]int
	n         int
}

// Require returns what level needs of the replicas of one partition,
// given as shard indexes of t. localDC is the gateway's datacenter; when no
// replica is in it, the LOCAL_ levels count every replica.
func (t *Topology) Require(level Consistency, replicas []int, localDC string) Acks {
	a := Acks{level: level}
	n := len(replicas)
	switch level {
	case Any, One:
		a.need = 1
	case Two:
		a.need = 2
	case Three:
		a.need = 3
	case Quorum, Serial:
		a.need = n/2 + 1
	case All:
		a.need = n
	case LocalOne, LocalQuorum, LocalSerial:
		local := 0
		for _, r := range replicas {
			if t.Shards[r].Info.DC == localDC {
				local++
			}
		}
		if local > 0 {
			a.local, n = localDC, local
		}
		a.need = 1
		if level != LocalOne {
			a.need = n/2 + 1
		}
	case EachQuorum:
		a.each = new(dcAcks)
		for _, r := range replicas {
			a.each.countDC(t.Shards[r].Info.DC)
		}
		for i := range a.each.n {
			a.each.need[i] = a.each.need[i]/2 + 1
			a.need += a.each.need[i]
		}
	default:
		a.need = n
	}
	return a
}

// RequireWrite returns what level needs of a write to replicas, whose
// last pending ones are pending (Placement.WriteReplicas). The level is
// counted on the others, as Require does, and then needs the pending
// ones too, as Cassandra's blockFor does: all of them for ONE, TWO,
// THREE, QUORUM, SERIAL and ALL, those of the local datacenter for the
// LOCAL_ levels, each datacenter's for EACH_QUORUM, none for ANY. An
// acknowledgement counts the same from either, so a write it accepts
// reaches the level both among the replicas before the movement and
// among those after it.
func (t *Topology) RequireWrite(level Consistency, replicas []int, pending int, localDC string) Acks {
	a := t.Require(level, replicas[:len(replicas)-pending], localDC)
	for _, r := range replicas[len(replicas)-pending:] {
		dc := t.Shards[r].Info.DC
		switch {
		case level == Any:
		case a.each != nil:
			a.each.countPending(dc)
			a.need++
		case a.local == "" || dc == a.local:
			a.need++
		}
	}
	return a
}

// countPending adds a pending replica in datacenter dc to its quorum.
func (d *dcAcks) countPending(dc string) {
	for i := range d.n {
		if d.dcs[i] == dc {
			d.need[i]++
			return
		}
	}
	if d.n < maxDCs {
		d.dcs[d.n], d.need[d.n] = dc, 1
		d.n++
	}
}

// countDC counts one more replica in datacenter dc.
func (d *dcAcks) countDC(dc string) {
	for i := range d.n {
		if d.dcs[i] == dc {
			d.need[i]++
			return
		}
	}
	if d.n < maxDCs {
		d.dcs[d.n], d.need[d.n] = dc, 1
		d.n++
	}
}

// Need returns how many acknowledgements the level waits for.
func (a *Acks) Need() int { return a.need }

// Got returns how many counting acknowledgements arrived.
func (a *Acks) Got() int { return a.got }

// Available returns an UnavailableError when fewer of the replicas that
// count are up than the level needs. ANY needs no replica up: a hint
// stands in for the write.
func (t *Topology) Available(a *Acks, replicas []int) error {
	if a.level == Any {
		return nil
	}
	if d := a.each; d != nil {
		var alive [maxDCs]int
		for _, r := range replicas {
			if t.Shards[r].Pool.Alive() {
				for i := range d.n {
					if d.dcs[i] == t.Shards[r].Info.DC {
						alive[i]++
					}
				}
			}
		}
		for i := range d.n {
			if alive[i] < d.need[i] {
				return &UnavailableError{Consistency: a.level, Required: d.need[i], Alive: alive[i], DC: d.dcs[i]}
			}
		}
		return nil
	}
	alive := 0
	for _, r := range replicas {
		if (a.local == "" || t.Shards[r].Info.DC == a.local) && t.Shards[r].Pool.Alive() {
			alive++
		}
	}
	if alive < a.need {
		return &UnavailableError{Consistency: a.level, Required: a.need, Alive: alive}
	}
	return nil
}

// Ack counts an acknowledgement from a replica in datacenter dc and
// reports whether the level is now met.
func (a *Acks) Ack(dc string) bool {
	switch {
	case a.each != nil:
		d := a.each
		for i := range d.n {
			if d.dcs[i] == dc {
				if d.got[i] < d.need[i] {
					a.got++
				}
				d.got[i]++
			}
		}
	case a.local == "" || dc == a.local:
		a.got++
	}
	return a.Met()
}

// Met reports whether the level has every acknowledgement it needs.
func (a *Acks) Met() bool {
	if d := a.each; d != nil {
		for i := range d.n {
			if d.got[i] < d.need[i] {
				return false
			}
		}
		return true
	}
	return a.got >= a.need
}

// FirstError returns the first error of errs that is not nil: of work
// done on several shards in parallel, the one to report.
func FirstError(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
