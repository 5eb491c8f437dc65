package gateway

import "encoding/binary"

// pagingVersion starts every paging state this gateway writes.
const pagingVersion = 1

// pageState says where the next page of a SELECT starts, in the order the
// query reads rows. Rows are counted per unit: a partition of the keys the
// WHERE clause names (unit is its index in key order), or all partitions
// of one token in a scan (unit is the token). The page starts after the
// first rows of that unit; a unit no page has reached reads whole.
//
// The state is opaque to clients, who send it back with the same query and
// values, to this gateway or another.
type pageState struct {
	unit int64
	// rows counts the rows of unit that earlier pages read.
	rows int32
	// remaining is what is left of LIMIT, -1 when the query has none.
	remaining int32
	// key and inPartition are the partition PER PARTITION LIMIT was
	// counting in, and how many of its rows it counted.
	key         [][]byte
	inPartition int32
}

// encode writes the state: version, unit, rows, remaining, inPartition,
// then the key as a count of components, each [int length][bytes].
func (s *pageState) encode() []byte {
	b := []byte{pagingVersion}
	b = binary.BigEndian.AppendUint64(b, uint64(s.unit))
	b = binary.BigEndian.AppendUint32(b, uint32(s.rows))
	b = binary.BigEndian.AppendUint32(b, uint32(s.remaining))
	b = binary.BigEndian.AppendUint32(b, uint32(s.inPartition))
	b = binary.BigEndian.AppendUint16(b, uint16(len(s.key)))
	for _, k := range s.key {
		b = appendBytes(b, k)
	}
	return b
}

// decodePageState reads a state encode wrote; anything else is a protocol
// error, as Cassandra answers a paging state it cannot read.
func decodePageState(b []byte) (*pageState, error) {
	d := decoder{b: b}
	if d.byte() != pagingVersion {
		d.fail(errTruncated)
	}
	s := &pageState{unit: d.long(), rows: d.int(), remaining: d.int(), inPartition: d.int()}
	for n := d.short(); n > 0 && d.err == nil; n-- {
		v, _ := d.value()
		s.key = append(s.key, append([]byte{}, v...))
	}
	if d.err != nil || len(d.b) != 0 || s.rows < 0 || s.inPartition < 0 || s.remaining < -1 {
		return nil, &protocolError{msg: "Invalid value for the paging state"}
	}
	return s, nil
}
