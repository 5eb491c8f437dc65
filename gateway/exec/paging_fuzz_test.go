package exec

import (
	"bytes"
	"errors"
	"testing"

	"github.com/cqlpg/cqlpg/gateway/cqlwire"
)

// FuzzPageState checks that any bytes a client sends as a paging state
// either decode to a state that encodes back to them or are refused with
// a protocol error, and that a state altered in any bit, or sent with
// another statement, is refused. With sign set, b is a state body that
// the fuzzer writes and the test signs, so that the decoding behind the
// digest is fuzzed too; flip picks the bit altered.
func FuzzPageState(f *testing.F) {
	f.Add((&pageState{position: position{key: [][]byte{{5}}}, remaining: -1}).encode(testID, testKey), false, uint16(0))
	f.Add((&pageState{position: position{token: -1, key: [][]byte{{0, 1}, {}}, clustering: [][]byte{{9}}},
		remaining: 3, inPartition: 1}).encode(testID, testKey), false, uint16(77))
	f.Add([]byte{2, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0}, true, uint16(3))
	f.Add([]byte{1, 2, 3}, false, uint16(1))
	f.Fuzz(func(t *testing.T, b []byte, sign bool, flip uint16) {
		if sign {
			b = signed(b)
		}
		s, err := decodePageState(b, testID, testKey)
		if err != nil {
			var perr *cqlwire.ProtocolError
			if !errors.As(err, &perr) {
				t.Fatalf("%x: %T %v is not a protocol error", b, err, err)
			}
			return
		}
		if s.inPartition < 0 || s.remaining < -1 {
			t.Fatalf("%x decoded to out-of-range %+v", b, s)
		}
		if again := s.encode(testID, testKey); !bytes.Equal(again, b) {
			t.Fatalf("%x: %+v encodes to %x", b, s, again)
		}
		other := testID
		other[0] ^= 1
		if _, err := decodePageState(b, other, testKey); err == nil {
			t.Fatalf("%x: the state of one statement is accepted for another", b)
		}
		tampered := bytes.Clone(b)
		tampered[int(flip>>3)%len(tampered)] ^= 1 << (flip & 7)
		if _, err := decodePageState(tampered, testID, testKey); err == nil {
			t.Fatalf("%x: altered to %x, the state is still accepted", b, tampered)
		}
	})
}
