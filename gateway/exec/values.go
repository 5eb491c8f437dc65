package exec

import (
	"encoding/binary"
	"math"
	"net"
	"sort"
	"time"

	"github.com/cqlpg/cqlpg/gateway/cqlwire"
)

// CQL serializations of Go values, for the rows of the system tables the
// gateway answers itself.

func TextValue(s string) []byte { return []byte(s) }

func IntValue(n int32) []byte { return binary.BigEndian.AppendUint32(nil, uint32(n)) }

func BigintValue(n int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(n)) }

// timestampValue serializes a time as milliseconds since the epoch.
func timestampValue(t time.Time) []byte { return BigintValue(t.UnixMilli()) }

func doubleValue(f float64) []byte { return binary.BigEndian.AppendUint64(nil, math.Float64bits(f)) }

func BoolValue(b bool) []byte {
	if b {
		return []byte{1}
	}
	return []byte{0}
}

func uuidValue(u [16]byte) []byte { return u[:] }

// InetValue serializes an address in 4 bytes when it is IPv4, else 16.
func InetValue(ip net.IP) []byte {
	if v4 := ip.To4(); v4 != nil {
		return v4
	}
	return ip.To16()
}

// collectionValue serializes elements as a list or set: a count, then each
// element as [int length][bytes].
func collectionValue(elems [][]byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(len(elems)))
	for _, e := range elems {
		b = cqlwire.AppendBytes(b, e)
	}
	return b
}

// textListValue serializes a list<text>.
func textListValue(ss []string) []byte {
	elems := make([][]byte, len(ss))
	for i, s := range ss {
		elems[i] = []byte(s)
	}
	return collectionValue(elems)
}

// textSetValue serializes a set<text>, whose elements Cassandra keeps
// sorted by their bytes.
func textSetValue(ss []string) []byte {
	sorted := append([]string(nil), ss...)
	sort.Strings(sorted)
	return textListValue(sorted)
}

// TextMapValue serializes a map<text, text>, sorted by key.
func TextMapValue(m map[string]string) []byte {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	b := binary.BigEndian.AppendUint32(nil, uint32(len(keys)))
	for _, k := range keys {
		b = cqlwire.AppendBytes(cqlwire.AppendBytes(b, []byte(k)), []byte(m[k]))
	}
	return b
}
