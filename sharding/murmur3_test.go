package sharding

import (
	"encoding/hex"
	"math"
	"math/rand/v2"
	"testing"
)

// Token values produced by Cassandra's token() for these serialized keys.
var tokenVectors = []struct {
	name string
	hex  string
	want Token
}{
	{"uuid", "41d01b63244e435dbd6d5dc8a0addb8c", -2767158835560740559},
	{"composite int 2000, text '1'", "0004000007d00000013100", -108427357362698080},
	{"text 'best'", "62657374", 8664726657035972693},
	{"int 1", "00000001", -4069959284402364209},
	{"empty", "", MinToken},
}

func TestTokenOfVectors(t *testing.T) {
	for _, tc := range tokenVectors {
		t.Run(tc.name, func(t *testing.T) {
			key := mustHex(t, tc.hex)
			if got := TokenOf(key); got != tc.want {
				t.Errorf("TokenOf(%s) = %d, want %d", tc.hex, got, tc.want)
			}
		})
	}
}

// TestTokenOfSignExtensionMatters checks that the composite vector really
// exercises the tail quirk: hashing it with reference MurmurHash3 gives a
// different token.
func TestTokenOfSignExtensionMatters(t *testing.T) {
	key := mustHex(t, "0004000007d00000013100")
	const zeroExtended Token = -2623197109803420999
	if got := refToken(key, false); got != zeroExtended {
		t.Fatalf("zero-extending reference = %d, want %d", got, zeroExtended)
	}
	if got := TokenOf(key); got == zeroExtended {
		t.Fatalf("TokenOf(%x) = %d, the zero-extended hash; the sign-extension quirk is missing", key, got)
	}
}

func TestTokenString(t *testing.T) {
	tests := []struct {
		tok  Token
		want string
	}{
		{0, "0"},
		{MinToken, "-9223372036854775808"},
		{MaxToken, "9223372036854775807"},
		{-108427357362698080, "-108427357362698080"},
	}
	for _, tc := range tests {
		if got := tc.tok.String(); got != tc.want {
			t.Errorf("Token(%d).String() = %q, want %q", int64(tc.tok), got, tc.want)
		}
	}
}

// TestTokenOfMatchesReference compares TokenOf with the straightforward
// implementation below on random keys of every tail length, with bytes
// biased towards values >= 0x80 so the sign extension is exercised.
func TestTokenOfMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 5000 {
		key := make([]byte, i%70)
		for j := range key {
			key[j] = byte(rng.Uint32())
		}
		if got, want := TokenOf(key), refToken(key, true); got != want {
			t.Fatalf("TokenOf(%x) = %d, reference %d", key, got, want)
		}
	}
}

func FuzzTokenOf(f *testing.F) {
	for _, tc := range tokenVectors {
		b, err := hex.DecodeString(tc.hex)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{0xff, 0x80, 0x7f, 0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0x80, 0x81, 0x82, 0x83, 0x84, 0x85})
	f.Fuzz(func(t *testing.T, key []byte) {
		if got, want := TokenOf(key), refToken(key, true); got != want {
			t.Fatalf("TokenOf(%x) = %d, reference %d", key, got, want)
		}
	})
}

// refToken is an independent, deliberately plain transcription of
// Cassandra's Murmur3Partitioner.getToken: byte-at-a-time block reads, full
// 128-bit state, and a loop instead of the fall-through switch for the tail.
// signed selects Cassandra's sign-extended tail; false gives reference
// MurmurHash3.
func refToken(key []byte, signed bool) Token {
	if len(key) == 0 {
		return Token(math.MinInt64)
	}
	const c1, c2 = 0x87c37b91114253d5, 0x4cf5ad432745937f
	rotl := func(x uint64, r uint) uint64 { return x<<r | x>>(64-r) }
	fmix := func(k uint64) uint64 {
		k ^= k >> 33
		k *= 0xff51afd7ed558ccd
		k ^= k >> 33
		k *= 0xc4ceb9fe1a85ec53
		k ^= k >> 33
		return k
	}
	word := func(b []byte) uint64 {
		var w uint64
		for i := 7; i >= 0; i-- {
			w = w<<8 | uint64(b[i])
		}
		return w
	}
	widen := func(b byte) uint64 {
		if signed && b >= 0x80 {
			return uint64(b) | 0xffffffffffffff00
		}
		return uint64(b)
	}

	var h1, h2 uint64
	nblocks := len(key) / 16
	for i := 0; i < nblocks; i++ {
		k1 := word(key[i*16:])
		k2 := word(key[i*16+8:])
		k1 = rotl(k1*c1, 31) * c2
		h1 ^= k1
		h1 = (rotl(h1, 27)+h2)*5 + 0x52dce729
		k2 = rotl(k2*c2, 33) * c1
		h2 ^= k2
		h2 = (rotl(h2, 31)+h1)*5 + 0x38495ab5
	}
	tail := key[nblocks*16:]
	var k1, k2 uint64
	for i, b := range tail {
		if i < 8 {
			k1 ^= widen(b) << (8 * i)
		} else {
			k2 ^= widen(b) << (8 * (i - 8))
		}
	}
	if len(tail) > 8 {
		h2 ^= rotl(k2*c2, 33) * c1
	}
	if len(tail) > 0 {
		h1 ^= rotl(k1*c1, 31) * c2
	}
	h1 ^= uint64(len(key))
	h2 ^= uint64(len(key))
	h1 += h2
	h2 += h1
	h1 = fmix(h1)
	h2 = fmix(h2)
	h1 += h2
	if int64(h1) == math.MinInt64 {
		return Token(math.MaxInt64)
	}
	return Token(int64(h1))
}

func mustHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatalf("bad hex %q: %v", s, err)
	}
	return b
}
