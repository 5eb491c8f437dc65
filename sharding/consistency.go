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
type UnavailableError struct {
	Consistency     Consistency
	Required, Alive int
}

func (e *UnavailableError) Error() string {
	return fmt.Sprintf("Cannot achieve consistency level %s", e.Consistency)
}
