package gateway

import (
	"bytes"
	"io"
	"math/rand/v2"
	"testing"
	"testing/iotest"

	"github.com/cqlpg/cqlpg/gateway/cqlwire"
)

// TestReadBody reads bodies of sizes around its growth steps, delivered a
// few bytes at a time, and checks the bytes and what a short stream gives.
func TestReadBody(t *testing.T) {
	for _, n := range []int{0, 1, 100, 64 << 10, 64<<10 + 1, 200 << 10, 1<<20 + 3} {
		want := make([]byte, n)
		for i := range want {
			want[i] = byte(rand.IntN(256))
		}
		b, err := cqlwire.ReadBody(iotest.HalfReader(bytes.NewReader(want)), n)
		if err != nil {
			t.Fatalf("%d bytes: %v", n, err)
		}
		if !bytes.Equal(*b, want) {
			t.Errorf("%d bytes: read back %d different bytes", n, len(*b))
		}
		cqlwire.PutBuffer(b)
		if n > 0 {
			if _, err := cqlwire.ReadBody(bytes.NewReader(want[:n-1]), n); err != io.ErrUnexpectedEOF && err != io.EOF {
				t.Errorf("%d bytes, one short: %v", n, err)
			}
		}
	}
}
