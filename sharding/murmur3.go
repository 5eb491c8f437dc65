package sharding

import (
	"encoding/binary"
	"math"
	"math/bits"
	"strconv"
)

// Token is a position on the Murmur3 ring, compared as a signed 64-bit
// integer exactly as Cassandra's LongToken is.
type Token int64

const (
	// MinToken is the partitioner's minimum token. Only the empty key hashes
	// to it, because TokenOf moves a hash of math.MinInt64 to MaxToken.
	MinToken Token = math.MinInt64
	// MaxToken is the largest token on the ring.
	MaxToken Token = math.MaxInt64
)

// Multiplication constants of MurmurHash3 x64_128.
const (
	murmurC1 = 0x87c37b91114253d5
	murmurC2 = 0x4cf5ad432745937f
)

// TokenOf returns the token Cassandra's Murmur3Partitioner assigns to a
// serialized partition key.
//
// It is the first 64-bit half of MurmurHash3 x64_128 with seed 0, with one
// deliberate deviation that Cassandra has kept for compatibility: the bytes
// of the final partial block are sign-extended (Java's (long) of a byte)
// rather than zero-extended before being shifted and xored in. Keys whose
// length is not a multiple of 16 and whose tail holds a byte >= 0x80
// therefore hash differently from reference MurmurHash3. The empty key maps
// to MinToken, and a hash equal to MinToken is moved to MaxToken so that no
// real key shares the minimum token.
//
// TokenOf does not allocate.
func TokenOf(key []byte) Token {
	if len(key) == 0 {
		return MinToken
	}
	h := Token(murmur3H1(key))
	if h == MinToken {
		return MaxToken
	}
	return h
}

// String formats the token in decimal, as CQL's token() shows it.
func (t Token) String() string {
	return strconv.FormatInt(int64(t), 10)
}

// murmur3H1 computes the first half of Cassandra's hash3_x64_128 with seed
// 0, including the sign-extended tail.
func murmur3H1(key []byte) uint64 {
	var h1, h2 uint64
	p := key
	for len(p) >= 16 {
		// Full blocks are read as unsigned little-endian words; only the
		// tail is affected by the sign-extension quirk.
		k1 := binary.LittleEndian.Uint64(p)
		k2 := binary.LittleEndian.Uint64(p[8:])
		p = p[16:]

		h1 ^= mixK1(k1)
		h1 = bits.RotateLeft64(h1, 27) + h2
		h1 = h1*5 + 0x52dce729

		h2 ^= mixK2(k2)
		h2 = bits.RotateLeft64(h2, 31) + h1
		h2 = h2*5 + 0x38495ab5
	}

	var k1, k2 uint64
	switch len(p) {
	case 15:
		k2 ^= signExtend(p[14]) << 48
		fallthrough
	case 14:
		k2 ^= signExtend(p[13]) << 40
		fallthrough
	case 13:
		k2 ^= signExtend(p[12]) << 32
		fallthrough
	case 12:
		k2 ^= signExtend(p[11]) << 24
		fallthrough
	case 11:
		k2 ^= signExtend(p[10]) << 16
		fallthrough
	case 10:
		k2 ^= signExtend(p[9]) << 8
		fallthrough
	case 9:
		k2 ^= signExtend(p[8])
		h2 ^= mixK2(k2)
		fallthrough
	case 8:
		k1 ^= signExtend(p[7]) << 56
		fallthrough
	case 7:
		k1 ^= signExtend(p[6]) << 48
		fallthrough
	case 6:
		k1 ^= signExtend(p[5]) << 40
		fallthrough
	case 5:
		k1 ^= signExtend(p[4]) << 32
		fallthrough
	case 4:
		k1 ^= signExtend(p[3]) << 24
		fallthrough
	case 3:
		k1 ^= signExtend(p[2]) << 16
		fallthrough
	case 2:
		k1 ^= signExtend(p[1]) << 8
		fallthrough
	case 1:
		k1 ^= signExtend(p[0])
		h1 ^= mixK1(k1)
	}

	n := uint64(len(key))
	h1 ^= n
	h2 ^= n
	h1 += h2
	h2 += h1
	h1 = fmix64(h1)
	h2 = fmix64(h2)
	return h1 + h2
}

// signExtend widens a byte the way Java's (long) cast of a signed byte does.
func signExtend(b byte) uint64 {
	return uint64(int64(int8(b)))
}

func mixK1(k uint64) uint64 {
	k *= murmurC1
	k = bits.RotateLeft64(k, 31)
	return k * murmurC2
}

func mixK2(k uint64) uint64 {
	k *= murmurC2
	k = bits.RotateLeft64(k, 33)
	return k * murmurC1
}

// fmix64 is MurmurHash3's finalization mix, which forces every input bit to
// affect every output bit.
func fmix64(k uint64) uint64 {
	k ^= k >> 33
	k *= 0xff51afd7ed558ccd
	k ^= k >> 33
	k *= 0xc4ceb9fe1a85ec53
	k ^= k >> 33
	return k
}
