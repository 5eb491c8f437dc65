package exec

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"slices"
	"sync/atomic"

	"github.com/cqlpg/cqlpg/gateway/cqlwire"
	"github.com/cqlpg/cqlpg/sharding"
)

// pagingVersion starts every paging state this gateway writes. Version 1
// states counted the rows earlier pages had read, which rows written
// between pages shifted; they are refused.
const pagingVersion = 2

// pagingDigestSize is the length of the digest that ends a paging state.
const pagingDigestSize = 16

// position is where a page of a SELECT ended: the primary key of its last
// row, group or partition, in the order the query reads rows. key is the
// partition key and token its stored token (scans only); clustering is a
// prefix of the clustering key, as long as the query's positions record
// (translate.Select.PositionSlots) or shorter: a prefix stands for every
// row inside it, so the position of a group holds the group's columns and
// that of a partition (DISTINCT, a partition holding only static data,
// one PER PARTITION LIMIT is done with) holds none. The next page reads
// what comes strictly after the position, so rows written or deleted
// between pages shift nothing: each row that exists throughout is read
// once, as Cassandra's paging promises.
type position struct {
	token      int64
	key        [][]byte
	clustering [][]byte
}

// pageState says where the next page of a SELECT starts. The state is
// opaque to clients, who send it back with the same query and values, to
// this gateway or another.
type pageState struct {
	position
	// remaining is what is left of LIMIT, -1 when the query has none.
	remaining int32
	// inPartition counts the rows (or groups) of the position's partition
	// that earlier pages returned, which PER PARTITION LIMIT goes on
	// counting.
	inPartition int32
}

// encode writes the state: version, token, remaining, inPartition, the
// partition key and the clustering prefix as a short count of components,
// each [int length][bytes], then a digest of the statement's id and all
// that, keyed with key (pagingKey), which lets the gateway refuse a state
// that was altered or comes from another statement.
func (s *pageState) encode(id [16]byte, key []byte) []byte {
	b := []byte{pagingVersion}
	b = binary.BigEndian.AppendUint64(b, uint64(s.token))
	b = binary.BigEndian.AppendUint32(b, uint32(s.remaining))
	b = binary.BigEndian.AppendUint32(b, uint32(s.inPartition))
	for _, values := range [][][]byte{s.key, s.clustering} {
		b = binary.BigEndian.AppendUint16(b, uint16(len(values)))
		for _, v := range values {
			b = cqlwire.AppendBytes(b, v)
		}
	}
	return append(b, pagingDigest(id, key, b)...)
}

// pagingDigest is the digest that ends a paging state whose body is b.
func pagingDigest(id [16]byte, key, b []byte) []byte {
	mac := hmac.New(sha256.New, key)
	mac.Write(id[:])
	mac.Write(b)
	return mac.Sum(nil)[:pagingDigestSize]
}

// errPagingState is Cassandra's answer to a paging state it cannot read.
func errPagingState() error { return &cqlwire.ProtocolError{Msg: "Invalid value for the paging state"} }

// decodePageState reads a state encode wrote for the statement id with
// key; anything else is refused with a protocol error, as Cassandra
// answers a paging state it cannot read.
func decodePageState(b []byte, id [16]byte, key []byte) (*pageState, error) {
	if len(b) < pagingDigestSize {
		return nil, errPagingState()
	}
	body, digest := b[:len(b)-pagingDigestSize], b[len(b)-pagingDigestSize:]
	if !hmac.Equal(digest, pagingDigest(id, key, body)) {
		return nil, errPagingState()
	}
	d := cqlwire.Decoder{B: body}
	if d.Byte() != pagingVersion {
		d.Fail(cqlwire.ErrTruncated)
	}
	s := &pageState{position: position{token: d.Long()}, remaining: d.Int(), inPartition: d.Int()}
	for _, values := range []*[][]byte{&s.key, &s.clustering} {
		for n := d.Short(); n > 0 && d.Err == nil; n-- {
			v, _ := d.Value()
			if v == nil {
				d.Fail(cqlwire.ErrTruncated) // no key component is null
			}
			*values = append(*values, bytes.Clone(v))
		}
	}
	if d.Err != nil || len(d.B) != 0 || s.inPartition < 0 || s.remaining < -1 {
		return nil, errPagingState()
	}
	return s, nil
}

// pagingKeys caches the key of the last topology pagingKey was asked
// about; a topology is an immutable snapshot, replaced rarely.
var pagingKeys atomic.Pointer[topologyKey]

type topologyKey struct {
	topo *sharding.Topology
	key  [sha256.Size]byte
}

// pagingKey returns the key of the digests of paging states on a
// topology: a digest of its shards' host ids, which each shard drew at
// random when it joined and which no client sees. Every gateway on the
// same shards derives the same key, so each accepts the states of the
// others, and a client cannot make up a state that passes. Adding a shard
// changes the key: states of pages read before are refused.
func pagingKey(topo *sharding.Topology) []byte {
	if k := pagingKeys.Load(); k != nil && k.topo == topo {
		return k.key[:]
	}
	ids := make([][16]byte, len(topo.Shards))
	for i, sh := range topo.Shards {
		ids[i] = sh.Info.HostID
	}
	slices.SortFunc(ids, func(a, b [16]byte) int { return bytes.Compare(a[:], b[:]) })
	h := sha256.New()
	h.Write([]byte("cqlpg paging state"))
	for _, id := range ids {
		h.Write(id[:])
	}
	k := &topologyKey{topo: topo}
	h.Sum(k.key[:0])
	pagingKeys.Store(k)
	return k.key[:]
}
