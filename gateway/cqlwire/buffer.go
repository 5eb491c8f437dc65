package cqlwire

import (
	"io"
	"slices"
	"sync"
)

// bufferPool recycles request bodies and response frames.
var bufferPool = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// GetBuffer returns a pooled buffer of length n.
func GetBuffer(n int) *[]byte {
	b := bufferPool.Get().(*[]byte)
	if cap(*b) < n {
		*b = make([]byte, n)
	}
	*b = (*b)[:n]
	return b
}

// ReadBody reads a frame body of n bytes. Its buffer grows with the bytes
// that arrive, doubling, rather than taking the n bytes a header declares
// at once: a client may declare frames up to the size limit on many
// connections and send nothing more, which would otherwise hold the
// declared memory without the bytes to show for it.
func ReadBody(r io.Reader, n int) (*[]byte, error) {
	b := GetBuffer(min(n, 64<<10))
	for filled := 0; ; {
		if _, err := io.ReadFull(r, (*b)[filled:]); err != nil {
			PutBuffer(b)
			return nil, err
		}
		if filled = len(*b); filled == n {
			return b, nil
		}
		more := min(n-filled, filled)
		*b = slices.Grow(*b, more)[:filled+more]
	}
}

// PutBuffer returns a buffer to the pool; very large ones are dropped so
// that one big result does not pin its memory, and small ones (the
// gateway's Overloaded answers, made to measure so that a flood's
// queued answers hold little) so that the pool's stay at least 4 KiB.
func PutBuffer(b *[]byte) {
	if c := cap(*b); c > 1<<20 || c < 4096 {
		return
	}
	bufferPool.Put(b)
}
