package sharding

import (
	"bytes"
	"strings"
	"testing"
)

func TestAppendKey(t *testing.T) {
	tests := []struct {
		name       string
		dst        []byte
		components [][]byte
		want       string
	}{
		{"single component unchanged", nil, [][]byte{{0, 0, 0, 1}}, "00000001"},
		{"composite int and text", nil, [][]byte{{0, 0, 0x07, 0xd0}, {'1'}}, "0004000007d00000013100"},
		{"composite with empty component", nil, [][]byte{{}, {0xab}}, "0000000001ab00"},
		{"appends to dst", []byte{0xee}, [][]byte{{1}, {2}}, "ee" + "00010100" + "00010200"},
		{"no components is the empty key", nil, nil, ""},
		{"long component length is big-endian", nil, [][]byte{make([]byte, 0x0102), {}}, "0102" + strings.Repeat("00", 0x0102) + "00" + "000000"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := AppendKey(tc.dst, tc.components)
			if want := mustHex(t, tc.want); !bytes.Equal(got, want) {
				t.Errorf("AppendKey = %x, want %x", got, want)
			}
		})
	}
}

func TestKeyToken(t *testing.T) {
	tests := []struct {
		name       string
		components [][]byte
		want       Token
	}{
		{"composite (2000, '1')", [][]byte{{0, 0, 0x07, 0xd0}, {'1'}}, -108427357362698080},
		{"single int 1", [][]byte{{0, 0, 0, 1}}, -4069959284402364209},
		{"single text 'best'", [][]byte{[]byte("best")}, 8664726657035972693},
		{"no components", nil, MinToken},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := KeyToken(tc.components); got != tc.want {
				t.Errorf("KeyToken = %d, want %d", got, tc.want)
			}
		})
	}
}

// TestKeyTokenMatchesAppendKey covers both the stack-buffer path and the
// heap fallback for keys larger than the buffer.
func TestKeyTokenMatchesAppendKey(t *testing.T) {
	for _, size := range []int{0, 1, 100, stackKeyLen - 6, stackKeyLen - 5, stackKeyLen, 3 * stackKeyLen} {
		a := bytes.Repeat([]byte{0x9c}, size)
		comps := [][]byte{a, []byte("tail\xff")}
		if got, want := KeyToken(comps), TokenOf(AppendKey(nil, comps)); got != want {
			t.Errorf("size %d: KeyToken = %d, TokenOf(AppendKey) = %d", size, got, want)
		}
	}
}

func TestKeyTokenDoesNotAllocate(t *testing.T) {
	comps := [][]byte{bytes.Repeat([]byte{7}, 200), []byte("some text"), {0, 0, 0, 42}}
	if n := testing.AllocsPerRun(100, func() { KeyToken(comps) }); n != 0 {
		t.Errorf("KeyToken allocates %v times per call, want 0", n)
	}
	key := bytes.Repeat([]byte{0x80}, 37)
	if n := testing.AllocsPerRun(100, func() { TokenOf(key) }); n != 0 {
		t.Errorf("TokenOf allocates %v times per call, want 0", n)
	}
}
