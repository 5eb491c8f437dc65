package exec

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/cqlpg/cqlpg/gateway/cqlwire"
	"github.com/cqlpg/cqlpg/sharding"
)

// Paging states of these tests belong to statement testID and are signed
// with testKey.
var (
	testID  = [16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	testKey = []byte("a key of the shards of a test")
)

// signed returns a state body followed by its digest, as encode ends it.
func signed(body []byte) []byte {
	return append(bytes.Clone(body), pagingDigest(testID, testKey, body)...)
}

func TestPageStateRoundTrip(t *testing.T) {
	for _, s := range []*pageState{
		{position: position{key: [][]byte{{0, 0, 0, 1}}}, remaining: -1},
		{position: position{token: -4069959284402364209, key: [][]byte{{0, 0, 0, 1}}, clustering: [][]byte{{0, 0, 0, 3}}},
			remaining: 7, inPartition: 2},
		{position: position{token: 12, key: [][]byte{{0, 0, 0, 1}, {}, []byte("é")}, clustering: [][]byte{{}, {9}}},
			remaining: 0, inPartition: 5},
	} {
		got, err := decodePageState(s.encode(testID, testKey), testID, testKey)
		if err != nil {
			t.Fatalf("%+v: %v", s, err)
		}
		if !reflect.DeepEqual(got, s) {
			t.Errorf("round trip of %+v gave %+v", s, got)
		}
	}
}

// TestPageStateRefused checks that a state altered anywhere, cut short,
// lengthened, or sent with another statement or to gateways on other
// shards is refused, and that a well-signed state with impossible fields
// is too.
func TestPageStateRefused(t *testing.T) {
	s := &pageState{position: position{token: 99, key: [][]byte{{1}}, clustering: [][]byte{{2}, {3}}}, remaining: -1, inPartition: 1}
	valid := s.encode(testID, testKey)
	refused := map[string][]byte{
		"empty":          nil,
		"digest only":    valid[len(valid)-pagingDigestSize:],
		"trailing bytes": append(bytes.Clone(valid), 0),
		// Signed, but not what encode writes.
		"version 1":         signed(append([]byte{1}, valid[1:len(valid)-pagingDigestSize]...)),
		"inPartition below": signed([]byte{2, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0}),
		"remaining below":   signed([]byte{2, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xfe, 0, 0, 0, 0, 0, 0, 0, 0}),
		"count beyond":      signed([]byte{2, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0}),
		"null component":    signed([]byte{2, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff, 0, 0}),
		"body cut short":    signed(valid[:len(valid)-pagingDigestSize-1]),
	}
	for i := range valid {
		for _, bit := range []byte{0x01, 0x80} {
			b := bytes.Clone(valid)
			b[i] ^= bit
			refused[fmt.Sprintf("bit %#x of byte %d flipped", bit, i)] = b
		}
		refused[fmt.Sprintf("truncated to %d bytes", i)] = valid[:i]
	}
	for name, b := range refused {
		_, err := decodePageState(b, testID, testKey)
		var perr *cqlwire.ProtocolError
		if !errors.As(err, &perr) || perr.Msg != "Invalid value for the paging state" {
			t.Errorf("%s: got %v, want the paging state protocol error", name, err)
		}
	}
	otherID := testID
	otherID[15]++
	if _, err := decodePageState(valid, otherID, testKey); err == nil {
		t.Error("a state of another statement was accepted")
	}
	if _, err := decodePageState(valid, testID, []byte("the key of other shards")); err == nil {
		t.Error("a state signed for other shards was accepted")
	}
}

// TestPagingKey checks that the key depends on the shards alone, not on
// the order a gateway lists them in.
func TestPagingKey(t *testing.T) {
	shard := func(id byte) *sharding.Shard { return &sharding.Shard{Info: sharding.ShardInfo{HostID: [16]byte{id}}} }
	a := pagingKey(sharding.NewTopology(nil, []*sharding.Shard{shard(1), shard(2), shard(3)}))
	b := pagingKey(sharding.NewTopology(nil, []*sharding.Shard{shard(3), shard(1), shard(2)}))
	c := pagingKey(sharding.NewTopology(nil, []*sharding.Shard{shard(1), shard(2), shard(4)}))
	if !bytes.Equal(a, b) {
		t.Error("the same shards listed in another order give another key")
	}
	if bytes.Equal(a, c) {
		t.Error("other shards give the same key")
	}
}

// BenchmarkPageState measures writing and reading back the paging state of
// a page that ended inside a partition of an int key and an int
// clustering column, digest included.
func BenchmarkPageState(b *testing.B) {
	s := &pageState{position: position{token: 42, key: [][]byte{{0, 0, 0, 1}}, clustering: [][]byte{{0, 0, 0, 2}}}, remaining: -1}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decodePageState(s.encode(testID, testKey), testID, testKey); err != nil {
			b.Fatal(err)
		}
	}
}
