package pgschema

import (
	"bytes"
	"encoding/binary"
	"math"
)

// Compare orders two serialized values of type t as Cassandra's comparator
// for t does: numbers by value, text and blobs by unsigned bytes, booleans
// false first. Cassandra sorts IN lists of partition keys and clustering
// values this way.
func Compare(t *Type, a, b []byte) int {
	// An empty value sorts before every other, as in Cassandra.
	if len(a) == 0 || len(b) == 0 {
		return cmpInt(len(a), len(b))
	}
	switch t.Kind {
	case Int, Bigint, Smallint, Tinyint, Counter, Timestamp:
		return cmpSigned(a, b)
	case Float:
		if len(a) == 4 && len(b) == 4 {
			return cmpFloat(float64(math.Float32frombits(binary.BigEndian.Uint32(a))),
				float64(math.Float32frombits(binary.BigEndian.Uint32(b))))
		}
	case Double:
		if len(a) == 8 && len(b) == 8 {
			return cmpFloat(math.Float64frombits(binary.BigEndian.Uint64(a)),
				math.Float64frombits(binary.BigEndian.Uint64(b)))
		}
	case Varint:
		return cmpVarint(a, b)
	case UUID:
		return cmpUUID(a, b)
	case Timeuuid:
		return cmpTimeUUID(a, b)
	}
	return bytes.Compare(a, b)
}

// CompareKeys orders two lists of serialized values column by column, as
// CompositeType compares composite partition keys.
func CompareKeys(types []*Type, a, b [][]byte) int {
	for i, t := range types {
		if c := Compare(t, a[i], b[i]); c != 0 {
			return c
		}
	}
	return 0
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// cmpSigned compares big-endian two's complement integers of equal width.
func cmpSigned(a, b []byte) int {
	if len(a) != len(b) {
		return bytes.Compare(a, b)
	}
	if (a[0]^b[0])&0x80 != 0 {
		if a[0]&0x80 != 0 {
			return -1
		}
		return 1
	}
	return bytes.Compare(a, b)
}

// cmpVarint compares minimal-length two's complement integers.
func cmpVarint(a, b []byte) int {
	na, nb := a[0]&0x80 != 0, b[0]&0x80 != 0
	switch {
	case na != nb:
		if na {
			return -1
		}
		return 1
	case len(a) != len(b):
		if na { // the longer negative number is the smaller
			return cmpInt(len(b), len(a))
		}
		return cmpInt(len(a), len(b))
	}
	return bytes.Compare(a, b)
}

// cmpFloat orders like Java's Float.compare/Double.compare: NaN last.
func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	case a == b:
		return 0
	case math.IsNaN(a) && math.IsNaN(b):
		return 0
	case math.IsNaN(a):
		return 1
	}
	return -1
}

// uuidTime returns a version 1 UUID's 60-bit timestamp.
func uuidTime(u []byte) uint64 {
	hi := uint64(binary.BigEndian.Uint16(u[6:8]) & 0x0fff)
	mid := uint64(binary.BigEndian.Uint16(u[4:6]))
	low := uint64(binary.BigEndian.Uint32(u[0:4]))
	return hi<<48 | mid<<32 | low
}

// cmpUUID orders uuids as UUIDType: by version, then version 1 uuids by
// time, then by bytes.
func cmpUUID(a, b []byte) int {
	if len(a) != 16 || len(b) != 16 {
		return bytes.Compare(a, b)
	}
	if c := cmpInt(int(a[6]>>4), int(b[6]>>4)); c != 0 {
		return c
	}
	if a[6]>>4 == 1 {
		return cmpTimeUUID(a, b)
	}
	return bytes.Compare(a, b)
}

// cmpTimeUUID orders timeuuids by embedded time, then by their low eight
// bytes compared as signed bytes, as TimeUUIDType does.
func cmpTimeUUID(a, b []byte) int {
	if len(a) != 16 || len(b) != 16 {
		return bytes.Compare(a, b)
	}
	ta, tb := uuidTime(a), uuidTime(b)
	if ta != tb {
		if ta < tb {
			return -1
		}
		return 1
	}
	for i := 8; i < 16; i++ {
		if a[i] != b[i] {
			return cmpInt(int(int8(a[i])), int(int8(b[i])))
		}
	}
	return 0
}
