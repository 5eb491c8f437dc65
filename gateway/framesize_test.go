package gateway_test

import (
	"encoding/binary"
	"runtime"
	"testing"
	"time"
)

// TestDeclaredFrameSize: frames whose headers declare a large body that
// does not follow cost the gateway memory for the bytes that came, not
// for the size declared, and leave other connections served.
func TestDeclaredFrameSize(t *testing.T) {
	const conns, declared = 8, 100 << 20 // under the 256 MiB frame limit
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range conns {
		c := dialRaw(t)
		c.startup(4)
		// A QUERY declaring 100 MiB, of which 100 bytes are sent.
		hdr := binary.BigEndian.AppendUint32([]byte{4, 0, 0, 9, 0x07}, declared)
		if _, err := c.nc.Write(append(hdr, make([]byte, 100)...)); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(300 * time.Millisecond) // let the readers take what came
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	grown := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("heap grew by %d KiB for %d frames declaring %d MiB each", grown>>10, conns, declared>>20)
	if grown > 64<<20 {
		t.Errorf("heap grew by %d MiB for %d frames declaring %d MiB each and sending 100 bytes", grown>>20, conns, declared>>20)
	}
	if err := session(t, "").Query("SELECT key FROM system.local").Exec(); err != nil {
		t.Errorf("other connections: %v", err)
	}
}
